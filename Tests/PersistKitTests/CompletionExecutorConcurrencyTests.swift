import Foundation
import Testing
@testable import PersistKit

/// Queued writes and saves with an executor for their completions
/// (`SQLiteCommitQueue.Write.completingOn`, `ManagedObjectContext.saveQueued(completingOn:)`):
/// the committer hands the completion to the executor instead of running it, and what the
/// write holds is released where the executor runs it; a write its own thread led when idle
/// completes there, without the executor. `make test` also runs this suite under the thread
/// sanitizer (its name has "Concurrency").
@Suite("Concurrency of queued completions handed to an executor", .timeLimit(.minutes(1)))
struct CompletionExecutorConcurrencyTests {
    typealias G = GroupCommitConcurrencyTests
    typealias H = CommitQueueHandoffConcurrencyTests
    typealias Q = QueuedSaveConcurrencyTests
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    /// An executor that keeps the tasks handed to it until the test runs them.
    final class HeldTasks: @unchecked Sendable {
        // @unchecked Sendable: `tasks` and `handedOver` are read and written under `lock`.
        private let lock = NSLock()
        private var tasks: [@Sendable () -> Void] = []
        private var handedOver = 0
        /// Signalled once for each task handed over.
        let arrived = DispatchSemaphore(value: 0)

        var executor: CompletionExecutor {
            { [self] task in
                lock.withLock {
                    tasks.append(task)
                    handedOver += 1
                }
                arrived.signal()
            }
        }

        /// How many tasks were handed over so far.
        var count: Int { lock.withLock { handedOver } }

        /// Runs the tasks held so far on the calling thread, and lets go of them.
        func runAll() {
            let taken = lock.withLock { () -> [@Sendable () -> Void] in
                defer { tasks = [] }
                return tasks
            }
            for task in taken { task() }
        }
    }

    /// Something a write's statements hold, to see where it is released.
    final class Held: Sendable {}

    @Test func theCommitterHandsTheCompletionOverAndTheWriteIsReleasedWhereItRuns() throws {
        let queue = SQLiteCommitQueue()
        let log = H.Log(), completions = Q.Completions(), done = DispatchGroup()
        let held = HeldTasks()
        weak var probe: Held?
        do {
            let statementsHold = Held()
            probe = statementsHold
            let write = SQLiteCommitQueue.Write(what: "handed", body: { _ in _ = statementsHold }, completion: { failure in
                completions.completed("handed", failure)
                done.leave()
            }, completingOn: held.executor)
            done.enter()
            queue.submitQueued(write) { group in log.ranGroup(group.map(\.what)) }
        }
        // The committer led the group and handed the completion over without running it: the
        // write, and what its statements hold, are still alive.
        #expect(held.arrived.wait(timeout: .now() + 30) == .success)
        #expect(completions.snapshot.outcomes.isEmpty)
        #expect(probe != nil)
        let (groups, _, _) = log.snapshot
        #expect(groups.map(\.writes) == [["handed"]])
        #expect(!Q.same(groups.first?.thread, pthread_self()))

        held.runAll()
        #expect(done.wait(timeout: .now()) == .success)
        let (outcomes, threads) = completions.snapshot
        #expect(outcomes == ["handed": ["committed"]])
        #expect(Q.same(threads["handed"], pthread_self()))
        #expect(probe == nil, "the write's statements outlived its completion")
        #expect(held.count == 1)
    }

    @Test func aWriteLedByItsOwnThreadCompletesThereWithoutTheExecutor() throws {
        let queue = SQLiteCommitQueue()
        let completions = Q.Completions(), done = DispatchGroup()
        let held = HeldTasks()
        let write = SQLiteCommitQueue.Write(what: "own", body: { _ in }, completion: { failure in
            completions.completed("own", failure)
            done.leave()
        }, completingOn: held.executor)
        done.enter()
        queue.submitQueued(write, leadingIfIdle: true) { _ in }
        #expect(done.wait(timeout: .now()) == .success)
        #expect(Q.same(completions.snapshot.threads["own"], pthread_self()))
        #expect(held.count == 0)
    }

    /// A context's queued save with an executor: its second half runs where the executor runs
    /// it, on the context's queue, with the save done; a write the store refuses reports its
    /// error the same way.
    @Test(arguments: [false, true])
    func aQueuedSaveFinishesWhereTheExecutorRunsIt(_ refused: Bool) throws {
        let path = try S.storePath()
        let model = G.model()
        let coordinator = try S.coordinator(path, model: model)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        if refused {
            // Another connection's save after this context read the object: under the error
            // policy the write fails with a conflict.
            let seed = M.context(coordinator)
            let id = try seed.performAndWait {
                let counter = M.insert("Counter", into: seed, ["name": "contended"])
                try seed.save()
                return counter.objectID
            }
            context.mergePolicy = .error
            context.performAndWait { context.object(with: id).setValue(Int64(7), forKey: "value") }
            let theirs = M.context(coordinator)
            try theirs.performAndWait {
                theirs.object(with: id).setValue(Int64(3), forKey: "value")
                try theirs.save()
            }
        }
        let held = HeldTasks()
        let saved = DispatchSemaphore(value: 0)
        let outcome = Locked<(error: PersistenceError?, onQueue: Bool, thread: pthread_t, permanent: Bool)?>(nil)
        let objects = context.performAndWait {
            let objects = refused ? [] : (0..<2).map { M.insert("Counter", into: context, ["name": "handed-\($0)"]) }
            _ = context.saveQueued(completingOn: held.executor) { error in
                outcome.withLock {
                    $0 = (error as? PersistenceError, context.isOnQueue, pthread_self(), objects.allSatisfy { !$0.objectID.isTemporaryID })
                }
                saved.signal()
            }
            return objects
        }
        #expect(held.arrived.wait(timeout: .now() + 30) == .success)
        #expect(outcome.withLock { $0 } == nil)
        held.runAll()
        #expect(saved.wait(timeout: .now()) == .success)
        let finished = try #require(outcome.withLock { $0 })
        #expect(finished.onQueue)
        #expect(Q.same(finished.thread, pthread_self()))
        if refused {
            #expect(finished.error?.code == .managedObjectMerge)
            #expect(context.performAndWait { context.hasChanges })
        } else {
            #expect(finished.error == nil)
            #expect(finished.permanent && objects.count == 2)
            #expect(!context.performAndWait { context.hasChanges })
            for index in 0..<2 { #expect(try context.performAndWait { try G.count("handed-\(index)", in: context) } == 1) }
        }
        #expect(held.count == 1)
        #expect(store.commitQueue.snapshot.groups >= 1)
    }
}
