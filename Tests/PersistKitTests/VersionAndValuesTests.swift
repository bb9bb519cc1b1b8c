import Foundation
import Testing
@testable import PersistKit

/// `versionAndValues()` reads what `storeVersion` and `primitiveValue(atSlot:)` read, slot by
/// slot, filling a fault once.
@Suite("Version and values of an object", .timeLimit(.minutes(1)))
struct VersionAndValuesTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// Every slot's value as `primitiveValue(atSlot:)` gives it.
    private func slotValues(_ object: ManagedObject) -> [StoreValue] {
        object.entity.slots.indices.map { object.primitiveValue(atSlot: $0) }
    }

    @Test(arguments: S.storeTypes)
    func aFetchedFaultIsFilledAndReadAsItsSlotsAndVersion(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        let writer = M.context(coordinator)
        try writer.performAndWait {
            let brewery = M.insert("Brewery", into: writer, ["name": "North"])
            _ = M.insert("Beer", into: writer, ["name": "Tripel", "abv": 8.5, "ibu": Int16(30), "brewery": brewery])
            try writer.save()
            // Saved twice: the version read back is the second save's.
            let beer = try writer.fetch(M.request("Beer")).first
            beer?.setValue(9.0, forKey: "abv")
            try writer.save()
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let beers = try reader.fetch(M.request("Beer"))
            let beer = try #require(beers.first)
            #expect(beer.isFault)
            let (version, values) = beer.versionAndValues()
            #expect(!beer.isFault)
            #expect(version == beer.storeVersion)
            #expect(version == 2)
            #expect(values.count == beer.entity.slots.count)
            #expect(Array(values) == slotValues(beer))
            let abv = try #require(beer.entity.slotIndex(of: "abv"))
            #expect(values[abv] == .double(9))
            let name = try #require(beer.entity.slotIndex(of: "name"))
            #expect(values[name] == .string("Tripel"))
            // The to-one relationship's slot holds the brewery's ID.
            let brewery = try #require(beer.entity.slotIndex(of: "brewery"))
            guard case .object = values[brewery] else {
                Issue.record("the brewery slot holds \(values[brewery])")
                return
            }
        }
    }

    @Test func unsavedChangesShowInTheValuesNotInTheVersionAndTheArrayIsACopy() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        try context.performAndWait {
            let beer = M.insert("Beer", into: context, ["name": "Saison", "abv": 6.0])
            // Never saved: version 0, as `storeVersion`.
            let (newVersion, newValues) = beer.versionAndValues()
            #expect(newVersion == 0)
            #expect(Array(newValues) == slotValues(beer))
            try context.save()
            beer.setValue(6.5, forKey: "abv")
            let (version, values) = beer.versionAndValues()
            #expect(version == 1)
            #expect(version == beer.storeVersion)
            let abv = try #require(beer.entity.slotIndex(of: "abv"))
            #expect(values[abv] == .double(6.5))
            #expect(Array(values) == slotValues(beer))
            // Later changes do not reach the array already read.
            beer.setValue(7.0, forKey: "abv")
            #expect(values[abv] == .double(6.5))
            #expect(beer.primitiveValue(atSlot: abv) == .double(7))
        }
    }

    /// `withVersionAndValues(_:)` lends what `versionAndValues()` copies: a fault filled once,
    /// the same version and slot values, and the values as they are at the call.
    @Test(arguments: S.storeTypes)
    func lentVersionAndValuesAreTheCopiedOnes(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        let writer = M.context(coordinator)
        try writer.performAndWait {
            _ = M.insert("Beer", into: writer, ["name": "Quad", "abv": 10.0, "ibu": Int16(25)])
            try writer.save()
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let beer = try #require(try reader.fetch(M.request("Beer")).first)
            #expect(beer.isFault)
            let (lentVersion, lentValues) = beer.withVersionAndValues { version, values in (version, Array(values)) }
            #expect(!beer.isFault)
            let (version, values) = beer.versionAndValues()
            #expect(lentVersion == version)
            #expect(lentVersion == 1)
            #expect(lentValues == Array(values))
            #expect(lentValues == slotValues(beer))
            // A change shows in the next loan, not in the version until saved.
            let abv = try #require(beer.entity.slotIndex(of: "abv"))
            beer.setValue(10.5, forKey: "abv")
            let changed = beer.withVersionAndValues { version, values in (version, values[abv]) }
            #expect(changed.0 == 1)
            #expect(changed.1 == .double(10.5))
            // A body that throws: the error comes back out.
            struct Stop: Error {}
            #expect(throws: Stop.self) { try beer.withVersionAndValues { _, _ -> Int in throw Stop() } }
        }
        let inserted = M.context(coordinator)
        inserted.performAndWait {
            // Never saved: version 0 and the values set.
            let beer = M.insert("Beer", into: inserted, ["name": "Gose"])
            let (version, values) = beer.withVersionAndValues { version, values in (version, Array(values)) }
            #expect(version == 0)
            #expect(values == slotValues(beer))
        }
    }

    /// `unretainedRegisteredObject(entity:store:primaryKey:)` finds what
    /// `registeredObject(entity:store:primaryKey:)` finds, the same instance, and nothing else.
    @Test func theUnretainedLookupFindsTheRegisteredObject() throws {
        let coordinator = try S.coordinator(.sqlite)
        let context = M.context(coordinator)
        try context.performAndWait {
            let beer = M.insert("Beer", into: context, ["name": "Bock"])
            try context.save()
            let store = try #require(coordinator.persistentStores.first)
            let key = beer.objectID.primaryKey
            let found = try #require(context.unretainedRegisteredObject(entity: beer.entity, store: store.storeToken, primaryKey: key))
            #expect(found.takeUnretainedValue() === beer)
            #expect(context.registeredObject(entity: beer.entity, store: store.storeToken, primaryKey: key) === beer)
            #expect(context.unretainedRegisteredObject(entity: beer.entity, store: store.storeToken, primaryKey: key + 1) == nil)
            let brewery = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
            #expect(context.unretainedRegisteredObject(entity: brewery, store: store.storeToken, primaryKey: key) == nil)
        }
    }

    /// `setPrimitiveValue(_:atSlot:)` stores what `setValue(_:forKey:)` stores for the matching
    /// Swift value, and a saved object's change through it is tracked and saved alike.
    @Test func settingASlotIsSettingTheValueByName() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        try context.performAndWait {
            let byName = M.insert("Beer", into: context, ["name": "Dubbel", "abv": 7.0, "ibu": Int16(20)])
            let bySlot = M.insert("Beer", into: context, ["name": "placeholder"])
            let entity = bySlot.entity
            let name = try #require(entity.slotIndex(of: "name")), abv = try #require(entity.slotIndex(of: "abv"))
            let ibu = try #require(entity.slotIndex(of: "ibu"))
            bySlot.setPrimitiveValue(.string("Dubbel"), atSlot: name)
            bySlot.setPrimitiveValue(.double(7), atSlot: abv)
            bySlot.setPrimitiveValue(.integer(20), atSlot: ibu)
            #expect(slotValues(bySlot) == slotValues(byName))
            #expect(bySlot.value(forKey: "name") as? String == "Dubbel")
            try context.save()

            // A saved object: the change is recorded, shows in changedValues, and is saved.
            bySlot.setPrimitiveValue(.double(7.5), atSlot: abv)
            #expect(bySlot.hasChanges)
            #expect(bySlot.changedValues()["abv"] as? Double == 7.5)
            #expect(context.updatedObjects.contains(bySlot))
            try context.save()
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let request = M.request("Beer")
            let abvs = try reader.fetch(request).compactMap { $0.value(forKey: "abv") as? Double }.sorted()
            #expect(abvs == [7, 7.5])
        }
    }
}
