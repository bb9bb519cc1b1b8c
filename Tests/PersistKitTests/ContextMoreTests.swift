import Foundation
import Testing
@testable import PersistKit

@Suite("Context counts, merges and IDs")
struct ContextMoreTests {
    typealias M = ContextTestModel

    static func countedModel() -> ManagedObjectModel {
        let team = RelationshipDescription(name: "members", destination: "Member", toMany: true, inverse: "team", deleteRule: .noAction)
        team.minCount = 2
        team.maxCount = 3
        let members = RelationshipDescription(name: "team", destination: "Team", inverse: "members")
        let list = RelationshipDescription(name: "entries", destination: "Member", toMany: true, isOrdered: true)
        return ManagedObjectModel(entities: [
            EntityDescription(name: "Team", properties: [AttributeDescription(name: "name", type: .string), team, list]),
            EntityDescription(name: "Member", properties: [AttributeDescription(name: "name", type: .string), members]),
        ])
    }

    @Test func relationshipCountsAreValidated() throws {
        let coordinator = try M.coordinator(model: Self.countedModel())
        let context = M.context(coordinator)
        let team = M.insert("Team", into: context, ["name": "t"])
        let members = (0..<4).map { M.insert("Member", into: context, ["name": "m\($0)"]) }
        team.addObject(members[0], forKey: "members")
        let tooFew = #expect(throws: PersistenceError.self) { try context.save() }
        #expect(tooFew?.code == .validationRelationshipLacksMinimumCount)
        #expect(tooFew?.message == "Team.members has 1 objects, fewer than the minimum 2")
        for member in members.dropFirst() { team.addObject(member, forKey: "members") }
        let tooMany = #expect(throws: PersistenceError.self) { try context.save() }
        #expect(tooMany?.code == .validationRelationshipExceedsMaximumCount)
        team.removeObject(members[3], forKey: "members")
        try context.save()
    }

    @Test func noActionLeavesDestinationsPointingAtDeletedObject() throws {
        let coordinator = try M.coordinator(model: Self.countedModel())
        let context = M.context(coordinator)
        let team = M.insert("Team", into: context, ["name": "t"])
        let a = M.insert("Member", into: context, ["name": "a"])
        let b = M.insert("Member", into: context, ["name": "b"])
        team.setValue(Set([a, b]), forKey: "members")
        try context.save()
        context.delete(team)
        try context.save()
        #expect(!a.isDeleted)
        #expect(a.primitiveValue(forKey: "team") == .object(team.objectID), "no action: the reference is left as it was")
    }

    @Test func orderedInsertAtIndex() throws {
        let context = M.context(try M.coordinator(model: Self.countedModel()))
        let team = M.insert("Team", into: context, ["name": "t"])
        let a = M.insert("Member", into: context, ["name": "a"])
        let b = M.insert("Member", into: context, ["name": "b"])
        let c = M.insert("Member", into: context, ["name": "c"])
        team.addObject(a, forKey: "entries")
        team.addObject(c, forKey: "entries")
        team.insertObject(b, at: 1, forKey: "entries")
        #expect((team.value(forKey: "entries") as? [ManagedObject])?.map { $0.value(forKey: "name") as? String } == ["a", "b", "c"])
    }

    @Test func mergeChangesFromContextDidSave() throws {
        let coordinator = try M.coordinator()
        let writer = M.context(coordinator)
        let reader = M.context(coordinator)
        let beer = M.insert("Beer", into: writer, ["name": "Before", "abv": 5.0])
        let doomed = M.insert("Beer", into: writer, ["name": "Doomed"])
        try writer.save()
        let readerBeer = try reader.existingObject(with: beer.objectID)
        let readerDoomed = try reader.existingObject(with: doomed.objectID)
        nonisolated(unsafe) var saved: Notification?
        let observer = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.didSaveObjectsNotification, object: writer, queue: nil) { saved = $0 }
        defer { NotificationCenter.default.removeObserver(observer) }
        beer.setValue("After", forKey: "name")
        writer.delete(doomed)
        try writer.save()
        #expect(readerBeer.value(forKey: "name") as? String == "Before", "no merge without asking")
        reader.mergeChanges(fromContextDidSave: try #require(saved))
        #expect(readerBeer.value(forKey: "name") as? String == "After")
        #expect(readerDoomed.isDeleted)
        #expect(readerDoomed.managedObjectContext == nil)
    }

    /// A merged deletion marks the object deleted without making it a deletion of this context
    /// (which would delete the row again at the next save): an inserted object it names is
    /// then neither saved nor counted, as every reader of the inserted list skips deleted ones.
    @Test func aMergedDeletionOfAnInsertedObjectKeepsItOutOfTheSaveAndTheCounts() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("merge.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        let doomed = M.insert("Beer", into: context, ["name": "Doomed"])
        let kept = M.insert("Beer", into: context, ["name": "Kept"])
        try context.obtainPermanentIDs(for: [doomed])
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [ManagedObjectContext.deletedObjectIDsKey: [doomed.objectID]],
                                          into: [context])
        #expect(doomed.isDeleted)
        #expect(doomed.managedObjectContext == nil)
        #expect(context.insertedObjects == [kept])
        #expect(context.deletedObjects.isEmpty, "not a deletion of this context")
        #expect(context.hasChanges)

        nonisolated(unsafe) var savedInserted: Set<ManagedObject>?
        let observer = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.didSaveObjectsNotification, object: context, queue: nil) {
            savedInserted = $0.userInfo?[ManagedObjectContext.insertedObjectsKey] as? Set<ManagedObject>
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        #expect(savedInserted == [kept])
        #expect(!context.hasChanges)
        let reader = M.context(coordinator)
        #expect(try M.names(reader.fetch(M.request("Beer"))) == ["Kept"])

        // The same when the merge deletes the only inserted object: nothing left to save.
        let alone = M.insert("Beer", into: context, ["name": "Alone"])
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: [ManagedObjectContext.deletedObjectIDsKey: [alone.objectID]],
                                          into: [context])
        #expect(!context.hasChanges)
        #expect(context.insertedObjects.isEmpty)
        try context.save()
        #expect(try M.names(reader.fetch(M.request("Beer"))) == ["Kept"])
    }

    @Test func obtainPermanentIDsBeforeSave() throws {
        let context = M.context(try M.coordinator())
        let beer = M.insert("Beer", into: context, ["name": "Early"])
        #expect(beer.objectID.isTemporaryID)
        try context.obtainPermanentIDs(for: [beer])
        let permanent = beer.objectID
        #expect(!permanent.isTemporaryID)
        #expect(context.object(with: permanent) === beer)
        try context.save()
        #expect(beer.objectID == permanent)
    }
}
