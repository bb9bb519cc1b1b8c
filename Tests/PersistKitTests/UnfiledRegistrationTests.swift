import Foundation
import Testing
@testable import PersistKit

/// Objects registered without a probe of the registry's table (a fetch's rows of entities with
/// no object registered, a prefetch's disjoint members, inserted objects) keep Core Data's
/// uniquing: one object per ID, found by every later look-up, fetch and save, and each
/// released once.
@Suite("Unfiled registration", .timeLimit(.minutes(1)))
struct UnfiledRegistrationTests {
    typealias M = ContextTestModel

    /// A SQLite coordinator holding `count` people "P000"… and, when asked, `breweries`
    /// breweries of three beers each.
    private func seeded(people count: Int, breweries: Int = 0) throws -> PersistentStoreCoordinator {
        let url = try M.temporaryDirectory().appendingPathComponent("unfiled.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            for i in 0..<count { _ = M.insert("Person", into: context, ["name": String(format: "P%03d", i)]) }
            for b in 0..<breweries {
                let brewery = M.insert("Brewery", into: context, ["name": "Brewery \(b)"])
                for n in 0..<3 { _ = M.insert("Beer", into: context, ["name": "Beer \(b).\(n)", "brewery": brewery]) }
            }
            try context.save()
        }
        return coordinator
    }

    @Test func aFetchIntoAnEmptyContextKeepsOneObjectPerID() throws {
        let coordinator = try seeded(people: 40)
        let context = M.context(coordinator)
        try context.performAndWait {
            let first = try context.fetch(M.request("Person"))
            #expect(first.count == 40)
            #expect(context.registeredObjects.count == 40)
            // The second fetch finds the first one's objects: its entity has objects registered.
            let second = try context.fetch(M.request("Person"))
            let same = zip(first, second).allSatisfy { $0 === $1 }
            #expect(same, "a second fetch returns the registered objects")
            #expect(context.registeredObjects.count == 40)
            for person in first {
                #expect(context.registeredObject(for: person.objectID) === person)
                #expect(context.object(with: person.objectID) === person)
                #expect(try context.existingObject(with: person.objectID) === person)
            }
        }
    }

    @Test func aLookUpBeforeTheSecondFetchFindsTheFetchedObject() throws {
        let coordinator = try seeded(people: 5)
        let context = M.context(coordinator)
        try context.performAndWait {
            let people = try context.fetch(M.request("Person", sort: [FetchSortDescriptor(key: "name")]))
            // The first look-up files the unfiled objects; the fetch after it probes the table.
            #expect(context.object(with: people[2].objectID) === people[2])
            let again = try context.fetch(M.request("Person", sort: [FetchSortDescriptor(key: "name")]))
            #expect(zip(people, again).allSatisfy { $0 === $1 })
            #expect(M.names(again) == ["P000", "P001", "P002", "P003", "P004"])
        }
    }

    @Test func aSuperentityFetchFindsTheSubentitysRegisteredObjects() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("drinks.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let writer = M.context(coordinator)
        try writer.performAndWait {
            for i in 0..<3 { _ = M.insert("Juice", into: writer, ["fruit": "F\(i)", "volume": Int32(i)]) }
            for i in 0..<2 { _ = M.insert("Soda", into: writer, ["sugar": Double(i), "volume": Int32(10 + i)]) }
            try writer.save()
        }
        let context = M.context(coordinator)
        try context.performAndWait {
            let juices = try context.fetch(M.request("Juice"))
            #expect(juices.count == 3)
            // Drink has no object registered, Juice has: the fetch must look its rows up.
            let drinks = try context.fetch(M.request("Drink"))
            #expect(drinks.count == 5)
            for juice in juices {
                #expect(drinks.contains { $0 === juice }, "the Juice fetched first is the one the Drink fetch returns")
            }
            #expect(context.registeredObjects.count == 5)
        }
    }

