import Foundation
import Testing
@testable import PersistKit

/// A store's streamed fetch (``PersistentStore/fetch(_:each:)``), which a context's fetch uses
/// to make each row's object as the row is read: the same rows in the same order as
/// ``PersistentStore/fetch(_:)``, each handed over once. The store found locked before the
/// first row is waited for; found locked after it, the fetch fails with a typed error rather
/// than handing rows over again. The lock is simulated by the fault-injecting VFS
/// (`FaultScope`) failing a read with `SQLITE_BUSY`, which no busy handler waits out.
@Suite("Streamed fetch: a store's rows handed over as they are read, each once")
struct StreamedFetchTests {
    typealias M = ContextTestModel
    typealias Fixture = PrefetchSnapshotTests.Fixture

    /// The beers' requests compared: all, a predicate with a sort, a limit with an offset.
    static func requests(_ beer: EntityDescription) -> [StoreFetchRequest] {
        let byName = [FetchSortDescriptor(key: "name")]
        return [
            StoreFetchRequest(entity: beer),
            StoreFetchRequest(entity: beer, predicate: .comparison(.keyPath("name"), .greaterThan, .constant(.string(Fixture.beerName(300, 0)))),
                              sortDescriptors: [FetchSortDescriptor(key: "name", ascending: false)]),
            StoreFetchRequest(entity: beer, sortDescriptors: byName, fetchLimit: 25, fetchOffset: 590),
        ]
    }

    /// A row's key, version and values, compared across the two ways of fetching.
    struct Row: Equatable {
        var primaryKey: Int64
        var version: Int64
        var values: [StoreValue]

        init(_ row: borrowing RowSnapshot) {
            primaryKey = row.primaryKey
            version = row.version
            values = Array(row.values)
        }
    }

    static func streamed(_ store: any PersistentStore, _ request: StoreFetchRequest) throws -> [Row] {
        var rows: [Row] = []
        try store.fetch(request) { row in rows.append(Row(row)) }
        return rows
    }

