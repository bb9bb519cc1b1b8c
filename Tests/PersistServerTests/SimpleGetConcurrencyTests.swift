import Dispatch
import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// Simple `get`s (`SimpleGet`, answered by `Session.answerSimpleGetsNow`) from several threads
/// at once, as event loops serve them, while the same sessions insert, save, update and roll
/// back: the shared view context, the writer's plan table and each session's ID prefix. Run
/// under TSan by `make test-tsan`.
@Suite("Concurrency of simple gets, saves and the pending-changes flag", .timeLimit(.minutes(1)))
struct SimpleGetConcurrencyTests {
    @Test("threads saving and reading by simple gets: each sees what it saved, its own pending change, then the rollback")
    func concurrentSimpleGetsAndWrites() throws {
        let failures = try SessionRounds.failures { session, _, thread, id in
            // A pipelined run of 1 to 3 simple gets of `id`; nil when a line is not one.
            guard let prefix = try? SimpleGetTests.prefix(of: id, session: session) else { return nil }
            var gets: [SimpleGet] = []
            for index in 0...(thread % 3) {
                let line = Array(#"{"id":\#(index),"op":"get","ids":["\#(id)"]}"#.utf8)
                guard case .get(let get) = line.withUnsafeBufferPointer({ SimpleGet.parse($0, prefix: prefix) }) else { return nil }
                gets.append(get)
            }
            var output: [UInt8] = []
            guard session.answerSimpleGetsNow(gets, into: &output) else { return nil }
            return output.split(separator: UInt8(ascii: "\n")).map { line in
                (try? JSONParser.parse(Array(line)))?["result"]?["objects"]?.arrayValue?.first?["values"]?["name"]?.stringValue
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }
}
