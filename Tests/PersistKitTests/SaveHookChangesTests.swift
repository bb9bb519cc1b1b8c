import Foundation
import Testing
@testable import PersistKit

/// What `willSave()` and `didSave()` change, as Core Data treats it: changes made in
/// `willSave()` (to the object itself, to other objects, objects inserted or deleted there)
/// are part of the save that is running, and the objects they change get their own
/// `willSave()`; a `willSave()` that changes something at every call fails the save after a
/// bounded number of rounds; changes made in `didSave()` or by an observer of the did-save
/// notification stay pending and the next save writes them. The same for a child context
/// saving to its parent.
@Suite("Changes made in willSave() and didSave()", .timeLimit(.minutes(1)))
struct SaveHookChangesTests {
    /// Folders holding notes (cascade), and log entries whose text is required.
    static func model() -> ManagedObjectModel {
        let folder = EntityDescription(name: "Folder", properties: [
            AttributeDescription(name: "name", type: .string, isOptional: false),
            RelationshipDescription(name: "notes", destination: "Note", toMany: true, inverse: "folder", deleteRule: .cascade),
        ])
        let note = EntityDescription(name: "Note", properties: [
            AttributeDescription(name: "title", type: .string),
            AttributeDescription(name: "revision", type: .integer64, defaultValue: .integer(0)),
            RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes", deleteRule: .nullify),
        ])
        let entry = EntityDescription(name: "Entry", properties: [
            AttributeDescription(name: "text", type: .string, isOptional: false),
        ])
        return ManagedObjectModel(entities: [folder, note, entry])
    }

    static func coordinator() throws -> PersistentStoreCoordinator {
        let url = try ContextTestModel.temporaryDirectory().appendingPathComponent("hooks.sqlite")
        return try ContextTestModel.coordinator(type: .sqlite, at: url, model: model())
    }

    static func hookedNote(_ title: String, in context: ManagedObjectContext) -> HookedNote {
        let note = HookedNote(entity: ContextTestModel.entity("Note", in: context), insertInto: context)
        note.setValue(title, forKey: "title")
        return note
    }

    /// The sorted values of `key` of every stored object of `entityName`, read by a new context.
    static func stored(_ entityName: String, _ key: String, in coordinator: PersistentStoreCoordinator) throws -> [String] {
        let reader = ContextTestModel.context(coordinator)
        return try reader.performAndWait {
            try reader.fetch(FetchRequest<ManagedObject>(entityName: entityName)).map { "\($0.value(forKey: key) ?? "nil")" }.sorted()
        }
    }

    // MARK: - willSave()

