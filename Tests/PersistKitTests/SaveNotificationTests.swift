import Foundation
import Testing
@testable import PersistKit

/// The notifications of `processPendingChanges()` and `save()` carry the objects and IDs each
/// save changed, however the save path builds them (sets shared between posts, change lists
/// reused from one save to the next).
@Suite("Save notifications", .serialized, .timeLimit(.minutes(1)))
struct SaveNotificationTests {
    typealias M = ContextTestModel

    /// Every notification the context posts while `body` runs, in order.
    final class Recorder: @unchecked Sendable {
        // @unchecked Sendable: `notes` is guarded by `lock`.
        private let lock = NSLock()
        private var notes: [Notification] = []
        private var observers: [NSObjectProtocol] = []

        init(_ context: ManagedObjectContext) {
            for name in [ManagedObjectContext.didChangeObjectsNotification, ManagedObjectContext.willSaveObjectsNotification,
                         ManagedObjectContext.didSaveObjectsNotification, ManagedObjectContext.didSaveObjectIDsNotification] {
                observers.append(NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { [weak self] note in
                    guard let self else { return }
                    self.lock.lock()
                    self.notes.append(note)
                    self.lock.unlock()
                })
            }
        }

        func stop() { for observer in observers { NotificationCenter.default.removeObserver(observer) } }

        /// The notifications recorded since the last call, emptied.
        func take() -> [Notification] {
            lock.lock()
            defer { lock.unlock() }
            let taken = notes
            notes = []
            return taken
        }
    }

    static func objects(_ note: Notification, _ key: String) -> Set<ManagedObject> {
        note.userInfo?[key] as? Set<ManagedObject> ?? []
    }

    static func ids(_ note: Notification, _ key: String) -> Set<ManagedObjectID> {
        note.userInfo?[key] as? Set<ManagedObjectID> ?? []
    }

