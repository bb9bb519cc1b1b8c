import Foundation
import Testing
@testable import PersistKit

/// The registry holds one retain of each object it files and gives it back exactly once,
/// on every path an object leaves by: an object nobody else holds is freed when it leaves,
/// and one held elsewhere stays alive and usable.
@Suite("Object registry ownership", .timeLimit(.minutes(1)))
struct ObjectRegistryOwnershipTests {
    typealias M = ContextTestModel

    /// `count` new Person objects in no context (so only the caller and a registry hold them).
    private func loose(_ count: Int) throws -> [ManagedObject] {
        let entity = try #require(M.make().entitiesByName["Person"])
        return (0..<count).map { _ in ManagedObject(entity: entity, insertInto: nil) }
    }

    /// Whether `object` is held by the caller's variable alone.
    private func heldOnlyHere(_ object: inout ManagedObject) -> Bool {
        isKnownUniquelyReferenced(&object)
    }

    @Test func eachWayOutGivesBackTheRegistrysRetainOnce() throws {
        var objects = try loose(5)
        var registry = ObjectRegistry()
        for object in objects { registry[object.objectKey] = object }
        #expect(registry.object(for: objects[0].objectKey, orRegister: { objects[1] }) === objects[0])
        for index in objects.indices { #expect(!heldOnlyHere(&objects[index]), "object \(index) is filed") }

        // Setting the same object again takes no second retain.
        registry[objects[0].objectKey] = objects[0]
        registry[objects[0].objectKey] = nil
        #expect(heldOnlyHere(&objects[0]), "setting nil gives the one retain back")

        // Replacing an entry gives back the old object's retain and takes the new one's.
        registry[objects[1].objectKey] = objects[0]
        #expect(heldOnlyHere(&objects[1]))
        #expect(!heldOnlyHere(&objects[0]))

        // A removal hands the retain to the caller, who lets it go.
        var removed = registry.removeValue(forKey: objects[2].objectKey)
        #expect(removed === objects[2])
        #expect(!heldOnlyHere(&objects[2]), "the removed reference still holds it")
        removed = nil
        #expect(heldOnlyHere(&objects[2]))

        // Taking everything hands over one retain per object.
        let taken = registry.takeAll(keepingCapacity: true)
        #expect(registry.isEmpty && taken.count == 3)
        for object in taken { object.release() }
        for index in objects.indices { #expect(heldOnlyHere(&objects[index]), "object \(index) was let go of") }
        _ = removed
    }

    @Test func objectsNobodyElseHoldsAreFreedWhenTheRegistryGoes() throws {
        weak var first: ManagedObject?
        weak var last: ManagedObject?
        var kept = try loose(1)[0]
        do {
            var registry = ObjectRegistry()
            for object in try loose(100) { registry[object.objectKey] = object }
            registry[kept.objectKey] = kept
            first = registry.values.first { $0 !== kept }
            last = registry.values.reversed().first { $0 !== kept }
            #expect(first != nil && last != nil)
            #expect(registry.count == 101)
        }
        #expect(first == nil && last == nil, "the registry's end released every object")
        #expect(heldOnlyHere(&kept))
    }

    @Test func aRekeyedObjectKeepsItsOneRetain() throws {
        var objects = try loose(3)
        var registry = ObjectRegistry()
        for object in objects { registry[object.objectKey] = object }
        // Each filed again under another (temporary) key: the objects move, not their counts.
        var newKeys: [ObjectKey] = []
        for object in objects {
            let key = ManagedObjectID(temporaryFor: object.entity).key
            newKeys.append(key)
            let rekeyed = registry.rekey(from: object.objectKey, to: key)
            #expect(rekeyed)
        }
        #expect(registry.count == 3)
        for (index, key) in newKeys.enumerated() { #expect(registry[key] === objects[index]) }
        for index in objects.indices { #expect(!heldOnlyHere(&objects[index])) }
        // Re-keyed onto a key taken by another object, that object is let go of.
        let rekeyed = registry.rekey(from: newKeys[0], to: newKeys[1])
        #expect(rekeyed)
        #expect(registry.count == 2 && registry[newKeys[1]] === objects[0])
        #expect(heldOnlyHere(&objects[1]))
        registry.removeAll()
        for index in objects.indices { #expect(heldOnlyHere(&objects[index]), "object \(index) was released once, not twice or never") }
    }

    @Test func objectsRekeyedTogetherKeepTheirOneRetain() throws {
        var objects = try loose(400)
        var registry = ObjectRegistry()
        for object in objects { registry[object.objectKey] = object }
        var keys = objects.map(\.objectKey)
        // All 400 (in a table of 1,024 slots: past the threshold that marks the removed slots
        // and rebuilds the table), then 3 of them (removed one by one), twice each.
        for count in [400, 400, 3, 3] {
            let generation = registry.generation
            let newKeys = objects.prefix(count).map { ManagedObjectID(temporaryFor: $0.entity).key }
            #expect(registry.rekey(from: Array(keys.prefix(count)), to: newKeys) == count)
            #expect(registry.generation != generation, "re-keying moves the generation on")
            #expect(registry.count == objects.count)
            for index in 0..<count {
                #expect(registry[newKeys[index]] === objects[index] && registry[keys[index]] == nil)
                keys[index] = newKeys[index]
            }
        }
        for index in objects.indices { #expect(!heldOnlyHere(&objects[index])) }
        // Keys nobody holds move nothing; a new key taken by another object lets that one go.
        let unmoved = registry.generation
        let absent = objects.prefix(3).map { ManagedObjectID(temporaryFor: $0.entity).key }
        #expect(registry.rekey(from: absent, to: Array(keys.prefix(3))) == 0)
        #expect(registry.generation == unmoved, "nothing moved, nothing let go of")
        #expect(registry.rekey(from: [keys[0]], to: [keys[1]]) == 1)
        #expect(registry.count == objects.count - 1 && registry[keys[1]] === objects[0])
        #expect(heldOnlyHere(&objects[1]))
        registry.removeAll()
        for index in objects.indices { #expect(heldOnlyHere(&objects[index]), "object \(index) was released once, not twice or never") }
    }

    /// A saved store of `count` people.
    private func seeded(_ count: Int) throws -> PersistentStoreCoordinator {
        let url = try M.temporaryDirectory().appendingPathComponent("ownership.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            for i in 0..<count { _ = M.insert("Person", into: context, ["name": "P\(i)", "age": Int16(i % 100)]) }
            try context.save()
        }
        return coordinator
    }

    @Test(arguments: [40, ManagedObjectContext.orderedTeardownThreshold + 100])
    func aContextGoingAwayFreesTheObjectsNobodyHolds(count: Int) throws {
        let coordinator = try seeded(count)
        var weakObjects: [WeakObject] = []
        var held: [ManagedObject] = []
        do {
            let context = M.context(coordinator)
            try context.performAndWait {
                let people = try context.fetch(M.request("Person", sort: [FetchSortDescriptor(key: "name")]))
                // Many new objects too, each moved to its permanent key in the registry by the save.
                let inserted = (0..<count).map { M.insert("Person", into: context, ["name": "N\($0)", "age": Int16(1)]) }
                try context.save()
                for object in people + inserted { weakObjects.append(WeakObject(object)) }
                held = [people[0], inserted[count - 1]]
                _ = people[1].value(forKey: "name")
                #expect(context.registeredObjects.count == 2 * count)
            }
        }
        let alive = weakObjects.filter { $0.object != nil }.count
        #expect(alive == 2, "only the two held objects outlive their context")
        #expect(held[0].value(forKey: "name") as? String == "P0")
        #expect(held[1].value(forKey: "name") as? String == "N\(count - 1)")
        #expect(held.allSatisfy { $0.managedObjectContext == nil && !$0.objectID.isTemporaryID })
    }

    /// A reset frees the objects only its registry held and detaches the ones held elsewhere:
    /// their context reference cleared, a fault without its row; on both of the registry's
    /// teardown paths (the table's own, and the ordered one of large registries).
    @Test(arguments: [40, ManagedObjectContext.orderedTeardownThreshold + 100])
    func aResetFreesWhatNobodyHoldsAndDetachesWhatIsHeld(count: Int) throws {
        let coordinator = try seeded(count)
        let context = M.context(coordinator)
        try context.performAndWait {
            var weakObjects: [WeakObject] = []
            var held: [ManagedObject] = []
            do {
                let people = try context.fetch(M.request("Person", sort: [FetchSortDescriptor(key: "name")]))
                weakObjects = people.map(WeakObject.init)
                held = [people[0], people[1], people[count - 1]]
                _ = people[0].value(forKey: "name")
            }
            #expect(weakObjects.allSatisfy { $0.object != nil }, "the registry holds every fetched object")
            context.reset()
            #expect(weakObjects.filter { $0.object != nil }.count == 3, "only the three held objects outlive the reset")
            #expect(held.allSatisfy { $0.managedObjectContext == nil })
            // The realized object keeps its values; a fault that left the context has none.
            #expect(held[0].value(forKey: "name") as? String == "P0")
            #expect(held[1].isFault)
            #expect(held[1].value(forKey: "name") == nil)
            #expect(held[2].value(forKey: "name") == nil)
        }
    }

    @Test func resetAndReleaseFreeWhatTheyLetGoOf() throws {
        let coordinator = try seeded(50)
        let context = M.context(coordinator)
        try context.performAndWait {
            var weakObjects = try context.fetch(M.request("Person")).map(WeakObject.init)
            #expect(context.releaseUnreferencedObjects() == 50)
            #expect(weakObjects.allSatisfy { $0.object == nil }, "released objects are freed")
            weakObjects = try context.fetch(M.request("Person")).map(WeakObject.init)
            context.reset()
            #expect(weakObjects.allSatisfy { $0.object == nil }, "a reset frees what nobody holds")
        }
    }
}

/// A weak reference to an object, to tell whether it was freed.
private final class WeakObject {
    weak var object: ManagedObject?
    init(_ object: ManagedObject) { self.object = object }
}
