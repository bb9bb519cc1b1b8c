import Foundation
import Testing
@testable import PersistKit

/// The WAL checkpointed on a thread of its own (`SQLiteCheckpointer`, `docs/stores.md`,
/// "WAL size"): commits wake it instead of checkpointing themselves, a pause lets it finish
/// the WAL so the next write starts it again, and under writes that never pause the WAL stays
/// within its limit.
@Suite("WAL checkpoints on the checkpointer thread", .timeLimit(.minutes(1)))
struct WALCheckpointerConcurrencyTests {
    typealias M = ContextTestModel

    struct Fixture {
        let directory: URL
        let url: URL
        let context: ManagedObjectContext
        let store: SQLiteStore

        init(pragmas: [String: String]) throws {
            directory = try M.temporaryDirectory()
            url = directory.appendingPathComponent("checkpoints.sqlite")
            let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(sqlitePragmas: pragmas))
            context = M.context(coordinator)
            store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        }

        var walSize: Int {
            ((try? FileManager.default.attributesOfItem(atPath: url.path + "-wal"))?[.size] as? Int) ?? 0
        }

        var pageSize: Int {
            (try? store.withConnection(.sqlite, "reading page_size") { Int(try $0.pragma("page_size") ?? "") ?? 0 }) ?? 0
        }

        /// Saves `count` times one Beer; returns the largest WAL file seen after a save.
        func save(_ count: Int, tag: String) throws -> Int {
            var largest = 0
            try context.performAndWait {
                for index in 0..<count {
                    _ = M.insert("Beer", into: context, ["name": "\(tag)-\(index)"])
                    try context.save()
                    largest = max(largest, walSize)
                }
            }
            return largest
        }

        func beers() throws -> Int {
            try context.performAndWait { try context.count(for: M.request("Beer")) }
        }