    @Test func oneObjectSavesPostEveryNotificationWithItsContents() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("notes.sqlite")
        let context = M.context(try M.coordinator(type: .sqlite, at: url))
        let recorder = Recorder(context)
        defer { recorder.stop() }
        try context.performAndWait {
            // Several saves of one new object each from the same context: each save's
            // notifications name that object only.
            var saved: [ManagedObject] = []
            for index in 0..<3 {
                let beer = M.insert("Beer", into: context, ["name": "Beer \(index)"])
                try context.save()
                saved.append(beer)
                let notes = recorder.take()
                #expect(notes.map(\.name) == [ManagedObjectContext.didChangeObjectsNotification, ManagedObjectContext.willSaveObjectsNotification,
                                              ManagedObjectContext.didSaveObjectsNotification, ManagedObjectContext.didSaveObjectIDsNotification])
                guard notes.count == 4 else { return }
                #expect(notes.allSatisfy { $0.object as AnyObject === context })
                // Core Data: "There is no userInfo dictionary" in the will-save notification.
                #expect(notes[1].userInfo == nil)
                #expect(Self.objects(notes[0], ManagedObjectContext.insertedObjectsKey) == [beer])
                #expect(Self.objects(notes[0], ManagedObjectContext.updatedObjectsKey).isEmpty)
                #expect(Self.objects(notes[0], ManagedObjectContext.deletedObjectsKey).isEmpty)
                #expect(Self.objects(notes[2], ManagedObjectContext.insertedObjectsKey) == [beer])
                #expect(Self.objects(notes[2], ManagedObjectContext.updatedObjectsKey).isEmpty)
                #expect(Self.objects(notes[2], ManagedObjectContext.deletedObjectsKey).isEmpty)
                #expect(!beer.objectID.isTemporaryID)
                #expect(Self.ids(notes[3], ManagedObjectContext.insertedObjectIDsKey) == [beer.objectID])
                #expect(Self.ids(notes[3], ManagedObjectContext.updatedObjectIDsKey).isEmpty)
                #expect(Self.ids(notes[3], ManagedObjectContext.deletedObjectIDsKey).isEmpty)
                let changes = notes[2].userInfo?[ManagedObjectContext.savedChangesKey] as? SavedChanges
                #expect(changes?.inserted == [beer.objectID])
                #expect((notes[3].userInfo?[ManagedObjectContext.savedChangesKey] as? SavedChanges)?.inserted == [beer.objectID])
                #expect(!context.hasChanges)
            }
            // An update and a delete in one save.
            saved[0].setValue("Renamed", forKey: "name")
            context.delete(saved[1])
            try context.save()
            let notes = recorder.take()
            #expect(notes.count == 4)
            guard notes.count == 4 else { return }
            #expect(Self.objects(notes[0], ManagedObjectContext.updatedObjectsKey) == [saved[0]])
            #expect(Self.objects(notes[0], ManagedObjectContext.deletedObjectsKey) == [saved[1]])
            #expect(Self.objects(notes[2], ManagedObjectContext.insertedObjectsKey).isEmpty)
            #expect(Self.objects(notes[2], ManagedObjectContext.updatedObjectsKey) == [saved[0]])
            #expect(Self.objects(notes[2], ManagedObjectContext.deletedObjectsKey) == [saved[1]])
            #expect(Self.ids(notes[3], ManagedObjectContext.updatedObjectIDsKey) == [saved[0].objectID])
            #expect(Self.ids(notes[3], ManagedObjectContext.deletedObjectIDsKey) == [saved[1].objectID])
            let changes = notes[3].userInfo?[ManagedObjectContext.savedChangesKey] as? SavedChanges
            #expect(changes?.updatedIDs == [saved[0].objectID])
            #expect(changes?.deleted == [saved[1].objectID])
        }
        // The saves reached the store.
        let reader = M.context(try M.coordinator(type: .sqlite, at: url))
        let names = try reader.performAndWait { M.names(try reader.fetch(M.request("Beer"))) }
        #expect(Set(names) == ["Renamed", "Beer 2"])
    }

    @Test func didSaveListsEveryInsertWhenSomeWereProcessedBefore() throws {
        let context = M.context(try M.coordinator())
        let recorder = Recorder(context)
        defer { recorder.stop() }
        try context.performAndWait {
            let first = M.insert("Beer", into: context, ["name": "First"])
            context.processPendingChanges()
            let early = recorder.take()
            #expect(early.count == 1)
            #expect(early.first.map { Self.objects($0, ManagedObjectContext.insertedObjectsKey) } == [first])
            let second = M.insert("Beer", into: context, ["name": "Second"])
            let dropped = M.insert("Beer", into: context, ["name": "Dropped"])
            context.delete(dropped)
            try context.save()
            let notes = recorder.take()
            let didChange = notes.first { $0.name == ManagedObjectContext.didChangeObjectsNotification }
            let didSave = notes.first { $0.name == ManagedObjectContext.didSaveObjectsNotification }
            let didSaveIDs = notes.first { $0.name == ManagedObjectContext.didSaveObjectIDsNotification }
            // The objects-did-change notification of the save names only the new insert; the
            // did-save notifications name both saved objects, and not the one inserted and
            // deleted again before the save (it is in no set, as in Core Data).
            #expect(didChange.map { Self.objects($0, ManagedObjectContext.insertedObjectsKey) } == [second])
            #expect(didSave.map { Self.objects($0, ManagedObjectContext.insertedObjectsKey) } == [first, second])
            #expect(didSave.map { Self.objects($0, ManagedObjectContext.deletedObjectsKey) } == [])
            #expect(dropped.managedObjectContext == nil)
            #expect(didSaveIDs.map { Self.ids($0, ManagedObjectContext.insertedObjectIDsKey) } == [first.objectID, second.objectID])
            #expect(didSaveIDs.map { Self.ids($0, ManagedObjectContext.deletedObjectIDsKey) } == [])
        }
    }

    @Test func processPendingChangesWithNothingPendingPostsNothing() throws {
        let context = M.context(try M.coordinator())
        let recorder = Recorder(context)
        defer { recorder.stop() }
        try context.performAndWait {
            context.processPendingChanges()
            #expect(recorder.take().isEmpty)
            _ = M.insert("Beer", into: context, ["name": "Once"])
            context.processPendingChanges()
            #expect(recorder.take().count == 1)
            context.processPendingChanges()
            #expect(recorder.take().isEmpty, "changes are posted once")
            try context.save()
            #expect(recorder.take().map(\.name) == [ManagedObjectContext.willSaveObjectsNotification, ManagedObjectContext.didSaveObjectsNotification,
                                                    ManagedObjectContext.didSaveObjectIDsNotification])
            try context.save()
            #expect(recorder.take().isEmpty, "a save with no changes posts nothing")
        }
    }

    @Test func siblingContextsStillMergeOneObjectSaves() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("siblings.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let writer = M.context(coordinator)
        let reader = M.context(coordinator)
        reader.automaticallyMergesChangesFromParent = true
        let readerBeer = try writer.performAndWait {
            let beer = M.insert("Beer", into: writer, ["name": "Before"])
            try writer.save()
            return beer.objectID
        }
        let seen = try reader.performAndWait { try reader.existingObject(with: readerBeer) }
        try writer.performAndWait {
            writer.object(with: readerBeer).setValue("After", forKey: "name")
            try writer.save()
        }
        // The merge is queued on the reader's queue behind this block: wait for it there.
        reader.performAndWait {}
        reader.performAndWait {
            #expect(seen.value(forKey: "name") as? String == "After")
        }
    }

    /// A save posts again the objects-did-change notification's sets of updated and deleted
    /// objects when they hold just the objects it saves; when changes were processed before
    /// the save, the sets posted then are not those of the save, even when as many.
    @Test func didSaveNamesTheSavedObjectsWhenChangesWereProcessedBefore() throws {
        let context = M.context(try M.coordinator())
        let recorder = Recorder(context)
        defer { recorder.stop() }
        try context.performAndWait {
            let names = ["A", "B", "C", "D"]
            let beers = names.map { M.insert("Beer", into: context, ["name": $0]) }
            try context.save()
            _ = recorder.take()

            // Every change pending at the save: the sets posted before the save are posted again.
            beers[0].setValue(7.0, forKey: "abv")
            context.delete(beers[3])
            try context.save()
            var notes = recorder.take()
            #expect(notes.count == 4)
            guard notes.count == 4 else { return }
            #expect(Self.objects(notes[2], ManagedObjectContext.updatedObjectsKey) == [beers[0]])
            #expect(Self.objects(notes[2], ManagedObjectContext.deletedObjectsKey) == [beers[3]])

            // A persistent change and a deletion processed before the save, then a
            // transient-only change and a new object deleted: one updated and one deleted object
            // in the last objects-did-change notification and in the save, not the same ones.
            beers[0].setValue(8.0, forKey: "abv")
            context.delete(beers[2])
            context.processPendingChanges()
            beers[1].setValue("only transient", forKey: "note")
            context.delete(M.insert("Beer", into: context, ["name": "Gone"]))
            _ = recorder.take()
            try context.save()
            notes = recorder.take()
            #expect(notes.count == 4)
            guard notes.count == 4 else { return }
            #expect(Self.objects(notes[0], ManagedObjectContext.updatedObjectsKey) == [beers[1]])
            #expect(Self.objects(notes[0], ManagedObjectContext.deletedObjectsKey).count == 1)
            #expect(!Self.objects(notes[0], ManagedObjectContext.deletedObjectsKey).contains(beers[2]))
            #expect(Self.objects(notes[2], ManagedObjectContext.updatedObjectsKey) == [beers[0]])
            #expect(Self.objects(notes[2], ManagedObjectContext.deletedObjectsKey) == [beers[2]])
            #expect(Self.ids(notes[3], ManagedObjectContext.updatedObjectIDsKey) == [beers[0].objectID])
            #expect(Self.ids(notes[3], ManagedObjectContext.deletedObjectIDsKey) == [beers[2].objectID])
        }
    }

    /// Every key of a notification is there with its set's type, empty or not, and a
    /// notification an observer keeps keeps its sets when later saves post theirs (the
    /// `userInfo` is filled in place between posts and only its filled keys emptied again).
    @Test func everyKeyHoldsItsSetAndKeptNotificationsKeepTheirs() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("kept.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        let sibling = M.context(coordinator)
        sibling.automaticallyMergesChangesFromParent = true
        let recorder = Recorder(context)
        defer { recorder.stop() }
        let objectKeys = [ManagedObjectContext.insertedObjectsKey, ManagedObjectContext.updatedObjectsKey, ManagedObjectContext.deletedObjectsKey]
        let idKeys = [ManagedObjectContext.insertedObjectIDsKey, ManagedObjectContext.updatedObjectIDsKey, ManagedObjectContext.deletedObjectIDsKey]
        func sets(_ note: Notification) -> [Set<ManagedObject>?] { objectKeys.map { note.userInfo?[$0] as? Set<ManagedObject> } }
        func idSets(_ note: Notification) -> [Set<ManagedObjectID>?] { idKeys.map { note.userInfo?[$0] as? Set<ManagedObjectID> } }
        try context.performAndWait {
            let first = M.insert("Beer", into: context, ["name": "First"])
            let second = M.insert("Beer", into: context, ["name": "Second"])
            try context.save()
            let inserting = recorder.take()
            #expect(inserting.count == 4)
            guard inserting.count == 4 else { return }
            first.setValue("First, renamed", forKey: "name")
            context.delete(second)
            try context.save()
            let changing = recorder.take()
            #expect(changing.count == 4)
            guard changing.count == 4 else { return }
            // A third save fills the inserted keys again, and finds the others emptied.
            let third = M.insert("Beer", into: context, ["name": "Third"])
            try context.save()
            let insertingAgain = recorder.take()
            #expect(insertingAgain.count == 4)
            guard insertingAgain.count == 4 else { return }
            #expect(sets(insertingAgain[0]) == [[third], [], []])
            #expect(sets(insertingAgain[2]) == [[third], [], []])
            #expect(idSets(insertingAgain[3]) == [[third.objectID], [], []])

            // The first save's notifications, kept: their sets, and empty sets of the right type.
            #expect(sets(inserting[0]) == [[first, second], [], []])
            #expect(sets(inserting[2]) == [[first, second], [], []])
            #expect(idSets(inserting[3]) == [[first.objectID, second.objectID], [], []])
            #expect(inserting[2].userInfo?[ManagedObjectContext.savedChangesKey] is SavedChanges)
            // The second's: no insert, one update, one delete.
            #expect(sets(changing[0]) == [[], [first], [second]])
            #expect(sets(changing[2]) == [[], [first], [second]])
            #expect(idSets(changing[3]) == [[], [first.objectID], [second.objectID]])
            #expect((changing[3].userInfo?[ManagedObjectContext.savedChangesKey] as? SavedChanges)?.deleted == [second.objectID])
        }
        // A sibling merges the next saves: its objects-did-change notifications (all it posts,
        // saving nothing) name what it refreshed and deleted under every key, each a set.
        let siblingNotes = Recorder(sibling)
        defer { siblingNotes.stop() }
        let firstID = try context.performAndWait {
            let beer = M.insert("Beer", into: context, ["name": "Seen"])
            try context.save()
            return beer.objectID
        }
        let seen = try sibling.performAndWait { try sibling.existingObject(with: firstID) }
        try context.performAndWait {
            context.object(with: firstID).setValue("Seen again", forKey: "name")
            try context.save()
        }
        sibling.performAndWait {}
        let merged = siblingNotes.take()
        #expect(merged.allSatisfy { $0.name == ManagedObjectContext.didChangeObjectsNotification })
        let keys = [ManagedObjectContext.refreshedObjectsKey, ManagedObjectContext.deletedObjectsKey,
                    ManagedObjectContext.insertedObjectsKey, ManagedObjectContext.updatedObjectsKey]
        #expect(merged.last.map { note in keys.map { note.userInfo?[$0] as? Set<ManagedObject> } } == [[seen], [], [], []])
    }
}
