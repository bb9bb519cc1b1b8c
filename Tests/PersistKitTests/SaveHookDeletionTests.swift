import Foundation
import Testing
@testable import PersistKit

/// `willSave()` and `didSave()` on the objects a save deletes, as Core Data calls them (the
/// sense of "save" being that of a database commit): `willSave()` once per save on every
/// stored object deleted, by the program or by a delete rule, with `isDeleted` true during
/// the call; `didSave()` after the commit, when the object is out of its context. An object
/// inserted and deleted before the save is not saved and gets neither. The same for a child
/// context saving to its parent.
@Suite("willSave() and didSave() on deleted objects", .timeLimit(.minutes(1)))
struct SaveHookDeletionTests {
    /// Folders holding notes (cascade); every note is a ``DeletionHookNote``, so the notes a
    /// context fetches or faults in are too.
    static func model() -> ManagedObjectModel {
        let folder = EntityDescription(name: "Folder", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "notes", destination: "Note", toMany: true, inverse: "folder", deleteRule: .cascade),
        ])
        let note = EntityDescription(name: "Note", properties: [
            AttributeDescription(name: "title", type: .string),
            RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes", deleteRule: .nullify),
        ], managedObjectClass: DeletionHookNote.self)
        return ManagedObjectModel(entities: [folder, note])
    }

    static func coordinator() throws -> PersistentStoreCoordinator {
        let url = try ContextTestModel.temporaryDirectory().appendingPathComponent("deletion-hooks.sqlite")
        return try ContextTestModel.coordinator(type: .sqlite, at: url, model: model())
    }

    static func note(_ title: String, in context: ManagedObjectContext, folder: ManagedObject? = nil) -> DeletionHookNote {
        let note = DeletionHookNote(entity: ContextTestModel.entity("Note", in: context), insertInto: context)
        note.setValue(title, forKey: "title")
        if let folder { note.setValue(folder, forKey: "folder") }
        return note
    }

    static func folder(_ name: String, in context: ManagedObjectContext) -> ManagedObject {
        let folder = ManagedObject(entity: ContextTestModel.entity("Folder", in: context), insertInto: context)
        folder.setValue(name, forKey: "name")
        return folder
    }

    /// The sorted titles of the stored notes, read by a new context.
    static func storedTitles(in coordinator: PersistentStoreCoordinator) throws -> [String] {
        let reader = ContextTestModel.context(coordinator)
        return try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: "Note")).map { "\($0.value(forKey: "title") ?? "nil")" }.sorted()
        }
    }

    @Test func aDeletedStoredObjectGetsWillSaveAndDidSaveOnce() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let doomed = Self.note("doomed", in: context)
            let kept = Self.note("kept", in: context)
            try context.save()
            #expect(doomed.calls == [.willSave(deleted: false, inContext: true), .didSave(deleted: false, inContext: true)])
            doomed.calls = []
            kept.calls = []
            context.delete(doomed)
            try context.save()
            // Called as deleted before the write, and after it when out of the context.
            #expect(doomed.calls == [.willSave(deleted: true, inContext: true), .didSave(deleted: false, inContext: false)])
            #expect(kept.calls.isEmpty)
            #expect(!context.hasChanges && doomed.managedObjectContext == nil)
        }
        #expect(try Self.storedTitles(in: coordinator) == ["kept"])
    }

    @Test func aCascadeDeletedObjectGetsWillSaveAndDidSave() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let folder = Self.folder("old", in: context)
            let inFolder = Self.note("in folder", in: context, folder: folder)
            let loose = Self.note("loose", in: context)
            try context.save()
            inFolder.calls = []
            loose.calls = []
            context.delete(folder)
            try context.save()
            #expect(inFolder.calls == [.willSave(deleted: true, inContext: true), .didSave(deleted: false, inContext: false)])
            #expect(loose.calls.isEmpty)
        }
        #expect(try Self.storedTitles(in: coordinator) == ["loose"])
    }

    @Test func anObjectInsertedAndDeletedBeforeTheSaveGetsNeither() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let stored = Self.note("stored", in: context)
            try context.save()
            stored.calls = []
            let unsaved = Self.note("never saved", in: context)
            context.delete(unsaved)
            context.delete(stored)
            try context.save()
            #expect(unsaved.calls.isEmpty)
            #expect(stored.calls == [.willSave(deleted: true, inContext: true), .didSave(deleted: false, inContext: false)])
        }
        #expect(try Self.storedTitles(in: coordinator) == [])
    }

    @Test func whatADeletedObjectsWillSaveChangesElsewhereIsSaved() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let doomed = Self.note("doomed", in: context)
            let other = Self.note("other", in: context)
            let victim = Self.note("victim", in: context)
            try context.save()
            for note in [doomed, other, victim] { note.calls = [] }
            doomed.onWillSave = { note in
                // Its own change is not written and calls it no second time.
                note.setValue("changed while deleted", forKey: "title")
                if other.value(forKey: "title") as? String != "told" { other.setValue("told", forKey: "title") }
                if let context = note.managedObjectContext, !victim.isDeleted { context.delete(victim) }
            }
            context.delete(doomed)
            try context.save()
            #expect(doomed.calls == [.willSave(deleted: true, inContext: true), .didSave(deleted: false, inContext: false)])
            // The changed object and the object deleted there are saved with their own calls.
            #expect(other.calls == [.willSave(deleted: false, inContext: true), .didSave(deleted: false, inContext: true)])
            #expect(victim.calls == [.willSave(deleted: true, inContext: true), .didSave(deleted: false, inContext: false)])
            #expect(!context.hasChanges)
        }
        #expect(try Self.storedTitles(in: coordinator) == ["told"])
    }

    @Test func anUpdatedObjectDeletedInWillSaveIsCalledAgainAsDeleted() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let trigger = Self.note("trigger", in: context)
            let edited = Self.note("edited", in: context)
            try context.save()
            trigger.calls = []
            edited.calls = []
            // Both updated; whichever is called first, `edited` ends up deleted by the save.
            edited.setValue("edited again", forKey: "title")
            trigger.setValue("trigger again", forKey: "title")
            trigger.onWillSave = { note in
                if let context = note.managedObjectContext, !edited.isDeleted { context.delete(edited) }
            }
            try context.save()
            #expect(edited.calls.last == .didSave(deleted: false, inContext: false))
            #expect(edited.calls.filter { $0 == .willSave(deleted: true, inContext: true) }.count == 1)
            #expect(edited.calls.filter { $0 == .didSave(deleted: false, inContext: false) }.count == 1)
        }
        #expect(try Self.storedTitles(in: coordinator) == ["trigger again"])
    }

    @Test func aChildContextCallsItsDeletedObjects() throws {
        let coordinator = try Self.coordinator()
        let parent = ContextTestModel.context(coordinator)
        let (folderID, inFolderID, storedID) = try parent.performAndWait {
            let folder = Self.folder("old", in: parent)
            let inFolder = Self.note("in folder", in: parent, folder: folder)
            let stored = Self.note("stored", in: parent)
            _ = Self.note("kept", in: parent)
            try parent.save()
            return (folder.objectID, inFolder.objectID, stored.objectID)
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        try child.performAndWait {
            let folder = child.object(with: folderID)
            let inFolder = try #require(child.object(with: inFolderID) as? DeletionHookNote)
            let stored = try #require(child.object(with: storedID) as? DeletionHookNote)
            let unsaved = Self.note("never saved", in: child)
            child.delete(unsaved)
            child.delete(stored)
            child.delete(folder)
            try child.save()
            #expect(stored.calls == [.willSave(deleted: true, inContext: true), .didSave(deleted: false, inContext: false)])
            #expect(inFolder.calls == [.willSave(deleted: true, inContext: true), .didSave(deleted: false, inContext: false)])
            #expect(unsaved.calls.isEmpty)
            #expect(!child.hasChanges)
        }
        try parent.performAndWait {
            #expect(Set(parent.deletedObjects.map(\.objectID)) == [folderID, inFolderID, storedID])
            try parent.save()
        }
        #expect(try Self.storedTitles(in: coordinator) == ["kept"])
    }
}

/// A note that records each `willSave()` and `didSave()` call with the object's state then.
final class DeletionHookNote: ManagedObject {
    /// One call of a save hook, with `isDeleted` and whether the object had a context.
    enum Call: Equatable {
        case willSave(deleted: Bool, inContext: Bool)
        case didSave(deleted: Bool, inContext: Bool)
    }

    var calls: [Call] = []
    var onWillSave: ((DeletionHookNote) -> Void)?

    override func willSave() {
        calls.append(.willSave(deleted: isDeleted, inContext: managedObjectContext != nil))
        onWillSave?(self)
    }

    override func didSave() {
        calls.append(.didSave(deleted: isDeleted, inContext: managedObjectContext != nil))
    }
}
