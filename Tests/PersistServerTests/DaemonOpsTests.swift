import Foundation
import Testing
@testable import PersistServer

/// Every op against a live `persistd`, over a real socket.
@Suite("persistd ops", .timeLimit(.minutes(1)))
struct DaemonOpsTests {
    static let beerUUID = "6F9619FF-8B86-D011-B42D-00C04FC964FF"

    @Test("hello, ping, model and stats")
    func serverOps() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        let hello = try client.result(["op": "hello"])
        #expect(hello["protocol"] == 1)
        #expect(hello["server"] == .string("persistd/\(ServerState.version)"))
        #expect(hello["store"]?["type"] == "SQLite")
        #expect(UUID(uuidString: hello["store"]?.string("uuid") ?? "") != nil)
        #expect(hello["entities"] == ["Beer", "Bison", "Brewery", "Person", "Student", "Tag"])
        #expect(try client.result(["op": "ping"]) == ["pong": true])
        let model = try client.result(["op": "model"])
        let checked = try JSONParser.parse(ModelCheck.run(modelPath: DaemonHarness.modelPath).standardOutput)
        #expect(model == checked)
        let stats = try client.result(["op": "stats"])
        #expect(stats["connections"] == 1)
        #expect(stats["requestsServed"] == 3)
        #expect(stats["saves"] == 0)
        if case .integer(let size)? = stats["storeSize"] { #expect(size > 0) } else { Issue.record("no storeSize") }
        if case .double(let uptime)? = stats["uptime"] { #expect(uptime >= 0) } else { Issue.record("no uptime") }
    }

    @Test("insert returns the object with every value encoded; its ID is permanent and works before and after save")
    func insertGetSave() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        let storeUUID = try client.result(["op": "hello"])["store"]?.string("uuid") ?? ""
        let inserted = try client.result(["op": "insert", "entity": "Beer", "values": [
            "name": "90 Minute IPA", "abv": 9.0, "ibu": 90, "uuid": .string(Self.beerUUID),
            "brewedOn": "2026-01-31T12:00:00.000Z", "price": "3.99", "label": "AAEC", "website": "https://dogfish.com",
        ]])["object"]
        let id = inserted?.string("id") ?? ""
        #expect(id == "x-coredata://\(storeUUID)/Beer/p1")
        #expect(inserted?["entity"] == "Beer")
        #expect(inserted?["values"] == [
            "name": "90 Minute IPA", "abv": 9.0, "ibu": 90, "style": nil, "brewedOn": "2026-01-31T12:00:00.000Z",
            "uuid": .string(Self.beerUUID), "price": "3.99", "isFavorite": false, "label": "AAEC",
            "website": "https://dogfish.com", "brewery": nil, "tags": [],
        ])
        // Before save: the same connection sees it; another does not.
        #expect(try client.result(["op": "get", "ids": [.string(id)], "properties": ["name"]])
            == ["objects": [["id": .string(id), "entity": "Beer", "version": 0, "values": ["name": "90 Minute IPA"]]]])
        let other = try daemon.connect()
        #expect(try other.error(["op": "get", "ids": [.string(id)]])["code"] == "not_found")
        #expect(try other.result(["op": "count", "entity": "Beer"]) == ["count": 0])
        #expect(try client.result(["op": "count", "entity": "Beer"]) == ["count": 1])
        #expect(try client.result(["op": "save"]) == ["inserted": 1, "updated": 0, "deleted": 0])
        // After save: everyone sees it under the same ID.
        #expect(try other.result(["op": "get", "ids": [.string(id)]])["objects"]?.arrayValue?.first?["values"]?["price"] == "3.99")
        #expect(try client.result(["op": "get", "ids": [.string(id)]])["objects"]?.arrayValue?.first?.string("id") == id)
        #expect(try other.result(["op": "count", "entity": "Beer"]) == ["count": 1])
    }

    @Test("relationships: to-one as an ID, to-many as sorted IDs, inverses kept")
    func relationships() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        let brewery = try client.result(["op": "insert", "entity": "Brewery", "values": ["name": "Dogfish Head"]])["object"]?.string("id") ?? ""
        let tag1 = try client.result(["op": "insert", "entity": "Tag", "values": ["name": "hoppy"]])["object"]?.string("id") ?? ""
        let tag2 = try client.result(["op": "insert", "entity": "Tag", "values": ["name": "strong"]])["object"]?.string("id") ?? ""
        let beer = try client.result(["op": "insert", "entity": "Beer", "values": [
            "name": "120 Minute IPA", "uuid": .string(UUID().uuidString), "brewery": .string(brewery), "tags": [.string(tag2), .string(tag1)],
        ]])["object"]
        #expect(beer?["values"]?["brewery"] == .string(brewery))
        #expect(beer?["values"]?["tags"] == [.string(tag1), .string(tag2)])
        _ = try client.result(["op": "save"])
        let other = try daemon.connect()
        let breweryObject = try other.result(["op": "get", "ids": [.string(brewery)]])["objects"]?.arrayValue?.first
        #expect(breweryObject?["values"]?["beers"] == [.string(beer?.string("id") ?? "")])
    }

    @Test("update, delete, rollback and save counts")
    func updateDeleteRollback() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        var ids: [String] = []
        for name in ["a", "b", "c"] {
            ids.append(try client.result(["op": "insert", "entity": "Person", "values": ["name": .string(name), "age": 30]])["object"]?.string("id") ?? "")
        }
        _ = try client.result(["op": "save"])
        let updated = try client.result(["op": "update", "object": .string(ids[0]), "values": ["age": 31, "name": "A"]])
        #expect(updated["object"]?["values"] == ["name": "A", "age": 31])
        #expect(try client.result(["op": "delete", "object": .string(ids[1])]) == ["deleted": 1])
        #expect(try client.result(["op": "count", "entity": "Person"]) == ["count": 2])
        #expect(try client.result(["op": "rollback"]) == [:])
        #expect(try client.result(["op": "count", "entity": "Person"]) == ["count": 3])
        #expect(try client.result(["op": "get", "ids": [.string(ids[0])]])["objects"]?.arrayValue?.first?["values"]?["age"] == 30)
        _ = try client.result(["op": "update", "object": .string(ids[0]), "values": ["age": 32]])
        #expect(try client.result(["op": "delete", "ids": [.string(ids[1]), .string(ids[2])]]) == ["deleted": 2])
        #expect(try client.result(["op": "save"]) == ["inserted": 0, "updated": 1, "deleted": 2])
        #expect(try client.result(["op": "save"]) == ["inserted": 0, "updated": 0, "deleted": 0])
        let other = try daemon.connect()
        #expect(try other.result(["op": "fetch", "entity": "Person", "resultType": "ids"]) == ["ids": [.string(ids[0])]])
        #expect(try other.error(["op": "get", "ids": [.string(ids[1])]])["code"] == "not_found")
    }

    @Test("fetch: sort, limit, offset, properties and every result type, with pending changes included")
    func fetch() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        for (name, age) in [("carol", 41), ("Alice", 30), ("bob", 25), ("dave", 25)] as [(String, Int64)] {
            _ = try client.result(["op": "insert", "entity": "Person", "values": ["name": .string(name), "age": .integer(age)]])
        }
        _ = try client.result(["op": "save"])
        _ = try client.result(["op": "insert", "entity": "Person", "values": ["name": "erin", "age": 19]])
        let names = try client.result(["op": "fetch", "entity": "Person", "sort": [["key": "name", "caseInsensitive": true]],
                                       "properties": ["name"]])["objects"]?.arrayValue?.map { $0["values"]?["name"] ?? nil }
        #expect(names == ["Alice", "bob", "carol", "dave", "erin"])
        let page = try client.result(["op": "fetch", "entity": "Person", "sort": [["key": "age", "ascending": false], "name"],
                                      "limit": 2, "offset": 1, "resultType": "dictionaries", "properties": ["name", "age"]])
        #expect(page == ["rows": [["name": "Alice", "age": 30], ["name": "bob", "age": 25]]])
        #expect(try client.result(["op": "fetch", "entity": "Person", "resultType": "count"]) == ["count": 5])
        let ages = try client.result(["op": "fetch", "entity": "Person", "resultType": "dictionaries", "properties": ["age"],
                                      "distinct": true, "sort": ["age"]])
        // Dictionary rows come from the store: pending changes are not included (as in Core Data).
        #expect(ages == ["rows": [["age": 25], ["age": 30], ["age": 41]]])
        let other = try daemon.connect()
        #expect(try other.result(["op": "fetch", "entity": "Person", "resultType": "count"]) == ["count": 4])
    }

    @Test("pipelined requests are answered in order")
    func pipelining() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        var lines = ""
        for index in 0..<100 {
            let request: JSON = index % 3 == 0
                ? ["id": .integer(Int64(index)), "op": "insert", "entity": "Person", "values": ["name": .string("p\(index)")]]
                : (index % 3 == 1 ? ["id": .string("s\(index)"), "op": "count", "entity": "Person"] : ["id": .integer(Int64(index)), "op": "ping"])
            lines += request.encoded + "\n"
        }
        lines += #"{"id":"last","op":"save"}"# + "\n"
        try client.send(raw: Array(lines.utf8))
        for index in 0..<100 {
            let reply = try #require(try client.readLine())
            let expectedID: JSON = index % 3 == 1 ? .string("s\(index)") : .integer(Int64(index))
            #expect(reply["id"] == expectedID)
            #expect(reply["ok"] == true)
            if index % 3 == 1 { #expect(reply["result"]?["count"] == .integer(Int64(index / 3 + 1))) }
        }
        #expect(try client.readLine() == ["id": "last", "ok": true, "result": ["inserted": 34, "updated": 0, "deleted": 0]])
    }
}
