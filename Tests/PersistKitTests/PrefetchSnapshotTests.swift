import Foundation
import Testing
@testable import PersistKit

/// A streamed prefetch (``SQLiteStore/prefetchDestinations(of:relationship:expect:each:)``) of
/// more sources than one `IN` list holds reads every batch in one read transaction: a commit by
/// another connection between two batches is not seen, and the store found locked after rows
/// were handed over fails the prefetch with a typed error rather than reading (and handing
/// over) those rows again. The lock is simulated by the fault-injecting VFS (`FaultScope`)
/// failing a read with `SQLITE_BUSY`, which no busy handler waits out.
@Suite("Prefetch snapshot: one read transaction, every row handed over once")
struct PrefetchSnapshotTests {
    typealias M = ContextTestModel

    /// How the store reads the members: by lists of 500 source keys through the foreign-key
    /// index (a few of the table's sources, two batches here), or by one scan of the beers
    /// (most of the table's sources).
    enum Path: String, CustomTestStringConvertible, CaseIterable {
        case keyLists
        case scan

        var testDescription: String { rawValue }
    }

    /// A store in a watched directory: `breweryCount` breweries "Brewery 0000"…, the first
    /// `withBeers` of them with two beers each, whose long names spread them over many pages
    /// (so a prefetch keeps reading the file after its first row).
    struct Fixture {
        static let breweryCount = 2_600
        static let withBeers = 600

        let directory: URL
        let url: URL
        let scope: FaultScope
        /// The coordinator that seeded the store, on SQLite's default VFS: another connection.
        let writer: PersistentStoreCoordinator

        init() throws {
            directory = try M.temporaryDirectory()
            url = directory.appendingPathComponent("store.sqlite")
            scope = try FaultScope(directory: directory)
            writer = try M.coordinator(type: .sqlite, at: url)
            let context = M.context(writer)
            try context.performAndWait {
                for index in 0..<Self.breweryCount {
                    let brewery = M.insert("Brewery", into: context, ["name": Self.breweryName(index)])
                    guard index < Self.withBeers else { continue }
                    for round in 0..<2 {
                        _ = M.insert("Beer", into: context, ["name": Self.beerName(index, round), "brewery": brewery])
                    }
                }
                try context.save()
            }
        }

        static func breweryName(_ index: Int) -> String { String(format: "Brewery %04d", index) }

        static func beerName(_ index: Int, _ round: Int) -> String {
            String(format: "Brewery %04d #%d ", index, round) + String(repeating: ".", count: 200)
        }

        /// A new coordinator on the fault-injecting VFS (a new connection, nothing cached), its
        /// store, and the IDs of the sources `path` reads: the breweries with beers, or all.
        func reader(_ path: Path) throws -> (PersistentStoreCoordinator, SQLiteStore, [ManagedObjectID]) {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
            var options = StoreOptions()
            options.sqliteVFSName = FaultScope.vfsName
            let store = try #require(try coordinator.addPersistentStore(type: .sqlite, at: url, options: options) as? SQLiteStore)
            let context = M.context(coordinator)
            let limit = path == .keyLists ? Self.withBeers : Self.breweryCount
            let sources = try context.performAndWait {
                try context.fetch(M.request("Brewery", .comparison(.keyPath("name"), .lessThan, .constant(.string(Self.breweryName(limit)))),
                                            sort: [FetchSortDescriptor(key: "name")])).map(\.objectID)
            }
            return (coordinator, store, sources)
        }

