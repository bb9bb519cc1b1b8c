import Foundation
import Testing
@testable import PersistKit

/// Overlapping queued saves (`ManagedObjectContext.saveQueued(overlapping:)`): a save of new
/// plain objects takes them out of the change sets when its write is queued, so that the
/// context inserts and saves more while it waits; the writes commit in order, a failed one
/// puts its objects back in front of those inserted since, and a save that could be touched
/// by later changes does not overlap. `make test` also runs this suite under the thread
/// sanitizer (its name has "Concurrency").
@Suite("Concurrency of overlapping queued saves", .timeLimit(.minutes(1)))
struct OverlappingSaveConcurrencyTests {
    typealias G = GroupCommitConcurrencyTests
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    /// The outcomes of queued saves, in the order their completions ran.
    final class Outcomes: @unchecked Sendable {
        // @unchecked Sendable: `list` is read and written under `lock`.
        private let lock = NSLock()
        private var list: [(name: String, error: String?, onQueue: Bool)] = []
        let done = DispatchGroup()

        /// A completion for the save called `name`; the group is entered now.
        func completion(_ name: String, _ context: ManagedObjectContext) -> ((any Error)?) -> Void {
            done.enter()
            return { [self] error in
                lock.withLock { list.append((name, error.map { "\($0)" }, context.isOnQueue)) }
                done.leave()
            }
        }
        var snapshot: [(name: String, error: String?, onQueue: Bool)] { lock.withLock { list } }
    }

    /// Two overlapping saves queued behind a held group: each returns at once with the context
    /// free and clean, the context inserts more meanwhile, and on release both commit in the
    /// order queued, in one group; every object then has its permanent ID, the context keeps
    /// only what was inserted after the second save, and another connection reads both saves.
    @Test func twoOverlappingSavesCommitInOrderWhileTheContextGoesOn() throws {
        let path = try S.storePath()
        let model = G.model()
        let coordinator = try S.coordinator(path, model: model)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        let outcomes = Outcomes()

        let hold = CommitQueueHold(store)
        #expect(hold.isLeading)
        let before = store.commitQueue.snapshot
        let (first, second, later, freed) = context.performAndWait {
            let first = (0..<3).map { M.insert("Counter", into: context, ["name": "first-\($0)"]) }
            let freedFirst = context.saveQueued(overlapping: true, completion: outcomes.completion("first", context))
            let cleanAfterFirst = !context.hasChanges && context.insertedObjects.isEmpty
            let second = (0..<2).map { M.insert("Counter", into: context, ["name": "second-\($0)"]) }
            let freedSecond = context.saveQueued(overlapping: true, completion: outcomes.completion("second", context))
            let later = M.insert("Counter", into: context, ["name": "later"])
            return (first, second, later, [freedFirst, cleanAfterFirst, freedSecond])
        }
        #expect(freed == [true, true, true])
        #expect(store.commitQueue.waitingCount == 2)
        #expect(context.performAndWait { context.hasOverlappingSaves })
        #expect(outcomes.snapshot.isEmpty)

        hold.release.signal()
        #expect(outcomes.done.wait(timeout: .now() + 30) == .success)
        #expect(hold.done.wait(timeout: .now() + 30) == .success)
        let finished = outcomes.snapshot
        #expect(finished.map(\.name) == ["first", "second"])
        #expect(finished.allSatisfy { $0.error == nil && $0.onQueue })
        let after = store.commitQueue.snapshot
        // The hold's write and the two saves.
        #expect(after.committed - before.committed == 3)
        #expect(after.largestGroup >= 2)

        let state = context.performAndWait {
            (permanent: (first + second).allSatisfy { !$0.objectID.isTemporaryID && !$0.isInserted },
             overlapping: context.hasOverlappingSaves,
             pending: context.insertedObjects.map { $0 === later })
        }
        #expect(state.permanent)
        #expect(!state.overlapping)
        #expect(state.pending == [true])
        let ids = context.performAndWait { (first + second).map(\.objectID.primaryKey) }
        #expect(ids == ids.sorted() && Set(ids).count == 5)
        let reader = M.context(try S.coordinator(path, model: model))
        for name in ["first-0", "first-1", "first-2", "second-0", "second-1"] {
            #expect(try reader.performAndWait { try G.count(name, in: reader) } == 1, "\(name) not committed")
        }
        #expect(try reader.performAndWait { try G.count("later", in: reader) } == 0)
        // The object inserted meanwhile is saved by the next save.
        try context.performAndWait { try context.save() }
        #expect(try reader.performAndWait { try G.count("later", in: reader) } == 1)
    }

    /// A store on a full disk fails both overlapping writes of one group: each completion
    /// gets the error, the objects of both are pending again in the order they were inserted,
    /// in front of the one inserted since, nothing is on disk, and once the disk has room one
    /// save writes all of them.
    @Test func failedOverlappingWritesPutTheirObjectsBackInOrder() throws {
        let directory = try M.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.sqlite")
        let scope = try FaultScope(directory: directory)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: G.model())
        var options = StoreOptions()
        options.sqliteVFSName = FaultScope.vfsName
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        let outcomes = Outcomes()

