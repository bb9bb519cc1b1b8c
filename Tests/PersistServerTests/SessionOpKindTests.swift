import Foundation
import Testing
@testable import PersistServer

/// `Session.kind(of:)`: every op of the protocol's request schema has its kind; anything else
/// (near misses included) has none, and gets the `unknown_op` reply.
@Suite("op kinds", .timeLimit(.minutes(1)))
struct SessionOpKindTests {
    static let kinds: [String: Session.Kind] = [
        "get": .read, "fetch": .read, "count": .read,
        "insert": .write, "update": .write, "delete": .write, "save": .write, "rollback": .write,
        "configure": .write, "history": .write,
        "hello": .server, "model": .server, "ping": .server, "stats": .server,
        "subscribe": .subscription, "unsubscribe": .subscription,
    ]

    @Test("every op of the request schema, and only those")
    func everySchemaOp() throws {
        let schemaURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("protocol/schema/request.schema.json")
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: schemaURL)) as? [String: Any])
        let ops = try #require(((schema["properties"] as? [String: Any])?["op"] as? [String: Any])?["enum"] as? [String])
        #expect(Set(ops) == Set(Self.kinds.keys))
        for op in ops { #expect(Session.kind(of: op) == Self.kinds[op], "\(op)") }
        for other in ["", "g", "ge", "gets", "Get", "sav", "saves", "s", "subscribes", "unsub", "hellos", "pin", "x", "countx", "é"] {
            #expect(Session.kind(of: other) == nil, "\(other)")
        }
    }
}