        func remove() {
            for store in writer.persistentStores { try? writer.remove(store) }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func beers(_ coordinator: PersistentStoreCoordinator) throws -> RelationshipDescription {
        try #require(coordinator.managedObjectModel.entitiesByName["Brewery"]?.relationshipsByName["beers"])
    }

    /// A beer row's name.
    static func name(_ row: RowSnapshot) -> String {
        guard let slot = row.entity.slotIndex(of: "name"), slot < row.values.count, case .string(let name) = row.values[slot] else { return "<none>" }
        return name
    }

    /// The beers' names a prefetch gives, by source index, read with no fault armed.
    static func members(_ store: SQLiteStore, _ sources: [ManagedObjectID], _ relationship: RelationshipDescription) throws -> [Int: [String]] {
        var members: [Int: [String]] = [:]
        try store.prefetchDestinations(of: sources, relationship: relationship, expect: { _ in }) { index, row in
            members[index, default: []].append(name(row))
        }
        return members
    }

    /// Whether the store's connection is outside any transaction.
    static func isAutocommit(_ store: SQLiteStore) -> Bool {
        store.state.withLock { $0.connection?.isAutocommit ?? false }
    }

    @Test(arguments: Path.allCases)
    func theStoreFoundLockedAfterTheFirstRowFailsThePrefetchWithoutRepeatingRows(_ path: Path) throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (coordinator, store, sources) = try fixture.reader(path)
        defer { try? coordinator.remove(store) }
        #expect(sources.count == (path == .keyLists ? Fixture.withBeers : Fixture.breweryCount))
        let relationship = try Self.beers(coordinator)

        var seen: Set<Int64> = []
        var repeated: [String] = []
        var handedOver = 0
        var armed = false
        let error = #expect(throws: PersistenceError.self) {
            try store.prefetchDestinations(of: sources, relationship: relationship, expect: { _ in }) { _, row in
                if !seen.insert(row.primaryKey).inserted { repeated.append(Self.name(row)) }
                handedOver += 1
                // The next read of the file, in the middle of the read, finds the store locked.
                if !armed {
                    armed = true
                    fixture.scope.arm(.read, at: 1, error: FaultScope.Code.busy)
                }
            }
        }
        fixture.scope.disarm()
        #expect(fixture.scope.injected == 1, "one read failed, after the first row")
        #expect(repeated.isEmpty, "rows handed over twice: \(repeated.prefix(3))")
        #expect(handedOver < 2 * Fixture.withBeers, "the read stopped at the failure")
        #expect(error?.code == .sqlite)
        #expect(error?.message.contains("SQLITE_BUSY") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("prefetching Brewery.beers failed") == true, "\(error?.message ?? "")")
        #expect(Self.isAutocommit(store), "the read transaction ended with the failure")

        // The store reads normally afterwards: every source's beers, each once.
        let members = try Self.members(store, sources, relationship)
        #expect(members.count == Fixture.withBeers)
        for index in 0..<Fixture.withBeers {
            #expect(members[index] == [Fixture.beerName(index, 0), Fixture.beerName(index, 1)], "the beers of source \(index)")
        }
    }

    @Test func aCommitBetweenTwoBatchesIsNotSeenByThePrefetch() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (coordinator, store, sources) = try fixture.reader(.keyLists)
        defer { try? coordinator.remove(store) }
        #expect(sources.count > 500, "two batches")
        let relationship = try Self.beers(coordinator)
        let writer = M.context(fixture.writer)
        let last = Fixture.withBeers - 1
        let renamed = Fixture.withBeers - 50

        var members: [Int: [String]] = [:]
        var committed = false
        try store.prefetchDestinations(of: sources, relationship: relationship, expect: { _ in }) { index, row in
            members[index, default: []].append(Self.name(row))
            guard !committed else { return }
            committed = true
            // While the first batch is read, another connection adds a beer to the last source
            // and deletes one of another source of the second batch, and commits.
            try writer.performAndWait {
                let breweries = try writer.fetch(M.request("Brewery", .equal("name", .string(Fixture.breweryName(last)))))
                let brewery = try #require(breweries.first)
                _ = M.insert("Beer", into: writer, ["name": "late", "brewery": brewery])
                let gone = try #require(try writer.fetch(M.request("Beer", .equal("name", .string(Fixture.beerName(renamed, 0))))).first)
                writer.delete(gone)
                try writer.save()
            }
        }
        #expect(committed)
        #expect(Self.isAutocommit(store))
        for index in [0, 499, 500, renamed, last] {
            #expect(members[index] == [Fixture.beerName(index, 0), Fixture.beerName(index, 1)], "source \(index), as before the commit")
        }
        #expect(members.values.reduce(0) { $0 + $1.count } == 2 * Fixture.withBeers)

