import Dispatch
import Foundation
@testable import PersistKit
import Testing
@testable import PersistServer

/// `get` replies written straight into bytes (`WireObjectWriter`, `WireReply.encodedSuccess`)
/// are the very bytes of the `JSON` tree they replace, for every attribute type, relationships,
/// faults and `properties`; and a session's reads go to its own context exactly while it has
/// unsaved changes (`Session.hasPendingChanges`, kept by the write hops instead of asked).
@Suite("get replies: written directly, the same bytes; reads see pending changes exactly while there are any",
       .timeLimit(.minutes(1)))
struct GetReplyWriterTests {
    static let root = InsertSaveGroupCommitTests.root

    /// A session on a new in-process server state.
    static func withSession(_ body: (ServerState, Session) throws -> Void) throws {
        try InsertSaveGroupCommitTests.withState { state, _ in
            try body(state, Session(state: state, peer: root, name: "writer test"))
        }
    }

    /// The `result` of `op` with `body`; fails the test on an error reply.
    static func result(_ session: Session, _ op: String, _ body: JSON) throws -> JSON {
        let reply = try InsertSaveGroupCommitTests.ask(session, [WireRequest(id: 1, op: op, body: body)])[0]
        #expect(reply["ok"] == .bool(true), "\(op): \(reply.encoded)")
        return try #require(reply["result"])
    }

    @Test("the direct writer gives the tree's bytes: every attribute type, escapes, relationships, faults, properties")
    func sameBytes() throws {
        try Self.withSession { state, session in
            let brewery = try Self.result(session, "insert", [
                "entity": "Brewery", "values": ["name": "Dogfish \"Head\"\n\u{2028}é", "city": .null, "founded": 1995],
            ])
            let breweryID = try #require(brewery["object"]?["id"]?.stringValue)
            let tag = try Self.result(session, "insert", ["entity": "Tag", "values": ["name": "hoppy"]])
            let tagID = try #require(tag["object"]?["id"]?.stringValue)
            let beer = try Self.result(session, "insert", [
                "entity": "Beer",
                "values": [
                    "name": "90 Minute\tIPA", "abv": 9.0, "ibu": 90, "style": .null, "brewedOn": "2026-01-31T12:00:00.000Z",
                    "uuid": .string(UUID().uuidString), "price": "4.25", "isFavorite": true, "label": "AAEC",
                    "website": "https://example.com/a?b=c", "brewery": .string(breweryID), "tags": [.string(tagID)],
                ],
            ])
            let beerID = try #require(beer["object"]?["id"]?.stringValue)
            let plain = try Self.result(session, "insert", [
                "entity": "Beer", "values": ["name": "Plain", "uuid": .string(UUID().uuidString)],
            ])
            let plainID = try #require(plain["object"]?["id"]?.stringValue)
            _ = try Self.result(session, "save", [:])

            let view = state.container.viewContext
            let requests: [JSON] = [
                ["ids": [.string(beerID), .string(plainID), .string(breweryID), .string(tagID)]],
                ["ids": [.string(beerID)], "properties": ["tags", "abv", "isFavorite", "name"]],
                ["ids": [.string(breweryID)], "properties": []],
            ]
            for faults in [true, false] {
                for body in requests {
                    // Faults: a reset context loads the objects as the writer reads them.
                    if faults { view.performAndWait { view.reset() } }
                    let direct = try view.performAndWait { try session.getResult(body, in: view) }
                    if faults { view.performAndWait { view.reset() } }
                    let tree = try view.performAndWait { try session.get(body, in: view) }
                    #expect(String(decoding: direct, as: UTF8.self) == tree.encoded)
                    let parsed = try JSONParser.parse(direct)
                    #expect(parsed == tree)
                    // The reply line: the same bytes as the tree's reply.
                    #expect(WireReply.encodedSuccess(id: 7, result: direct).line == WireReply.success(id: 7, result: tree).line)
                    #expect(WireReply.encodedSuccess(id: 7, result: direct).json == WireReply.success(id: 7, result: tree).json)
                }
            }
        }
    }

    @Test("a get of an unknown ID, or of an unknown property, fails as before")
    func errors() throws {
        try Self.withSession { state, session in
            let beer = try Self.result(session, "insert", ["entity": "Beer", "values": ["name": "A", "uuid": .string(UUID().uuidString)]])
            let beerID = try #require(beer["object"]?["id"]?.stringValue)
            _ = try Self.result(session, "save", [:])
            let missing = beerID.replacingOccurrences(of: "/p", with: "/p9")
            let unknown = try InsertSaveGroupCommitTests.ask(session, [WireRequest(id: 1, op: "get", body: ["ids": [.string(beerID), .string(missing)]])])[0]
            #expect(unknown["ok"] == .bool(false))
            #expect(unknown["error"]?["code"] == "not_found")
            let property = try InsertSaveGroupCommitTests.ask(session, [WireRequest(id: 2, op: "get",
                                                                                     body: ["ids": [.string(beerID)], "properties": ["nope"]])])[0]
            #expect(property["ok"] == .bool(false))
            #expect(property["error"]?["code"] == "bad_request" || property["error"]?["code"] == "unknown_property")
        }
    }

    /// The session's pending-changes flag.
    static func pending(_ session: Session) -> Bool { session.hasPendingChanges.load(ordering: .acquiring) }

    @Test("reads see the session's own unsaved changes exactly while it has some: after update, save, rollback, a failed write")
    func pendingChangesFlag() throws {
        try Self.withSession { state, session in
            let other = Session(state: state, peer: Self.root, name: "other")
            let beer = try Self.result(session, "insert", ["entity": "Beer", "values": ["name": "Before", "uuid": .string(UUID().uuidString)]])
            let id = try #require(beer["object"]?["id"]?.stringValue)
            #expect(Self.pending(session))
            _ = try Self.result(session, "save", [:])
            #expect(!Self.pending(session))

            func name(_ reader: Session) throws -> String? {
                try Self.result(reader, "get", ["ids": [.string(id)]])["objects"]?.arrayValue?.first?["values"]?["name"]?.stringValue
            }
            _ = try Self.result(session, "update", ["object": .string(id), "values": ["name": "Pending"]])
            #expect(Self.pending(session))
            #expect(try name(session) == "Pending") // its own context
            #expect(try name(other) == "Before")    // the view context: not saved yet

            _ = try Self.result(session, "rollback", [:])
            #expect(!Self.pending(session))
            #expect(try name(session) == "Before")

            // A failed write (an unknown property) leaves no changes behind: reads stay on the view context.
            let failed = try InsertSaveGroupCommitTests.ask(session, [WireRequest(id: 3, op: "update",
                                                                                   body: ["object": .string(id), "values": ["nope": 1]])])[0]
            #expect(failed["ok"] == .bool(false))
            #expect(!Self.pending(session))

            // A batch of writes leaving a change pending, then its save, seen by the other session at once.
            let batch = try InsertSaveGroupCommitTests.ask(session, [
                WireRequest(id: 4, op: "update", body: ["object": .string(id), "values": ["style": "Stout"]]),
                WireRequest(id: 5, op: "update", body: ["object": .string(id), "values": ["name": "Batched"]]),
            ])
            #expect(batch.allSatisfy { $0["ok"] == .bool(true) })
            #expect(Self.pending(session))
            #expect(try name(session) == "Batched")
            _ = try Self.result(session, "save", [:])
            #expect(!Self.pending(session))
            #expect(try name(other) == "Batched")
        }
    }
}
