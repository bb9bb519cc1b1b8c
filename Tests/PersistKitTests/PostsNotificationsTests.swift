import Foundation
import Testing
@testable import PersistKit

/// `ManagedObjectContext.postsNotifications`: on (the default) a context posts Core Data's
/// notifications; off it posts none of them, and everything else a save does still happens
/// (the store has the changes, merging contexts and children get them).
@Suite("Posts notifications setting", .serialized, .timeLimit(.minutes(1)))
struct PostsNotificationsTests {
    typealias M = ContextTestModel
    typealias Recorder = SaveNotificationTests.Recorder

    static func sqliteCoordinator() throws -> PersistentStoreCoordinator {
        try M.coordinator(type: .sqlite, at: try M.temporaryDirectory().appendingPathComponent("posts.sqlite"))
    }

    /// Two contexts of one SQLite store that post nothing: a writer, and a viewer that merges
    /// the writer's saves automatically.
    static func quietWriterAndViewer() throws -> (writer: ManagedObjectContext, viewer: ManagedObjectContext) {
        let coordinator = try sqliteCoordinator()
        let writer = M.context(coordinator)
        writer.postsNotifications = false
        let viewer = M.context(coordinator)
        viewer.automaticallyMergesChangesFromParent = true
        viewer.postsNotifications = false
        return (writer, viewer)
    }

