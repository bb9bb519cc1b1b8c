import Foundation
import Testing
@testable import PersistKit

/// `didSave()` on the objects a save's conflict resolution takes out of the save: each had its
/// `willSave()` when the save began, so each gets its `didSave()` once the save succeeded, as
/// the objects saved do. A delete the merge policy gave up, an update merged into what the store
/// already holds, an updated object another save deleted.
@Suite("didSave() after conflict resolution", .timeLimit(.minutes(1)))
struct SaveHookConflictTests {
    /// A note saved by one context, and two more contexts of the same coordinator that fetched
    /// it: `ours` saves last, `theirs` first.
    struct Setup {
        let coordinator: PersistentStoreCoordinator
        let ours: ManagedObjectContext
        let theirs: ManagedObjectContext
        let ourNote: DeletionHookNote
        let theirNote: DeletionHookNote
    }

    static func setUp() throws -> Setup {
        let coordinator = try SaveHookDeletionTests.coordinator()
        let writer = ContextTestModel.context(coordinator)
        try writer.performAndWait {
            _ = SaveHookDeletionTests.note("first", in: writer)
            try writer.save()
        }
        func fetchNote(_ context: ManagedObjectContext) throws -> DeletionHookNote {
            try context.performAndWait {
                let notes = try context.fetch(FetchRequest<ManagedObject>(entityName: "Note"))
                guard notes.count == 1, let note = notes[0] as? DeletionHookNote else {
                    throw PersistenceError(.objectNotFound, "the note was not fetched as a DeletionHookNote")
                }
                note.willAccessValue()
                return note
            }
        }
        let ours = ContextTestModel.context(coordinator)
        let theirs = ContextTestModel.context(coordinator)
        return Setup(coordinator: coordinator, ours: ours, theirs: theirs, ourNote: try fetchNote(ours), theirNote: try fetchNote(theirs))
    }

    @Test func aDeleteTheRollbackPolicyGivesUpGetsDidSave() throws {
        let setup = try Self.setUp()
        try setup.theirs.performAndWait {
            setup.theirNote.setValue("theirs", forKey: "title")
            try setup.theirs.save()
        }
        try setup.ours.performAndWait {
            setup.ours.mergePolicy = .rollback
            setup.ours.delete(setup.ourNote)
            setup.ourNote.calls = []
            try setup.ours.save()
            // The store's version wins: the note stays, with their title, and is told the save is done.
            #expect(setup.ourNote.calls == [.willSave(deleted: true, inContext: true), .didSave(deleted: false, inContext: true)])
            #expect(!setup.ourNote.isDeleted && setup.ourNote.value(forKey: "title") as? String == "theirs")
            #expect(!setup.ours.hasChanges)
        }
        #expect(try SaveHookDeletionTests.storedTitles(in: setup.coordinator) == ["theirs"])
    }

    @Test func anUpdateMergedIntoTheStoredValuesGetsDidSave() throws {
        let setup = try Self.setUp()
        try setup.theirs.performAndWait {
            setup.theirNote.setValue("same", forKey: "title")
            try setup.theirs.save()
        }
        try setup.ours.performAndWait {
            setup.ours.mergePolicy = .rollback
            setup.ourNote.setValue("ours", forKey: "title")
            setup.ourNote.calls = []
            try setup.ours.save()
            // Rolled back to the store's values: nothing of it is written, and it is told so.
            #expect(setup.ourNote.calls == [.willSave(deleted: false, inContext: true), .didSave(deleted: false, inContext: true)])
            #expect(setup.ourNote.value(forKey: "title") as? String == "same")
        }
        #expect(try SaveHookDeletionTests.storedTitles(in: setup.coordinator) == ["same"])
    }

    @Test func anUpdatedObjectDeletedElsewhereGetsDidSave() throws {
        let setup = try Self.setUp()
        try setup.theirs.performAndWait {
            setup.theirs.delete(setup.theirNote)
            try setup.theirs.save()
        }
        try setup.ours.performAndWait {
            setup.ours.mergePolicy = .mergeByPropertyStoreTrump
            setup.ourNote.setValue("ours", forKey: "title")
            setup.ourNote.calls = []
            try setup.ours.save()
            // The deletion wins: the note leaves the context after the save, its didSave() first.
            #expect(setup.ourNote.calls == [.willSave(deleted: false, inContext: true), .didSave(deleted: false, inContext: true)])
            #expect(setup.ourNote.managedObjectContext == nil)
        }
        #expect(try SaveHookDeletionTests.storedTitles(in: setup.coordinator).isEmpty)
    }

    @Test func aSaveWithoutConflictsCallsEachObjectOnce() throws {
        let setup = try Self.setUp()
        try setup.ours.performAndWait {
            setup.ours.mergePolicy = .rollback
            setup.ourNote.setValue("ours", forKey: "title")
            setup.ourNote.calls = []
            try setup.ours.save()
            #expect(setup.ourNote.calls == [.willSave(deleted: false, inContext: true), .didSave(deleted: false, inContext: true)])
        }
        #expect(try SaveHookDeletionTests.storedTitles(in: setup.coordinator) == ["ours"])
    }
}
