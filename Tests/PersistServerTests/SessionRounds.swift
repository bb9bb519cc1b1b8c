import Dispatch
import Foundation
import PersistKit
@testable import PersistServer

/// Sessions of one server state served from several threads at once, as event loops serve
/// them: each thread's session inserts, saves, updates and rolls back a `Beer`, and after each
/// step reads its name back the way a test chooses. Run under TSan by `make test-tsan`.
enum SessionRounds {
    /// How a round reads the name of the object `id` with `session` (on thread `thread`): the
    /// names it read (one or more), or `nil` when the read was not answered the way under test.
    typealias Read = @Sendable (_ session: Session, _ state: ServerState, _ thread: Int, _ id: String) -> [String?]?

    /// The failures of 4 threads running `PERSIST_GET_ROUNDS` (default 25) rounds each, every
    /// read checked against the name the session should see then; empty when all is right.
    static func failures(reading read: Read) throws -> [String] {
        var result: [String] = []
        try InsertSaveGroupCommitTests.withState { state, _ in
            let rounds = Int(ProcessInfo.processInfo.environment["PERSIST_GET_ROUNDS"] ?? "") ?? 25
            let failures = Locked<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                let session = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "thread \(thread)")
                func ask(_ op: String, _ body: JSON) -> JSON {
                    (try? InsertSaveGroupCommitTests.ask(session, [WireRequest(id: 1, op: op, body: body)]).first) ?? nil
                }
                func check(_ id: String, _ expected: String, _ what: String) {
                    guard let found = read(session, state, thread, id) else {
                        return failures.withLock { $0.append("\(what): not answered as the test reads") }
                    }
                    if found.isEmpty || found.contains(where: { $0 != expected }) {
                        failures.withLock { $0.append("\(what): \(found), not \(expected)") }
                    }
                }
                for round in 0..<rounds {
                    let name = "t\(thread) r\(round)"
                    let inserted = ask("insert", ["entity": "Beer", "values": ["name": .string(name), "uuid": .string(UUID().uuidString)]])
                    guard let id = inserted["result"]?["object"]?["id"]?.stringValue else {
                        failures.withLock { $0.append("insert: \(inserted.encoded)") }
                        return
                    }
                    check(id, name, "pending insert seen by its session")
                    _ = ask("save", [:])
                    check(id, name, "saved insert seen")
                    _ = ask("update", ["object": .string(id), "values": ["name": "changed"]])
                    check(id, "changed", "pending update seen by its session")
                    _ = ask("rollback", [:])
                    check(id, name, "rolled-back update no longer seen")
                }
            }
            result = failures.withLock { $0 }
        }
        return result
    }
}