    @Test func isOnByDefaultAndPostsEveryNotification() throws {
        let context = M.context(try Self.sqliteCoordinator())
        #expect(context.postsNotifications)
        let recorder = Recorder(context)
        defer { recorder.stop() }
        try context.performAndWait {
            let beer = M.insert("Beer", into: context, ["name": "On"])
            try context.save()
            #expect(recorder.take().map(\.name) == [ManagedObjectContext.didChangeObjectsNotification, ManagedObjectContext.willSaveObjectsNotification,
                                                    ManagedObjectContext.didSaveObjectsNotification, ManagedObjectContext.didSaveObjectIDsNotification])
            beer.setValue("On again", forKey: "name")
            context.processPendingChanges()
            #expect(recorder.take().map(\.name) == [ManagedObjectContext.didChangeObjectsNotification])
        }
    }

    @Test func offPostsNothingAndStillSavesInsertsUpdatesAndDeletes() throws {
        let coordinator = try Self.sqliteCoordinator()
        let context = M.context(coordinator)
        context.postsNotifications = false
        #expect(!context.postsNotifications)
        let recorder = Recorder(context)
        defer { recorder.stop() }
        let reader = M.context(coordinator)
        try context.performAndWait {
            let kept = M.insert("Beer", into: context, ["name": "Kept"])
            let gone = M.insert("Beer", into: context, ["name": "Gone"])
            context.processPendingChanges()
            try context.save()
            #expect(!kept.objectID.isTemporaryID && !gone.objectID.isTemporaryID)
            kept.setValue("Kept, renamed", forKey: "name")
            context.delete(gone)
            try context.save()
            #expect(!context.hasChanges)
            // Rolled-back and discarded changes post nothing either.
            _ = M.insert("Beer", into: context, ["name": "Rolled back"])
            context.processPendingChanges()
            context.rollback()
        }
        #expect(recorder.take().isEmpty)
        let names = try reader.performAndWait { M.names(try reader.fetch(M.request("Beer"))) }
        #expect(names == ["Kept, renamed"])
    }

    @Test func offStillMergesIntoMergingContextsAndPostsNothingThere() throws {
        let (writer, viewer) = try Self.quietWriterAndViewer()
        let (id, deletedID) = try writer.performAndWait {
            let beer = M.insert("Beer", into: writer, ["name": "First"])
            let other = M.insert("Beer", into: writer, ["name": "Other"])
            try writer.save()
            return (beer.objectID, other.objectID)
        }
        let (seen, seenDeleted) = try viewer.performAndWait { (try viewer.existingObject(with: id), try viewer.existingObject(with: deletedID)) }
        #expect(viewer.performAndWait { seen.value(forKey: "name") as? String } == "First")
        let writerNotes = Recorder(writer)
        let viewerNotes = Recorder(viewer)
        defer { writerNotes.stop(); viewerNotes.stop() }
        try writer.performAndWait {
            let beer = try writer.existingObject(with: id)
            beer.setValue("Second", forKey: "name")
            writer.delete(try writer.existingObject(with: deletedID))
            try writer.save()
        }
        // The merge was queued on the viewer's queue by the save: it has run once this block runs.
        viewer.performAndWait {
            #expect(seen.value(forKey: "name") as? String == "Second")
            #expect(seenDeleted.isDeleted || seenDeleted.managedObjectContext == nil)
        }
        #expect(writerNotes.take().isEmpty)
        #expect(viewerNotes.take().isEmpty)
    }

    @Test func insertsPointingAtHeldObjectsStillReachAQuietMergingContext() throws {
        // A quiet context is not woken for saves of inserts alone; an insert that changes an
        // object it holds (the inverse to-many of the new object's to-one) still reaches it.
        let (writer, viewer) = try Self.quietWriterAndViewer()
        let breweryID = try writer.performAndWait {
            let brewery = M.insert("Brewery", into: writer, ["name": "North"])
            try writer.save()
            return brewery.objectID
        }
        let held = try viewer.performAndWait {
            let brewery = try viewer.existingObject(with: breweryID)
            #expect((brewery.value(forKey: "beers") as? Set<ManagedObject>)?.isEmpty == true)
            return brewery
        }
        try writer.performAndWait {
            _ = M.insert("Beer", into: writer, ["name": "Alone"])
            try writer.save()
            let beer = M.insert("Beer", into: writer, ["name": "Brewed"])
            beer.setValue(try writer.existingObject(with: breweryID), forKey: "brewery")
            try writer.save()
        }
        let (names, all) = try viewer.performAndWait {
            (M.names(held.value(forKey: "beers")), M.names(try viewer.fetch(M.request("Beer"))).sorted())
        }
        #expect(names == ["Brewed"])
        #expect(all == ["Alone", "Brewed"])
    }

    @Test func offInAChildStillPushesToItsParentAndTheParentStillPosts() throws {
        let parent = M.context(try Self.sqliteCoordinator())
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        child.postsNotifications = false
        let childNotes = Recorder(child)
        let parentNotes = Recorder(parent)
        defer { childNotes.stop(); parentNotes.stop() }
        try child.performAndWait {
            _ = M.insert("Beer", into: child, ["name": "Pushed"])
            try child.save()
        }
        #expect(childNotes.take().isEmpty)
        try parent.performAndWait {
            #expect(parent.insertedObjects.count == 1)
            try parent.save()
        }
        let names = parentNotes.take().map(\.name)
        #expect(names.contains(ManagedObjectContext.didSaveObjectsNotification))
        #expect(names.contains(ManagedObjectContext.didSaveObjectIDsNotification))
    }

    @Test func turnedBackOnPostsAgain() throws {
        let context = M.context(try Self.sqliteCoordinator())
        context.postsNotifications = false
        let recorder = Recorder(context)
        defer { recorder.stop() }
        try context.performAndWait {
            _ = M.insert("Beer", into: context, ["name": "Quiet"])
            try context.save()
            #expect(recorder.take().isEmpty)
            context.postsNotifications = true
            let loud = M.insert("Beer", into: context, ["name": "Loud"])
            try context.save()
            let notes = recorder.take()
            #expect(notes.map(\.name) == [ManagedObjectContext.didChangeObjectsNotification, ManagedObjectContext.willSaveObjectsNotification,
                                          ManagedObjectContext.didSaveObjectsNotification, ManagedObjectContext.didSaveObjectIDsNotification])
            #expect(notes.count == 4 && SaveNotificationTests.objects(notes[2], ManagedObjectContext.insertedObjectsKey) == [loud])
        }
    }
}
