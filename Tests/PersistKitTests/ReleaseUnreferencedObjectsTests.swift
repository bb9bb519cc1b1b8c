import Foundation
import Testing
@testable import PersistKit

/// `releaseUnreferencedObjects(beyond:)`: a context lets go of the objects nothing holds and
/// that have no changes, keeps the rest (held, inserted, changed, deleted), and reads a let-go
/// object's ID again from the store.
@Suite("Releasing unreferenced objects", .timeLimit(.minutes(1)))
struct ReleaseUnreferencedObjectsTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    @Test(arguments: S.storeTypes)
    func unheldUnchangedObjectsGoAndTheRestStay(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        let seeding = M.context(coordinator)
        try seeding.performAndWait {
            for i in 0..<20 { _ = M.insert("Brewery", into: seeding, ["name": String(format: "Brewery %02d", i)]) }
            try seeding.save()
        }
        let context = M.context(coordinator)
        try context.performAndWait {
            let fetched = try context.fetch(M.request("Brewery", sort: [FetchSortDescriptor(key: "name")]))
            #expect(fetched.count == 20)
            let held = Array(fetched[0..<3])
            let changed = fetched[3]
            changed.setValue("Renamed", forKey: "name")
            let deleted = fetched[4]
            context.delete(deleted)
            let inserted = M.insert("Brewery", into: context, ["name": "New"])
            let releasedID = fetched[10].objectID
            let changedID = changed.objectID, deletedID = deleted.objectID, insertedID = inserted.objectID
            let heldIDs = held.map(\.objectID)
            _ = consume fetched

            // Under the limit nothing goes.
            #expect(context.releaseUnreferencedObjects(beyond: 21) == 0)
            #expect(context.registeredObjects.count == 21)

            // 20 fetched + 1 inserted; kept: 3 held, 1 changed, 1 deleted, 1 inserted.
            #expect(context.releaseUnreferencedObjects() == 15)
            #expect(context.registeredObjects.count == 6)
            for (id, object) in zip(heldIDs, held) { #expect(context.registeredObject(for: id) === object) }
            #expect(context.registeredObject(for: changedID)?.value(forKey: "name") as? String == "Renamed")
            #expect(context.registeredObject(for: deletedID)?.isDeleted == true)
            #expect(context.registeredObject(for: insertedID)?.isInserted == true)
            #expect(context.registeredObject(for: releasedID) == nil)
            #expect(context.registeredObjects.count == 6, "registeredObject(for:) registers nothing")
            #expect(context.hasChanges)

            // A let-go object's ID reads the store again.
            let again = try context.existingObject(with: releasedID)
            #expect(again.value(forKey: "name") as? String == "Brewery 10")
            #expect(!again.hasChanges)

            // The changes survived the release and save as usual.
            try context.save()
            let count = try context.count(for: M.request("Brewery"))
            #expect(count == 20)
        }
    }
}
