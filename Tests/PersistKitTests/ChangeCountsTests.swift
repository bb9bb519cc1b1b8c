import Foundation
import Testing
@testable import PersistKit

/// `changeCounts` agrees with the sizes of `insertedObjects`, `updatedObjects` and `deletedObjects`.
@Suite("Change counts", .timeLimit(.minutes(1)))
struct ChangeCountsTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    static func sizes(_ context: ManagedObjectContext) -> [Int] {
        [context.insertedObjects.count, context.updatedObjects.count, context.deletedObjects.count]
    }

    static func counts(_ context: ManagedObjectContext) -> [Int] {
        let counts = context.changeCounts
        return [counts.inserted, counts.updated, counts.deleted]
    }

    @Test func countsMatchTheSetsThroughInsertsUpdatesDeletesAndSaves() throws {
        let context = M.context(try S.coordinator(try S.storePath(), model: PersistentHistoryTests.model()))
        try context.performAndWait {
            #expect(Self.counts(context) == [0, 0, 0])
            let objects = (0..<4).map { M.insert("Counter", into: context, ["name": "c\($0)"]) }
            #expect(Self.counts(context) == [4, 0, 0])
            // An inserted object deleted again is neither inserted nor deleted.
            context.delete(objects[3])
            #expect(Self.counts(context) == [3, 0, 0])
            #expect(Self.counts(context) == Self.sizes(context))
            try context.save()
            #expect(Self.counts(context) == [0, 0, 0])
            objects[0].setValue(Int64(9), forKey: "value")
            objects[1].setValue(Int64(9), forKey: "value")
            context.delete(objects[2])
            #expect(Self.counts(context) == [0, 2, 1])
            #expect(Self.counts(context) == Self.sizes(context))
            // A value set back to the saved one is no update.
            objects[1].setValue(Int64(0), forKey: "value")
            #expect(Self.counts(context) == Self.sizes(context))
            context.rollback()
            #expect(Self.counts(context) == [0, 0, 0])
        }
    }
}
