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
        try InsertSaveGroupCommitTests.withState { state, _ in
            let threads = 4
            let rounds = Int(ProcessInfo.processInfo.environment["PERSIST_GET_ROUNDS"] ?? "") ?? 25
            let failures = Locked<[String]>([])
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                let session = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "thread \(thread)")
                func ask(_ op: String, _ body: JSON) -> JSON {
                    (try? InsertSaveGroupCommitTests.ask(session, [WireRequest(id: 1, op: op, body: body)]).first) ?? nil
                }
                /// The names a pipelined run of simple gets of `id` reads (nil: not a simple get).
                func names(of id: String, count: Int) -> [String?]? {
                    _ = try? WireObjectID.parse(.string(id), coordinator: state.coordinator, what: "ids", prefix: session.idPrefix)
                    guard let prefix = session.idPrefix.withLock({ $0 }) else { return nil }
                    var gets: [SimpleGet] = []
                    for index in 0..<count {
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
                func check(_ id: String, _ expected: String, _ what: String) {
                    let count = 1 + thread % 3
                    guard let found = names(of: id, count: count) else {
                        return failures.withLock { $0.append("\(what): not answered as simple gets") }
                    }
                    if found != Array(repeating: expected, count: count) {
                        failures.withLock { $0.append("\(what): \(found), not \(expected)") }
                    }
                }
                for round in 0..<rounds {
                    let inserted = ask("insert", ["entity": "Beer",
                                                  "values": ["name": .string("t\(thread) r\(round)"), "uuid": .string(UUID().uuidString)]])
                    guard let id = inserted["result"]?["object"]?["id"]?.stringValue else {
                        failures.withLock { $0.append("insert: \(inserted.encoded)") }
                        return
                    }
                    check(id, "t\(thread) r\(round)", "pending insert")
                    _ = ask("save", [:])
                    check(id, "t\(thread) r\(round)", "saved insert")
                    _ = ask("update", ["object": .string(id), "values": ["name": "changed"]])
                    check(id, "changed", "pending update")
                    _ = ask("rollback", [:])
                    check(id, "t\(thread) r\(round)", "rolled-back update")
                }
            }
            let found = failures.withLock { $0 }
            #expect(found.isEmpty, "\(found.prefix(5))")
        }
    }
}
