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
        try InsertSaveGroupCommitTests.withState { state, _ in
            let threads = 4
            let rounds = Int(ProcessInfo.processInfo.environment["PERSIST_GET_ROUNDS"] ?? "") ?? 25
            let failures = Locked<[String]>([])
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                let session = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "thread \(thread)")
                func ask(_ op: String, _ body: JSON) -> JSON {
                    (try? InsertSaveGroupCommitTests.ask(session, [WireRequest(id: 1, op: op, body: body)]).first) ?? nil
                }
                func name(of id: String) -> String? {
                    ask("get", ["ids": [.string(id)]])["result"]?["objects"]?.arrayValue?.first?["values"]?["name"]?.stringValue
                }
                for round in 0..<rounds {
                    let inserted = ask("insert", ["entity": "Beer",
                                                  "values": ["name": .string("t\(thread) r\(round)"), "uuid": .string(UUID().uuidString)]])
                    guard let id = inserted["result"]?["object"]?["id"]?.stringValue else {
                        failures.withLock { $0.append("insert: \(inserted.encoded)") }
                        return
                    }
                    if name(of: id) != "t\(thread) r\(round)" { failures.withLock { $0.append("pending insert not seen by its session") } }
                    _ = ask("save", [:])
                    if name(of: id) != "t\(thread) r\(round)" { failures.withLock { $0.append("saved insert not seen") } }
                    _ = ask("update", ["object": .string(id), "values": ["name": "changed"]])
                    if name(of: id) != "changed" { failures.withLock { $0.append("pending update not seen by its session") } }
                    _ = ask("rollback", [:])
                    if name(of: id) != "t\(thread) r\(round)" { failures.withLock { $0.append("rolled-back update still seen") } }
                }
            }
            let found = failures.withLock { $0 }
            #expect(found.isEmpty, "\(found.prefix(5))")
        }
    }
}
