import Foundation
import Testing
@testable import PersistKit

/// Read leases: the single-object reads of one `performAndWait` block share one SQLite read
/// transaction, which ends with the block or as soon as anything else uses the connection.
@Suite("Read leases", .timeLimit(.minutes(1)))
struct ReadLeaseTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// Two coordinators on one new SQLite file (two connections, as two processes would have),
    /// seeded with the brewery data set, and the beers' IDs sorted by name.
    private func twoCoordinators() throws -> (PersistentStoreCoordinator, PersistentStoreCoordinator, [ManagedObjectID], URL) {
        let url = try M.temporaryDirectory().appendingPathComponent("lease.sqlite")
        let first = try M.coordinator(type: .sqlite, at: url)
        try S.seedBreweries(first)
        let second = try M.coordinator(type: .sqlite, at: url)
        let reader = M.context(first)
        let ids = try reader.performAndWait {
            try reader.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")])).map(\.objectID)
        }
        return (first, second, ids, url)
    }

    /// Renames the beer `id` (of `coordinator`'s store) through a context of `coordinator`.
    private func rename(_ id: ManagedObjectID, to name: String, in coordinator: PersistentStoreCoordinator) throws {
        let writer = M.context(coordinator)
        try writer.performAndWait {
            let beer = try writer.existingObject(with: ID(id, in: coordinator))
            beer.setValue(name, forKey: "name")
            try writer.save()
        }
    }

    /// `id` as an ID of `coordinator`'s store (the two coordinators' stores share the file's UUID).
    private func ID(_ id: ManagedObjectID, in coordinator: PersistentStoreCoordinator) -> ManagedObjectID {
        let entity = coordinator.managedObjectModel.entitiesByName[id.entity.name] ?? id.entity
        return ManagedObjectID(entity: entity, storeIdentifier: id.storeIdentifier ?? "", primaryKey: id.primaryKey)
    }

    /// `PRAGMA wal_checkpoint(TRUNCATE)` on a connection of its own: whether a reader kept the
    /// checkpoint from finishing (its first column, "busy").
    private func checkpointIsBlocked(_ url: URL) throws -> Bool {
        let connection = try SQLiteConnection(path: url.path)
        defer { try? connection.close() }
        return try connection.strings("PRAGMA wal_checkpoint(TRUNCATE)").first != "0"
    }

    @Test func readsOfOneBlockSeeOneSnapshotAndTheNextBlockSeesNewCommits() throws {
        let (first, second, ids, _) = try twoCoordinators()
        let context = M.context(first)
        try context.performAndWait {
            _ = try context.existingObject(with: ids[0])
            _ = try context.existingObject(with: ids[1]) // from here on, one read transaction
            // Another connection commits meanwhile (as another process would).
            try rename(ids[2], to: "Renamed elsewhere", in: second)
            let beer = try context.existingObject(with: ids[2])
            #expect(beer.string(forKey: "name") == "Orval", "the block reads the snapshot it started")
        }
        let later = M.context(first)
        try later.performAndWait {
            let name = try later.existingObject(with: ids[2]).string(forKey: "name")
            #expect(name == "Renamed elsewhere")
        }
    }

    @Test func aBlockThatReadsOneObjectSeesTheLatestCommit() throws {
        let (first, second, ids, _) = try twoCoordinators()
        try rename(ids[3], to: "Renamed first", in: second)
        let context = M.context(first)
        try context.performAndWait {
            let name = try context.existingObject(with: ids[3]).string(forKey: "name")
            #expect(name == "Renamed first")
        }
    }

    @Test func aSaveThroughTheSameStoreEndsTheLeaseSoLaterReadsSeeIt() throws {
        let (first, _, ids, _) = try twoCoordinators()
        let context = M.context(first)
        try context.performAndWait {
            _ = try context.existingObject(with: ids[0])
            _ = try context.existingObject(with: ids[1])
            // A save of another context on the same coordinator uses the same connection.
            try rename(ids[4], to: "Renamed here", in: first)
            let name = try context.existingObject(with: ids[4]).string(forKey: "name")
            #expect(name == "Renamed here")
        }
    }

    @Test func theWALIsNotPinnedOnceTheBlockReturns() throws {
        let (first, second, ids, url) = try twoCoordinators()
        let context = M.context(first)
        try context.performAndWait {
            _ = try context.existingObject(with: ids[0])
            _ = try context.existingObject(with: ids[1])
            try rename(ids[2], to: "Renamed during the block", in: second)
            // The lease holds the snapshot from before the rename: the WAL cannot be reset yet.
            let blocked = try checkpointIsBlocked(url)
            #expect(blocked)
        }
        #expect(try !checkpointIsBlocked(url), "the read transaction ended with the block")
    }

    @Test func leaseStatementsAreNotCountedOrObserved() throws {
        let (first, _, ids, _) = try twoCoordinators()
        let store = try #require(S.sqlite(first))
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        let context = M.context(first)
        let statements = try S.statements(first) {
            try context.performAndWait {
                for id in ids { _ = try context.existingObject(with: id) }
            }
        }
        #expect(statements == ids.count)
        #expect(seen.withLock { $0.allSatisfy { $0.hasPrefix("SELECT") } })
    }
}

/// Prefetching a to-many relationship for most of its sources reads the destination table in
/// one pass; for a few sources it reads through the foreign-key index. Both give the same members.
@Suite("Prefetch by scan", .timeLimit(.minutes(1)))
struct PrefetchScanTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    @Test func scanAndIndexedPrefetchGiveTheMembersOfAnUnprefetchedWalk() throws {
        let coordinator = try S.coordinator(.sqlite)
        let seeder = M.context(coordinator)
        try seeder.performAndWait {
            for b in 0..<120 {
                let brewery = M.insert("Brewery", into: seeder, ["name": String(format: "Brewery %03d", b)])
                // 0 to 4 beers each, interleaved with other breweries' beers and beers without a brewery.
                for i in 0..<(b % 5) {
                    _ = M.insert("Beer", into: seeder, ["name": "Beer \(b).\(i)", "abv": Double(i), "brewery": brewery])
                    if i == 1 { _ = M.insert("Beer", into: seeder, ["name": "Orphan \(b)", "abv": 1.0]) }
                }
            }
            try seeder.save()
        }
        func members(prefetching: Bool, predicate: FetchPredicate?) throws -> [String: [String]] {
            let context = M.context(coordinator)
            return try context.performAndWait {
                let request = M.request("Brewery", predicate, sort: [FetchSortDescriptor(key: "name")])
                if prefetching { request.relationshipKeyPathsForPrefetching = ["beers"] }
                var result: [String: [String]] = [:]
                for brewery in try context.fetch(request) {
                    result[brewery.string(forKey: "name") ?? ""] = M.names(brewery.value(forKey: "beers")).sorted()
                }
                return result
            }
        }
        let all = try members(prefetching: false, predicate: nil)
        #expect(all.count == 120)
        #expect(all["Brewery 004"] == ["Beer 4.0", "Beer 4.1", "Beer 4.2", "Beer 4.3"])
        #expect(try members(prefetching: true, predicate: nil) == all)
        let few = FetchPredicate.comparison(.keyPath("name"), .lessThan, .constant(.string("Brewery 010")))
        let fewMembers = try members(prefetching: true, predicate: few)
        #expect(fewMembers.count == 10)
        #expect(fewMembers == all.filter { $0.key < "Brewery 010" })
    }
}
