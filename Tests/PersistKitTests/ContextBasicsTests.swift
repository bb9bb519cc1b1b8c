import Foundation
import Testing
@testable import PersistKit

@Suite("Context basics")
struct ContextBasicsTests {
    typealias M = ContextTestModel

    @Test func insertSaveFetchTracksHasChanges() throws {
        let context = M.context(try M.coordinator())
        #expect(!context.hasChanges)
        let brewery = M.insert("Brewery", into: context, ["name": "Duvel Moortgat"])
        let beer = M.insert("Beer", into: context, ["name": "Duvel", "abv": 8.5])
        beer.setValue(brewery, forKey: "brewery")
        #expect(context.hasChanges)
        #expect(context.insertedObjects == [brewery, beer])
        #expect(beer.objectID.isTemporaryID)
        try context.save()
        #expect(!context.hasChanges)
        #expect(!beer.objectID.isTemporaryID)
        #expect(!beer.isInserted)

        let strong = try context.fetch(M.request("Beer", .comparison(.keyPath("abv"), .greaterThan, .constant(.double(8)))))
        #expect(strong == [beer])
        beer.setValue(9.0, forKey: "abv")
        #expect(context.hasChanges)
        #expect(context.updatedObjects == [beer])
        #expect(beer.changedValues()["abv"] as? Double == 9.0)
        #expect(beer.committedValues(forKeys: ["abv"])["abv"] as? Double == 8.5)
        beer.setValue(8.5, forKey: "abv")
        #expect(!context.hasChanges, "setting the saved value back leaves no change")
    }