    @Test func prefetchedMembersIntoAnEmptyRegistryAreTheOnesLaterLookUpsFind() throws {
        let coordinator = try seeded(people: 0, breweries: 4)
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = M.request("Brewery")
            request.relationshipKeyPathsForPrefetching = ["beers"]
            let breweries = try context.fetch(request)
            #expect(breweries.count == 4)
            var members: [ManagedObject] = []
            for brewery in breweries {
                let beers = try #require(brewery.value(forKey: "beers") as? Set<ManagedObject>)
                #expect(beers.count == 3)
                members.append(contentsOf: beers)
            }
            #expect(context.registeredObjects.count == 16)
            let fetched = try context.fetch(M.request("Beer"))
            #expect(fetched.count == 12)
            for beer in members {
                #expect(fetched.contains { $0 === beer }, "a fetch returns the prefetched beer")
                #expect(context.object(with: beer.objectID) === beer)
                #expect((beer.value(forKey: "brewery") as? ManagedObject).map { brewery in breweries.contains { $0 === brewery } } == true)
            }
        }
    }

    @Test(arguments: [3, 100])
    func insertedObjectsAreFoundUnderTheirPermanentIDsAfterASave(count: Int) throws {
        let url = try M.temporaryDirectory().appendingPathComponent("inserted.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            let people = (0..<count).map { M.insert("Person", into: context, ["name": String(format: "N%03d", $0)]) }
            #expect(context.registeredObjects.count == count)
            try context.save()
            #expect(people.allSatisfy { !$0.objectID.isTemporaryID })
            #expect(context.registeredObjects.count == count, "each object registered once, under its new key")
            for person in people {
                #expect(context.registeredObject(for: person.objectID) === person)
            }
            let fetched = try context.fetch(M.request("Person"))
            #expect(fetched.count == count)
            for person in people { #expect(fetched.contains { $0 === person }) }
            #expect(context.registeredObjects.count == count)
        }
    }

    @Test func aFaultMadeForAKeyBeforeItsRowExistedGivesWayToTheSavedObject() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("early.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let store = try #require(coordinator.persistentStores.first)
        let uri = try #require(URL(string: "x-coredata://\(store.identifier)/Person/p1"))
        let earlyID = try #require(coordinator.managedObjectID(forURIRepresentation: uri))
        let context = M.context(coordinator)
        weak var early: ManagedObject?
        try context.performAndWait {
            early = context.object(with: earlyID)
            #expect(early != nil, "the registry holds the fault")
            let person = M.insert("Person", into: context, ["name": "first"])
            try context.save()
            try #require(person.objectID == earlyID, "the store's first key is 1")
            #expect(context.registeredObject(for: earlyID) === person, "the saved object wins the key")
            #expect(context.registeredObjects.count == 1)
            #expect(early == nil, "the displaced fault was let go of")
        }
    }

    @Test func unfiledObjectsAreFreedOnceWhenTheirContextGoes() throws {
        let coordinator = try seeded(people: 30)
        weak var fetched: ManagedObject?
        weak var inserted: ManagedObject?
        weak var filedLater: ManagedObject?
        weak var gone: ManagedObjectContext?
        var held: ManagedObject?
        do {
            let context = M.context(coordinator)
            gone = context
            try context.performAndWait {
                let people = try context.fetch(M.request("Person", sort: [FetchSortDescriptor(key: "name")]))
                fetched = people[0]
                held = people[1]
                inserted = M.insert("Person", into: context, ["name": "new"])
            }
            let other = M.context(coordinator)
            try other.performAndWait {
                let people = try other.fetch(M.request("Person"))
                filedLater = people[0]
                // A look-up files the fetched objects; they are freed from the table.
                #expect(other.object(with: people[1].objectID) === people[1])
            }
        }
        #expect(gone == nil)
        #expect(fetched == nil, "a fetched, unfiled object nobody holds is freed with its context")
        #expect(inserted == nil, "an inserted, unfiled object is freed with its context")
        #expect(filedLater == nil, "a filed object is freed with its context")
        // Held past its context: alive, detached, its values kept.
        #expect(held?.managedObjectContext == nil)
        #expect(held?.value(forKey: "name") as? String == "P001")
    }

    @Test func theRegistryListsUnfiledObjectsAndTheirKeys() throws {
        let entity = try #require(M.make().entitiesByName["Person"])
        let objects = (0..<4).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        var registry = ObjectRegistry()
        registry[objects[0].objectKey] = objects[0]
        let noted = !registry.hasNoObjects(ofEntity: ObjectIdentifier(entity))
        #expect(noted)
        for object in objects.dropFirst() { registry.appendUnfiled(object) }
        #expect(registry.count == 4)
        #expect(Set(registry.keys) == Set(objects.map(\.objectKey)))
        var visited = 0
        registry.forEachObject { object in visited += objects.contains { $0 === object } ? 1 : 0 }
        #expect(visited == 4)
        let found = registry.objectWithoutFiling(forKey: objects[3].objectKey)
        #expect(found === objects[3])
        // Re-keying an unfiled object moves nothing: it is filed under its own key later.
        let moved = registry.rekey(from: objects[2].objectKey, to: ObjectKey(entityIdentity: ObjectIdentifier(entity), primaryKey: -5, storeBits: 0))
        #expect(!moved)
        let filed = registry[objects[2].objectKey]
        #expect(filed === objects[2])
        #expect(registry.count == 4)
        let taken = registry.takeAll(keepingCapacity: false)
        #expect(taken.count == 4)
        let forgotten = registry.hasNoObjects(ofEntity: ObjectIdentifier(entity))
        #expect(forgotten, "emptying forgets the entities")
        for object in taken { object.release() }
    }
}
