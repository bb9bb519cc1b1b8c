import Foundation
import Testing
@testable import PersistKit

/// Writes queued for the group commit without a waiting thread (`SQLiteCommitQueue.submitQueued`)
/// and the context save built on them (`ManagedObjectContext.saveQueued`): the submitting
/// thread returns at once, the committer thread leads the groups such writes start and calls
/// each write's completion once, after its group's `COMMIT`, with its own outcome; a group led
/// by a waiting thread hands its queued members to the committer. `make test` also runs this
/// suite under the thread sanitizer (its name has "Concurrency").
@Suite("Concurrency of queued writes and saves", .timeLimit(.minutes(1)))
struct QueuedSaveConcurrencyTests {
    typealias G = GroupCommitConcurrencyTests
    typealias H = CommitQueueHandoffConcurrencyTests
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    /// What the queued writes' completions saw: each write's outcome and the thread it ran on.
    final class Completions: @unchecked Sendable {
        // @unchecked Sendable: every field is read and written under `lock`.
        private let lock = NSLock()
        private var outcomes: [String: [String]] = [:]
        private var threads: [String: pthread_t] = [:]

        func completed(_ what: String, _ failure: (any Error)?) {
            let outcome = failure.map { $0 is H.Refused ? "refused" : "\($0)" } ?? "committed"
            lock.withLock {
                outcomes[what, default: []].append(outcome)
                threads[what] = pthread_self()
            }
        }
        var snapshot: (outcomes: [String: [String]], threads: [String: pthread_t]) {
            lock.withLock { (outcomes, threads) }
        }
    }

    /// Whether `a` and `b` are the same thread.
    static func same(_ a: pthread_t?, _ b: pthread_t?) -> Bool {
        guard let a, let b else { return false }
        return pthread_equal(a, b) != 0
    }

    /// Queues a write named `what`; its completion reports to `completions` and leaves `done`.
    static func queue(_ what: String, to queue: SQLiteCommitQueue, log: H.Log, completions: Completions, done: DispatchGroup,
                      refusing: Set<String> = []) {
        let write = SQLiteCommitQueue.Write(what: what, body: { _ in }) { failure in
            completions.completed(what, failure)
            done.leave()
        }
        done.enter()
        queue.submitQueued(write) { group in
            log.ranGroup(group.map(\.what))
            for member in group where refusing.contains(member.what) { member.failure = H.Refused() }
        }
    }

    @Test func aQueuedWriteIsLedAndCompletedByTheCommitterThread() throws {
        let queue = SQLiteCommitQueue()
        let log = H.Log(), completions = Completions(), done = DispatchGroup()
        Self.queue("alone", to: queue, log: log, completions: completions, done: done)
        #expect(done.wait(timeout: .now() + 30) == .success)
        let (groups, _, _) = log.snapshot
        #expect(groups.map(\.writes) == [["alone"]])
        // Led and completed on the committer thread, not on the thread that queued it.
        let (outcomes, threads) = completions.snapshot
        #expect(outcomes == ["alone": ["committed"]])
        #expect(!Self.same(groups.first?.thread, pthread_self()))
        #expect(Self.same(groups.first?.thread, threads["alone"]))
        #expect(queue.snapshot == SQLiteCommitQueue.Counters(groups: 1, committed: 1, failed: 0, largestGroup: 1))
    }

    /// Queued while a group runs: `submitQueued` returns at once, nothing completes before the
    /// running group ends, then the three share the next group, led by the committer, and each
    /// completes once, the refused one alone with its failure.
    @Test func writesQueuedWhileAGroupRunsShareTheNextGroup() throws {
        let queue = SQLiteCommitQueue()
        let log = H.Log(), completions = Completions(), done = DispatchGroup()
        let hold = DispatchSemaphore(value: 0), leading = DispatchSemaphore(value: 0)
        H.submit("held", to: queue, log: log, done: done, holding: hold, leading: leading)
        #expect(leading.wait(timeout: .now() + 30) == .success)
        for what in ["a", "b", "c"] {
            Self.queue(what, to: queue, log: log, completions: completions, done: done, refusing: ["b"])
        }
        #expect(queue.waitingCount == 3)
        #expect(completions.snapshot.outcomes.isEmpty)
        hold.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)

