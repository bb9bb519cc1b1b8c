import Foundation
import Testing
@testable import PersistServer

/// Objects carry their stored version, and `update`/`delete` with `version` are made only if
/// nobody saved the object since it was read — across connections and across daemons.
@Suite("versions and conditional changes", .timeLimit(.minutes(1)))
struct DaemonVersionTests {
    /// A saved Beer's ID, made on `client`.
    static func savedBeer(_ client: WireClient, abv: Double = 5.0) throws -> String {
        let id = try client.insertBeer("versioned", abv: abv)
        try client.save()
        return id
    }

    static func version(of id: String, on client: WireClient) throws -> Int64? {
        let objects = try client.result(["op": "get", "ids": [.string(id)]])["objects"]?.arrayValue
        guard case .integer(let version)? = objects?.first?["version"] else { return nil }
        return version
    }

    @Test("versions count saves: 0 unsaved, 1 after insert, one more per saved update")
    func versionsCountSaves() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        let inserted = try client.result(["op": "insert", "entity": "Tag", "values": ["name": "new"]])
        #expect(inserted["object"]?["version"] == .integer(0))
        let id = inserted["object"]?.string("id") ?? ""
        try client.save()
        #expect(try Self.version(of: id, on: client) == 1)
        for expected in Int64(2)...4 {
            let updated = try client.result(["op": "update", "object": .string(id), "values": ["name": .string("v\(expected)")]])
            #expect(updated["object"]?["version"] == .integer(expected - 1), "pending changes are based on the stored version")
            try client.save()
            #expect(try Self.version(of: id, on: client) == expected)
        }
        // Fetches and another connection see the same version.
        let other = try daemon.connect()
        let fetched = try other.result(["op": "fetch", "entity": "Tag"])["objects"]?.arrayValue?.first
        #expect(fetched?["version"] == .integer(4))
    }

    @Test("an update based on an old version fails at once, changes nothing, and returns the stored state")
    func staleUpdateIsRefused() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let reader = try daemon.connect(), writer = try daemon.connect()
        let id = try Self.savedBeer(writer)
        let read = try #require(try Self.version(of: id, on: reader))
        _ = try writer.result(["op": "update", "object": .string(id), "values": ["abv": 6.0]])
        try writer.save()

        let error = try reader.error(["op": "update", "object": .string(id), "version": .integer(read), "values": ["abv": 7.0]])
        #expect(error["code"] == "merge_conflict")
        #expect(error["conflicts"] == [["object": .string(id), "version": .integer(read), "storeVersion": .integer(read + 1)]])
        #expect(error["current"]?["version"] == .integer(read + 1))
        #expect(error["current"]?["values"]?["abv"] == .double(6.0))
        #expect(try reader.result(["op": "save"]) == ["inserted": 0, "updated": 0, "deleted": 0], "the refused update left nothing pending")

        // Retried from the state the error carried: made.
        _ = try reader.result(["op": "update", "object": .string(id), "version": .integer(read + 1), "values": ["abv": 7.0]])
        try reader.save()
        let stored = try writer.result(["op": "get", "ids": [.string(id)]])["objects"]?.arrayValue?.first
        #expect(stored?["values"]?["abv"] == .double(7.0))
        #expect(stored?["version"] == .integer(read + 2))
    }

    @Test("a save between a conditional update and its save is a conflict at save")
    func saveInBetweenConflicts() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let first = try daemon.connect(), second = try daemon.connect()
        let id = try Self.savedBeer(first)
        _ = try first.result(["op": "update", "object": .string(id), "version": 1, "values": ["abv": 8.0]])
        _ = try second.result(["op": "update", "object": .string(id), "version": 1, "values": ["abv": 9.0]])
        try second.save()
        let error = try first.error(["op": "save"])
        #expect(error["code"] == "merge_conflict")
        #expect(error["conflicts"]?.arrayValue?.contains { $0["key"] == "abv" && $0["theirs"] == .double(9.0) } == true)
        _ = try first.result(["op": "rollback"])
        #expect(try Self.version(of: id, on: first) == 2)
    }

    @Test("conditional deletes; an object deleted since it was read")
    func conditionalDelete() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let first = try daemon.connect(), second = try daemon.connect()
        let id = try Self.savedBeer(first)
        _ = try second.result(["op": "update", "object": .string(id), "values": ["abv": 4.0]])
        try second.save()
        #expect(try first.error(["op": "delete", "object": .string(id), "version": 1])["code"] == "merge_conflict")
        #expect(try first.result(["op": "delete", "object": .string(id), "version": 2]) == ["deleted": 1])
        try first.save()

        // Deleted since it was read: a fresh transaction finds no such object.
        #expect(try second.error(["op": "update", "object": .string(id), "version": 2, "values": ["abv": 1.0]])["code"] == "not_found")
    }

    @Test("an object this connection holds at an older version, deleted in the store since")
    func heldObjectDeletedInStore() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let first = try daemon.connect(), second = try daemon.connect()
        let id = try Self.savedBeer(first)
        // `second` has a pending change, so its reads go through its own context, which now holds the object at version 1.
        _ = try second.result(["op": "insert", "entity": "Tag", "values": ["name": "pending"]])
        #expect(try Self.version(of: id, on: second) == 1)
        _ = try first.result(["op": "update", "object": .string(id), "values": ["abv": 3.0]])
        try first.save()
        _ = try first.result(["op": "delete", "object": .string(id)])
        try first.save()
        // A client that read version 2 elsewhere: the held copy is older, the store has no row.
        let error = try second.error(["op": "update", "object": .string(id), "version": 2, "values": ["abv": 1.0]])
        #expect(error["code"] == "merge_conflict")
        #expect(error["conflicts"] == [["object": .string(id), "deletedInStore": true]])
        #expect(try second.result(["op": "save"]) == ["inserted": 1, "updated": 0, "deleted": 0], "the tag is saved, the refused update is not")
    }

    @Test("a malformed version is bad_request")
    func malformedVersion() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        let id = try Self.savedBeer(client)
        for bad: JSON in ["1", -1, 1.5, true] {
            let error = try client.error(["op": "update", "object": .string(id), "version": bad, "values": ["abv": 2.0]])
            #expect(error["code"] == "bad_request", "\(bad.encoded): \(error.encoded)")
        }
    }

    @Test("two daemons: an update based on a version read on A is refused once B saved the object")
    func acrossDaemons() throws {
        let (a, b) = try DaemonSharingTests.pair()
        defer { b.stop(); a.stop() }
        let onA = try a.connect(), onB = try b.connect()
        let id = try Self.savedBeer(onA)
        // B may see the row a few milliseconds late; ask until it does.
        var seen: Int64?
        for _ in 0..<200 where seen == nil {
            seen = try? Self.version(of: id, on: onB)
            if seen == nil { usleep(10_000) }
        }
        #expect(seen == 1)
        _ = try onB.result(["op": "update", "object": .string(id), "version": 1, "values": ["abv": 6.5]])
        try onB.save()
        let error = try onA.error(["op": "update", "object": .string(id), "version": 1, "values": ["abv": 7.5]])
        #expect(error["code"] == "merge_conflict")
        #expect(error["current"]?["values"]?["abv"] == .double(6.5))
    }
}