        let hold = CommitQueueHold(store)
        #expect(hold.isLeading)
        let (first, second, later) = context.performAndWait {
            let first = (0..<2).map { M.insert("Counter", into: context, ["name": "first-\($0)"]) }
            context.saveQueued(overlapping: true, completion: outcomes.completion("first", context))
            let second = (0..<2).map { M.insert("Counter", into: context, ["name": "second-\($0)"]) }
            context.saveQueued(overlapping: true, completion: outcomes.completion("second", context))
            let later = M.insert("Counter", into: context, ["name": "later"])
            return (first, second, later)
        }
        scope.arm(.write, at: 1, error: FaultScope.Code.full, persistent: true)
        hold.release.signal()
        #expect(outcomes.done.wait(timeout: .now() + 30) == .success)
        #expect(hold.done.wait(timeout: .now() + 30) == .success)
        scope.disarm()

        let finished = outcomes.snapshot
        #expect(finished.map(\.name) == ["first", "second"])
        #expect(finished.allSatisfy { $0.error?.contains("SQLITE_FULL") == true }, "\(finished.map(\.error))")
        let pending = context.performAndWait {
            (objects: context.insertedInOrder.objects, overlapping: context.hasOverlappingSaves,
             temporary: (first + second).allSatisfy { $0.objectID.isTemporaryID && $0.isInserted })
        }
        #expect(pending.objects.map { ObjectIdentifier($0) } == (first + second + [later]).map { ObjectIdentifier($0) })
        #expect(!pending.overlapping)
        #expect(pending.temporary)
        let reader = M.context(try S.coordinator(url.path, model: G.model()))
        #expect(try reader.performAndWait { try reader.count(for: M.request("Counter")) } == 0)

        try context.performAndWait { try context.save() }
        #expect(try reader.performAndWait { try reader.count(for: M.request("Counter")) } == 5)
        #expect(!context.performAndWait { context.hasChanges })
    }

    /// A save the context's later changes could touch does not overlap: with an updated
    /// object, with a relationship set, or with a uniqueness constraint under a merge policy
    /// that may merge the object into a stored one, `saveQueued` keeps the context busy until
    /// the completion runs; a new object with its relationships unset does overlap, and so
    /// does one with a uniqueness constraint under the error policy, which a clash only fails.
    @Test(arguments: ["update", "relationship", "constraint, merging", "constraint", "plain"])
    func onlyASaveOfNewPlainObjectsOverlaps(_ kind: String) throws {
        let directory = try M.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try M.coordinator(type: .sqlite, at: directory.appendingPathComponent("store.sqlite"))
        let context = M.context(coordinator)
        let brewery = try context.performAndWait {
            let brewery = M.insert("Brewery", into: context, ["name": "Kernel"])
            try context.save()
            return brewery
        }
        let outcomes = Outcomes()
        let freed = context.performAndWait {
            switch kind {
            case "update": brewery.setValue("Ghent", forKey: "city")
            case "relationship": M.insert("Beer", into: context, ["name": "Export"]).setValue(brewery, forKey: "brewery")
            case "constraint, merging":
                context.mergePolicy = .mergeByPropertyObjectTrump
                _ = M.insert("Tag", into: context, ["name": "stout"])
            case "constraint": _ = M.insert("Tag", into: context, ["name": "stout"])
            default: _ = M.insert("Beer", into: context, ["name": "Export"])
            }
            return context.saveQueued(overlapping: true, completion: outcomes.completion(kind, context))
        }
        #expect(outcomes.done.wait(timeout: .now() + 30) == .success)
        #expect(freed == (kind == "plain" || kind == "constraint"))
        #expect(outcomes.snapshot.map(\.error) == [nil])
        #expect(!context.performAndWait { context.hasChanges || context.hasOverlappingSaves })
    }

    /// Two overlapping saves of the same uniqueness key under the error policy: the second
    /// passes the context's check (the first's object is out of the change sets) but not the
    /// store's, inside the group's transaction after the first's write: the first commits, the
    /// second fails with a constraint error, and its object is pending again.
    @Test func aClashWithASaveInFlightFailsTheLaterSave() throws {
        let directory = try M.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        let outcomes = Outcomes()
        let hold = CommitQueueHold(store)
        #expect(hold.isLeading)
        let (freed, second) = context.performAndWait {
            _ = M.insert("Tag", into: context, ["name": "stout"])
            let first = context.saveQueued(overlapping: true, completion: outcomes.completion("first", context))
            let second = M.insert("Tag", into: context, ["name": "stout"])
            return ([first, context.saveQueued(overlapping: true, completion: outcomes.completion("second", context))], second)
        }
        #expect(freed == [true, true])
        hold.release.signal()
        #expect(outcomes.done.wait(timeout: .now() + 30) == .success)
        #expect(hold.done.wait(timeout: .now() + 30) == .success)

        let finished = outcomes.snapshot
        #expect(finished.map(\.name) == ["first", "second"])
        #expect(finished.first?.error == nil)
        #expect(finished.last?.error?.contains("uniqueness constraint") == true, "\(finished.map(\.error))")
        let pending = context.performAndWait { context.insertedInOrder.objects.map(ObjectIdentifier.init) }
        #expect(pending == [ObjectIdentifier(second)])
        let reader = M.context(try M.coordinator(type: .sqlite, at: url))
        #expect(try reader.performAndWait { try reader.count(for: M.request("Tag")) } == 1)
    }
}
