import CFaultVFS
import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// The server layer when the disk fails: a `Session` served in process on a container whose store
/// goes through the fault-injecting VFS (`Sources/CFaultVFS`; never linked into persistd). A
/// `save` whose write or sync fails, or meets a full disk, gets a clear error reply; the session
/// keeps its changes and answers its next requests; other sessions are served; the next `save`
/// writes everything (docs/RELIABILITY.md).
@Suite("Fault injection: the server keeps serving")
struct FaultInjectionServerTests {
    /// A container like persistd's on a store in `directory`, through the fault VFS, with
    /// synchronous=FULL so commits sync.
    static func state(directory: URL) throws -> ServerState {
        try InProcessServerState.make(directory: directory) { options in
            options.sqlitePragmas = ["synchronous": "FULL"]
            options.sqliteVFSName = PERSIST_FAULT_VFS_NAME
        }
    }

    @Test("a save failed by a write error, an fsync error or a full disk is a clear error; the session and others go on",
          .timeLimit(.minutes(1)))
    func keepsServing() throws {
        // SQLite's process-wide settings first: registering initializes SQLite (SQLiteLibrary).
        SQLiteLibrary.prepare()
        #expect(persist_fault_vfs_register() == 0)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persistd-fault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let scope = persist_fault_scope_open(directory.path)
        try #require(scope >= 0)
        defer { persist_fault_scope_close(scope) }
        let state = try Self.state(directory: directory)
        let root = PeerCredentials(processID: getpid(), userID: 0, groupID: 0)
        let session = Session(state: state, peer: root, name: "faulty")

        let brewery = try InProcessServerState.result(session, "insert", ["entity": "Brewery", "values": ["name": "Brasserie"]])["object"]?.string("id") ?? ""
        var beers: [String] = []
        for index in 0..<7 {
            beers.append(try InProcessServerState.result(session, "insert", ["entity": "Beer", "values": [
                "name": .string("beer \(index)"), "uuid": .string(UUID().uuidString), "brewery": .string(brewery),
            ]])["object"]?.string("id") ?? "")
        }
        #expect(try InProcessServerState.result(session, "save") == ["inserted": 8, "updated": 0, "deleted": 0])

        let faults: [(kind: Int32, code: Int32, persistent: Int32, named: String)] = [
            (Int32(PERSIST_FAULT_WRITE), 10 | (3 << 8), 0, "disk I/O error (SQLITE_IOERR_WRITE)"),
            (Int32(PERSIST_FAULT_SYNC), 10 | (4 << 8), 0, "disk I/O error (SQLITE_IOERR_FSYNC)"),
            (Int32(PERSIST_FAULT_WRITE), 13, 1, "database or disk is full (SQLITE_FULL)"),
        ]
        for (round, fault) in faults.enumerated() {
            // A change of inserts, updates, deletes and relationships, then its save fails.
            let tag = try InProcessServerState.result(session, "insert", ["entity": "Tag", "values": [
                "name": .string("tag \(round)"), "beers": [.string(beers[round])],
            ]])["object"]?.string("id") ?? ""
            _ = try InProcessServerState.result(session, "update", ["object": .string(beers[round]), "values": ["abv": .double(6.5 + Double(round))]])
            _ = try InProcessServerState.result(session, "delete", ["object": .string(beers[4 + round])])
            persist_fault_arm(scope, fault.kind, 1, fault.code, fault.persistent)
            let failed = InProcessServerState.ask(session, "save")
            persist_fault_disarm(scope)
            #expect(failed["ok"] == false)
            #expect(failed["error"]?.string("code") == "internal")
            #expect(failed["error"]?.string("message") == "saving to the store failed: \(fault.named)", "\(failed.encoded)")
            // The same session is served, with its changes still pending; so is a new one.
            #expect(try InProcessServerState.result(session, "ping") == ["pong": true])
            #expect(try InProcessServerState.result(session, "get", ["ids": [.string(tag)], "properties": ["name"]])["objects"]?.arrayValue?.count == 1)
            let other = Session(state: state, peer: root, name: "other \(round)")
            #expect(InProcessServerState.ask(other, "get", ["ids": [.string(tag)]])["error"]?.string("code") == "not_found")
            #expect(try InProcessServerState.result(other, "count", ["entity": "Tag"]) == ["count": .integer(Int64(round))])
            // The next save writes everything.
            let saved = try InProcessServerState.result(session, "save")
            #expect(saved["inserted"] == 1 && saved["deleted"] == 1, "\(saved.encoded)")
            #expect(try InProcessServerState.result(other, "count", ["entity": "Tag"]) == ["count": .integer(Int64(round + 1))])
            let beer = try InProcessServerState.result(other, "get", ["ids": [.string(beers[round])]])["objects"]?.arrayValue?.first
            #expect(beer?["values"]?["abv"] == .double(6.5 + Double(round)))
            #expect(beer?["values"]?["tags"] == [.string(tag)])
            other.close {}
        }
        #expect(persist_fault_injected(scope) == 3)
        #expect(try InProcessServerState.result(session, "count", ["entity": "Beer"]) == ["count": 4])
        session.close {}
    }
}