        let (groups, submitters, returned) = log.snapshot
        #expect(groups.map(\.writes) == [["held"], ["a", "b", "c"]])
        #expect(returned == ["held": "committed"])
        let (outcomes, threads) = completions.snapshot
        #expect(outcomes == ["a": ["committed"], "b": ["refused"], "c": ["committed"]])
        // The second group was led by the committer, which completed all three.
        #expect(groups.count == 2 && !Self.same(groups[1].thread, submitters["held"]) && !Self.same(groups[1].thread, pthread_self()))
        #expect(["a", "b", "c"].allSatisfy { Self.same(threads[$0], groups.last?.thread) })
        #expect(queue.snapshot == SQLiteCommitQueue.Counters(groups: 2, committed: 3, failed: 1, largestGroup: 3))
    }

    /// A waiting thread's write queued first leads the next group, which takes the queued write
    /// behind it: the waiting thread returns, and the queued write completes on the committer
    /// thread, not on the leader's.
    @Test func aWaitingThreadsGroupHandsItsQueuedMembersToTheCommitter() throws {
        let queue = SQLiteCommitQueue()
        let log = H.Log(), completions = Completions(), done = DispatchGroup()
        let hold = DispatchSemaphore(value: 0), leading = DispatchSemaphore(value: 0)
        H.submit("held", to: queue, log: log, done: done, holding: hold, leading: leading)
        #expect(leading.wait(timeout: .now() + 30) == .success)
        H.submit("waiting", to: queue, log: log, done: done)
        #expect(G.eventually { queue.waitingCount == 1 })
        Self.queue("queued", to: queue, log: log, completions: completions, done: done)
        hold.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)

        let (groups, threads, returned) = log.snapshot
        #expect(groups.map(\.writes) == [["held"], ["waiting", "queued"]])
        #expect(pthread_equal(groups[1].thread, try #require(threads["waiting"])) != 0)
        #expect(returned == ["held": "committed", "waiting": "committed"])
        #expect(completions.snapshot.outcomes == ["queued": ["committed"]])
        let completedOn = completions.snapshot.threads["queued"]
        #expect(completedOn != nil && !Self.same(completedOn, threads["waiting"]) && !Self.same(completedOn, pthread_self()))
    }

    // MARK: - saveQueued

    /// A context's queued save returns while its write waits for the group commit, leaves the
    /// context's queue free meanwhile, and finishes on the context's queue once committed: the
    /// objects have their permanent IDs, the context no changes, and another connection reads
    /// the rows.
    @Test func aQueuedSaveFinishesOnTheContextsQueueOnceCommitted() throws {
        let path = try S.storePath()
        let model = G.model()
        let coordinator = try S.coordinator(path, model: model)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let reader = M.context(try S.coordinator(path, model: model))
        let context = M.context(coordinator)

        let hold = CommitQueueHold(store)
        #expect(hold.isLeading)
        let saved = DispatchSemaphore(value: 0)
        let outcome = Locked<(error: String?, onQueue: Bool, hasChanges: Bool, permanent: Bool)?>(nil)
        let objects = context.performAndWait {
            let objects = (0..<3).map { M.insert("Counter", into: context, ["name": "queued-\($0)"]) }
            context.saveQueued { error in
                outcome.withLock {
                    $0 = (error.map { "\($0)" }, context.isOnQueue, context.hasChanges, objects.allSatisfy { !$0.objectID.isTemporaryID })
                }
                saved.signal()
            }
            return objects
        }
        // Returned with the write queued: the context's queue takes other work meanwhile.
        #expect(store.commitQueue.waitingCount == 1)
        #expect(context.performAndWait { context.hasChanges })
        #expect(outcome.withLock { $0 } == nil)

        hold.release.signal()
        #expect(saved.wait(timeout: .now() + 30) == .success)
        let finished = try #require(outcome.withLock { $0 })
        #expect(finished.error == nil)
        #expect(finished.onQueue && !finished.hasChanges && finished.permanent)
        #expect(hold.done.wait(timeout: .now() + 30) == .success)
        for index in 0..<3 { #expect(try reader.performAndWait { try G.count("queued-\(index)", in: reader) } == 1) }
        let ids = context.performAndWait { objects.map(\.objectID) }
        #expect(Set(ids.map(\.primaryKey)).count == 3)
    }

    /// A conflict found by the store's write is resolved by the merge policy and the write
    /// queued again (object-trump: ours is written over theirs); under the error policy the
    /// completion gets the conflict, nothing is written, and the context keeps its change.
    @Test(arguments: [MergePolicy.mergeByPropertyObjectTrump, .error])
    func aConflictIsResolvedOrReportedAsSaveWould(_ policy: MergePolicy) throws {
        let path = try S.storePath()
        let model = G.model()
        let coordinator = try S.coordinator(path, model: model)
        let seed = M.context(coordinator)
        let id = try seed.performAndWait {
            let counter = M.insert("Counter", into: seed, ["name": "contended"])
            try seed.save()
            return counter.objectID
        }
        let ours = M.context(coordinator)
        ours.mergePolicy = policy
        ours.performAndWait { ours.object(with: id).setValue(Int64(7), forKey: "value") }
        let theirs = M.context(coordinator)
        try theirs.performAndWait {
            theirs.object(with: id).setValue(Int64(3), forKey: "value")
            try theirs.save()
        }

        let saved = DispatchSemaphore(value: 0)
        let failure = Locked<PersistenceError?>(nil)
        ours.performAndWait {
            _ = ours.saveQueued { error in
                failure.withLock { $0 = error as? PersistenceError }
                saved.signal()
            }
        }
        #expect(saved.wait(timeout: .now() + 30) == .success)
        let reader = M.context(try S.coordinator(path, model: model))
        let stored = try reader.performAndWait { try reader.existingObject(with: id).value(forKey: "value") as? Int64 }
        if policy == .error {
            #expect(failure.withLock { $0?.code } == .managedObjectMerge)
            #expect(stored == 3)
            #expect(ours.performAndWait { ours.hasChanges })
        } else {
            #expect(failure.withLock { $0 } == nil)
            #expect(stored == 7)
            #expect(!ours.performAndWait { ours.hasChanges })
        }
    }

    /// A context whose store is not SQLite saves at once: the completion runs before
    /// `saveQueued` returns, with the save done.
    @Test func aContextWithoutASQLiteStoreSavesAtOnce() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: G.model())
        _ = try coordinator.addPersistentStore(type: .inMemory, at: nil)
        let context = M.context(coordinator)
        let calledBeforeReturn = context.performAndWait {
            _ = M.insert("Counter", into: context, ["name": "memory"])
            var called = false
            context.saveQueued { error in
                #expect(error == nil)
                called = true
            }
            return called
        }
        #expect(calledBeforeReturn)
        #expect(try context.performAndWait { try G.count("memory", in: context) } == 1)
        #expect(!context.performAndWait { context.hasChanges })
    }
}
