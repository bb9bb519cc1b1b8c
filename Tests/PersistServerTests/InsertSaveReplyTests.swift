import Foundation
@testable import PersistKit
import Testing
@testable import PersistServer

/// The replies of a pipelined `insert`+`save` (written straight into bytes) are the replies
/// of the same `insert` and `save` sent one by one (built as `JSON` trees): every attribute
/// type, relationships, escapes, and a failed save.
@Suite("Insert and save: replies written into bytes", .timeLimit(.minutes(1)))
struct InsertSaveReplyTests {
    typealias G = InsertSaveGroupCommitTests

    /// The reply line of `reply` with the `id` and the `uuid` value of its `result.object`
    /// emptied (they differ between two inserts), as text.
    static func withoutObjectID(_ reply: JSON) -> String {
        guard case .object(var members) = reply, let resultIndex = members.firstIndex(where: { $0.key == "result" }),
              case .object(var result) = members[resultIndex].value, let objectIndex = result.firstIndex(where: { $0.key == "object" }),
              case .object(var object) = result[objectIndex].value, let idIndex = object.firstIndex(where: { $0.key == "id" }),
              let valuesIndex = object.firstIndex(where: { $0.key == "values" }), case .object(var values) = object[valuesIndex].value,
              let uuidIndex = values.firstIndex(where: { $0.key == "uuid" }) else {
            return reply.encoded
        }
        object[idIndex].value = .string("")
        values[uuidIndex].value = .string("")
        object[valuesIndex].value = .object(values)
        result[objectIndex].value = .object(object)
        members[resultIndex].value = .object(result)
        return JSON.object(members).encoded
    }

    /// The reply lines of `requests` sent as one pipelined batch, as bytes.
    static func lines(_ session: Session, _ requests: [WireRequest]) throws -> [[UInt8]] {
        let replies = Locked<[[UInt8]]?>(nil)
        let done = DispatchSemaphore(value: 0)
        session.handle(requests) { answers in
            replies.withLock { $0 = answers.map(\.line) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        return try #require(replies.withLock { $0 })
    }

    static func parsed(_ line: [UInt8]) throws -> JSON {
        try JSONParser.parse(line.dropLast())
    }

    @Test("every attribute type and relationship: the same reply lines as an insert and a save one by one")
    func pipelinedRepliesMatchOneByOne() throws {
        try G.withState { state, _ in
            let writer = Session(state: state, peer: G.root, name: "writer")
            let brewery = try InProcessServerState.result(writer, "insert", ["entity": "Brewery", "values": [
                "name": "North", "city": "Oslo", "founded": 1911]])["object"]?.string("id") ?? ""
            let tag = try InProcessServerState.result(writer, "insert", ["entity": "Tag", "values": ["name": "hoppy"]])["object"]?.string("id") ?? ""
            _ = try InProcessServerState.result(writer, "save")
            // Each insert has a new `uuid` (unique and required in the model).
            let shapes: [(UUID) -> [JSON.Member]] = [
                { uuid in [
                    JSON.Member("name", .string("beer \"quoted\" é \\ \u{1}")), JSON.Member("abv", .double(4.5)),
                    JSON.Member("ibu", .integer(20)), JSON.Member("isFavorite", .bool(true)),
                    JSON.Member("brewedOn", .string("2024-01-02T03:04:05Z")), JSON.Member("price", .string("1.25")),
                    JSON.Member("brewery", .string(brewery)), JSON.Member("uuid", .string(uuid.uuidString)),
                    JSON.Member("label", .string("AAEC")), JSON.Member("website", .string("https://example.com/1")),
                    JSON.Member("tags", .array([.string(tag)])),
                ] },
                { uuid in [JSON.Member("name", .string("plain")), JSON.Member("uuid", .string(uuid.uuidString))] },
            ]
            for (index, values) in shapes.enumerated() {
                func insert() -> WireRequest {
                    WireRequest(id: .integer(Int64(2 * index + 1)), op: "insert",
                                body: .object([JSON.Member("entity", .string("Beer")), JSON.Member("values", .object(values(UUID())))]))
                }
                let save = WireRequest(id: .string("save \(index)"), op: "save", body: [:])
                let alone = [try Self.lines(writer, [insert()]), try Self.lines(writer, [save])].flatMap { $0 }
                let pipelined = try Self.lines(writer, [insert(), save])
                #expect(pipelined.count == 2)
                guard pipelined.count == 2 else { return }
                // The save's line is the very same bytes; the insert's differs only in its ID.
                #expect(pipelined[1] == alone[1], "\(String(decoding: pipelined[1], as: UTF8.self))")
                #expect(Self.withoutObjectID(try Self.parsed(pipelined[0])) == Self.withoutObjectID(try Self.parsed(alone[0])))
                // The ID is the permanent one the object kept; the line is compact JSON.
                let reply = try Self.parsed(pipelined[0])
                #expect(G.isPermanent(G.objectID(reply)))
                #expect(reply.encoded + "\n" == String(decoding: pipelined[0], as: UTF8.self))
                #expect(reply["result"]?["object"]?["version"] == .integer(0))
            }
        }
    }

    @Test("a save that fails in the batch: the same error as alone; the insert still has its permanent ID")
    func failedSaveMatchesOneByOne() throws {
        try G.withState { state, _ in
            let writer = Session(state: state, peer: G.root, name: "writer")
            let other = Session(state: state, peer: G.root, name: "other")
            // No name: the save fails validation.
            let insert = WireRequest(id: 1, op: "insert", body: ["entity": "Beer", "values": ["ibu": 7, "uuid": .string(UUID().uuidString)]])
            let pipelined = try Self.lines(writer, [insert, WireRequest(id: 2, op: "save", body: [:])])
            _ = try InProcessServerState.result(writer, "rollback")
            _ = try Self.lines(other, [insert])
            let alone = try Self.lines(other, [WireRequest(id: 2, op: "save", body: [:])])
            #expect(pipelined.count == 2)
            guard pipelined.count == 2 else { return }
            let failed = try Self.parsed(pipelined[1])
            #expect(failed["ok"] == .bool(false))
            // (The error names the object, whose ID differs between the two sessions.)
            #expect(failed["id"] == .integer(2))
            #expect(failed["error"]?["code"] == (try Self.parsed(alone[0]))["error"]?["code"])
            let reply = try Self.parsed(pipelined[0])
            #expect(reply["ok"] == .bool(true))
            #expect(G.isPermanent(G.objectID(reply)))
            #expect(reply.encoded + "\n" == String(decoding: pipelined[0], as: UTF8.self))
        }
    }
}
