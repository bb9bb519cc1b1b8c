import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// Every error code of protocol v1, provoked over a real socket.
@Suite("persistd errors", .timeLimit(.minutes(1)))
struct DaemonErrorTests {
    @Test("request errors: bad_request, unknown_op, unknown_entity, unknown_property, type_mismatch, not_found")
    func requestErrors() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        #expect(try client.error(["op": "insert", "values": [:]]) == ["code": "bad_request", "message": #"insert needs "entity""#])
        #expect(try client.error(["op": "fetch", "entity": "Beer", "limit": -1])["code"] == "bad_request")
        #expect(try client.error(["op": "frobnicate"]) == ["code": "unknown_op", "message": #"unknown op "frobnicate""#, "op": "frobnicate"])
        #expect(try client.error(["op": "insert", "entity": "Wine"])
            == ["code": "unknown_entity", "message": #"the model has no entity "Wine""#, "entity": "Wine"])
        #expect(try client.error(["op": "insert", "entity": "Beer", "values": ["color": "amber"]])
            == ["code": "unknown_property", "message": #"entity Beer has no property "color""#, "entity": "Beer", "key": "color"])
        #expect(try client.error(["op": "fetch", "entity": "Beer", "sort": ["brewery.nope"]])["code"] == "unknown_property")
        #expect(try client.error(["op": "insert", "entity": "Beer", "values": ["abv": "strong"]])
            == ["code": "type_mismatch", "message": "Beer.abv takes a number, not a string", "key": "abv"])
        #expect(try client.error(["op": "insert", "entity": "Beer", "values": ["ibu": 99999]])
            == ["code": "type_mismatch", "message": "99999 is out of range for Beer.ibu, which is integer16", "key": "ibu"])
        #expect(try client.error(["op": "insert", "entity": "Beer", "values": ["price": 3.5]])["code"] == "type_mismatch")
        #expect(try client.error(["op": "insert", "entity": "Beer", "values": ["brewedOn": "yesterday"]])["code"] == "type_mismatch")
        let storeUUID = try client.result(["op": "hello"])["store"]?.string("uuid") ?? ""
        let person = try client.result(["op": "insert", "entity": "Person", "values": ["name": "x"]])["object"]?.string("id") ?? ""
        #expect(try client.error(["op": "insert", "entity": "Beer", "values": ["brewery": .string(person)]])
            == ["code": "type_mismatch", "message": "Beer.brewery takes a Brewery, not a Person", "key": "brewery"])
        let missing = "x-coredata://\(storeUUID)/Beer/p999"
        #expect(try client.error(["op": "get", "ids": [.string(missing)]])
            == ["code": "not_found", "message": "no object \(missing)", "object": .string(missing)])
        #expect(try client.error(["op": "update", "object": .string(missing), "values": [:]])["code"] == "not_found")
        #expect(try client.error(["op": "delete", "object": "x-coredata://0000/Beer/p1"])["code"] == "not_found")
        #expect(try client.error(["op": "get", "ids": ["not an id"]])["code"] == "bad_request")
        // Nothing above left a half-inserted object behind.
        #expect(try client.result(["op": "count", "entity": "Beer"]) == ["count": 0])
    }

    @Test("save errors: validation_failed lists every object and key; constraint_violation; the changes stay until rollback")
    func saveErrors() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        let beer = try client.result(["op": "insert", "entity": "Beer", "values": ["abv": 120.0]])["object"]?.string("id") ?? ""
        let error = try client.error(["op": "save"])
        #expect(error["code"] == "validation_failed")
        let keys = Set(error["errors"]?.arrayValue?.map { $0.string("key") } ?? [])
        #expect(keys == ["name", "uuid", "abv"])
        #expect(error["errors"]?.arrayValue?.allSatisfy { $0.string("object") == beer && $0.string("code") == "validation_failed" } == true)
        #expect(try client.result(["op": "count", "entity": "Beer"]) == ["count": 1])
        #expect(try client.result(["op": "rollback"]) == [:])
        #expect(try client.result(["op": "count", "entity": "Beer"]) == ["count": 0])

        _ = try client.result(["op": "insert", "entity": "Tag", "values": ["name": "hoppy"]])
        _ = try client.result(["op": "save"])
        _ = try client.result(["op": "insert", "entity": "Tag", "values": ["name": "hoppy"]])
        let constraint = try client.error(["op": "save"])
        #expect(constraint["code"] == "constraint_violation")
        #expect(constraint["errors"]?.arrayValue?.first?.string("key") == "name")
    }

    @Test("merge_conflict: a save over another connection's save of the same object")
    func mergeConflict() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let first = try daemon.connect(), second = try daemon.connect()
        let id = try first.result(["op": "insert", "entity": "Person", "values": ["name": "x", "age": 1]])["object"]?.string("id") ?? ""
        _ = try first.result(["op": "save"])
        _ = try first.result(["op": "update", "object": .string(id), "values": ["age": 2]])
        _ = try second.result(["op": "update", "object": .string(id), "values": ["age": 3]])
        _ = try second.result(["op": "save"])
        let conflict = try first.error(["op": "save"])
        #expect(conflict["code"] == "merge_conflict")
        #expect(conflict["errors"]?.arrayValue?.first?.string("object") == id)
        _ = try first.result(["op": "rollback"])
        #expect(try first.result(["op": "get", "ids": [.string(id)]])["objects"]?.arrayValue?.first?["values"]?["age"] == 3)
    }

    @Test("delete_denied: a deny rule refuses the delete at save")
    func deleteDenied() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = directory.appendingPathComponent("deny.json")
        try Data(#"""
            { "entities": [
              { "name": "Owner", "attributes": [{ "name": "name", "type": "string" }],
                "relationships": [{ "name": "pets", "destination": "Pet", "inverse": "owner", "toMany": true, "deleteRule": "deny" }] },
              { "name": "Pet", "attributes": [{ "name": "name", "type": "string" }],
                "relationships": [{ "name": "owner", "destination": "Owner", "inverse": "pets", "deleteRule": "nullify" }] }
            ] }
            """#.utf8).write(to: model)
        let daemon = try DaemonHarness.start(model: model.path, directory: directory)
        defer { daemon.stop() }
        let client = try daemon.connect()
        let owner = try client.result(["op": "insert", "entity": "Owner", "values": ["name": "o"]])["object"]?.string("id") ?? ""
        _ = try client.result(["op": "insert", "entity": "Pet", "values": ["name": "p", "owner": .string(owner)]])
        _ = try client.result(["op": "save"])
        #expect(try client.result(["op": "delete", "object": .string(owner)]) == ["deleted": 1])
        let denied = try client.error(["op": "save"])
        #expect(denied["code"] == "delete_denied")
        #expect(denied["errors"]?.arrayValue?.first?.string("key") == "pets")
    }

    @Test("unauthorized: a peer whose user is not allowed is refused at connect (root never is: AccessTests runs a client as nobody)")
    func unauthorized() throws {
        let daemon = try DaemonHarness.start(["--allow-uids", "4242424"])
        defer { daemon.stop() }
        #expect(try daemon.connect().result(["op": "ping"]) == ["pong": true])
    }

    @Test("internal: PersistKit errors that are not the client's fault")
    func internalMapping() {
        let error = WireError(persistenceError: PersistenceErrorFixture.sqlite)
        #expect(error.code == .internal)
        #expect(error.message == "disk I/O error")
    }

    @Test("a malformed line gets an error and the connection stays open for the next")
    func malformedThenGood() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        try client.send(raw: Array("{not json\n[1]\n{\"id\":9}\n{\"id\":10,\"op\":\"ping\"}\r\n".utf8))
        #expect(try client.readLine()?["error"]?["code"] == "bad_request")
        #expect(try client.readLine() == ["id": nil, "ok": false, "error": ["code": "bad_request", "message": "a request must be a JSON object, not an array"]])
        #expect(try client.readLine() == ["id": 9, "ok": false, "error": ["code": "bad_request", "message": #"the request has no "op""#]])
        #expect(try client.readLine() == ["id": 10, "ok": true, "result": ["pong": true]])
    }

    @Test("line_too_long: the error, then the connection is closed; others are unaffected")
    func lineTooLong() throws {
        let daemon = try DaemonHarness.start(["--max-line", "64"])
        defer { daemon.stop() }
        let client = try daemon.connect()
        #expect(try client.result(["op": "ping"]) == ["pong": true])
        try client.send(line: #"{"op":"ping","padding":""# + String(repeating: "x", count: 100) + #""}"#)
        #expect(try client.readLine() == ["id": nil, "ok": false, "error": [
            "code": "line_too_long", "message": "the line is longer than 64 bytes; closing the connection", "limit": 64]])
        #expect(try client.readLine() == nil)
        #expect(try daemon.connect().result(["op": "ping"]) == ["pong": true])
    }
}

/// PersistKit errors for mapping tests.
enum PersistenceErrorFixture {
    static let sqlite = PersistKit.PersistenceError(.sqlite, "disk I/O error")
}