    @Test func theStreamedRowsAreTheFetchedRowsInOrder() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let store = try #require(fixture.writer.persistentStores.first)
        let beer = try #require(fixture.writer.managedObjectModel.entitiesByName["Beer"])
        for request in Self.requests(beer) {
            let fetched = try store.fetch(request).map { Row($0) }
            #expect(!fetched.isEmpty)
            #expect(try Self.streamed(store, request) == fetched, "\(request.predicate.map { "\($0)" } ?? "all"), limit \(request.fetchLimit)")
        }
        // The store's one statement per fetch leaves no transaction open.
        let sqlite = try #require(store as? SQLiteStore)
        #expect(PrefetchSnapshotTests.isAutocommit(sqlite))
    }

    @Test func aStoreWithoutItsOwnStreamHandsOverItsFetchedRows() throws {
        // The in-memory store answers with the default: its fetch(_:)'s rows, one by one.
        let coordinator = try M.coordinator(type: .inMemory)
        let context = M.context(coordinator)
        try context.performAndWait {
            for index in 0..<40 { _ = M.insert("Beer", into: context, ["name": String(format: "beer %02d", index)]) }
            try context.save()
        }
        let store = try #require(coordinator.persistentStores.first)
        let beer = try #require(coordinator.managedObjectModel.entitiesByName["Beer"])
        let request = StoreFetchRequest(entity: beer, sortDescriptors: [FetchSortDescriptor(key: "name", ascending: false)], fetchLimit: 7, fetchOffset: 3)
        let streamed = try Self.streamed(store, request)
        #expect(streamed == (try store.fetch(request).map { Row($0) }))
        let name = try #require(beer.slotIndex(of: "name"))
        #expect(streamed.map { $0.values[name] } == (30...36).reversed().map { .string(String(format: "beer %02d", $0)) })
    }

    @Test func aBodyThatThrowsStopsTheReadAndTheStoreReadsOnAfterwards() throws {
        struct Enough: Error {}
        let fixture = try Fixture()
        defer { fixture.remove() }
        let store = try #require(fixture.writer.persistentStores.first as? SQLiteStore)
        let beer = try #require(fixture.writer.managedObjectModel.entitiesByName["Beer"])
        var handedOver = 0
        #expect(throws: Enough.self) {
            try store.fetch(StoreFetchRequest(entity: beer)) { _ in
                handedOver += 1
                if handedOver == 10 { throw Enough() }
            }
        }
        #expect(handedOver == 10, "no row after the body threw")
        #expect(PrefetchSnapshotTests.isAutocommit(store))
        // The statement was reset: the same fetch reads every row again, and a write commits.
        #expect(try Self.streamed(store, StoreFetchRequest(entity: beer)).count == 2 * Fixture.withBeers)
        let context = M.context(fixture.writer)
        try context.performAndWait {
            _ = M.insert("Beer", into: context, ["name": "after"])
            try context.save()
        }
        #expect(try store.count(StoreFetchRequest(entity: beer)) == 2 * Fixture.withBeers + 1)
    }

    @Test func theStoreFoundLockedBeforeTheFirstRowIsWaitedForAndEveryRowHandedOverOnce() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (coordinator, store, _) = try fixture.reader(.keyLists)
        defer { try? coordinator.remove(store) }
        let beer = try #require(coordinator.managedObjectModel.entitiesByName["Beer"])
        // The reader has not read the beers yet: the fetch's first read of the file, before
        // any row, finds the store locked.
        fixture.scope.arm(.read, at: 1, error: FaultScope.Code.busy)
        let rows = try Self.streamed(store, StoreFetchRequest(entity: beer))
        fixture.scope.disarm()
        #expect(fixture.scope.injected == 1, "the first read failed")
        #expect(rows.count == 2 * Fixture.withBeers)
        #expect(Set(rows.map(\.primaryKey)).count == rows.count, "every row once")
    }

    @Test func theStoreFoundLockedAfterTheFirstRowFailsTheFetchWithoutRepeatingRows() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (coordinator, store, _) = try fixture.reader(.keyLists)
        defer { try? coordinator.remove(store) }
        let beer = try #require(coordinator.managedObjectModel.entitiesByName["Beer"])
        var seen: Set<Int64> = []
        var repeated = 0
        var armed = false
        let error = #expect(throws: PersistenceError.self) {
            try store.fetch(StoreFetchRequest(entity: beer)) { row in
                if !seen.insert(row.primaryKey).inserted { repeated += 1 }
                // The next read of the file, in the middle of the fetch, finds the store locked.
                if !armed {
                    armed = true
                    fixture.scope.arm(.read, at: 1, error: FaultScope.Code.busy)
                }
            }
        }
        fixture.scope.disarm()
        #expect(fixture.scope.injected == 1, "one read failed, after the first row")
        #expect(repeated == 0, "rows handed over twice")
        #expect(!seen.isEmpty && seen.count < 2 * Fixture.withBeers, "the fetch stopped at the failure")
        #expect(error?.code == .sqlite)
        #expect(error?.message.contains("SQLITE_BUSY") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("fetching Beer failed") == true, "\(error?.message ?? "")")
        #expect(PrefetchSnapshotTests.isAutocommit(store))
        // The store reads normally afterwards.
        #expect(try Self.streamed(store, StoreFetchRequest(entity: beer)).count == 2 * Fixture.withBeers)
    }

    @Test func aContextFetchMakesOneObjectPerRowInTheStoresOrder() throws {
        let fixture = try Fixture()
        defer { fixture.remove() }
        let (coordinator, store, _) = try fixture.reader(.keyLists)
        defer { try? coordinator.remove(store) }
        let context = M.context(coordinator)
        let names = try context.performAndWait {
            let request = M.request("Beer", sort: [FetchSortDescriptor(key: "name", ascending: false)])
            request.fetchLimit = 30
            request.fetchOffset = 5
            let objects = try context.fetch(request)
            // Fetched again: the registered objects, not new ones.
            let again = try context.fetch(request)
            #expect(zip(objects, again).allSatisfy { $0 === $1 })
            #expect(objects.allSatisfy { $0.isFault }, "faults holding their rows")
            return objects.map { $0.value(forKey: "name") as? String ?? "<none>" }
        }
        let expected = (0..<Fixture.withBeers).flatMap { [Fixture.beerName($0, 0), Fixture.beerName($0, 1)] }.sorted(by: >)
        #expect(names == Array(expected[5..<35]))
    }
}