        /// Waits up to 10 s for `condition` on the checkpointer's counts.
        func waitFor(_ condition: (SQLiteCheckpointer.Counters) -> Bool) throws -> SQLiteCheckpointer.Counters {
            let checkpointer = try #require(store.checkpointer)
            let deadline = Date(timeIntervalSinceNow: 10)
            while !condition(checkpointer.counts) && Date() < deadline { usleep(1_000) }
            return checkpointer.counts
        }
    }

    @Test("past wal_autocheckpoint frames a commit wakes the checkpointer instead of checkpointing itself")
    func backgroundCheckpoints() throws {
        let fixture = try Fixture(pragmas: ["wal_autocheckpoint": "30"])
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let checkpointer = try #require(fixture.store.checkpointer)
        #expect(checkpointer.threshold == 30)
        #expect(checkpointer.limit == 30 * SQLiteCheckpointer.limitFactor)
        // Saves of one Beer, a few frames each, until the WAL holds the threshold's frames:
        // the last commit wakes the checkpointer, and the WAL is far from the limit, so no
        // commit may checkpoint itself.
        var saves = 0
        while checkpointer.walFramesAfterLastCommit < 30 && saves < 1_000 {
            _ = try fixture.save(1, tag: "a")
            saves += 1
        }
        #expect(checkpointer.walFramesAfterLastCommit < checkpointer.limit)
        let counts = try fixture.waitFor { $0.background >= 1 }
        #expect(counts.background >= 1)
        #expect(counts.onCommit == 0)
        #expect(try fixture.beers() == saves)
    }

    @Test("after a pause the checkpointer finishes the WAL, and the next write starts it again")
    func pauseRestartsTheWAL() throws {
        let fixture = try Fixture(pragmas: ["wal_autocheckpoint": "30"])
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let checkpointer = try #require(fixture.store.checkpointer)
        // Save until the WAL holds the threshold's frames: that commit wakes the checkpointer.
        var saves = 0
        while checkpointer.walFramesAfterLastCommit < 30 && saves < 1_000 {
            _ = try fixture.save(1, tag: "a")
            saves += 1
        }
        let grown = checkpointer.walFramesAfterLastCommit
        #expect(grown >= 30)
        let deadline = Date(timeIntervalSinceNow: 10)
        while !checkpointer.isWALFinished && Date() < deadline { usleep(1_000) }
        #expect(checkpointer.isWALFinished, "a checkpoint after the last commit found the WAL finished")
        _ = try fixture.save(1, tag: "b")
        #expect(checkpointer.walFramesAfterLastCommit < grown, "the next write started the WAL again")
        #expect(checkpointer.walFramesAfterLastCommit < 10)
        #expect(checkpointer.counts.restarts >= 1)
        #expect(checkpointer.counts.onCommit == 0)
        #expect(try fixture.beers() == saves + 1)
    }

    @Test("under writes that never pause the WAL stays within the limit")
    func limitBoundsTheWAL() throws {
        let fixture = try Fixture(pragmas: ["wal_autocheckpoint": "10"])
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let checkpointer = try #require(fixture.store.checkpointer)
        let pageSize = fixture.pageSize
        // A save of one Beer is a few frames; 40 leaves room for the largest.
        let bound = 32 + (pageSize + 24) * (Int(checkpointer.limit) + 40)
        let largest = try fixture.save(600, tag: "a")
        #expect(largest <= bound, "WAL \(largest) B, bound \(bound) B")
        #expect(largest >= 32 + (pageSize + 24) * 10, "the WAL grew past the threshold")
        #expect(try fixture.beers() == 600)
    }

    @Test("a commit that finds the WAL at its limit checkpoints on its own thread")
    func commitAtTheLimit() throws {
        let fixture = try Fixture(pragmas: ["wal_autocheckpoint": "1000"])
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let checkpointer = try #require(fixture.store.checkpointer)
        _ = try fixture.save(5, tag: "a")
        #expect(checkpointer.counts == SQLiteCheckpointer.Counters(), "five saves are far below the threshold")
        // The hook as SQLite calls it, with the frame count at the limit: the committing
        // thread checkpoints, and no background checkpoint runs.
        try fixture.store.withConnection(.sqlite, "the hook at the limit") { connection in
            checkpointer.committed(frames: checkpointer.limit, on: connection.handle)
        }
        #expect(checkpointer.counts.onCommit == 1)
        #expect(checkpointer.counts.background == 0)
        #expect(try fixture.beers() == 5)
    }

    @Test("wal_autocheckpoint 0 and read-only stores keep SQLite's own behaviour: no checkpointer")
    func noCheckpointer() throws {
        let fixture = try Fixture(pragmas: ["wal_autocheckpoint": "0"])
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        #expect(fixture.store.checkpointer == nil)
        _ = try fixture.save(3, tag: "a")

        let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
        try coordinator.addPersistentStore(type: .sqlite, at: fixture.url, options: StoreOptions(readOnly: true))
        let readOnly = try #require(coordinator.persistentStores.first as? SQLiteStore)
        #expect(readOnly.checkpointer == nil)
    }

    @Test("the store's journal_size_limit is the WAL's working size, unless the options set one")
    func journalSizeLimit() throws {
        let fixture = try Fixture(pragmas: ["wal_autocheckpoint": "30"])
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let checkpointer = try #require(fixture.store.checkpointer)
        let limit = try fixture.store.withConnection(.sqlite, "reading journal_size_limit") { try $0.pragma("journal_size_limit") }
        #expect(limit == String(32 + (fixture.pageSize + 24) * 30 * Int(SQLiteCheckpointer.limitFactor + 1)))
        #expect(limit == String(checkpointer.journalSizeLimit(pageSize: fixture.pageSize)))

        let set = try Fixture(pragmas: ["wal_autocheckpoint": "30", "journal_size_limit": "12345"])
        defer { try? FileManager.default.removeItem(at: set.directory) }
        #expect(try set.store.withConnection(.sqlite, "reading journal_size_limit") { try $0.pragma("journal_size_limit") } == "12345")
    }

    @Test("closing the store closes the checkpointer's connection first, so the WAL is removed")
    func closeRemovesTheWAL() throws {
        let fixture = try Fixture(pragmas: ["wal_autocheckpoint": "30"])
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        _ = try fixture.save(60, tag: "a")
        #expect(FileManager.default.fileExists(atPath: fixture.url.path + "-wal"))
        try fixture.store.close()
        #expect(!FileManager.default.fileExists(atPath: fixture.url.path + "-wal"),
                "the store's connection was the last one: it checkpointed and removed the WAL")
        #expect(!FileManager.default.fileExists(atPath: fixture.url.path + "-shm"))
    }
}
