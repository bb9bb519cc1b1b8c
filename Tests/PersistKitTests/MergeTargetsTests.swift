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

    /// A new child of `parent`, merging its saves when `merges` (turned on before the parent
    /// is set when `mergingSetFirst`, after it otherwise).
    static func child(of parent: ManagedObjectContext, merges: Bool, mergingSetFirst: Bool = false) -> ManagedObjectContext {
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        if merges && mergingSetFirst { child.automaticallyMergesChangesFromParent = true }
        child.parent = parent
        if merges && !mergingSetFirst { child.automaticallyMergesChangesFromParent = true }
        return child
    }

    /// Only contexts that take merges are registered (weakly) where saves come from; the others
    /// are referenced weakly nowhere (see `ManagedObjectContext.registerForMerges()`).
    @Test func onlyContextsTakingMergesAreRegistered() throws {
        let coordinator = try M.coordinator()
        let plain = M.context(coordinator)
        let merging = M.context(coordinator)
        merging.automaticallyMergesChangesFromParent = true
        let remote = M.context(coordinator)
        remote.receivesRemoteChanges = true
        // Merging turned on before the coordinator is set.
        let early = ManagedObjectContext(concurrencyType: .privateQueue)
        early.automaticallyMergesChangesFromParent = true
        early.persistentStoreCoordinator = coordinator
        let child = Self.child(of: merging, merges: false)
        let mergingChild = Self.child(of: merging, merges: true, mergingSetFirst: true)

        let registered = Set(coordinator.registeredContexts().map(ObjectIdentifier.init))
        #expect(registered == Set([merging, remote, early].map(ObjectIdentifier.init)))
        #expect(merging.children.map(ObjectIdentifier.init) == [ObjectIdentifier(mergingChild)])
        child.automaticallyMergesChangesFromParent = true
        #expect(Set(merging.children.map(ObjectIdentifier.init)) == Set([child, mergingChild].map(ObjectIdentifier.init)))
        plain.automaticallyMergesChangesFromParent = true
        plain.automaticallyMergesChangesFromParent = true
        #expect(coordinator.registeredContexts().filter { $0 === plain }.count == 1)
    }

    /// A child merges its parent's saves whether it turned merging on before or after it got
    /// its parent.
    @Test func childMergesWhicheverSettingCameFirst() throws {
        let coordinator = try M.coordinator()
        let parent = M.context(coordinator)
        let beer = M.insert("Beer", into: parent, ["name": "a"])
        try parent.performAndWait { try parent.save() }
        let before = Self.child(of: parent, merges: true, mergingSetFirst: true)
        let after = Self.child(of: parent, merges: true)
        let never = Self.child(of: parent, merges: false)
        func name(in context: ManagedObjectContext) throws -> String? {
            try context.performAndWait { try context.existingObject(with: beer.objectID).value(forKey: "name") as? String }
        }
        for context in [before, after, never] { #expect(try name(in: context) == "a") }
        try parent.performAndWait {
            beer.setValue("b", forKey: "name")
            try parent.save()
        }
        #expect(try name(in: before) == "b")
        #expect(try name(in: after) == "b")
        #expect(try name(in: never) == "a")
    }
}
