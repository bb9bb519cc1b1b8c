import Foundation
import Testing
@testable import PersistKit

/// The read path's shortcuts keep Core Data's behaviour: rows moved into faults, faults filled
/// without the context, prefetched to-many memberships of every size, the registry's table
/// kept by `reset()`, and IDs and objects hashed without SipHash.
@Suite("Read path", .timeLimit(.minutes(1)))
struct ReadPathTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// Counts `awakeFromFetch()` calls, to check a fault is filled exactly once.
    final class CountingBeer: ManagedObject {
        nonisolated(unsafe) static var awakenings = 0
        override func awakeFromFetch() { Self.awakenings += 1 }
    }

    /// `breweries` breweries "Brewery 000"…; brewery `b` has `beers(b)` beers "Brewery 000 #0"….
    private func seed(_ coordinator: PersistentStoreCoordinator, breweries: Int, beers: (Int) -> Int) throws {
        let context = M.context(coordinator)
        try context.performAndWait {
            for b in 0..<breweries {
                let brewery = M.insert("Brewery", into: context, ["name": String(format: "Brewery %03d", b)])
                for i in 0..<beers(b) {
                    _ = M.insert("Beer", into: context, ["name": String(format: "Brewery %03d #%d", b, i), "abv": Double(i % 50), "brewery": brewery])
                }
            }
            try context.save()
        }
    }

    @Test(arguments: S.storeTypes)
    func fetchedFaultsHoldTheirRowsAndFillOnceWithTheFetchedValues(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seed(coordinator, breweries: 3, beers: { $0 + 2 })
        let context = M.context(coordinator)
        try context.performAndWait {
            let beers = try context.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
            #expect(beers.count == 2 + 3 + 4)
            let allFaults = beers.allSatisfy(\.isFault)
            #expect(allFaults)
            #expect(context.registeredObjects.count == beers.count)
            for beer in beers {
                // Uniquing: the registry gives back the fetched instance.
                #expect(context.object(with: beer.objectID) === beer)
            }
            #expect(M.names(beers).first == "Brewery 000 #0")
            let noneFaults = beers.allSatisfy { !$0.isFault }
            #expect(noneFaults)
            #expect(beers[1].value(forKey: "abv") as? Double == 1)
            #expect(beers[1].committedValues(forKeys: ["abv"])["abv"] as? Double == 1)
            #expect(beers[1].storeVersion == 1)
            #expect(!beers[1].hasChanges)
            beers[1].setValue(7.5, forKey: "abv")
            #expect(beers[1].changedValues()["abv"] as? Double == 7.5)
            #expect(beers[1].committedValues(forKeys: ["abv"])["abv"] as? Double == 1)
        }
    }

    @Test func aSubclassFaultAwakesOnceWhetherFilledFromItsRowOrByTheContext() throws {
        let model = M.make()
        model.entitiesByName["Beer"]?.managedObjectClass = CountingBeer.self
        let url = try M.temporaryDirectory().appendingPathComponent("awake.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url, model: model)
        try seed(coordinator, breweries: 2, beers: { _ in 3 })
        let context = M.context(coordinator)
        try context.performAndWait {
            CountingBeer.awakenings = 0
            let beers = try context.fetch(M.request("Beer"))
            let allCounting = beers.allSatisfy { $0 is CountingBeer }
            #expect(allCounting)
            for beer in beers { _ = beer.value(forKey: "name"); _ = beer.value(forKey: "abv") }
            #expect(CountingBeer.awakenings == 6)
            // A fault with no row at hand (turned back into a fault) is filled by the context.
            context.refresh(beers[0], mergeChanges: false)
            #expect(beers[0].isFault)
            #expect((beers[0].value(forKey: "name") as? String)?.hasPrefix("Brewery") == true)
            #expect(CountingBeer.awakenings == 7)
        }
    }

    @Test func aFaultLeftByResetHasNoValuesEvenWithItsRowFetched() throws {
        let coordinator = try S.coordinator(.sqlite)
        try seed(coordinator, breweries: 1, beers: { _ in 2 })
        let context = M.context(coordinator)
        try context.performAndWait {
            let beers = try context.fetch(M.request("Beer"))
            let allFaults = beers.allSatisfy(\.isFault)
            #expect(allFaults)
            context.reset()
            #expect(context.registeredObjects.isEmpty)
            #expect(beers[0].managedObjectContext == nil)
            #expect(beers[0].value(forKey: "name") == nil)
        }
    }

    /// A fired fault's values are its committed state's values, held once: every way of
    /// changing either one (a set, a rollback, a save, a refresh merging another context's
    /// save, a refresh dropping changes) keeps the other as it was.
    @Test(arguments: S.storeTypes)
    func valuesSharedWithTheCommittedStateStayApartFromEveryChange(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seed(coordinator, breweries: 1, beers: { _ in 2 })
        let context = M.context(coordinator)
        let other = M.context(coordinator)
        try context.performAndWait {
            let beer = try context.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))[1]
            #expect(beer.value(forKey: "abv") as? Double == 1)
            #expect(!beer.hasChanges)

            beer.setValue(9.0, forKey: "abv")
            #expect(beer.value(forKey: "abv") as? Double == 9)
            #expect(beer.committedValues(forKeys: ["abv"])["abv"] as? Double == 1)
            #expect(beer.changedValues()["abv"] as? Double == 9)

            context.rollback()
            #expect(beer.value(forKey: "abv") as? Double == 1)
            #expect(beer.committedValues(forKeys: ["abv"])["abv"] as? Double == 1)
            #expect(!beer.hasChanges)

            // Changed again after the rollback shared the values again, then saved.
            beer.setValue(3.0, forKey: "abv")
            #expect(beer.committedValues(forKeys: ["abv"])["abv"] as? Double == 1)
            try context.save()
            #expect(beer.committedValues(forKeys: ["abv"])["abv"] as? Double == 3)
            #expect(beer.storeVersion == 2)

            // Another context saves a new value; a refresh keeping changes merges it in.
            let id = beer.objectID
            try other.performAndWait {
                other.object(with: id).setValue(4.0, forKey: "abv")
                try other.save()
            }
            beer.setValue("Renamed", forKey: "name")
            context.refresh(beer, mergeChanges: true)
            #expect(beer.value(forKey: "abv") as? Double == 4)
            #expect(beer.value(forKey: "name") as? String == "Renamed")
            #expect(beer.committedValues(forKeys: ["abv"])["abv"] as? Double == 4)
            #expect(beer.committedValues(forKeys: ["name"])["name"] as? String == "Brewery 000 #1")

            // A refresh dropping the changes makes a fault, filled again from the store.
            context.refresh(beer, mergeChanges: false)
            #expect(beer.isFault)
            #expect(beer.value(forKey: "name") as? String == "Brewery 000 #1")
            #expect(beer.value(forKey: "abv") as? Double == 4)
            beer.setValue(5.0, forKey: "abv")
            #expect(beer.committedValues(forKeys: ["abv"])["abv"] as? Double == 4)
            context.rollback()
            #expect(beer.value(forKey: "abv") as? Double == 4)
            #expect(!beer.hasChanges)
        }
    }

    @Test func resetThenFetchAgainRegistersNewObjectsWithTheStoredValues() throws {
        let coordinator = try S.coordinator(.sqlite)
        try seed(coordinator, breweries: 4, beers: { _ in 25 })
        let context = M.context(coordinator)
        try context.performAndWait {
            var previous: [ManagedObject] = []
            for round in 0..<3 {
                let beers = try context.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
                #expect(beers.count == 100)
                #expect(context.registeredObjects.count == 100)
                #expect(M.names(beers).first == "Brewery 000 #0", "round \(round)")
                for (old, new) in zip(previous, beers) {
                    #expect(old !== new)
                    #expect(old.objectID == new.objectID)
                }
                previous = beers
                context.reset()
                #expect(context.registeredObjects.isEmpty)
                // The registry's table is kept for the next round's objects.
                #expect(context.registered.capacity >= 100)
                #expect(!context.hasChanges)
            }
        }
    }

    @Test(arguments: S.storeTypes)
    func prefetchedMembershipsOfEverySizeMatchTheStore(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        // 80 breweries (enough for the SQLite store's scan of the whole beer table), with 0 to 40
        // beers each: buckets below, at and far above the average share.
        let count: (Int) -> Int = { b in b % 9 == 0 ? 0 : (b % 5 == 0 ? 40 : b % 4) }
        try seed(coordinator, breweries: 80, beers: count)
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = M.request("Brewery", sort: [FetchSortDescriptor(key: "name")])
            request.relationshipKeyPathsForPrefetching = ["beers"]
            let breweries = try context.fetch(request)
            #expect(breweries.count == 80)
            for (b, brewery) in breweries.enumerated() {
                let beers = brewery.value(forKey: "beers") as? Set<ManagedObject> ?? []
                let expected = (0..<count(b)).map { String(format: "Brewery %03d #%d", b, $0) }.sorted()
                #expect(M.names(beers as Any?) == expected, "brewery \(b)")
                for beer in beers {
                    #expect(beer.value(forKey: "brewery") as? ManagedObject === brewery)
                    #expect(context.object(with: beer.objectID) === beer)
                }
            }
            // Every beer and brewery registered once.
            #expect(context.registeredObjects.count == 80 + (0..<80).map(count).reduce(0, +))
        }
    }

    @Test func idsAndObjectsKeepSetAndDictionarySemanticsInLargeTables() throws {
        let coordinator = try S.coordinator(.sqlite)
        let context = M.context(coordinator)
        try context.performAndWait {
            let entity = try #require(coordinator.managedObjectModel.entitiesByName["Beer"])
            let other = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
            let store = try #require(coordinator.persistentStores.first?.identifier)
            var ids = Set<ManagedObjectID>()
            for key in 1...5_000 {
                ids.insert(ManagedObjectID(entity: entity, storeIdentifier: store, primaryKey: Int64(key)))
                ids.insert(ManagedObjectID(entity: other, storeIdentifier: store, primaryKey: Int64(key)))
            }
            #expect(ids.count == 10_000)
            #expect(ids.contains(ManagedObjectID(entity: entity, storeIdentifier: store, primaryKey: 4_321)))
            #expect(!ids.contains(ManagedObjectID(entity: entity, storeIdentifier: store, primaryKey: 5_001)))
            #expect(!ids.contains(ManagedObjectID(entity: entity, storeIdentifier: "another store", primaryKey: 7)))
            var objects = Set<ManagedObject>()
            for id in ids { objects.insert(context.object(with: id)) }
            for id in ids { objects.insert(context.object(with: id)) }
            #expect(objects.count == 10_000)
            #expect(context.registeredObjects == objects)
        }
    }
}
