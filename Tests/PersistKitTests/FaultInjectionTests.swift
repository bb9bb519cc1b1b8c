import Foundation
import Testing
@testable import PersistKit

/// Failed writes, failed fsyncs and a full disk during a save, through the fault-injecting VFS
/// (`FaultScope`, `Sources/CFaultVFS`): for N = 1, 2, … the N-th write (or sync) of a save of
/// inserts, updates, deletes and relationship changes fails, until the save makes fewer than N
/// of them and succeeds. Each failed save throws a `PersistenceError` naming the failure, the
/// context keeps its changes, the store on disk is unchanged and intact, and the next save
/// writes everything (docs/RELIABILITY.md).
@Suite("Fault injection: failed writes, failed syncs, full disk")
struct FaultInjectionTests {
    typealias M = ContextTestModel
    typealias S = SQLiteTestSupport

    /// One kind of fault.
    enum Fault: String, CustomTestStringConvertible, CaseIterable {
        case write
        case sync
        case diskFull

        var testDescription: String { rawValue }
        var operation: FaultScope.Operation { self == .sync ? .sync : .write }
        var code: Int32 {
            switch self {
            case .write: FaultScope.Code.ioErrWrite
            case .sync: FaultScope.Code.ioErrFsync
            case .diskFull: FaultScope.Code.full
            }
        }
        /// What the error's message must say.
        var named: String {
            switch self {
            case .write: "disk I/O error (SQLITE_IOERR_WRITE)"
            case .sync: "disk I/O error (SQLITE_IOERR_FSYNC)"
            case .diskFull: "database or disk is full (SQLITE_FULL)"
            }
        }
        /// A full disk stays full: every write from the N-th fails, until the fault is disarmed.
        var persistent: Bool { self == .diskFull }
        /// With the default synchronous=NORMAL a WAL commit does not sync: the sync faults
        /// are met with FULL, which syncs the WAL at every commit.
        func pragmas(journal: String) -> [String: String] {
            var pragmas = ["journal_mode": journal]
            if self == .sync { pragmas["synchronous"] = "FULL" }
            return pragmas
        }
    }

    /// A store in a watched directory, with a baseline of breweries, beers and tags.
    struct Fixture {
        let directory: URL
        let url: URL
        let scope: FaultScope
        let coordinator: PersistentStoreCoordinator
        let context: ManagedObjectContext
        /// The store's pragmas, for every connection that checks it (a connection opened with
        /// other ones would switch the file's journal mode).
        let pragmas: [String: String]

        init(pragmas: [String: String] = [:]) throws {
            self.pragmas = pragmas
            directory = try M.temporaryDirectory()
            url = directory.appendingPathComponent("store.sqlite")
            scope = try FaultScope(directory: directory)
            coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
            var options = StoreOptions(sqlitePragmas: pragmas)
            options.sqliteVFSName = FaultScope.vfsName
            try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
            context = M.context(coordinator)
            let breweries = (0..<4).map { M.insert("Brewery", into: context, ["name": "brewery-\($0)", "city": "Ghent"]) }
            let tags = (0..<5).map { M.insert("Tag", into: context, ["name": "tag-\($0)"]) }
            for index in 0..<Self.baseBeers {
                let beer = M.insert("Beer", into: context, ["name": "base-\(index)", "abv": 5.0, "ibu": Int16(20)])
                beer.setValue(breweries[index % breweries.count], forKey: "brewery")
                beer.setValue(Set([tags[index % tags.count]]), forKey: "tags")
            }
            try context.save()
        }

        static let baseBeers = 400

        func remove() {
            for store in coordinator.persistentStores { try? coordinator.remove(store) }
            try? FileManager.default.removeItem(at: directory)
        }

        func object(_ entity: String, named name: String) throws -> ManagedObject {
            try #require(try context.fetch(M.request(entity, .equal("name", .string(name)))).first, "no \(entity) \(name)")
        }

        /// Round `round`'s change: a brewery with three beers and a new tag (inserts and
        /// relationships), beer base-2r moved to it with a new abv and tag (updates), beer
        /// base-(2r+1) deleted (its join rows with it). Returns the change counts.
        func change(round: Int) throws -> (inserted: Int, updated: Int, deleted: Int) {
            let brewery = M.insert("Brewery", into: context, ["name": "B-\(round)", "city": "Leuven"])
            let tag = M.insert("Tag", into: context, ["name": "t-\(round)"])
            for index in 0..<3 {
                let beer = M.insert("Beer", into: context, ["name": "r\(round)-\(index)", "abv": Double(4 + index)])
                beer.setValue(brewery, forKey: "brewery")
                beer.setValue(Set([tag]), forKey: "tags")
            }
            let moved = try object("Beer", named: "base-\(2 * round)")
            moved.setValue(Double(round) / 4 + 0.125, forKey: "abv")
            moved.setValue(brewery, forKey: "brewery")
            moved.setValue(((moved.value(forKey: "tags") as? Set<ManagedObject>) ?? []).union([tag]), forKey: "tags")
            context.delete(try object("Beer", named: "base-\(2 * round + 1)"))
            context.processPendingChanges()
            return (context.insertedObjects.count, context.updatedObjects.count, context.deletedObjects.count)
        }

