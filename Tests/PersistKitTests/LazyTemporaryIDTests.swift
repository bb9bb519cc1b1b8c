import Foundation
import Testing
@testable import PersistKit

/// A new object makes its temporary ID only when asked for: until then it is registered by
/// its key, and a save gives it its permanent ID without making the temporary one. Asked for,
/// the temporary ID behaves as before: one instance, found in the context, replaced at save.
@Suite("Lazy temporary IDs", .timeLimit(.minutes(1)))
struct LazyTemporaryIDTests {
    typealias M = ContextTestModel

    static func sqliteContext() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let url = try M.temporaryDirectory().appendingPathComponent("lazy.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        return (coordinator, M.context(coordinator))
    }

    @Test func aNewObjectMakesItsIDAtTheFirstAskAndKeepsIt() throws {
        let (_, context) = try Self.sqliteContext()
        try context.performAndWait {
            let first = M.insert("Brewery", into: context, ["name": "Orval"])
            let second = M.insert("Brewery", into: context, ["name": "Rochefort"])
            #expect(!first.hasMadeObjectID)
            #expect(first.hasTemporaryID)
            let id = first.objectID
            #expect(first.hasMadeObjectID)
            #expect(id.isTemporaryID)
            #expect(first.objectID === id)
            // Numbers come from one counter: two new objects never share one.
            #expect(second.objectID != id)
            #expect(second.objectID.primaryKey != id.primaryKey)
            // The ID made late finds the object registered early, by key.
            #expect(context.registeredObject(for: id) === first)
            #expect(context.object(with: id) === first)
            #expect(context.registeredObject(for: second.objectID) === second)
            #expect(id.uriRepresentation().absoluteString.contains("/Brewery/t\(id.primaryKey)"))
            try context.save()
            #expect(!first.objectID.isTemporaryID)
            #expect(context.registeredObject(for: id) == nil)
            #expect(context.registeredObject(for: first.objectID) === first)
        }
    }

    @Test func aSaveGivesPermanentIDsWithoutMakingTemporaryOnes() throws {
        let (coordinator, context) = try Self.sqliteContext()
        let ids = try context.performAndWait {
            let objects = (0..<5).map { M.insert("Brewery", into: context, ["name": "B\($0)"]) }
            try context.save()
            // Each object's first ID is its permanent one: no temporary ID was ever made.
            #expect(objects.allSatisfy { $0.hasMadeObjectID && !$0.objectID.isTemporaryID && !$0.hasTemporaryID })
            #expect(Set(objects.map(\.objectID.primaryKey)) == [1, 2, 3, 4, 5])
            #expect(objects.allSatisfy { context.registeredObject(for: $0.objectID) === $0 })
            #expect(context.registeredObjects.count == 5)
            return objects.map(\.objectID)
        }
        let reader = M.context(coordinator)
        for (index, id) in ids.enumerated() {
            let name = try reader.performAndWait { try reader.existingObject(with: id).value(forKey: "name") as? String }
            #expect(name == "B\(index)")
        }
    }

    @Test func aReferenceMadeBeforeTheSaveIsRemapped() throws {
        let (coordinator, context) = try Self.sqliteContext()
        try context.performAndWait {
            let brewery = M.insert("Brewery", into: context, ["name": "Achel"])
            let beer = M.insert("Beer", into: context, ["name": "Blond"])
            // Setting the relationship asks for the brewery's temporary ID.
            beer.setValue(brewery, forKey: "brewery")
            #expect(brewery.hasMadeObjectID && brewery.objectID.isTemporaryID)
            try context.save()
            #expect(!brewery.objectID.isTemporaryID)
            #expect(beer.primitiveValue(forKey: "brewery") == .object(brewery.objectID))
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let beer = try #require(try reader.fetch(M.request("Beer")).first)
            #expect((beer.value(forKey: "brewery") as? ManagedObject)?.value(forKey: "name") as? String == "Achel")
        }
    }

    @Test func aChildPushesAnObjectWhoseIDWasNeverMadeUnderAnEqualID() throws {
        let (_, parent) = try Self.sqliteContext()
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        try child.performAndWait {
            let object = M.insert("Brewery", into: child, ["name": "Westvleteren"])
            #expect(!object.hasMadeObjectID)
            try child.save()
            let id = object.objectID
            #expect(id.isTemporaryID)
            let pushed = parent.performAndWait { parent.registeredObject(for: id) }
            #expect(pushed?.objectID == id)
            #expect(parent.performAndWait { pushed?.value(forKey: "name") as? String } == "Westvleteren")
        }
        try parent.performAndWait { try parent.save() }
        #expect(parent.performAndWait { parent.registeredObjects.allSatisfy { !$0.objectID.isTemporaryID } })
    }

    @Test func aTemporaryRowMadeWithoutAnIDNamesItsObject() throws {
        let (_, context) = try Self.sqliteContext()
        context.performAndWait {
            let object = M.insert("Brewery", into: context, ["name": "Chimay"])
            let row = object.storeRow(version: 0)
            #expect(row.isTemporaryID)
            #expect(!object.hasMadeObjectID, "making the row made no ID")
            #expect(row.key == object.objectKey)
            #expect(row.objectID == object.objectID)
            #expect(row.objectID.isTemporaryID)
        }
    }

    /// A save whose new objects are of two tables, with one object given its permanent ID
    /// before, hands out keys per table, in order, and none to the object that has one: each
    /// object ends up registered under its own row's key (the store returned keys by position,
    /// not one run).
    @Test func aSaveOfTwoTablesAndAnEarlierPermanentIDGivesEachObjectItsRow() throws {
        let (coordinator, context) = try Self.sqliteContext()
        let ids = try context.performAndWait {
            let first = M.insert("Brewery", into: context, ["name": "Westmalle"])
            let tag = M.insert("Tag", into: context, ["name": "tripel"])
            let early = M.insert("Brewery", into: context, ["name": "Westvleteren"])
            try context.obtainPermanentIDs(for: [early])
            let earlyID = early.objectID
            #expect(!first.hasMadeObjectID && !tag.hasMadeObjectID)
            try context.save()
            // The early object kept its ID; the others were moved to new keys, by key.
            #expect(early.objectID === earlyID)
            #expect(!first.hasTemporaryID && !tag.hasTemporaryID)
            #expect(first.objectKey.primaryKey != earlyID.primaryKey)
            let objects = [first, tag, early]
            #expect(objects.allSatisfy { !$0.objectID.isTemporaryID && $0.objectKey == $0.objectID.key })
            #expect(objects.allSatisfy { context.registeredObject(for: $0.objectID) === $0 })
            #expect(context.registeredObjects.count == 3)
            return objects.map(\.objectID)
        }
        let reader = M.context(coordinator)
        let names = try reader.performAndWait {
            try ids.map { try reader.existingObject(with: $0).value(forKey: "name") as? String }
        }
        #expect(names == ["Westmalle", "tripel", "Westvleteren"])
    }
}
