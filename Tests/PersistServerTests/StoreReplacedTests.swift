import Foundation
import Testing
@testable import PersistServer

/// The store file replaced, or its `-wal` deleted, under a running `persistd` (issue 9, item 7):
/// the next write is refused with `store_replaced`, reads go on from the file the daemon opened,
/// and everything acknowledged before is kept (a rescue copy, and the `-wal` checkpointed into
/// the store file). Both with the real daemon.
@Suite("Store file replaced or -wal deleted under persistd", .timeLimit(.minutes(1)))
struct StoreReplacedTests {
    /// Saves `names` as Person objects, one save.
    static func savePeople(_ names: [String], _ client: WireClient) throws {
        for name in names { _ = try client.result(["op": "insert", "entity": "Person", "values": ["name": .string(name)]]) }
        _ = try client.result(["op": "save"])
    }

    /// The error of inserting one more Person and saving (the insert itself may be refused).
    static func refusedWrite(_ client: WireClient) throws -> JSON {
        let reply = try client.request(["op": "insert", "entity": "Person", "values": ["name": "late"]])
        if reply["ok"] == .bool(false), let error = reply["error"] { return error }
        return try client.error(["op": "save"])
    }

    /// The rescue copies next to the store.
    static func rescueCopies(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasPrefix("store.sqlite.rescued-") }
    }

    static func personCount(_ path: String) throws -> String {
        try CrashRecoveryTests.sqlite(path, "SELECT COUNT(*) FROM ZPERSON;")
    }

    @Test("another file renamed over the store: writes refused with store_replaced, reads go on, nothing lost")
    func storeFileReplaced() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let writer = try daemon.connect()
        defer { writer.close() }
        try Self.savePeople(["a", "b", "c"], writer)

        // Another SQLite database, renamed over the store as `mv other store.sqlite` would.
        let other = daemon.directory.appendingPathComponent("other.sqlite").path
        #expect(try CrashRecoveryTests.sqlite(other, "CREATE TABLE unrelated(x); INSERT INTO unrelated VALUES (1);") == "")
        #expect(rename(other, daemon.storePath) == 0)

        let error = try Self.refusedWrite(writer)
        #expect(error.string("code") == "store_replaced")
        #expect(error.string("message").contains("replaced by another file"))
        #expect(error.string("message").contains("store.sqlite.rescued-"))
        // Refused again, not only once.
        _ = try writer.result(["op": "rollback"])
        #expect(try Self.refusedWrite(writer).string("code") == "store_replaced")

        // Reads are answered, from the file the daemon opened.
        let reader = try daemon.connect()
        #expect(try reader.result(["op": "count", "entity": "Person"]) == ["count": 3])
        reader.close()

        // Everything acknowledged is in the rescue copy; the file now at the path is untouched.
        let copies = try Self.rescueCopies(in: daemon.directory)
        #expect(copies.count == 1)
        if let copy = copies.first {
            #expect(try Self.personCount(copy.path) == "3")
            #expect(try CrashRecoveryTests.sqlite(copy.path, "PRAGMA integrity_check;") == "ok")
        }
        #expect(try CrashRecoveryTests.sqlite(daemon.storePath, "SELECT x FROM unrelated;") == "1")
    }

    @Test("the -wal deleted: writes refused with store_replaced, acknowledged saves reach the store file")
    func walDeleted() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try DaemonHarness.start(directory: directory)
        let writer = try daemon.connect()
        try Self.savePeople(["a", "b"], writer)
        try Self.savePeople(["c", "d", "e"], writer)
        let wal = daemon.storePath + "-wal"
        #expect(FileManager.default.fileExists(atPath: wal))
        try FileManager.default.removeItem(atPath: wal)

        let error = try Self.refusedWrite(writer)
        #expect(error.string("code") == "store_replaced")
        #expect(error.string("message").contains("-wal file was deleted"))
        writer.close()
        let reader = try daemon.connect()
        #expect(try reader.result(["op": "count", "entity": "Person"]) == ["count": 5])
        reader.close()
        daemon.stop()
        #expect(daemon.standardError.contains("refusing writes: its -wal file was deleted"), "logged")

        // The daemon copied the deleted WAL's frames into the store file before refusing.
        #expect(try Self.personCount(daemon.storePath) == "5")
        #expect(try CrashRecoveryTests.sqlite(daemon.storePath, "PRAGMA integrity_check;") == "ok")
        let copies = try Self.rescueCopies(in: directory)
        #expect(copies.count == 1)
        if let copy = copies.first { #expect(try Self.personCount(copy.path) == "5") }

        // A restarted daemon serves the store and writes again.
        let again = try DaemonHarness.start(directory: directory)
        let client = try again.connect()
        try Self.savePeople(["f"], client)
        #expect(try client.result(["op": "count", "entity": "Person"]) == ["count": 6])
        client.close()
        again.stop()
    }
}