        /// Checks, through a new coordinator on SQLite's default VFS, that round `round` is saved whole.
        func expectSaved(round: Int) throws {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
            let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(sqlitePragmas: pragmas))
            defer { try? coordinator.remove(store) }
            let context = M.context(coordinator)
            let brewery = try #require(try context.fetch(M.request("Brewery", .equal("name", .string("B-\(round)")))).first)
            #expect(M.names(brewery.value(forKey: "beers")) == ["base-\(2 * round)", "r\(round)-0", "r\(round)-1", "r\(round)-2"])
            let tag = try #require(try context.fetch(M.request("Tag", .equal("name", .string("t-\(round)")))).first)
            #expect(M.names(tag.value(forKey: "beers")) == ["base-\(2 * round)", "r\(round)-0", "r\(round)-1", "r\(round)-2"])
            let moved = try #require(try context.fetch(M.request("Beer", .equal("name", .string("base-\(2 * round)")))).first)
            #expect(moved.value(forKey: "abv") as? Double == Double(round) / 4 + 0.125)
            #expect(M.names(moved.value(forKey: "tags")) == ["t-\(round)", "tag-\(2 * round % 5)"])
            #expect(try context.fetch(M.request("Beer", .equal("name", .string("base-\(2 * round + 1)")))).isEmpty)
        }
    }

    /// What a crash of the process right now would leave: the store's files as they are (the
    /// kernel keeps every write, synced or not), without the `-shm` index, reopened on SQLite's
    /// default VFS (which recovers from the WAL). Returns how many of round `round`'s four
    /// changes are there (0 or 4: never a part), and whether the rest equals `before`.
    static func afterProcessCrash(_ fixture: Fixture, round: Int, before: [String: [[String]]], name: String) throws -> (changes: Int, restUnchanged: Bool) {
        let crash = fixture.directory.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: crash, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-journal"] where FileManager.default.fileExists(atPath: fixture.url.path + suffix) {
            try FileManager.default.copyItem(atPath: fixture.url.path + suffix, toPath: crash.appendingPathComponent("store.sqlite\(suffix)").path)
        }
        let url = crash.appendingPathComponent("store.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: StoreOptions(sqlitePragmas: fixture.pragmas))
        defer { try? coordinator.remove(store) }
        try expectIntact(url)
        let context = M.context(coordinator)
        func one(_ entity: String, _ name: String) throws -> ManagedObject? {
            try context.fetch(M.request(entity, .equal("name", .string(name)))).first
        }
        var changes = 0
        if try one("Brewery", "B-\(round)") != nil { changes += 1 }
        if try one("Tag", "t-\(round)") != nil { changes += 1 }
        if try one("Beer", "base-\(2 * round)")?.value(forKey: "abv") as? Double == Double(round) / 4 + 0.125 { changes += 1 }
        if try one("Beer", "base-\(2 * round + 1)") == nil { changes += 1 }
        return (changes, changes == 0 ? try contents(url) == before : true)
    }

    /// Every row of every entity and join table (not the key counters: a save that fails after
    /// its primary keys were allocated leaves Z_PRIMARYKEY.Z_MAX ahead), read on SQLite's default VFS.
    ///
    /// The connection may write: in a rollback-journal mode a save that failed and could not
    /// roll back (the disk still full) leaves a hot journal, which the next connection to read
    /// the store rolls back first, as any other process would.
    static func contents(_ url: URL) throws -> [String: [[String]]] {
        let connection = try SQLiteConnection(path: url.path, flags: [.readWrite])
        defer { try? connection.close() }
        var contents: [String: [[String]]] = [:]
        // One read transaction: every table as of the same commit.
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        let tables = try connection.strings("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE') ORDER BY name")
        for table in tables {
            let statement = try connection.prepare("SELECT * FROM \"\(table)\" ORDER BY 1, 2")
            var rows: [[String]] = []
            while try statement.step() {
                rows.append((0..<Int32(statement.columnCount)).map { statement.isNull($0) ? "NULL" : statement.string($0) })
            }
            contents[table] = rows
        }
        return contents
    }

    static func expectIntact(_ url: URL) throws {
        #expect(try S.query(url, "PRAGMA integrity_check") == [["ok"]])
    }

    @Test("fail the N-th write / fsync / write on a full disk, N = 1, 2, … until the save succeeds",
          .timeLimit(.minutes(1)), arguments: Fault.allCases, ["WAL", "DELETE"])
    func failNthOperation(_ fault: Fault, journal: String) throws {
        let fixture = try Fixture(pragmas: fault.pragmas(journal: journal))
        defer { fixture.remove() }
        var failures = 0
        var failedButThereAfterCrash: [Int] = []
        for n in 1...(Fixture.baseBeers / 2 - 1) {
            let round = n
            let counts = try fixture.change(round: round)
            let before = try Self.contents(fixture.url)
            fixture.scope.arm(fault.operation, at: n, error: fault.code, persistent: fault.persistent)
            do {
                try fixture.context.save()
                fixture.scope.disarm()
                // The save made fewer than n operations of the kind: every smaller n failed it.
                #expect(fixture.scope.count(fault.operation) < n)
                #expect(failures == n - 1)
                #expect(failures > 0, "no \(fault) ever failed a save")
                try fixture.expectSaved(round: round)
                try Self.expectIntact(fixture.url)
                #expect(try S.query(fixture.url, "PRAGMA journal_mode") == [[journal.lowercased()]])
                print("fault injection, \(fault), journal_mode=\(journal): \(failures) failed saves (N = 1…\(failures)), then N = \(n) saved; "
                      + "\(fixture.scope.count(fault.operation)) \(fault.operation)s in that save; "
                      + "failed saves found whole after a process crash: N = \(failedButThereAfterCrash)")
                return
            } catch {
                fixture.scope.disarm()
                failures += 1
                let persistence = try #require(error as? PersistenceError, "not a PersistenceError: \(error)")
                #expect(persistence.code == .sqlite)
                #expect(persistence.message.hasSuffix(": \(fault.named)"), "\(persistence)")
                #expect(persistence.path == fixture.url.path)
                // The context keeps its changes (ManagedObjectContext.save()'s contract).
                #expect(fixture.context.hasChanges)
                #expect((fixture.context.insertedObjects.count, fixture.context.updatedObjects.count,
                         fixture.context.deletedObjects.count) == counts)
                // Nothing reached the store, and it is intact.
                #expect(try Self.contents(fixture.url) == before)
                try Self.expectIntact(fixture.url)
                // Had the process crashed now, the save would be wholly absent, or (its bytes
                // written, only their sync failed) wholly there; never a part of it.
                let crash = try Self.afterProcessCrash(fixture, round: round, before: before, name: "crash-\(n)")
                #expect(crash.changes == 0 || crash.changes == 4, "a part of the failed save is there after a crash (N = \(n))")
                #expect(crash.restUnchanged)
                if crash.changes == 4 { failedButThereAfterCrash.append(n) }
                // The next save, the fault gone, writes everything.
                try fixture.context.save()
                #expect(!fixture.context.hasChanges)
                try fixture.expectSaved(round: round)
            }
        }
        Issue.record("a save with the \(fault) fault armed never succeeded")
    }

    @Test("a full disk fails every save until space is freed; reads go on meanwhile", .timeLimit(.minutes(1)))
    func diskStaysFull() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        _ = try fixture.change(round: 1)
        fixture.scope.arm(.write, at: 1, error: FaultScope.Code.full, persistent: true)
        for _ in 0..<3 {
            #expect(throws: PersistenceError.self) { try fixture.context.save() }
            #expect(fixture.context.hasChanges)
            // Reads need no writes.
            #expect(try fixture.context.count(for: M.request("Beer")) == Fixture.baseBeers + 3 - 1)
        }
        #expect(fixture.scope.injected >= 3)
        fixture.scope.disarm()
        try fixture.context.save()
        try fixture.expectSaved(round: 1)
        try Self.expectIntact(fixture.url)
    }

    @Test("the VFS is used only when asked, and counts the store's writes and syncs", .timeLimit(.minutes(1)))
    func countsOperations() throws {
        let fixture = try Fixture(pragmas: ["synchronous": "FULL"])
        defer { fixture.remove() }
        fixture.scope.arm(.write, at: Int.max, error: FaultScope.Code.ioErrWrite)
        _ = try fixture.change(round: 1)
        try fixture.context.save()
        #expect(fixture.scope.count(.write) > 0)
        // synchronous=FULL syncs the WAL at each commit: the key allocations and the save.
        #expect(fixture.scope.count(.sync) > 0)
        #expect(fixture.scope.injected == 0)
        // An unknown VFS name is an open error, not a silent fallback.
        var options = StoreOptions()
        options.sqliteVFSName = "no-such-vfs"
        let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
        let error = #expect(throws: PersistenceError.self) {
            try coordinator.addPersistentStore(type: .sqlite, at: fixture.directory.appendingPathComponent("other.sqlite"), options: options)
        }
        #expect(error?.code == .persistentStoreOpen)
        #expect(error?.underlying?.contains("no such vfs") == true)
    }
}
