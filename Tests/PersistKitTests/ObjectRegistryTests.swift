import Foundation
import Testing
@testable import PersistKit

/// A context's registry moves its generation on at every change that can let go of an object,
/// whichever path makes it; a prefetched to-many relationship's recorded member objects
/// (kept unretained) are used only while the generation is the one they were recorded at.
@Suite("Object registry generation", .timeLimit(.minutes(1)))
struct ObjectRegistryTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    // MARK: - The registry alone

    /// Three objects with distinct (temporary) IDs, and the context that holds them (kept by
    /// the caller as long as it uses them).
    private func objects() throws -> (ManagedObjectContext, [ManagedObject]) {
        let context = M.context(try M.coordinator())
        return (context, context.performAndWait { (0..<3).map { M.insert("Beer", into: context, ["name": "B\($0)"]) } })
    }

    @Test func everyMutationThatCanLetGoMovesTheGeneration() throws {
        let (context, made) = try objects()
        defer { withExtendedLifetime(context) {} }
        let (a, b, c) = (made[0], made[1], made[2])
        var registry = ObjectRegistry()
        var generation = registry.generation
        /// Whether the generation moved since the last call.
        func moved() -> Bool {
            defer { generation = registry.generation }
            return registry.generation != generation
        }
        registry[a.objectID] = a
        registry[b.objectID] = b
        #expect(!moved(), "adding lets go of nothing")
        registry[a.objectID] = a
        #expect(!moved(), "setting the same object lets go of nothing")
        #expect(registry[c.objectID] == nil)
        #expect(registry.object(for: c.objectID, orRegister: { c }) === c, "registers its default when absent")
        #expect(!moved())
        #expect(registry.object(for: c.objectID, orRegister: { a }) === c)
        #expect(!moved(), "a lookup lets go of nothing")
        #expect(registry.removeValue(forKey: ManagedObjectID(temporaryFor: a.entity)) == nil)
        #expect(!moved(), "removing an absent ID lets go of nothing")
        registry[a.objectID] = b
        #expect(moved(), "setting another object lets go of the first")
        registry[a.objectID] = nil
        #expect(moved(), "setting nil")
        registry[a.objectID] = c
        #expect(!moved(), "filling an empty entry lets go of nothing")
        registry[a.objectID] = nil
        #expect(moved())
        #expect(registry[c.objectID] === c)
        #expect(registry.removeValue(forKey: b.objectID) === b)
        #expect(moved(), "removeValue")
        let newKey = ManagedObjectID(temporaryFor: c.entity).key
        let rekeyed = registry.rekey(from: c.objectID.key, to: newKey)
        #expect(rekeyed)
        #expect(moved(), "re-keying")
        let rekeyedAgain = registry.rekey(from: c.objectID.key, to: newKey)
        #expect(!rekeyedAgain, "nothing is left under the old key")
        #expect(!moved())
        #expect(registry.count == 1 && registry[newKey] === c)
        registry.removeAll(keepingCapacity: true)
        #expect(moved(), "removeAll")
        #expect(registry.count == 0)
        #expect(ObjectRegistry().generation != ObjectRegistry().generation, "each registry starts at its own generation")
    }

    @Test func keepsTheDictionaryAPI() throws {
        let (context, made) = try objects()
        defer { withExtendedLifetime(context) {} }
        var registry = ObjectRegistry()
        registry.reserveCapacity(10)
        #expect(registry.capacity >= 10)
        for object in made { registry[object.objectID] = object }
        #expect(registry.count == 3)
        #expect(Set(registry.keys) == Set(made.map(\.objectID.key)))
        #expect(Set(registry.values) == Set(made))
        var visited: [ManagedObject] = []
        registry.forEachObject { object in
            #expect(registry.objectWithoutFiling(forKey: object.objectKey) === object)
            visited.append(object)
        }
        #expect(Set(visited) == Set(made) && visited.count == 3)
    }

    // MARK: - Each path of a context that takes objects out

    /// 12 breweries with 3 beers each, every beer tagged "IPA", saved.
    private func seeded(_ type: StoreType = .sqlite) throws -> PersistentStoreCoordinator {
        try PrefetchedMembersTests.seeded(type, breweries: 12, tagged: true)
    }

    /// The breweries sorted by name, with their beers prefetched.
    private func breweries(_ context: ManagedObjectContext) throws -> [ManagedObject] {
        try PrefetchedMembersTests.prefetchedBreweries(context)
    }

    /// Whether `object`'s `relationship` reads its recorded member objects (no lookups).
    private func usesRecordedMembers(_ object: ManagedObject, _ relationship: String = "beers") -> Bool {
        guard let context = object.managedObjectContext else { return false }
        return object.toMany[relationship]?.memberObjects(generation: context.registryGeneration) != nil
    }

    /// The members read, each checked to be the context's registered object for its ID.
    private func checkedMembers(_ object: ManagedObject, _ relationship: String = "beers") -> Set<ManagedObject> {
        let members = object.value(forKey: relationship) as? Set<ManagedObject> ?? []
        for member in members { #expect(object.managedObjectContext?.registeredObject(for: member.objectID) === member) }
        return members
    }

    @Test func aSavedDeletionInvalidates() throws {
        let context = M.context(try seeded())
        try context.performAndWait {
            let all = try breweries(context)
            #expect(usesRecordedMembers(all[0]))
            context.delete(try #require(checkedMembers(all[1]).first))
            try context.save()
            #expect(!usesRecordedMembers(all[0]))
            #expect(checkedMembers(all[0]).count == 3)
            #expect(checkedMembers(all[1]).count == 2)
        }
    }

    @Test func aSavedInsertedThenDeletedObjectInvalidates() throws {
        let context = M.context(try seeded())
        try context.performAndWait {
            let all = try breweries(context)
            let beer = M.insert("Beer", into: context, ["name": "Short-lived"])
            context.delete(beer)
            // (A save with nothing else to do returns at once, leaving the object registered.)
            all[1].setValue("Ghent", forKey: "city")
            #expect(usesRecordedMembers(all[0]))
            try context.save()
            #expect(context.registeredObject(for: beer.objectID) == nil)
            #expect(!usesRecordedMembers(all[0]))
            #expect(checkedMembers(all[0]).count == 3)
        }
    }

    @Test func aRollbackInvalidates() throws {
        let context = M.context(try seeded())
        try context.performAndWait {
            let all = try breweries(context)
            _ = M.insert("Beer", into: context, ["name": "Unsaved"])
            #expect(usesRecordedMembers(all[0]))
            context.rollback()
            #expect(!usesRecordedMembers(all[0]))
            #expect(checkedMembers(all[0]).count == 3)
        }
    }

    @Test func aMergedDeletionInvalidates() throws {
        let coordinator = try seeded()
        let reader = M.context(coordinator)
        let all = try reader.performAndWait { try breweries(reader) }
        let doomed = try reader.performAndWait { try #require(checkedMembers(all[0]).first).objectID }
        reader.mergeChanges(fromContextDidSave: try PrefetchedMembersTests.deletionSaved(doomed, in: coordinator))
        reader.performAndWait {
            #expect(!usesRecordedMembers(all[1]))
            #expect(checkedMembers(all[1]).count == 3)
            #expect(checkedMembers(all[0]).count == 2)
        }
    }

    @Test func aReleaseInvalidates() throws {
        let context = M.context(try seeded())
        try context.performAndWait {
            let all = try breweries(context)
            #expect(context.releaseUnreferencedObjects() >= 36)
            #expect(!usesRecordedMembers(all[0]))
            for brewery in all { #expect(checkedMembers(brewery).count == 3) }
        }
    }

    @Test func aResetInvalidates() throws {
        let context = M.context(try seeded())
        try context.performAndWait {
            let all = try breweries(context)
            context.reset()
            // The old objects left the context; new ones read afresh record their members anew.
            #expect(!usesRecordedMembers(all[0]))
            let again = try breweries(context)
            #expect(usesRecordedMembers(again[0]))
            #expect(checkedMembers(again[0]).count == 3)
        }
    }

    @Test func aBatchedFetchLettingGoOfItsBatchInvalidates() throws {
        let context = M.context(try seeded())
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Beer", predicate: nil, sortDescriptors: [FetchSortDescriptor(key: "name")])
            request.fetchBatchSize = 6
            let batched = try context.fetchBatched(request)
            // The first batch's beers are held by the batch and the registry only.
            #expect((batched[0].value(forKey: "name") as? String) == "Brewery 000 #0")
            let all = try breweries(context)
            #expect(usesRecordedMembers(all[0]))
            // Moving to the next batch lets go of the first one's beers.
            #expect((batched[6].value(forKey: "name") as? String) == "Brewery 002 #0")
            #expect(!usesRecordedMembers(all[0]))
            for brewery in all { #expect(checkedMembers(brewery).count == 3) }
        }
    }

    @Test func aConstraintMergeReplacingARegisteredObjectInvalidates() throws {
        let context = M.context(try seeded())
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.performAndWait {
            let request = M.request("Beer", sort: [FetchSortDescriptor(key: "name")])
            request.relationshipKeyPathsForPrefetching = ["tags"]
            let beers = try context.fetch(request)
            #expect(usesRecordedMembers(beers[0], "tags"))
            let tagID = try #require(checkedMembers(beers[0], "tags").first).objectID
            // A new "IPA" tag stands for the stored one at the save: the registered one leaves.
            let replacement = M.insert("Tag", into: context, ["name": "IPA"])
            try context.save()
            #expect(replacement.objectID == tagID)
            #expect(!usesRecordedMembers(beers[0], "tags"))
            let tags = checkedMembers(beers[0], "tags")
            #expect(tags.count == 1)
            #expect(tags.first === replacement)
        }
    }

    @Test func manyIDsGivenAtASaveToFiledObjectsInvalidate() throws {
        let context = M.context(try seeded())
        try context.performAndWait {
            let all = try breweries(context)
            // More inserted objects than a quarter of the registry, each moved to its permanent key.
            let inserted = (0..<100).map { M.insert("Beer", into: context, ["name": "New \($0)"]) }
            // A look-up files the inserted objects in the table, so the save moves them there.
            #expect(context.registeredObject(for: inserted[0].objectID) === inserted[0])
            try context.save()
            #expect(!usesRecordedMembers(all[0]))
            #expect(checkedMembers(all[0]).count == 3)
        }
    }

    @Test func manyIDsGivenAtASaveToUnfiledObjectsLetGoOfNothing() throws {
        let context = M.context(try seeded())
        try context.performAndWait {
            let all = try breweries(context)
            let before = checkedMembers(all[0])
            // Inserted objects wait unfiled: their new keys move nothing in the table.
            let inserted = (0..<100).map { M.insert("Beer", into: context, ["name": "New \($0)"]) }
            try context.save()
            #expect(usesRecordedMembers(all[0]))
            #expect(checkedMembers(all[0]) == before)
            for beer in inserted { #expect(context.registeredObject(for: beer.objectID) === beer) }
        }
    }
}
