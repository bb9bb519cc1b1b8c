import Foundation
import Testing
@testable import PersistKit

/// A context's list of inserted objects keeps count of those a change notification reported
/// (the objects past the count are the ones `processPendingChanges()` reports next) through
/// every way the list changes; and a save makes a new object's values its committed state
/// without copying them, which later changes, a rollback and the next save all see right.
@Suite("Inserted objects and their committed values")
struct InsertedObjectsTests {
    typealias M = ContextTestModel

    /// The unprocessed objects of `list`, as positions in `all`.
    static func unprocessed(_ list: InsertedObjects, in all: [ManagedObject]) -> [Int] {
        var positions: [Int] = []
        list.forEachUnprocessed { object in positions.append(all.firstIndex { $0 === object } ?? -1) }
        #expect(positions.count == list.unprocessedCount)
        return positions
    }

    @Test func theProcessedCountFollowsEveryChangeOfTheList() {
        let all = M.unregisteredObjects(8)
        var list = InsertedObjects()
        #expect(list.isProcessed)
        for object in all[0..<3] { list.append(object) }
        #expect(Self.unprocessed(list, in: all) == [0, 1, 2])
        list.markProcessed()
        #expect(list.isProcessed && list.processedCount == 3)
        list.append(all[3])
        list.append(all[4])
        #expect(Self.unprocessed(list, in: all) == [3, 4])
        // Objects given back by a failed queued save go in front and were processed already.
        list.insert([all[5], all[6]], at: 0)
        #expect(list.processedCount == 5)
        #expect(Self.unprocessed(list, in: all) == [3, 4])
        // Removing a processed object moves the count; removing an unprocessed one does not.
        let removedProcessed = list.remove(all[1])
        #expect(removedProcessed && list.processedCount == 4)
        let removedUnprocessed = list.remove(all[4])
        #expect(removedUnprocessed && list.processedCount == 4)
        #expect(Self.unprocessed(list, in: all) == [3])
        let removedUnlisted = list.remove(all[7])
        #expect(!removedUnlisted)
        // A filtered removal counts the processed objects it removed.
        list.append(all[7])
        list.removeAll { $0 === all[5] || $0 === all[2] || $0 === all[7] }
        #expect(list.objects.map { object in all.firstIndex { $0 === object } ?? -1 } == [6, 0, 3])
        #expect(list.processedCount == 2)
        #expect(Self.unprocessed(list, in: all) == [3])
        list.removeAll()
        #expect(list.isEmpty && list.isProcessed && list.processedCount == 0)
    }

    @Test func onlyObjectsInsertedSinceTheLastProcessingAreReported() throws {
        let context = M.context(try M.coordinator())
        let recorder = SaveNotificationTests.Recorder(context)
        defer { recorder.stop() }
        try context.performAndWait {
            let first = M.insert("Brewery", into: context, ["name": "First"])
            let second = M.insert("Brewery", into: context, ["name": "Second"])
            context.processPendingChanges()
            let firstNotes = recorder.take()
            #expect(firstNotes.count == 1)
            #expect(firstNotes.first.map { SaveNotificationTests.objects($0, ManagedObjectContext.insertedObjectsKey) } == [first, second])
            let third = M.insert("Brewery", into: context, ["name": "Third"])
            context.processPendingChanges()
            #expect(recorder.take().first.map { SaveNotificationTests.objects($0, ManagedObjectContext.insertedObjectsKey) } == [third])
            // Inserted, then rolled back before any processing: nothing is left to report.
            _ = M.insert("Brewery", into: context, ["name": "Gone"])
            context.rollback()
            context.processPendingChanges()
            #expect(recorder.take().isEmpty)
            // After a save, only what is inserted after it is reported.
            let fourth = M.insert("Brewery", into: context, ["name": "Fourth"])
            try context.save()
            _ = recorder.take()
            context.processPendingChanges()
            #expect(recorder.take().isEmpty, "the save reported and saved it")
            let fifth = M.insert("Brewery", into: context, ["name": "Fifth"])
            context.processPendingChanges()
            #expect(recorder.take().first.map { SaveNotificationTests.objects($0, ManagedObjectContext.insertedObjectsKey) } == [fifth])
            #expect(fourth.objectID.isTemporaryID == false)
        }
    }

    @Test func aSavedNewObjectsValuesAreItsCommittedStateAndStayApartFromLaterChanges() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("committed.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            // Brewery has no transient attribute: its values become the committed ones as they are.
            let brewery = M.insert("Brewery", into: context, ["name": "Old", "city": "Ghent"])
            // Beer has one (`note`): its committed values leave it out, the object keeps it.
            let beer = M.insert("Beer", into: context, ["name": "Ale", "note": "kept in memory"])
            try context.save()
            #expect(!brewery.hasChanges && !beer.hasChanges)
            #expect(brewery.committedValues(forKeys: ["name", "city"]) as? [String: String] == ["name": "Old", "city": "Ghent"])
            #expect(beer.value(forKey: "note") as? String == "kept in memory")
            #expect(beer.committedValues(forKeys: nil)["note"] == nil, "transient values are not committed")

            brewery.setValue("New", forKey: "name")
            #expect(brewery.hasChanges)
            #expect(brewery.changedValues() as? [String: String] == ["name": "New"])
            #expect(brewery.committedValues(forKeys: ["name"]) as? [String: String] == ["name": "Old"])
            // Setting the saved value back is no change.
            brewery.setValue("Old", forKey: "name")
            #expect(!brewery.hasChanges)
            brewery.setValue("Newer", forKey: "name")
            context.rollback()
            #expect(brewery.value(forKey: "name") as? String == "Old")
            #expect(!context.hasChanges)

            brewery.setValue("Saved again", forKey: "name")
            try context.save()
            #expect(brewery.committedValues(forKeys: ["name"]) as? [String: String] == ["name": "Saved again"])
        }
        let reader = M.context(try M.coordinator(type: .sqlite, at: url))
        try reader.performAndWait {
            let names = M.names(try reader.fetch(M.request("Brewery")))
            #expect(names == ["Saved again"])
        }
    }
}
