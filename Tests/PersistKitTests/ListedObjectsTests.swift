import Foundation
import Testing
@testable import PersistKit

/// A context's lists of changed and deleted objects, whose objects record their own place in
/// them: adding, removing (the last object moving into the hole), emptying without visiting
/// the objects, and the places left behind by an emptied or replaced list, which must not
/// count as listed.
@Suite("Listed objects: a context's changed and deleted objects")
struct ListedObjectsTests {
    typealias M = ContextTestModel

    /// The listed objects, as positions in `all`.
    static func positions(_ list: ListedObjects, in all: [ManagedObject]) -> [Int] {
        list.objects.map { object in all.firstIndex { $0 === object } ?? -1 }
    }

    @Test func addingRemovingAndEmptyingKeepEachObjectOnceAndItsPlaceRight() {
        let all = M.unregisteredObjects(6)
        var list = ListedObjects(.changed)
        for object in all[0..<4] {
            let added = list.add(object)
            #expect(added)
        }
        let again = list.add(all[1])
        #expect(!again, "an object is listed once")
        #expect(Self.positions(list, in: all) == [0, 1, 2, 3])
        // The last object moves into the removed one's place, and still knows where it is.
        let removed = list.remove(all[1])
        #expect(removed)
        #expect(Self.positions(list, in: all) == [0, 3, 2])
        #expect(list.contains(all[3]) && !list.contains(all[1]))
        let removedMoved = list.remove(all[3])
        #expect(removedMoved)
        #expect(Self.positions(list, in: all) == [0, 2])
        let removedUnlisted = list.remove(all[4])
        #expect(!removedUnlisted)
        // Emptied without visiting the objects: their recorded places hold them no more.
        list.removeAll()
        #expect(list.isEmpty)
        for object in all { #expect(!list.contains(object)) }
        // Refilled, in another order: a place recorded by the emptied list is not taken for a
        // listing (all[2] recorded place 1, which now holds all[5]).
        for object in [all[5], all[5], all[4], all[2]] { list.add(object) }
        #expect(Self.positions(list, in: all) == [5, 4, 2])
        #expect(!list.contains(all[0]) && list.contains(all[2]))
        // A replaced list does not see the old one's places either.
        list = ListedObjects(.changed)
        let readded = list.add(all[2])
        #expect(readded && list.count == 1)
    }

    @Test func aContextListsChangedObjectsOnceAndForgetsThemWhenSavedRefreshedOrDeletedElsewhere() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("changed.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        let other = M.context(coordinator)
        context.automaticallyMergesChangesFromParent = true
        try context.performAndWait {
            let breweries = (0..<5).map { M.insert("Brewery", into: context, ["name": "B\($0)"]) }
            try context.save()
            for brewery in breweries { brewery.setValue("Changed", forKey: "city") }
            breweries[0].setValue("Twice", forKey: "city")
            #expect(context.updatedObjects == Set(breweries))
            #expect(context.changedList.count == 5)
            // A refresh without merging drops the object's changes and its listing.
            context.refresh(breweries[1], mergeChanges: false)
            #expect(context.updatedObjects == Set(breweries).subtracting([breweries[1]]))
            // A change set back to the saved value leaves the object listed but not updated.
            breweries[2].setValue(nil, forKey: "city")
            #expect(!context.updatedObjects.contains(breweries[2]))
            try context.save()
            #expect(context.updatedObjects.isEmpty && context.changedList.isEmpty)
            // Changed again after the save: listed again.
            breweries[3].setValue("Again", forKey: "city")
            #expect(context.updatedObjects == [breweries[3]])
        }
        // Deleted by another context and merged: the changed object leaves the list.
        let deletedID = try context.performAndWait { try #require(context.updatedObjects.first).objectID }
        try other.performAndWait {
            other.delete(other.object(with: deletedID))
            try other.save()
        }
        // The merge is queued on the context's queue behind this block: wait for it there.
        context.performAndWait {}
        context.performAndWait {
            let deleted = context.changedList.objects.contains { $0.objectID == deletedID }
            #expect(!deleted)
            #expect(context.updatedObjects.isEmpty)
        }
    }

    @Test func aContextListsDeletedObjectsOnceAndForgetsThemWhenSavedOrRolledBack() throws {
        let context = M.context(try M.coordinator())
        try context.performAndWait {
            let people = (0..<6).map { M.insert("Person", into: context, ["name": "P\($0)"]) }
            try context.save()
            for person in people[0..<3] { context.delete(person) }
            context.delete(people[1])
            #expect(context.deletedObjects == Set(people[0..<3]))
            #expect(context.deletedList.count == 3, "an object deleted twice is listed once")
            // A person changed and then deleted is on both lists, and the save writes it as deleted.
            people[3].setValue("Changed", forKey: "name")
            context.delete(people[3])
            #expect(context.deletedObjects == Set(people[0..<4]))
            context.rollback()
            #expect(context.deletedObjects.isEmpty && context.deletedList.isEmpty && context.changedList.isEmpty)
            #expect(people[3].value(forKey: "name") as? String == "P3")
            context.delete(people[4])
            try context.save()
            #expect(context.deletedObjects.isEmpty && context.deletedList.isEmpty)
            #expect(try context.count(for: M.request("Person")) == 5)
            // Deleted again after the save: listed again.
            context.delete(people[5])
            #expect(context.deletedObjects == [people[5]])
        }
    }

    /// The unprocessed objects of `list`, as positions in `all`.
    static func unprocessed(_ list: ListedObjects, in all: [ManagedObject]) -> Set<Int> {
        var positions: Set<Int> = []
        list.forEachUnprocessed { object in positions.insert(all.firstIndex { $0 === object } ?? -1) }
        return positions
    }

    @Test func removalsKeepTheProcessedObjectsInFront() {
        let all = M.unregisteredObjects(8)
        var list = ListedObjects(.changed)
        for object in all[0..<4] { list.add(object) }
        list.markProcessed()
        for object in all[4..<7] { list.add(object) }
        #expect(Self.unprocessed(list, in: all) == [4, 5, 6])
        // A processed object's removal: the last processed one takes its place, the last
        // object takes that one's; the unprocessed ones stay unprocessed, the others processed.
        let removedProcessed = list.remove(all[1])
        #expect(removedProcessed && list.processedCount == 3)
        #expect(Self.unprocessed(list, in: all) == [4, 5, 6])
        #expect(Set(list.objects.prefix(3).map { object in all.firstIndex { $0 === object } ?? -1 }) == [0, 2, 3])
        for object in all[0..<7] where object !== all[1] { #expect(list.contains(object)) }
        // The last processed object itself, with unprocessed ones after it.
        let removedBoundary = list.remove(all[3])
        #expect(removedBoundary && list.processedCount == 2)
        #expect(Self.unprocessed(list, in: all) == [4, 5, 6])
        // An unprocessed one.
        let removedUnprocessed = list.remove(all[5])
        #expect(removedUnprocessed && list.processedCount == 2)
        #expect(Self.unprocessed(list, in: all) == [4, 6])
        // Every processed one, with none unprocessed after them.
        list.markProcessed()
        for object in [all[0], all[4], all[2], all[6]] {
            let removed = list.remove(object)
            #expect(removed)
        }
        #expect(list.isEmpty && list.processedCount == 0 && list.isProcessed)
        list.add(all[7])
        #expect(Self.unprocessed(list, in: all) == [7])
        list.removeAll()
        #expect(list.processedCount == 0 && list.isProcessed)
    }

    @Test func aContextReportsTheObjectsChangedOrDeletedSinceItLastProcessedItsChanges() throws {
        let context = M.context(try M.coordinator())
        let recorder = SaveNotificationTests.Recorder(context)
        defer { recorder.stop() }
        try context.performAndWait {
            let people = (0..<6).map { M.insert("Person", into: context, ["name": "P\($0)"]) }
            try context.save()
            _ = recorder.take()
            func reported(_ key: String) -> Set<ManagedObject> {
                context.processPendingChanges()
                let notes = recorder.take()
                return notes.first.map { SaveNotificationTests.objects($0, key) } ?? []
            }
            people[0].setValue("A", forKey: "name")
            people[1].setValue("B", forKey: "name")
            #expect(reported(ManagedObjectContext.updatedObjectsKey) == [people[0], people[1]])
            people[0].setValue("A again", forKey: "name")
            people[2].setValue("C", forKey: "name")
            #expect(reported(ManagedObjectContext.updatedObjectsKey) == [people[2]], "a listed object is reported once")
            // A refreshed object leaves the list: changed again, it is reported again.
            context.refresh(people[1], mergeChanges: false)
            people[3].setValue("D", forKey: "name")
            #expect(reported(ManagedObjectContext.updatedObjectsKey) == [people[3]])
            people[1].setValue("B again", forKey: "name")
            #expect(reported(ManagedObjectContext.updatedObjectsKey) == [people[1]])
            context.delete(people[4])
            #expect(reported(ManagedObjectContext.deletedObjectsKey) == [people[4]])
            context.delete(people[5])
            #expect(reported(ManagedObjectContext.deletedObjectsKey) == [people[5]])
            try context.save()
            #expect(context.changedList.isProcessed && context.deletedList.isProcessed)
        }
    }
}
