import Dispatch
import Foundation
import Testing
@testable import PersistKit

/// Objects are registered under their key (entity, primary key, store token), and a fetched
/// object's ID is made when first asked: these tests check that identity still behaves as Core
/// Data's (one object per ID per context, an object's `objectID` the same instance at every
/// call, temporary IDs replaced on save), that two stores holding equal primary keys give two
/// objects, and the lookup by entity, store and key.
@Suite("Object keys and lazy IDs", .timeLimit(.minutes(1)))
struct ObjectKeyTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// A SQLite store at `url` holding one brewery named `name` (primary key 1).
    private static func seedBrewery(_ name: String, at url: URL) throws {
        let context = M.context(try M.coordinator(type: .sqlite, at: url))
        try context.performAndWait {
            _ = M.insert("Brewery", into: context, ["name": name])
            try context.save()
        }
    }

    @Test func aFetchedObjectsIDIsMadeOnceAndKept() throws {
        let coordinator = try PrefetchedMembersTests.seeded(.sqlite, breweries: 3)
        let context = M.context(coordinator)
        let store = try #require(S.sqlite(coordinator))
        try context.performAndWait {
            let breweries = try context.fetch(M.request("Brewery", sort: [FetchSortDescriptor(key: "name")]))
            #expect(breweries.count == 3)
            for brewery in breweries {
                let first = brewery.objectID
                #expect(brewery.objectID === first, "every call returns the instance made at the first")
                #expect(!first.isTemporaryID)
                #expect(first.storeIdentifier == store.identifier)
                let equal = ManagedObjectID(entity: brewery.entity, storeIdentifier: store.identifier, primaryKey: first.primaryKey)
                #expect(equal == first && equal.key == first.key)
                #expect(context.registeredObject(for: equal) === brewery, "an equal ID finds the object")
                #expect(context.object(with: equal) === brewery, "one object per ID")
                #expect(brewery.objectID === first, "looking it up by an equal ID keeps its own ID")
            }
            // A second fetch finds the same objects, their IDs unchanged.
            let ids = breweries.map(\.objectID)
            let again = try context.fetch(M.request("Brewery", sort: [FetchSortDescriptor(key: "name")]))
            #expect(zip(again, breweries).allSatisfy { $0 === $1 })
            #expect(zip(again.map(\.objectID), ids).allSatisfy { $0 === $1 })
            #expect(context.registeredObjects.count >= 3)
        }
    }

    @Test func aPrefetchedMembersIDIsItsObjectsID() throws {
        let coordinator = try PrefetchedMembersTests.seeded(.sqlite, breweries: 4)
        let context = M.context(coordinator)
        try context.performAndWait {
            for brewery in try PrefetchedMembersTests.prefetchedBreweries(context) {
                let beers = brewery.value(forKey: "beers") as? Set<ManagedObject> ?? []
                #expect(beers.count == 3)
                for beer in beers {
                    let id = beer.objectID
                    #expect(beer.objectID === id)
                    #expect(context.object(with: id) === beer)
                    #expect(beer.value(forKey: "brewery") as? ManagedObject === brewery)
                }
            }
        }
    }

    @Test func aTemporaryIDIsReplacedOnSaveThenKept() throws {
        let coordinator = try S.coordinator(.sqlite)
        let context = M.context(coordinator)
        try context.performAndWait {
            let brewery = M.insert("Brewery", into: context, ["name": "Temp"])
            let temporary = brewery.objectID
            #expect(temporary.isTemporaryID && temporary.key.isTemporaryID)
            #expect(brewery.objectID === temporary)
            #expect(context.registeredObject(for: temporary) === brewery)
            let beer = M.insert("Beer", into: context, ["name": "Early"])
            try context.obtainPermanentIDs(for: [beer])
            let beerID = beer.objectID
            #expect(!beerID.isTemporaryID && beer.objectID === beerID)
            #expect(context.registeredObject(for: beerID) === beer)
            try context.save()
            let permanent = brewery.objectID
            #expect(!permanent.isTemporaryID)
            #expect(permanent !== temporary)
            #expect(brewery.objectID === permanent, "the permanent ID is kept")
            #expect(beer.objectID === beerID, "an ID obtained before the save stays")
            #expect(context.registeredObject(for: permanent) === brewery)
            #expect(context.registeredObject(for: temporary) == nil, "the temporary ID no longer names it")
            let store = try #require(S.sqlite(coordinator))
            #expect(context.registeredObject(entity: brewery.entity, store: store.storeToken, primaryKey: permanent.primaryKey) === brewery)
        }
    }

    @Test func twoStoresWithEqualKeysGiveTwoObjects() throws {
        let directory = try M.temporaryDirectory()
        let first = directory.appendingPathComponent("first.sqlite"), second = directory.appendingPathComponent("second.sqlite")
        try Self.seedBrewery("First", at: first)
        try Self.seedBrewery("Second", at: second)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
        let storeA = try coordinator.addPersistentStore(type: .sqlite, at: first)
        let storeB = try coordinator.addPersistentStore(type: .sqlite, at: second)
        #expect(storeA.identifier != storeB.identifier)
        #expect(storeA.storeToken !== storeB.storeToken)
        let entity = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        let idA = ManagedObjectID(entity: entity, storeIdentifier: storeA.identifier, primaryKey: 1)
        let idB = ManagedObjectID(entity: entity, storeIdentifier: storeB.identifier, primaryKey: 1)
        #expect(idA != idB && idA.key != idB.key)
        let context = M.context(coordinator)
        try context.performAndWait {
            let a = try context.existingObject(with: idA)
            let b = try context.existingObject(with: idB)
            #expect(a !== b)
            #expect(a.value(forKey: "name") as? String == "First")
            #expect(b.value(forKey: "name") as? String == "Second")
            #expect(context.registeredObject(entity: entity, store: storeA.storeToken, primaryKey: 1) === a)
            #expect(context.registeredObject(entity: entity, store: storeB.storeToken, primaryKey: 1) === b)
            #expect(context.registeredObject(entity: entity, storeIdentifier: storeB.identifier, primaryKey: 1) === b)
            #expect(context.object(with: ManagedObjectID(entity: entity, storeIdentifier: storeA.identifier, primaryKey: 1)) === a)
            #expect(context.registeredObjects.count == 2)
        }
    }

    /// An ID holds its store as the interned token, not as a string of its own: one made from
    /// an identifier string (here built afresh, so it shares no storage with the token's) and
    /// one made from the token, or from a key, are equal, hash alike and give the same
    /// identifier and URI; IDs of two identifiers differ only by their store.
    @Test func anIDHoldsItsStoreAsTheInternedToken() throws {
        let entity = try #require(M.make().entitiesByName["Brewery"])
        let identifier = "6B0E3C1A-5D2F-4E8B-9A7C-0F1E2D3C4B5A"
        let token = StoreToken.forIdentifier(identifier)
        let rebuilt = String(decoding: Array(identifier.utf8), as: UTF8.self)
        let fromString = ManagedObjectID(entity: entity, storeIdentifier: rebuilt, primaryKey: 42)
        let fromToken = ManagedObjectID(entity: entity, store: token, primaryKey: 42)
        let fromKey = ManagedObjectID(entity: entity, key: ObjectKey(entity: entity, store: token, primaryKey: 42))
        for id in [fromString, fromToken, fromKey] {
            #expect(id == fromToken && id.hashValue == fromToken.hashValue)
            #expect(id.storeIdentifier == identifier && !id.isTemporaryID)
            #expect(id.key == fromToken.key)
            #expect(id.uriRepresentation().absoluteString == "x-coredata://\(identifier)/Brewery/p42")
        }
        let otherStore = ManagedObjectID(entity: entity, storeIdentifier: "7C1F4D2B-6E3A-4F9C-8B8D-1A2B3C4D5E6F", primaryKey: 42)
        #expect(otherStore != fromString && otherStore.key != fromString.key)
        #expect(otherStore.hashValue == fromString.hashValue, "the store is not hashed (equal IDs need only equal hashes)")
        let temporary = ManagedObjectID(temporaryFor: entity)
        #expect(temporary.storeIdentifier == nil && temporary.isTemporaryID && temporary != fromString)
    }

    /// A lookup by ID goes to the store its token names, among those still open: removing a
    /// store, first or last in the coordinator's list, leaves the others answering theirs.
    @Test func lookupsByIDFollowTheStoresStillOpen() throws {
        let directory = try M.temporaryDirectory()
        let urls = ["first", "second", "third"].map { directory.appendingPathComponent("\($0).sqlite") }
        for (url, name) in zip(urls, ["First", "Second", "Third"]) { try Self.seedBrewery(name, at: url) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
        let first = try coordinator.addPersistentStore(type: .sqlite, at: urls[0])
        let second = try coordinator.addPersistentStore(type: .sqlite, at: urls[1])
        let entity = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        func id(_ store: any PersistentStore) -> ManagedObjectID {
            ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: 1)
        }
        func name(_ objectID: ManagedObjectID) throws -> String? {
            let context = M.context(coordinator)
            return try context.performAndWait { try context.existingObject(with: objectID).value(forKey: "name") as? String }
        }
        #expect(try name(id(first)) == "First")
        #expect(try name(id(second)) == "Second")
        try coordinator.remove(first)
        #expect(throws: PersistenceError.self, "the removed store's object is not found") { try name(id(first)) }
        #expect(try name(id(second)) == "Second", "the store after the removed one still answers")
        let third = try coordinator.addPersistentStore(type: .sqlite, at: urls[2])
        #expect(try name(id(third)) == "Third")
        try coordinator.remove(third)
        #expect(throws: PersistenceError.self) { try name(id(third)) }
        #expect(try name(id(second)) == "Second")
        #expect(coordinator.persistentStores.count == 1)
    }

    /// One context's lookups by ID go where the coordinator and the context's settings say at
    /// each lookup, though the context keeps the store of its last read (``ReadRoute``): after
    /// its store is removed, added again, after another coordinator is set, after a parent is.
    @Test func oneContextsLookupsFollowItsStoresAndSettings() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("brewery.sqlite")
        try Self.seedBrewery("First", at: url)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        let entity = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        let id = ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: 1)
        let context = M.context(coordinator)
        func name() throws -> String? {
            try context.performAndWait {
                context.reset()
                return try context.existingObject(with: id).value(forKey: "name") as? String
            }
        }
        #expect(try name() == "First")
        #expect(try name() == "First")
        try coordinator.remove(store)
        #expect(throws: PersistenceError.self, "the store of the last read is gone") { try name() }
        // The same file again: the same store identifier, so the same IDs.
        let again = try #require(try coordinator.addPersistentStore(type: .sqlite, at: url) as? SQLiteStore)
        #expect(try name() == "First")

        // Another coordinator on the same file: the reads go through its store only.
        let other = PersistentStoreCoordinator(managedObjectModel: coordinator.managedObjectModel)
        let otherStore = try #require(try other.addPersistentStore(type: .sqlite, at: url) as? SQLiteStore)
        let (againBefore, otherBefore) = (again.statementCount, otherStore.statementCount)
        context.persistentStoreCoordinator = other
        #expect(try name() == "First")
        #expect(again.statementCount == againBefore)
        #expect(otherStore.statementCount > otherBefore)

        // A parent: the reads go to it, and through its coordinator's store.
        let parent = M.context(coordinator)
        let (againBeforeParent, otherBeforeParent) = (again.statementCount, otherStore.statementCount)
        context.persistentStoreCoordinator = nil
        context.parent = parent
        #expect(try name() == "First")
        #expect(again.statementCount > againBeforeParent)
        #expect(otherStore.statementCount == otherBeforeParent)
    }

    @Test func theLookupByEntityStoreAndKey() throws {
        let coordinator = try PrefetchedMembersTests.seeded(.sqlite, breweries: 2)
        let store = try #require(S.sqlite(coordinator))
        let model = coordinator.managedObjectModel
        let brewery = try #require(model.entitiesByName["Brewery"]), beer = try #require(model.entitiesByName["Beer"])
        let context = M.context(coordinator)
        #expect(context.registeredObject(entity: brewery, store: store.storeToken, primaryKey: 1) == nil, "nothing registered yet")
        // Only the first is kept here: the other is held by the context alone.
        let first = try #require(try context.performAndWait { try context.fetch(M.request("Brewery")).first { $0.objectID.primaryKey == 1 } })
        #expect(context.registeredObject(entity: brewery, store: store.storeToken, primaryKey: 1) === first)
        #expect(context.registeredObject(entity: brewery, storeIdentifier: store.identifier, primaryKey: 1) === first)
        #expect(context.registeredObject(forKey: ObjectKey(entity: brewery, store: store.storeToken, primaryKey: 1)) === first)
        #expect(context.registeredObject(entity: beer, store: store.storeToken, primaryKey: 1) == nil, "another entity, same key")
        #expect(context.registeredObject(entity: brewery, store: StoreToken.forIdentifier(UUID().uuidString), primaryKey: 1) == nil,
                "another store, same key")
        #expect(context.registeredObject(entity: brewery, store: store.storeToken, primaryKey: 999) == nil)
        #expect(StoreToken.forIdentifier(store.identifier) === store.storeToken, "one token per identifier")
        // A registered fault is found by the lookup, and its ID made on request is kept.
        try context.performAndWait {
            let fault = try #require(context.registeredObject(entity: brewery, store: store.storeToken, primaryKey: 2))
            #expect(fault.isFault)
            #expect(fault.objectID.primaryKey == 2 && fault.objectID === fault.objectID)
        }
        #expect(context.registeredObject(entity: brewery, store: store.storeToken, primaryKey: 2) != nil)
        // Let go of by a release, the object is no longer found.
        context.performAndWait { _ = context.releaseUnreferencedObjects(beyond: 0) }
        #expect(context.registeredObject(entity: brewery, store: store.storeToken, primaryKey: 2) == nil)
        withExtendedLifetime(first) {}
    }

    @Test func aRowMadeFromAKeyEqualsOneMadeFromItsID() throws {
        let coordinator = try PrefetchedMembersTests.seeded(.sqlite, breweries: 1)
        let store = try #require(S.sqlite(coordinator))
        let entity = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        let byKey = RowSnapshot(entity: entity, store: store.storeToken, primaryKey: 7, version: 2, values: [.string("x")])
        let id = ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: 7)
        let byID = RowSnapshot(objectID: id, version: 2, values: [.string("x")])
        #expect(byKey == byID && byKey.hashValue == byID.hashValue)
        #expect(byKey.objectID == id && byKey.key == id.key)
        #expect(byID.objectID === id, "a row made with an ID keeps it")
        var changed = byKey
        changed.objectID = ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: 8)
        #expect(changed.primaryKey == 8 && changed != byKey)
    }

    @Test func aRowsTemporaryFlagWithoutItsID() throws {
        let coordinator = try PrefetchedMembersTests.seeded(.sqlite, breweries: 1)
        let store = try #require(S.sqlite(coordinator))
        let entity = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        let byKey = RowSnapshot(entity: entity, store: store.storeToken, primaryKey: 7, version: 1, values: [])
        let permanent = RowSnapshot(objectID: ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: 7),
                                    version: 1, values: [])
        let temporary = RowSnapshot(objectID: ManagedObjectID(temporaryFor: entity), version: 0, values: [])
        #expect(!byKey.isTemporaryID && !permanent.isTemporaryID)
        #expect(temporary.isTemporaryID && temporary.objectID.isTemporaryID && temporary.key.isTemporaryID)
        #expect(temporary.entity === entity && temporary.primaryKey == temporary.objectID.primaryKey)
        let context = M.context(coordinator)
        try context.performAndWait {
            let brewery = M.insert("Brewery", into: context, ["name": "New"])
            #expect(brewery.hasTemporaryID)
            try context.save()
            #expect(!brewery.hasTemporaryID)
            // The key given on save names the store by its token: found by the token lookup.
            #expect(context.registeredObject(entity: entity, store: store.storeToken, primaryKey: brewery.objectID.primaryKey) === brewery)
        }
    }

    @Test func aRowsTemporaryFlagFollowsItsID() throws {
        let coordinator = try S.coordinator(.sqlite)
        let store = try #require(S.sqlite(coordinator))
        let entity = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        var row = RowSnapshot(objectID: ManagedObjectID(temporaryFor: entity), version: 0, values: [])
        #expect(row.isTemporaryID)
        row.objectID = ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: 3)
        #expect(!row.isTemporaryID && row.primaryKey == 3)
        row.objectID = ManagedObjectID(temporaryFor: entity)
        #expect(row.isTemporaryID && row.key.isTemporaryID)
        let context = M.context(coordinator)
        try context.performAndWait {
            let brewery = M.insert("Brewery", into: context, ["name": "Row"])
            // The brewery has not made its temporary ID: the row carries its number and makes
            // an equal ID when asked; once the object made its ID, the row holds that one.
            let newRow = brewery.storeRow(version: 0)
            #expect(newRow.isTemporaryID && newRow.objectID == brewery.objectID && newRow.entity === entity)
            #expect(newRow.primaryKey == brewery.objectID.primaryKey)
            #expect(brewery.storeRow(version: 0).objectID === brewery.objectID)
            try context.obtainPermanentIDs(for: [brewery])
            let permanentRow = brewery.storeRow(version: 0)
            #expect(!permanentRow.isTemporaryID && permanentRow.primaryKey == brewery.objectID.primaryKey)
        }
    }

    @Test func manyNewObjectsAreSavedUnderTheKeysTheirIDsName() throws {
        let coordinator = try S.coordinator(.sqlite)
        let store = try #require(S.sqlite(coordinator))
        let entity = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        let context = M.context(coordinator)
        var saved: [(ManagedObjectID, String)] = []
        try context.performAndWait {
            let breweries = (0..<300).map { M.insert("Brewery", into: context, ["name": "B\($0)"]) }
            try context.save()
            #expect(context.insertedObjects.isEmpty && context.registeredObjects.count == breweries.count)
            for brewery in breweries {
                #expect(!brewery.objectID.isTemporaryID && !brewery.isInserted)
                #expect(context.registeredObject(entity: entity, store: store.storeToken, primaryKey: brewery.objectID.primaryKey) === brewery)
                saved.append((brewery.objectID, brewery.value(forKey: "name") as? String ?? ""))
            }
            #expect(Set(saved.map(\.0.primaryKey)).count == saved.count)
        }
        // Read back in a fresh context: each key holds its object's values.
        let reader = M.context(coordinator)
        try reader.performAndWait {
            for (id, name) in saved {
                let object = try reader.existingObject(with: id)
                #expect(object.value(forKey: "name") as? String == name)
            }
        }
    }

    @Test func anInsertDeletedBeforeTheSaveIsLetGo() throws {
        let coordinator = try S.coordinator(.sqlite)
        let context = M.context(coordinator)
        try context.performAndWait {
            let kept = M.insert("Brewery", into: context, ["name": "Kept"])
            let dropped = M.insert("Brewery", into: context, ["name": "Dropped"])
            context.delete(dropped)
            try context.save()
            #expect(dropped.managedObjectContext == nil && context.registeredObject(for: dropped.objectID) == nil)
            #expect(kept.managedObjectContext === context && context.registeredObject(for: kept.objectID) === kept)
            #expect(context.registeredObjects.count == 1)
        }
    }

    @Test func existingObjectFillsAFaultAndANewObject() throws {
        let coordinator = try PrefetchedMembersTests.seeded(.sqlite, breweries: 2)
        let store = try #require(S.sqlite(coordinator))
        let entity = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        let context = M.context(coordinator)
        try context.performAndWait {
            let first = ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: 1)
            let second = ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: 2)
            let fault = context.object(with: first)
            #expect(fault.isFault)
            let loaded = try context.existingObject(with: first)
            #expect(loaded === fault && !loaded.isFault && loaded.storeVersion == 1)
            let fresh = try context.existingObject(with: second)
            #expect(!fresh.isFault && fresh.objectID === second && fresh.storeVersion == 1)
            #expect(context.registeredObject(for: second) === fresh)
            #expect(context.object(with: second) === fresh)
            #expect(fresh.value(forKey: "name") as? String != nil)
            #expect(!fresh.hasChanges)
        }
    }
}

/// A fault's ID made on first request from several threads at once is one instance.
@Suite("Lazy object ID Concurrency", .timeLimit(.minutes(1)))
struct LazyObjectIDConcurrencyTests {
    typealias M = ContextTestModel

    @Test func racingFirstRequestsKeepOneID() throws {
        let coordinator = try PrefetchedMembersTests.seeded(.sqlite, breweries: 20)
        let context = M.context(coordinator)
        let breweries = try context.performAndWait { try context.fetch(M.request("Brewery")) }
        // Read-only use from several threads: each object's first objectID request races.
        nonisolated(unsafe) let shared = breweries
        let seen = Locked<[[ObjectIdentifier]]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let ids = shared.map { ObjectIdentifier($0.objectID) }
            seen.withLock { $0.append(ids) }
        }
        let all = seen.withLock { $0 }
        #expect(all.count == 4)
        #expect(all.allSatisfy { $0 == all[0] }, "every thread got the same ID instance per object")
        #expect(breweries.map { ObjectIdentifier($0.objectID) } == all[0])
    }
}