    @Test func objectsInsertedInWillSaveAreSavedWithTheirOwnWillSave() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let note = Self.hookedNote("first", in: context)
            var extraNote: HookedNote?
            var entry: ManagedObject?
            note.onWillSave = { note in
                guard entry == nil, let context = note.managedObjectContext else { return }
                entry = ContextTestModel.insert("Entry", into: context, ["text": "saved first"])
                extraNote = Self.hookedNote("extra", in: context)
            }
            try context.save()
            let extra = try #require(extraNote)
            let log = try #require(entry)
            #expect(extra.willSaveCalls == 1 && extra.didSaveCalls == 1)
            #expect(note.willSaveCalls == 1)
            #expect(!context.hasChanges && context.insertedObjects.isEmpty)
            #expect(!log.isInserted && !log.objectID.isTemporaryID && !extra.objectID.isTemporaryID)
            #expect(context.registeredObject(for: log.objectID) === log)
        }
        #expect(try Self.stored("Entry", "text", in: coordinator) == ["saved first"])
        #expect(try Self.stored("Note", "title", in: coordinator) == ["extra", "first"])
    }

    @Test func anObjectInsertedInWillSaveIsValidated() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let note = Self.hookedNote("first", in: context)
            var entry: ManagedObject?
            note.onWillSave = { note in
                guard entry == nil, let context = note.managedObjectContext else { return }
                // No text, which the model requires.
                entry = ContextTestModel.insert("Entry", into: context)
            }
            let error = #expect(throws: PersistenceError.self) { try context.save() }
            let log = try #require(entry)
            #expect(error?.code == .validationMissingMandatoryProperty)
            #expect(error?.objectID == log.objectID)
            // Nothing written; the context keeps both objects inserted.
            #expect(context.insertedObjects == [note, log])
            log.setValue("now valid", forKey: "text")
            try context.save()
            #expect(!context.hasChanges)
        }
        #expect(try Self.stored("Entry", "text", in: coordinator) == ["now valid"])
    }

    @Test func willSaveIsCalledAgainAfterItChangesItsObject() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let note = Self.hookedNote("first", in: context)
            var revision: Int64 = 1
            // Sets the revision when it differs: the second call changes nothing.
            note.onWillSave = { note in
                if note.value(forKey: "revision") as? Int64 != revision { note.setValue(revision, forKey: "revision") }
            }
            try context.save()
            #expect(note.willSaveCalls == 2 && note.didSaveCalls == 1)
            // An updated object, the same.
            revision = 2
            note.setValue("second", forKey: "title")
            try context.save()
            #expect(note.willSaveCalls == 4 && note.didSaveCalls == 2)
            #expect(!context.hasChanges)
        }
        #expect(try Self.stored("Note", "revision", in: coordinator) == ["2"])
        #expect(try Self.stored("Note", "title", in: coordinator) == ["second"])
    }

    @Test func objectsChangedInWillSaveAreSavedWithTheirOwnWillSave() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let other = Self.hookedNote("untouched", in: context)
            let plain = ContextTestModel.insert("Note", into: context, ["title": "plain"])
            try context.save()
            #expect(other.willSaveCalls == 1)
            let note = Self.hookedNote("toucher", in: context)
            note.onWillSave = { _ in
                if other.value(forKey: "title") as? String != "touched" { other.setValue("touched", forKey: "title") }
                if plain.value(forKey: "title") as? String != "touched too" { plain.setValue("touched too", forKey: "title") }
            }
            try context.save()
            // The changed object became an updated object of the save: its willSave() ran once.
            #expect(other.willSaveCalls == 2 && other.didSaveCalls == 2)
            #expect(!other.hasChanges && !plain.hasChanges && !context.hasChanges)
            #expect(context.updatedObjects.isEmpty)
        }
        #expect(try Self.stored("Note", "title", in: coordinator) == ["touched", "touched too", "toucher"])
    }

    @Test func deletesInWillSaveApplyDeleteRulesAndLeaveTheSave() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let folder = ContextTestModel.insert("Folder", into: context, ["name": "old"])
            for title in ["in folder 1", "in folder 2"] { _ = ContextTestModel.insert("Note", into: context, ["title": title, "folder": folder]) }
            let edited = ContextTestModel.insert("Note", into: context, ["title": "stored"])
            try context.save()
            edited.setValue("edited", forKey: "title")
            let doomed = ContextTestModel.insert("Note", into: context, ["title": "doomed"])
            let trigger = Self.hookedNote("trigger", in: context)
            trigger.onWillSave = { trigger in
                guard let context = trigger.managedObjectContext, !folder.isDeleted else { return }
                context.delete(folder)
                context.delete(doomed)
                context.delete(edited)
            }
            try context.save()
            #expect(!context.hasChanges && context.deletedObjects.isEmpty && context.insertedObjects.isEmpty)
            #expect(doomed.managedObjectContext == nil && edited.managedObjectContext == nil && folder.managedObjectContext == nil)
            #expect(context.registeredObjects == [trigger])
        }
        #expect(try Self.stored("Note", "title", in: coordinator) == ["trigger"])
        #expect(try Self.stored("Folder", "name", in: coordinator) == [])
    }

    @Test func aWillSaveThatAlwaysChangesSomethingFailsAndWritesNothing() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let restless = Self.hookedNote("restless", in: context)
            let calm = ContextTestModel.insert("Note", into: context, ["title": "calm"])
            restless.onWillSave = { note in
                note.setValue((note.value(forKey: "revision") as? Int64 ?? 0) + 1, forKey: "revision")
            }
            let error = #expect(throws: PersistenceError.self) { try context.save() }
            #expect(error?.code == .willSaveDidNotSettle)
            #expect(error?.objectID == restless.objectID)
            #expect(error?.detailedErrors.map(\.objectID) == [restless.objectID])
            #expect(restless.willSaveCalls == ManagedObjectContext.maxWillSaveRounds)
            #expect(restless.didSaveCalls == 0)
            // Nothing written; the context keeps its changes.
            #expect(context.hasChanges && context.insertedObjects == [restless, calm])
            #expect(restless.objectID.isTemporaryID)
            #expect(try Self.stored("Note", "title", in: coordinator) == [])
            restless.onWillSave = nil
            try context.save()
            #expect(!context.hasChanges)
        }
        #expect(try Self.stored("Note", "title", in: coordinator) == ["calm", "restless"])
        #expect(try Self.stored("Note", "revision", in: coordinator) == ["0", "\(ManagedObjectContext.maxWillSaveRounds)"])
    }

    // MARK: - didSave()

    @Test func changesInDidSaveStayPendingAndTheNextSaveWritesThem() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let victim = ContextTestModel.insert("Note", into: context, ["title": "victim"])
            try context.save()
            let note = Self.hookedNote("first", in: context)
            var entry: ManagedObject?
            note.onDidSave = { note in
                guard entry == nil, let context = note.managedObjectContext else { return }
                note.setValue("second", forKey: "title")
                entry = ContextTestModel.insert("Entry", into: context, ["text": "after"])
                context.delete(victim)
            }
            try context.save()
            let log = try #require(entry)
            // Not part of the save that ended: pending, listed, and not written.
            #expect(context.hasChanges)
            #expect(context.insertedObjects == [log])
            #expect(context.updatedObjects == [note])
            #expect(context.deletedObjects == [victim])
            #expect(note.isUpdated && !note.isInserted && !note.objectID.isTemporaryID)
            #expect(try Self.stored("Note", "title", in: coordinator) == ["first", "victim"])
            #expect(try Self.stored("Entry", "text", in: coordinator) == [])
            try context.save()
            #expect(!context.hasChanges)
            #expect(note.didSaveCalls == 2)
        }
        #expect(try Self.stored("Note", "title", in: coordinator) == ["second"])
        #expect(try Self.stored("Entry", "text", in: coordinator) == ["after"])
    }

    @Test func changesByADidSaveObserverStayPending() throws {
        let coordinator = try Self.coordinator()
        let context = ContextTestModel.context(coordinator)
        let inserted = LockedBox<ManagedObject?>(nil)
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification,
                                                              object: context, queue: nil) { _ in
            guard inserted.value == nil else { return }
            inserted.value = ContextTestModel.insert("Entry", into: context, ["text": "observed"])
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.performAndWait {
            _ = ContextTestModel.insert("Note", into: context, ["title": "first"])
            try context.save()
            let log = try #require(inserted.value)
            #expect(context.hasChanges && context.insertedObjects == [log] && log.isInserted)
            #expect(try Self.stored("Entry", "text", in: coordinator) == [])
            try context.save()
            #expect(!context.hasChanges && !log.isInserted)
        }
        #expect(try Self.stored("Entry", "text", in: coordinator) == ["observed"])
    }

    // MARK: - A child context

    @Test func aChildContextPushesWillSaveChangesAndKeepsDidSaveChanges() throws {
        let coordinator = try Self.coordinator()
        let parent = ContextTestModel.context(coordinator)
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        let (storedID, goneID) = try parent.performAndWait {
            let stored = ContextTestModel.insert("Note", into: parent, ["title": "stored"])
            let gone = ContextTestModel.insert("Note", into: parent, ["title": "gone"])
            try parent.save()
            return (stored.objectID, gone.objectID)
        }
        try child.performAndWait {
            let stored = child.object(with: storedID)
            let gone = child.object(with: goneID)
            let note = Self.hookedNote("first", in: child)
            var entry: ManagedObject?
            note.onWillSave = { note in
                guard entry == nil, let context = note.managedObjectContext else { return }
                entry = ContextTestModel.insert("Entry", into: context, ["text": "from willSave"])
                stored.setValue("changed in willSave", forKey: "title")
                context.delete(gone)
            }
            note.onDidSave = { note in
                if note.value(forKey: "title") as? String == "first" { note.setValue("from didSave", forKey: "title") }
            }
            try child.save()
            let log = try #require(entry)
            #expect(!log.isInserted)
            // The didSave() change is the child's, pending.
            #expect(child.hasChanges && child.updatedObjects == [note] && child.insertedObjects.isEmpty)
            #expect(child.deletedObjects.isEmpty && !stored.hasChanges)
        }
        parent.performAndWait {
            // The willSave() update and delete went to the parent with the rest.
            #expect(parent.updatedObjects.map { $0.value(forKey: "title") as? String } == ["changed in willSave"])
            #expect(parent.deletedObjects.map(\.objectID) == [goneID])
            let inserted = parent.insertedObjects
            let texts = inserted.filter { $0.entity.name == "Entry" }.map { $0.value(forKey: "text") as? String }
            #expect(texts == ["from willSave"])
            let titles = inserted.filter { $0.entity.name == "Note" }.map { $0.value(forKey: "title") as? String }
            #expect(titles == ["first"])
        }
        try child.performAndWait {
            try child.save()
            #expect(!child.hasChanges)
        }
        try parent.performAndWait { try parent.save() }
        #expect(try Self.stored("Entry", "text", in: coordinator) == ["from willSave"])
        #expect(try Self.stored("Note", "title", in: coordinator) == ["changed in willSave", "from didSave"])
    }
}

/// A note whose save hooks count their calls and run the given closures.
final class HookedNote: ManagedObject {
    var willSaveCalls = 0
    var didSaveCalls = 0
    var onWillSave: ((HookedNote) -> Void)?
    var onDidSave: ((HookedNote) -> Void)?
    override func willSave() {
        willSaveCalls += 1
        onWillSave?(self)
    }
    override func didSave() {
        didSaveCalls += 1
        onDidSave?(self)
    }
}

/// A value an observer closure sets, behind a lock.
final class LockedBox<Value>: @unchecked Sendable {
    // Every access goes through `lock`.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