    @Test func insertingTwiceAndDeletingAnotherContextsObjectChangeNothing() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let other = M.context(coordinator)
        let brewery = M.insert("Brewery", into: context, ["name": "Orval"])
        #expect(brewery.managedObjectContext === context)
        context.performAndWait {
            // Inserted already, in this context: not listed twice.
            context.insert(brewery)
            #expect(context.insertedObjects.count == 1)
            #expect(context.changeCounts.inserted == 1)
        }
        other.performAndWait {
            // Another context's object: this one does not delete it.
            other.delete(brewery)
            #expect(other.deletedObjects.isEmpty)
        }
        #expect(!brewery.isDeleted)
        try context.performAndWait { try context.save() }
        #expect(try M.context(coordinator).count(for: M.request("Brewery")) == 1)
        context.performAndWait {
            context.delete(brewery)
            #expect(context.deletedObjects == [brewery])
        }
        context.reset()
        #expect(brewery.managedObjectContext == nil, "a reset lets go of the objects")
    }

    @Test func storeVersionCountsSaves() throws {
        let coordinator = try M.coordinator()
        let writer = M.context(coordinator)
        let beer = M.insert("Beer", into: writer, ["name": "Orval", "abv": 6.2])
        #expect(beer.storeVersion == 0)
        try writer.save()
        #expect(beer.storeVersion == 1)
        beer.setValue(6.9, forKey: "abv")
        #expect(beer.storeVersion == 1, "unsaved changes are based on version 1")
        try writer.save()
        #expect(beer.storeVersion == 2)

        let reader = M.context(coordinator)
        let fault = reader.object(with: beer.objectID)
        #expect(fault.isFault)
        #expect(fault.storeVersion == 2, "reading the version loads the fault")
        #expect(!fault.isFault)
    }

    @Test func uniquingGivesOneObjectPerID() throws {
        let coordinator = try M.coordinator()
        let writer = M.context(coordinator)
        let beer = M.insert("Beer", into: writer, ["name": "Orval"])
        try writer.save()

        let reader = M.context(coordinator)
        let first = try reader.fetch(M.request("Beer"))
        let second = try reader.fetch(M.request("Beer"))
        #expect(first.count == 1)
        #expect(first[0] === second[0])
        #expect(reader.object(with: beer.objectID) === first[0])
        #expect(first[0] !== beer, "another context has its own instance")
    }

    @Test func fetchedObjectsAreFaultsUntilTouched() throws {
        let coordinator = try M.coordinator()
        let writer = M.context(coordinator)
        let beer = M.insert("Beer", into: writer, ["name": "Westmalle", "ibu": Int16(35)])
        try writer.save()

        let reader = M.context(coordinator)
        let fetched = try reader.fetch(M.request("Beer"))[0]
        #expect(fetched.isFault)
        #expect(fetched.value(forKey: "ibu") as? Int16 == 35)
        #expect(!fetched.isFault)

        let fault = reader.object(with: beer.objectID)
        #expect(fault === fetched)
        let otherContext = M.context(coordinator)
        let other = otherContext.object(with: beer.objectID)
        #expect(other.isFault)
        #expect(other.value(forKey: "name") as? String == "Westmalle")
        #expect(try M.context(coordinator).existingObject(with: beer.objectID).value(forKey: "name") as? String == "Westmalle")
    }

    @Test func existingObjectThrowsForMissingObject() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let beer = M.insert("Beer", into: context, ["name": "Gone"])
        try context.save()
        context.delete(beer)
        try context.save()
        let other = M.context(coordinator)
        #expect(throws: PersistenceError.self) { try other.existingObject(with: beer.objectID) }
    }

    @Test func sortLimitAndOffset() throws {
        let context = M.context(try M.coordinator())
        for (name, abv) in [("B", 6.0), ("A", 9.0), ("D", 4.5), ("C", 7.0)] {
            _ = M.insert("Beer", into: context, ["name": name, "abv": abv])
        }
        try context.save()
        let request = M.request("Beer", sort: [FetchSortDescriptor(key: "abv", ascending: false)])
        #expect(M.names(try context.fetch(request)) == ["A", "C", "B", "D"])
        request.fetchLimit = 2
        request.fetchOffset = 1
        #expect(M.names(try context.fetch(request)) == ["C", "B"])
        #expect(try context.count(for: request) == 2)
        #expect(try context.count(for: M.request("Beer")) == 4)
    }

    @Test func fetchIncludesPendingChanges() throws {
        let context = M.context(try M.coordinator())
        let saved = M.insert("Beer", into: context, ["name": "Saved", "abv": 5.0])
        let doomed = M.insert("Beer", into: context, ["name": "Doomed", "abv": 12.0])
        try context.save()
        _ = M.insert("Beer", into: context, ["name": "Unsaved", "abv": 11.0])
        saved.setValue(10.0, forKey: "abv")
        context.delete(doomed)
        let strong = M.request("Beer", .comparison(.keyPath("abv"), .greaterThan, .constant(.double(8))),
                               sort: [FetchSortDescriptor(key: "name")])
        #expect(M.names(try context.fetch(strong)) == ["Saved", "Unsaved"])
        #expect(try context.count(for: strong) == 2)
        strong.includesPendingChanges = false
        #expect(M.names(try context.fetch(strong)) == ["Doomed"])
    }

    @Test func resultTypes() throws {
        let context = M.context(try M.coordinator())
        let beer = M.insert("Beer", into: context, ["name": "Chimay", "abv": 7.0])
        try context.save()
        let ids = FetchRequest<ManagedObjectID>(entityName: "Beer")
        ids.resultType = .managedObjectIDResultType
        #expect(try context.fetch(ids) == [beer.objectID])
        let counts = FetchRequest<Int>(entityName: "Beer")
        counts.resultType = .countResultType
        #expect(try context.fetch(counts) == [1])
        let dictionaries = FetchRequest<[String: Any]>(entityName: "Beer")
        dictionaries.resultType = .dictionaryResultType
        dictionaries.propertiesToFetch = ["name", "abv"]
        let rows = try context.fetch(dictionaries)
        #expect(rows.count == 1)
        #expect(rows[0]["name"] as? String == "Chimay")
        #expect(rows[0]["abv"] as? Double == 7.0)
    }

    @Test func objectIDURIsFollowCoreDataForm() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let beer = M.insert("Beer", into: context, ["name": "Rochefort"])
        #expect(beer.objectID.uriRepresentation().absoluteString.hasPrefix("x-coredata:///Beer/t"))
        try context.save()
        let store = coordinator.persistentStores[0]
        let uri = beer.objectID.uriRepresentation()
        #expect(uri.absoluteString == "x-coredata://\(store.identifier)/Beer/p\(beer.objectID.primaryKey)")
        #expect(coordinator.managedObjectID(forURIRepresentation: uri) == beer.objectID)
    }

    @Test func attributeTypesConvertAndTypeErrorsAreClear() throws {
        let context = M.context(try M.coordinator())
        let beer = M.insert("Beer", into: context, ["name": "Typed"])
        beer.setValue(40, forKey: "ibu")
        #expect(beer.value(forKey: "ibu") as? Int16 == 40)
        #expect(beer.value(forKey: "abv") as? Double == 5, "default value")
        let error = #expect(throws: PersistenceError.self) { try beer.setCheckedValue("strong", forKey: "abv") }
        #expect(error?.key == "abv")
        #expect(error?.message.contains("Beer.abv, which is Double") == true)
        #expect(throws: PersistenceError.self) { try beer.setCheckedValue(40_000, forKey: "ibu") }
        #expect(throws: PersistenceError.self) { try beer.setCheckedValue(1, forKey: "nope") }
    }

    @Test func rollbackResetAndRefresh() throws {
        let context = M.context(try M.coordinator())
        let beer = M.insert("Beer", into: context, ["name": "Original"])
        try context.save()
        beer.setValue("Changed", forKey: "name")
        let extra = M.insert("Beer", into: context, ["name": "Extra"])
        context.rollback()
        #expect(!context.hasChanges)
        #expect(beer.value(forKey: "name") as? String == "Original")
        #expect(extra.managedObjectContext == nil)
        #expect(try context.count(for: M.request("Beer")) == 1)

        beer.setValue("Changed", forKey: "name")
        context.refresh(beer, mergeChanges: false)
        #expect(beer.isFault)
        #expect(beer.value(forKey: "name") as? String == "Original")

        context.reset()
        #expect(context.registeredObjects.isEmpty)
        #expect(beer.managedObjectContext == nil)
    }

    @Test func notificationsCarryTheSavedObjects() throws {
        let context = M.context(try M.coordinator())
        let beer = M.insert("Beer", into: context, ["name": "Noted"])
        nonisolated(unsafe) var insertedIDs: Set<ManagedObjectID> = []
        nonisolated(unsafe) var willSave = 0
        let center = NotificationCenter.default
        let a = center.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification, object: context, queue: nil) { note in
            insertedIDs = note.userInfo?[ManagedObjectContext.insertedObjectIDsKey] as? Set<ManagedObjectID> ?? []
        }
        let b = center.addObserver(forName: ManagedObjectContext.willSaveObjectsNotification, object: context, queue: nil) { _ in
            willSave += 1
        }
        defer { center.removeObserver(a); center.removeObserver(b) }
        try context.save()
        #expect(willSave == 1)
        #expect(insertedIDs == [beer.objectID])
    }
}
