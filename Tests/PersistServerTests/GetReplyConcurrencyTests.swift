import Dispatch
import Foundation
@testable import PersistKit
import Testing
@testable import PersistServer

/// Sessions served in process from several threads at once (as event loops do): `get`s written
/// straight into bytes (the writer's per-entity table is shared), writes setting each session's
/// pending-changes flag, reads deciding by it. Run under TSan by `make test-tsan`.
@Suite("Concurrency of get replies and the pending-changes flag", .timeLimit(.minutes(1)))
struct GetReplyConcurrencyTests {
    @Test("threads inserting, saving and getting at once: every get sees what its session saved, or its own pending change")
    func concurrentGetsAndWrites() throws {
        let failures = try SessionRounds.failures { session, _, _, id in
            let reply = try? InsertSaveGroupCommitTests.ask(session, [WireRequest(id: 1, op: "get", body: ["ids": [.string(id)]])]).first
            return [reply?["result"]?["objects"]?.arrayValue?.first?["values"]?["name"]?.stringValue]
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }
}
