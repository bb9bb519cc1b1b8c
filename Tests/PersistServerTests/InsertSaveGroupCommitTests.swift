import Dispatch
import Foundation
@testable import PersistKit
import Testing
@testable import PersistServer

/// `insert` then `save` pipelined on one connection, and many connections saving at once:
/// sessions served in process on a SQLite container like persistd's, so the store's group
/// commit counters can be read. An insert saved in the same batch shares the save's
/// transaction and is answered with the ID the object keeps; concurrent sessions' saves share
/// transactions, each is answered once, and all are durable and readable from other sessions.
@Suite("Insert and save: one transaction, shared by concurrent sessions")
struct InsertSaveGroupCommitTests {
    /// Runs `body` with a server state on a new store in a temporary directory.
    static func withState(_ body: (ServerState, SQLiteStore) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persistd-insert-save-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = try InProcessServerState.make(directory: directory)
        let store = try #require(state.store as? SQLiteStore)
        try body(state, store)
    }

    /// A peer with write access (the owner of the store: root, as in the fault injection tests).
    static let root = PeerCredentials(processID: getpid(), userID: 0, groupID: 0)

    /// The requests of one pipelined batch: `(op, body)` each, numbered from 1.
    static func requests(_ ops: [(String, JSON)]) -> [WireRequest] {
        ops.enumerated().map { WireRequest(id: .integer(Int64($0.offset + 1)), op: $0.element.0, body: $0.element.1) }
    }

