import Foundation
import Testing
@testable import PersistKit

@Suite("Parent and child contexts")
struct ContextParentChildTests {
    typealias M = ContextTestModel

    @Test func childSavePushesToParentNotStore() throws {
        let coordinator = try M.coordinator()
        let parent = M.context(coordinator)
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        try child.performAndWait {
            let brewery = M.insert("Brewery", into: child, ["name": "Child brewery"])
            _ = M.insert("Beer", into: child, ["name": "Child beer", "brewery": brewery])
            try child.save()
            #expect(!child.hasChanges)
        }
        #expect(parent.hasChanges)
        #expect(try M.context(coordinator).count(for: M.request("Beer")) == 0)
        let parentBeers = try parent.fetch(M.request("Beer"))
        #expect(M.names(parentBeers) == ["Child beer"])
        #expect((parentBeers[0].value(forKey: "brewery") as? ManagedObject)?.value(forKey: "name") as? String == "Child brewery")
        try parent.save()
        #expect(try M.context(coordinator).count(for: M.request("Beer")) == 1)
    }

    /// A transient value is kept in memory like any other, and saving to a parent is not
    /// saving to a store: the child's transient values reach the parent, for a new object as
    /// for an updated one; the parent's save then writes none of them (docs/core-data-differences.md).
    @Test func childSavePushesTransientValuesOfInsertedAndUpdatedObjects() throws {
        let coordinator = try M.coordinator(type: .sqlite, at: try M.temporaryDirectory().appendingPathComponent("transient.sqlite"))
        let parent = M.context(coordinator)
        let stored = M.insert("Beer", into: parent, ["name": "Stored"])
        try parent.performAndWait { try parent.save() }
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        let newID = try child.performAndWait {
            let fresh = M.insert("Beer", into: child, ["name": "New", "note": "new note"])
            child.object(with: stored.objectID).setValue("updated note", forKey: "note")
            try child.save()
            return fresh.objectID
        }
        try parent.performAndWait {
            let pushed = try #require(try parent.fetch(M.request("Beer", .equal("name", .string("New")))).first)
            #expect(pushed.value(forKey: "note") as? String == "new note")
            #expect(stored.value(forKey: "note") as? String == "updated note")
            #expect(parent.object(with: newID) === pushed)
            try parent.save()
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let beers = try reader.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
            #expect(M.names(beers) == ["New", "Stored"])
            #expect(beers.allSatisfy { $0.value(forKey: "note") == nil })
        }
    }

    @Test func childSeesParentsUnsavedChanges() throws {
        let coordinator = try M.coordinator()
        let parent = M.context(coordinator)
        let beer = M.insert("Beer", into: parent, ["name": "Stored", "abv": 5.0])
        try parent.save()
        beer.setValue(11.0, forKey: "abv")
        _ = M.insert("Beer", into: parent, ["name": "Pending", "abv": 12.0])
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        let strong = M.request("Beer", .comparison(.keyPath("abv"), .greaterThan, .constant(.double(10))),
                               sort: [FetchSortDescriptor(key: "name")])
        #expect(M.names(try child.fetch(strong)) == ["Pending", "Stored"])
        let childBeer = child.object(with: beer.objectID)
        #expect(childBeer.value(forKey: "abv") as? Double == 11.0)
        childBeer.setValue(13.0, forKey: "abv")
        try child.save()
        #expect(beer.value(forKey: "abv") as? Double == 13.0)
    }

    @Test func childDeletePushesToParent() throws {
        let coordinator = try M.coordinator()
        let parent = M.context(coordinator)
        let beer = M.insert("Beer", into: parent, ["name": "Doomed"])
        try parent.save()
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        child.delete(child.object(with: beer.objectID))
        try child.save()
        #expect(beer.isDeleted)
        #expect(parent.deletedObjects == [beer])
        try parent.save()
        #expect(try M.context(coordinator).count(for: M.request("Beer")) == 0)
    }
}
