import Foundation
import Testing
@testable import PersistKit

/// Lookups by object ID: `existingObject(with:)` one by one, `loadObjects(with:)` for many, and
/// the typed accessors.
@Suite("Lookups by ID")
struct LookupTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// A store of `type` seeded with the breweries, the IDs of its beers, and an ID of a beer
    /// the store has no row for.
    static func seededBeers(_ type: StoreType) throws
        -> (coordinator: PersistentStoreCoordinator, ids: [ManagedObjectID], missing: ManagedObjectID) {
        let coordinator = try S.coordinator(type)
        try S.seedBreweries(coordinator)
        let reader = M.context(coordinator)
        let ids = try reader.performAndWait { try reader.fetch(FetchRequest<ManagedObject>(entityName: "Beer")).map(\.objectID) }
        let missing = ManagedObjectID(entity: ids[0].entity, storeIdentifier: ids[0].storeIdentifier ?? "", primaryKey: 999)
        return (coordinator, ids, missing)
    }

    @Test(arguments: S.storeTypes)
    func loadObjectsReadsManyWithOneStatement(_ type: StoreType) throws {
        let (coordinator, ids, missing) = try Self.seededBeers(type)
        let context = M.context(coordinator)
        try context.performAndWait {
            let loading = try S.statements(coordinator) { try context.loadObjects(with: ids + [missing, ids[0]]) }
            if type == .sqlite { #expect(loading == 1) }
            var names: [String] = []
            let lookups = try S.statements(coordinator) {
                for id in ids {
                    let object = try context.existingObject(with: id)
                    #expect(!object.isFault)
                    names.append(object.string(forKey: "name") ?? "")
                }
            }
            if type == .sqlite { #expect(lookups == 0) }
            #expect(names.sorted() == ["Achel Blond", "Mystery", "Orval", "Petite Orval", "Westmalle Dubbel", "Westmalle Tripel"])
            #expect(throws: PersistenceError.self) { try context.existingObject(with: missing) }
        }
    }

    @Test(arguments: S.storeTypes)
    func aMissingIDLeavesNothingRegisteredAndAFoundOneStaysUnique(_ type: StoreType) throws {
        let (coordinator, ids, missing) = try Self.seededBeers(type)
        let context = M.context(coordinator)
        try context.performAndWait {
            #expect(throws: PersistenceError.self) { try context.existingObject(with: missing) }
            #expect(context.registeredObject(for: missing) == nil, "no fault is left behind for an ID with no row")
            #expect(context.registeredObjects.isEmpty)
            // A fault registered first (object(with:)) is filled in place, and stays registered.
            let fault = context.object(with: ids[0])
            #expect(fault.isFault)
            let found = try context.existingObject(with: ids[0])
            #expect(found === fault && !found.isFault)
            #expect(try context.existingObject(with: ids[0]) === found)
            let other = try context.existingObject(with: ids[1])
            #expect(other !== found && !other.isFault)
            #expect(context.registeredObjects == [found, other])
            // A fault of a missing ID registered by object(with:) stays registered after the throw.
            let missingFault = context.object(with: missing)
            #expect(throws: PersistenceError.self) { try context.existingObject(with: missing) }
            #expect(context.registeredObject(for: missing) === missingFault)
        }
    }

    @Test func existingObjectReadsOneRowWithOneCachedStatement() throws {
        let (coordinator, ids, _) = try Self.seededBeers(.sqlite)
        let store = try #require(S.sqlite(coordinator))
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        let context = M.context(coordinator)
        try context.performAndWait {
            for id in ids { _ = try context.existingObject(with: id) }
        }
        let sql = seen.withLock { $0 }
        #expect(sql.count == ids.count)
        #expect(Set(sql).count == 1)
        #expect(sql.first?.hasSuffix(#"FROM "ZBEER" AS "t0" WHERE "t0"."Z_PK" = ?"#) == true)
    }

    @Test func typedAccessorsReadWithoutCasts() throws {
        let coordinator = try S.coordinator(.inMemory)
        try S.seedBreweries(coordinator)
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Beer", predicate: nil, sortDescriptors: [FetchSortDescriptor(key: "name")])
            let beers = try context.fetch(request)
            #expect(beers.map { $0.string(forKey: "name") ?? "-" } == ["Achel Blond", "Mystery", "Orval", "Petite Orval", "Westmalle Dubbel", "Westmalle Tripel"])
            #expect(beers.map { $0.int64(forKey: "ibu") } == [30, nil, 32, nil, 24, 39])
            #expect(beers.map { $0.double(forKey: "abv") } == [8.0, 5.0, 6.2, 4.5, 7.0, 9.5])
        }
    }
}