    /// Sends `requests` to `session` as one batch and waits for the replies.
    static func ask(_ session: Session, _ requests: [WireRequest]) throws -> [JSON] {
        let replies = Locked<[JSON]?>(nil)
        let done = DispatchSemaphore(value: 0)
        session.handle(requests) { answers in
            replies.withLock { $0 = answers.map(\.json) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        return try #require(replies.withLock { $0 })
    }

    static func insertBeer(_ name: String?, uuid: UUID = UUID()) -> (String, JSON) {
        var values: [JSON.Member] = [JSON.Member("uuid", .string(uuid.uuidString))]
        if let name { values.append(JSON.Member("name", .string(name))) }
        return ("insert", .object([JSON.Member("entity", .string("Beer")), JSON.Member("values", .object(values))]))
    }

    /// Holds `store`'s commit queue (its leadership, without its connection) on another thread,
    /// in `group`, until `release` is signalled, so that the writes submitted meanwhile wait for
    /// the next group; returns once the hold leads the queue (false after 30 s without).
    static func holdQueue(of store: SQLiteStore, until release: DispatchSemaphore, in group: DispatchGroup) -> Bool {
        let leading = DispatchSemaphore(value: 0)
        DispatchQueue.global().async(group: group) {
            let hold = SQLiteCommitQueue.Write(what: "holding the queue") { _ in }
            try? store.commitQueue.submit(hold) { _ in
                leading.signal()
                release.wait()
            }
        }
        return leading.wait(timeout: .now() + 30) == .success
    }

    /// Waits (bounded, no timing asserted) until `count` writes wait in `store`'s queue, then
    /// signals `release` and waits for the writers (`done`) and the hold (`holder`); returns
    /// whether every write had queued before the release.
    static func releaseOnceQueued(_ count: Int, in store: SQLiteStore, release: DispatchSemaphore,
                                  done: DispatchGroup, holder: DispatchGroup) -> Bool {
        var queued = false
        for _ in 0..<30_000 where !queued {
            queued = store.commitQueue.waitingCount == count
            if !queued { usleep(1_000) }
        }
        release.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(holder.wait(timeout: .now() + 30) == .success)
        return queued
    }

    static func objectID(_ reply: JSON) -> String? {
        reply["result"]?["object"]?["id"]?.stringValue
    }

    /// Whether `text` is a permanent ID of this store's form (`x-coredata://<store>/Beer/p<key>`).
    static func isPermanent(_ text: String?) -> Bool {
        guard let text else { return false }
        return text.hasPrefix("x-coredata://") && !text.hasPrefix("x-coredata:///") && text.contains("/Beer/p")
    }

    @Test("an insert saved in the same batch commits in the save's one transaction and is answered with the ID it keeps",
          .timeLimit(.minutes(1)))
    func insertThenSaveIsOneTransaction() throws {
        try Self.withState { state, store in
            let writer = Session(state: state, peer: Self.root, name: "writer")
            let reader = Session(state: state, peer: Self.root, name: "reader")
            let before = store.groupCommitCounters
            let replies = try Self.ask(writer, Self.requests([Self.insertBeer("Pliny"), ("save", [:])]))
            #expect(replies.count == 2)
            #expect(replies[0]["ok"] == .bool(true))
            #expect(replies[0]["id"] == .integer(1))
            #expect(replies[0]["result"]?["object"]?["version"] == .integer(0), "the insert's reply is of the object before its save")
            #expect(replies[1]["result"] == .object(["inserted": .integer(1), "updated": .integer(0), "deleted": .integer(0)]))
            let id = Self.objectID(replies[0])
            #expect(Self.isPermanent(id), "\(id ?? "no id")")
            let after = store.groupCommitCounters
            #expect(after.groups - before.groups == 1, "the key and the row in one transaction")
            #expect(after.committed - before.committed == 1)

            // The ID is the one the object kept: another connection reads it by that ID.
            let read = try Self.ask(reader, Self.requests([("get", .object([JSON.Member("ids", .array([.string(id ?? "")]))]))]))
            #expect(read[0]["result"]?["objects"]?.arrayValue?.first?["values"]?["name"] == .string("Pliny"))
            #expect(read[0]["result"]?["objects"]?.arrayValue?.first?["version"] == .integer(1))
        }
    }

    @Test("an insert whose save in the same batch fails still gets its permanent ID, which it keeps when saved later",
          .timeLimit(.minutes(1)))
    func insertWhoseSaveFailsKeepsItsID() throws {
        try Self.withState { state, _ in
            let writer = Session(state: state, peer: Self.root, name: "writer")
            let reader = Session(state: state, peer: Self.root, name: "reader")
            // No name: the save fails validation, and the insert stays pending.
            let replies = try Self.ask(writer, Self.requests([Self.insertBeer(nil), ("save", [:])]))
            #expect(replies[0]["ok"] == .bool(true))
            #expect(replies[1]["ok"] == .bool(false))
            let id = try #require(Self.objectID(replies[0]))
            #expect(Self.isPermanent(id), "\(id)")

            let fixed = try Self.ask(writer, Self.requests([
                ("update", .object([JSON.Member("object", .string(id)), JSON.Member("values", .object([JSON.Member("name", .string("Heady"))]))])),
                ("save", [:]),
            ]))
            #expect(fixed[0]["result"]?["object"]?["id"] == .string(id))
            #expect(fixed[1]["result"]?["inserted"] == .integer(1))
            let read = try Self.ask(reader, Self.requests([("get", .object([JSON.Member("ids", .array([.string(id)]))]))]))
            #expect(read[0]["result"]?["objects"]?.arrayValue?.first?["values"]?["name"] == .string("Heady"))
        }
    }

    @Test("a failed insert before a save leaves the save to run alone, as when they come one by one", .timeLimit(.minutes(1)))
    func failedInsertThenSave() throws {
        try Self.withState { state, _ in
            let writer = Session(state: state, peer: Self.root, name: "writer")
            let replies = try Self.ask(writer, Self.requests([
                ("insert", .object([JSON.Member("entity", .string("NoSuchEntity")), JSON.Member("values", [:])])),
                ("save", [:]),
            ]))
            #expect(replies[0]["ok"] == .bool(false))
            #expect(replies[0]["id"] == .integer(1))
            #expect(replies[1]["result"] == .object(["inserted": .integer(0), "updated": .integer(0), "deleted": .integer(0)]))
        }
    }

    @Test("concurrent sessions' insert+save units share one transaction; each is answered once, all are durable and readable",
          .timeLimit(.minutes(1)))
    func concurrentSessionsShareTransactions() throws {
        try Self.withState { state, store in
            let sessions = 8
            let writers = (0..<sessions).map { Session(state: state, peer: Self.root, name: "writer \($0)") }
            let before = store.groupCommitCounters
            // Hold the queue's leadership so that every session's save waits for the next group.
            let release = DispatchSemaphore(value: 0), holder = DispatchGroup()
            #expect(Self.holdQueue(of: store, until: release, in: holder))

            let replies = Locked<[Int: [[JSON]]]>([:])
            let done = DispatchGroup()
            for (index, writer) in writers.enumerated() {
                done.enter()
                writer.handle(Self.requests([Self.insertBeer("Beer \(index)"), ("save", [:])])) { answers in
                    replies.withLock { $0[index, default: []].append(answers.map(\.json)) }
                    done.leave()
                }
            }
            // Every save waits behind the held group.
            let queued = Self.releaseOnceQueued(sessions, in: store, release: release, done: done, holder: holder)
            #expect(queued, "every session's save waited in the queue")

            let answered = replies.withLock { $0 }
            #expect(answered.count == sessions)
            var ids = Set<String>()
            for index in 0..<sessions {
                let batches = answered[index] ?? []
                #expect(batches.count == 1, "session \(index) answered once")
                guard let pair = batches.first, pair.count == 2 else { continue }
                #expect(pair[1]["result"]?["inserted"] == .integer(1))
                if let id = Self.objectID(pair[0]) {
                    #expect(Self.isPermanent(id))
                    ids.insert(id)
                }
            }
            #expect(ids.count == sessions)
            // The held group, then one transaction for every session's insert and save.
            let after = store.groupCommitCounters
            #expect(after.groups - before.groups == 2)
            #expect(after.committed - before.committed == sessions + 1)
            #expect(after.largestGroup >= sessions)

            // Acknowledged means readable from any other connection, and durable in the store.
            let reader = Session(state: state, peer: Self.root, name: "reader")
            let read = try Self.ask(reader, Self.requests([("get", .object([JSON.Member("ids", .array(ids.sorted().map { .string($0) }))]))]))
            #expect(read[0]["result"]?["objects"]?.arrayValue?.count == sessions)
            let counted = try Self.ask(reader, Self.requests([("count", .object([JSON.Member("entity", .string("Beer"))]))]))
            #expect(counted[0]["result"]?["count"] == .integer(Int64(sessions)))
        }
    }

    @Test("a save that conflicts inside a shared transaction is answered with its own error; the others in it commit",
          .timeLimit(.minutes(1)))
    func aConflictInASharedTransactionFailsAlone() throws {
        try Self.withState { state, store in
            let seeder = Session(state: state, peer: Self.root, name: "seeder")
            let seeded = try Self.ask(seeder, Self.requests([Self.insertBeer("Seed"), ("save", [:])]))
            let id = try #require(Self.objectID(seeded[0]))
            // Two sessions change the same object, both from its first version.
            let renamers = ["first", "second"].map { Session(state: state, peer: Self.root, name: "renamer \($0)") }
            for (index, renamer) in renamers.enumerated() {
                let values = JSON.object([JSON.Member("name", .string("Renamed \(index)"))])
                let changed = try Self.ask(renamer, Self.requests([("update", .object([JSON.Member("object", .string(id)), JSON.Member("values", values)]))]))
                #expect(changed[0]["ok"] == .bool(true))
            }
            let inserters = (0..<3).map { Session(state: state, peer: Self.root, name: "inserter \($0)") }
            let before = store.groupCommitCounters
            let release = DispatchSemaphore(value: 0), holder = DispatchGroup()
            #expect(Self.holdQueue(of: store, until: release, in: holder))

            // Every save waits behind the held group, so they all share the next transaction.
            let replies = Locked<[String: [JSON]]>([:])
            let done = DispatchGroup()
            for (index, renamer) in renamers.enumerated() {
                done.enter()
                renamer.handle(Self.requests([("save", [:])])) { answers in
                    replies.withLock { $0["renamer \(index)"] = answers.map(\.json) }
                    done.leave()
                }
            }
            for (index, inserter) in inserters.enumerated() {
                done.enter()
                inserter.handle(Self.requests([Self.insertBeer("Inserted \(index)"), ("save", [:])])) { answers in
                    replies.withLock { $0["inserter \(index)"] = answers.map(\.json) }
                    done.leave()
                }
            }
            let queued = Self.releaseOnceQueued(renamers.count + inserters.count, in: store, release: release, done: done, holder: holder)
            #expect(queued, "every save waited in the queue")

            // The renamer whose save runs first in the group commits; the other's finds the
            // object changed since it read it, and fails alone.
            let answered = replies.withLock { $0 }
            let saved = renamers.indices.filter { answered["renamer \($0)"]?.first?["result"]?["updated"] == .integer(1) }
            let conflicted = renamers.indices.filter { answered["renamer \($0)"]?.first?["error"]?["code"] == .string("merge_conflict") }
            #expect(saved.count == 1 && conflicted.count == 1 && saved != conflicted, "\(answered)")
            var ids: [String] = []
            for index in inserters.indices {
                let pair = answered["inserter \(index)"] ?? []
                #expect(pair.count == 2 && pair[1]["result"]?["inserted"] == .integer(1), "inserter \(index): \(pair)")
                if let inserted = pair.first.flatMap(Self.objectID), Self.isPermanent(inserted) { ids.append(inserted) }
            }
            #expect(ids.count == inserters.count)
            let after = store.groupCommitCounters
            #expect(after.groups - before.groups == 2, "the held group, then one transaction for every save")
            #expect(after.committed - before.committed == inserters.count + 2)
            #expect(after.failed - before.failed == 1)

            // What another connection reads: the first rename, and every inserted object.
            let reader = Session(state: state, peer: Self.root, name: "reader")
            let read = try Self.ask(reader, Self.requests([("get", .object([JSON.Member("ids", .array(([id] + ids).map { .string($0) }))]))]))
            let objects = read[0]["result"]?["objects"]?.arrayValue ?? []
            #expect(objects.count == 1 + inserters.count)
            #expect(objects.first?["values"]?["name"] == .string("Renamed \(saved.first ?? -1)"))
        }
    }

    @Test("a read on one connection sees a change acknowledged on another, even of an object it had read before",
          .timeLimit(.minutes(1)))
    func readAfterAcknowledgedSave() throws {
        try Self.withState { state, _ in
            let writer = Session(state: state, peer: Self.root, name: "writer")
            let reader = Session(state: state, peer: Self.root, name: "reader")
            let inserted = try Self.ask(writer, Self.requests([Self.insertBeer("Old"), ("save", [:])]))
            let id = try #require(Self.objectID(inserted[0]))
            let get: (String, JSON) = ("get", .object([JSON.Member("ids", .array([.string(id)]))]))
            for round in 0..<20 {
                let name = "Name \(round)"
                let saved = try Self.ask(writer, Self.requests([
                    ("update", .object([JSON.Member("object", .string(id)), JSON.Member("values", .object([JSON.Member("name", .string(name))]))])),
                    ("save", [:]),
                ]))
                #expect(saved[1]["ok"] == .bool(true))
                let read = try Self.ask(reader, Self.requests([get, get]))
                for reply in read {
                    #expect(reply["result"]?["objects"]?.arrayValue?.first?["values"]?["name"] == .string(name), "round \(round)")
                }
            }
        }
    }
}
