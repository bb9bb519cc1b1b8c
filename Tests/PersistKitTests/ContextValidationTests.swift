import Foundation
import Testing
@testable import PersistKit

@Suite("Context validation at save")
struct ContextValidationTests {
    typealias M = ContextTestModel

    @Test func everyFailureIsListedAndNothingIsWritten() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let beer = M.insert("Beer", into: context, ["abv": 90.0, "code": "abc"])
        let tag = M.insert("Tag", into: context, ["name": "far-too-long-a-name"])
        let error = #expect(throws: PersistenceError.self) { try context.save() }
        #expect(error?.code == .validationMultipleErrors)
        let details = (error?.detailedErrors ?? []).map { "\($0.objectID?.entity.name ?? "?").\($0.key ?? "?"):\($0.code.rawValue)" }.sorted()
        #expect(details == ["Beer.abv:1610", "Beer.code:1680", "Beer.name:1570", "Tag.name:1660"])
        #expect(try M.context(coordinator).count(for: M.request("Beer")) == 0)
        #expect(context.hasChanges, "a failed save keeps the changes")
        beer.setValue("Fixed", forKey: "name")
        beer.setValue(8.0, forKey: "abv")
        beer.setValue("ABC-12", forKey: "code")
        tag.setValue("short", forKey: "name")
        try context.save()
        #expect(try M.context(coordinator).count(for: M.request("Beer")) == 1)
    }

    @Test func singleFailureIsThrownDirectly() throws {
        let context = M.context(try M.coordinator())
        _ = M.insert("Brewery", into: context)
        let error = #expect(throws: PersistenceError.self) { try context.save() }
        #expect(error?.code == .validationMissingMandatoryProperty)
        #expect(error?.message == "Brewery.name is required")
    }

    @Test func transientValuesAreNotStored() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let beer = M.insert("Beer", into: context, ["name": "T", "note": "only here"])
        try context.save()
        #expect(beer.value(forKey: "note") as? String == "only here")
        let other = M.context(coordinator)
        #expect(try other.fetch(M.request("Beer"))[0].value(forKey: "note") == nil)
    }

    /// Core Data's `changedValues()` and `committedValues(forKeys:)` report persistent
    /// properties only: a transient one is left out even when named, and a change to it alone
    /// is no change they report.
    @Test func changedAndCommittedValuesLeaveOutTransientProperties() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let beer = M.insert("Beer", into: context, ["name": "T", "note": "only here"])
        #expect(Set(beer.changedValues().keys) == ["name", "abv"])
        try context.save()
        #expect(beer.committedValues(forKeys: ["name", "note"]).keys.sorted() == ["name"])
        let all = beer.committedValues(forKeys: nil)
        #expect(all["name"] as? String == "T")
        #expect(all["note"] == nil)
        beer.setValue("changed here", forKey: "note")
        #expect(beer.changedValues().isEmpty)
        beer.setValue("U", forKey: "name")
        #expect(beer.changedValues().keys.sorted() == ["name"])
        #expect(beer.value(forKey: "note") as? String == "changed here")
    }

    /// A change to a transient property makes the object updated, as in Core Data, but not
    /// persistently changed: a save writes nothing for it (the stored version stays), lists it
    /// in no did-save set, and leaves it and the context without changes, its value kept.
    @Test func transientChangesAloneAreUpdatesASaveDoesNotWrite() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("transient.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        let beer = M.insert("Beer", into: context, ["name": "T"])
        try context.save()
        #expect(beer.storeVersion == 1)

        beer.setValue("only here", forKey: "note")
        #expect(beer.isUpdated)
        #expect(beer.hasChanges)
        #expect(!beer.hasPersistentChangedValues)
        #expect(context.hasChanges)
        #expect(context.updatedObjects == [beer])

        nonisolated(unsafe) var savedUpdated: [Set<ManagedObject>] = []
        let observer = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.didSaveObjectsNotification, object: context, queue: nil) {
            savedUpdated.append($0.userInfo?[ManagedObjectContext.updatedObjectsKey] as? Set<ManagedObject> ?? [])
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        #expect(beer.storeVersion == 1, "a transient change alone writes no new version")
        let listed = savedUpdated.contains { $0.contains(beer) }
        #expect(!listed)
        #expect(!beer.isUpdated)
        #expect(!context.hasChanges)
        #expect(context.updatedObjects.isEmpty)
        #expect(beer.value(forKey: "note") as? String == "only here")
        let reader = M.context(coordinator)
        #expect(try reader.existingObject(with: beer.objectID).storeVersion == 1)

        // With a persistent change beside the transient one, the object is written.
        beer.setValue("again", forKey: "note")
        beer.setValue("U", forKey: "name")
        #expect(beer.hasPersistentChangedValues)
        try context.save()
        #expect(beer.storeVersion == 2)
        #expect(savedUpdated.last == [beer])
        #expect(!beer.isUpdated)
    }

    /// The same for a transient to-many relationship: adding to it changes the object, not
    /// its persistent values; a persistent to-many's change does count.
    @Test func transientToManyChangesAreNotPersistentChanges() throws {
        let folder = EntityDescription(name: "Folder", properties: [
            AttributeDescription(name: "title", type: .string),
            RelationshipDescription(name: "pinned", destination: "Note", toMany: true, inverse: "pinnedIn"),
            RelationshipDescription(name: "notes", destination: "Note", toMany: true, inverse: "folder"),
        ])
        let note = EntityDescription(name: "Note", properties: [
            AttributeDescription(name: "text", type: .string),
            RelationshipDescription(name: "pinnedIn", destination: "Folder", inverse: "pinned"),
            RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes"),
        ])
        folder.properties[1].isTransient = true
        note.properties[1].isTransient = true
        let context = M.context(try M.coordinator(model: ManagedObjectModel(entities: [folder, note])))
        let box = M.insert("Folder", into: context, ["title": "inbox"])
        let first = M.insert("Note", into: context, ["text": "one"])
        try context.save()
        let version = box.storeVersion

        box.addObject(first, forKey: "pinned")
        #expect(box.isUpdated)
        #expect(!box.hasPersistentChangedValues)
        try context.save()
        #expect(box.storeVersion == version)
        #expect(!box.isUpdated)

        box.addObject(first, forKey: "notes")
        #expect(box.hasPersistentChangedValues)
        try context.save()
        #expect(box.storeVersion == version + 1)
    }

    @Test func uniquenessConstraintAgainstStoreAndPending() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        _ = M.insert("Tag", into: context, ["name": "hoppy"])
        try context.save()
        _ = M.insert("Tag", into: context, ["name": "hoppy"])
        let error = #expect(throws: PersistenceError.self) { try context.save() }
        #expect(error?.code == .managedObjectConstraintValidation)
        context.rollback()
        _ = M.insert("Tag", into: context, ["name": "fresh"])
        _ = M.insert("Tag", into: context, ["name": "fresh"])
        #expect(throws: PersistenceError.self) { try context.save() }
    }

    /// The store's own check inside the save's transaction, for a row another context or
    /// process wrote after the saving context validated: a write reaching the store with a
    /// colliding row fails as a constraint merge, says which row it collides with, and writes
    /// nothing.
    @Test func aCollisionFoundInsideTheTransactionNamesTheRowAndWritesNothing() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("unique.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        _ = M.insert("Tag", into: context, ["name": "hoppy"])
        try context.save()
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let tag = try #require(coordinator.managedObjectModel.entitiesByName["Tag"])
        let nameSlot = try #require(tag.slotIndex(of: "name"))
        var values = [StoreValue](repeating: .null, count: tag.slots.count)
        values[nameSlot] = .string("hoppy")
        var request = StoreSaveRequest()
        request.inserted = [
            RowSnapshot(objectID: ManagedObjectID(entity: tag, storeIdentifier: store.identifier, primaryKey: 40), version: 1, values: values),
        ]
        let error = #expect(throws: PersistenceError.self) { try store.save(request) }
        #expect(error?.code == .managedObjectConstraintMerge)
        #expect(error?.message.contains("collides with row 1 already in the store") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("another context or process wrote it after this save was validated") == true)
        let reader = M.context(coordinator)
        let rows = try reader.performAndWait { try reader.fetch(M.request("Tag")).count }
        #expect(rows == 1, "the failed write left nothing")
    }
}
