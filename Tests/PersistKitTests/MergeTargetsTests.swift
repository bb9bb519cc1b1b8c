import Foundation
import Testing
@testable import PersistKit

/// A save merges into exactly the root contexts that merge automatically at the time of the
/// save, although the coordinator keeps that list between saves.
@Suite("Contexts a save merges into", .timeLimit(.minutes(1)))
struct MergeTargetsTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    /// The value `context` holds for `id` now, once the merges queued on it have run.
    static func value(of id: ManagedObjectID, in context: ManagedObjectContext) throws -> Int64? {
        try context.performAndWait { try context.existingObject(with: id).value(forKey: "value") as? Int64 }
    }

    @Test func turningMergingOnAndOffAndNewContextsAreSeenAtTheNextSave() throws {
        let coordinator = try S.coordinator(try S.storePath(), model: PersistentHistoryTests.model())
        let saver = M.context(coordinator)
        let counter = M.insert("Counter", into: saver, ["name": "c", "value": Int64(1)])
        try saver.save()
        let id = counter.objectID
        func save(_ value: Int64) throws {
            try saver.performAndWait {
                counter.setValue(value, forKey: "value")
                try saver.save()
            }
        }

        let first = M.context(coordinator)
        #expect(try Self.value(of: id, in: first) == 1)
        try save(2)
        // Not merging: the registered object keeps what it read.
        #expect(try Self.value(of: id, in: first) == 1)

        first.automaticallyMergesChangesFromParent = true
        try save(3)
        #expect(try Self.value(of: id, in: first) == 3)

        // A context made after the list was made, merging from the start.
        let second = M.context(coordinator)
        second.automaticallyMergesChangesFromParent = true
        #expect(try Self.value(of: id, in: second) == 3)
        try save(4)
        #expect(try Self.value(of: id, in: first) == 4)
        #expect(try Self.value(of: id, in: second) == 4)

        first.automaticallyMergesChangesFromParent = false
        try save(5)
        #expect(try Self.value(of: id, in: first) == 4)
        #expect(try Self.value(of: id, in: second) == 5)

        // A context that becomes a child no longer takes sibling saves from the coordinator.
        let child = M.context(coordinator)
        child.automaticallyMergesChangesFromParent = true
        #expect(try Self.value(of: id, in: child) == 5)
        child.parent = first
        try save(6)
        #expect(try Self.value(of: id, in: child) == 5)
        #expect(try Self.value(of: id, in: second) == 6)
    }

    /// Many contexts on one coordinator, a few of them merging: each save reaches just those.
    @Test func onlyMergingContextsOfManyReceiveSaves() throws {
        let coordinator = try S.coordinator(try S.storePath(), model: PersistentHistoryTests.model())
        let saver = M.context(coordinator)
        let counter = M.insert("Counter", into: saver, ["name": "c", "value": Int64(0)])
        try saver.save()
        let contexts = (0..<40).map { _ in M.context(coordinator) }
        for (index, context) in contexts.enumerated() {
            context.automaticallyMergesChangesFromParent = index % 10 == 0
            _ = try Self.value(of: counter.objectID, in: context)
        }
        try saver.performAndWait {
            counter.setValue(Int64(7), forKey: "value")
            try saver.save()
        }
        let values = try contexts.map { try Self.value(of: counter.objectID, in: $0) }
        #expect(values == contexts.indices.map { $0 % 10 == 0 ? 7 : 0 })
    }
}