        // The next prefetch sees the commit.
        let after = try Self.members(store, sources, relationship)
        #expect(after[last] == [Fixture.beerName(last, 0), Fixture.beerName(last, 1), "late"])
        #expect(after[renamed] == [Fixture.beerName(renamed, 1)])
    }

    @Test func aContextWhosePrefetchFailsRecordsNoMembers() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let request = M.request("Brewery", sort: [FetchSortDescriptor(key: "name")])
        request.relationshipKeyPathsForPrefetching = ["beers"]
        // The reads a fetch of every brewery with their beers makes, on a new connection: the
        // last is one of the beer table's, after most rows were handed over.
        let reads: Int = try {
            let (coordinator, store, _) = try fixture.reader(.scan)
            defer { try? coordinator.remove(store) }
            let context = M.context(coordinator)
            fixture.scope.arm(.read, at: Int.max, error: FaultScope.Code.busy)
            defer { fixture.scope.disarm() }
            #expect(try context.performAndWait { try context.fetch(request) }.count == Fixture.breweryCount)
            return fixture.scope.count(.read)
        }()
        #expect(reads > 0)

        // The same fetch on another new connection finds the store locked at that last read.
        let (coordinator, store, _) = try fixture.reader(.scan)
        defer { try? coordinator.remove(store) }
        let context = M.context(coordinator)
        try context.performAndWait {
            fixture.scope.arm(.read, at: reads, error: FaultScope.Code.busy)
            let error = #expect(throws: PersistenceError.self) { try context.fetch(request) }
            fixture.scope.disarm()
            #expect(fixture.scope.injected == 1)
            #expect(error?.message.contains("SQLITE_BUSY") == true, "\(error?.message ?? "")")
            #expect(Self.isAutocommit(store))
            // The breweries the failed fetch registered have no members recorded: each reads
            // its beers from the store, all of them.
            let breweries = try context.fetch(M.request("Brewery", sort: [FetchSortDescriptor(key: "name")]))
            #expect(breweries.count == Fixture.breweryCount)
            for (index, brewery) in breweries.enumerated() {
                let expected = index < Fixture.withBeers ? [Fixture.beerName(index, 0), Fixture.beerName(index, 1)] : []
                #expect(M.names(brewery.value(forKey: "beers")).sorted() == expected, "the beers of brewery \(index)")
            }
        }
    }

    @Test func theStoreFoundLockedBeforeAnyRowIsWaitedOut() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (coordinator, store, sources) = try fixture.reader(.keyLists)
        defer { try? coordinator.remove(store) }
        let relationship = try Self.beers(coordinator)
        // The first read of the file the prefetch makes finds the store locked: before any row
        // is handed over, so the read starts again and hands every row over once.
        fixture.scope.arm(.read, at: 1, error: FaultScope.Code.busy)
        var seen: Set<Int64> = []
        var repeated = 0
        var members: [Int: [String]] = [:]
        try store.prefetchDestinations(of: sources, relationship: relationship, expect: { _ in }) { index, row in
            if !seen.insert(row.primaryKey).inserted { repeated += 1 }
            members[index, default: []].append(Self.name(row))
        }
        fixture.scope.disarm()
        #expect(fixture.scope.injected == 1)
        #expect(repeated == 0)
        for index in 0..<Fixture.withBeers {
            #expect(members[index] == [Fixture.beerName(index, 0), Fixture.beerName(index, 1)], "the beers of source \(index)")
        }
    }
}
