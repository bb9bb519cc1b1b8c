import Foundation
import Testing
@testable import PersistKit

/// A queued write submitted with `leadingIfIdle` (`SQLiteCommitQueue.submitQueued`) and the
/// context save built on it (`ManagedObjectContext.saveQueued(leadingIfIdle:)`): with nothing
/// else going on in the group commit, the submitting thread runs the group and the completion
/// before returning; with a group running, or a write expected from another thread, the write
/// is queued for the committer as without it. `make test` also runs this suite under the
/// thread sanitizer (its name has "Concurrency").
@Suite("Concurrency of writes led by their own thread when idle", .timeLimit(.minutes(1)))
struct IdleLeadConcurrencyTests {
    typealias G = GroupCommitConcurrencyTests
    typealias H = CommitQueueHandoffConcurrencyTests
    typealias Q = QueuedSaveConcurrencyTests
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    /// Queues a write named `what` with `leadingIfIdle`; its completion reports to
    /// `completions` and leaves `done`.
    static func lead(_ what: String, on queue: SQLiteCommitQueue, log: H.Log, completions: Q.Completions, done: DispatchGroup,
                     refusing: Set<String> = []) {
        let write = SQLiteCommitQueue.Write(what: what, body: { _ in }) { failure in
            completions.completed(what, failure)
            done.leave()
        }
        done.enter()
        queue.submitQueued(write, leadingIfIdle: true) { group in
            log.ranGroup(group.map(\.what))
            for member in group where refusing.contains(member.what) { member.failure = H.Refused() }
        }
    }

    /// On an idle queue the write's group runs on the submitting thread, and its completion
    /// has run, on that thread, when `submitQueued` returns; a refused write gets its failure
    /// the same way. No committer thread is involved.
    @Test(arguments: [false, true])
    func anIdleQueueLetsTheSubmittingThreadLeadAndComplete(_ refused: Bool) throws {
        let queue = SQLiteCommitQueue()
        let log = H.Log(), completions = Q.Completions(), done = DispatchGroup()
        Self.lead("alone", on: queue, log: log, completions: completions, done: done, refusing: refused ? ["alone"] : [])
        // Completed before returning: nothing is left to wait for.
        #expect(done.wait(timeout: .now()) == .success)
        let (groups, _, _) = log.snapshot
        #expect(groups.map(\.writes) == [["alone"]])
        #expect(Q.same(groups.first?.thread, pthread_self()))
        let (outcomes, threads) = completions.snapshot
        #expect(outcomes == ["alone": [refused ? "refused" : "committed"]])
        #expect(Q.same(threads["alone"], pthread_self()))
        #expect(queue.snapshot == SQLiteCommitQueue.Counters(groups: 1, committed: refused ? 0 : 1, failed: refused ? 1 : 0, largestGroup: 1,
                                                             ledWhenIdle: 1))
    }

    /// While another thread's group runs, a write submitted with `leadingIfIdle` is queued:
    /// `submitQueued` returns without completing it, and the committer leads the next group
    /// and completes it there, once the running group ended.
    @Test func aRunningGroupQueuesTheWriteForTheCommitter() throws {
        let queue = SQLiteCommitQueue()
        let log = H.Log(), completions = Q.Completions(), done = DispatchGroup()
        let hold = DispatchSemaphore(value: 0), leading = DispatchSemaphore(value: 0)
        let heldDone = DispatchGroup()
        H.submit("held", to: queue, log: log, done: heldDone, holding: hold, leading: leading)
        #expect(leading.wait(timeout: .now() + 30) == .success)

        Self.lead("queued", on: queue, log: log, completions: completions, done: done)
        #expect(completions.snapshot.outcomes.isEmpty)
        #expect(queue.waitingCount == 1)

        hold.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(heldDone.wait(timeout: .now() + 30) == .success)
        let (groups, _, _) = log.snapshot
        #expect(groups.map(\.writes) == [["held"], ["queued"]])
        let (outcomes, threads) = completions.snapshot
        #expect(outcomes == ["queued": ["committed"]])
        // Led and completed by the committer, neither by this thread nor by the held group's.
        #expect(!Q.same(threads["queued"], pthread_self()))
        #expect(Q.same(groups.last?.thread, threads["queued"]))
    }

    /// A write another thread said it is about to make (`expectWrite()`) keeps the queue from
    /// being idle: the write is queued for the committer, whose group waits for the expected
    /// one a little, rather than being committed at once without it.
    @Test func aWriteExpectedElsewhereQueuesTheWrite() throws {
        let queue = SQLiteCommitQueue()
        let log = H.Log(), completions = Q.Completions(), done = DispatchGroup()
        let expecting = DispatchSemaphore(value: 0), settle = DispatchSemaphore(value: 0)
        let other = Thread {
            queue.expectWrite()
            expecting.signal()
            settle.wait()
            queue.settleExpectedWrite()
        }
        other.start()
        #expect(expecting.wait(timeout: .now() + 30) == .success)
        #expect(queue.expectedCount == 1)

        Self.lead("queued", on: queue, log: log, completions: completions, done: done)
        settle.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        let (outcomes, threads) = completions.snapshot
        #expect(outcomes == ["queued": ["committed"]])
        #expect(!Q.same(threads["queued"], pthread_self()))
    }

    /// A context's save with `leadingIfIdle` on an idle store commits before `saveQueued`
    /// returns: the completion ran on the context's queue, the objects have permanent IDs, the
    /// call says the context is free, and another connection reads the rows.
    @Test func aContextsSaveLedIfIdleIsDoneWhenTheCallReturns() throws {
        let path = try S.storePath()
        let model = G.model()
        let coordinator = try S.coordinator(path, model: model)
        let reader = M.context(try S.coordinator(path, model: model))
        let context = M.context(coordinator)
        let (free, outcome) = context.performAndWait {
            let objects = (0..<2).map { M.insert("Counter", into: context, ["name": "led-\($0)"]) }
            var outcome: (error: String?, onQueue: Bool, hasChanges: Bool, permanent: Bool)?
            let free = context.saveQueued(leadingIfIdle: true) { error in
                outcome = (error.map { "\($0)" }, context.isOnQueue, context.hasChanges,
                           objects.allSatisfy { !$0.objectID.isTemporaryID })
            }
            return (free, outcome)
        }
        #expect(free)
        let finished = try #require(outcome)
        #expect(finished.error == nil)
        #expect(finished.onQueue && !finished.hasChanges && finished.permanent)
        for index in 0..<2 { #expect(try reader.performAndWait { try G.count("led-\(index)", in: reader) } == 1) }
    }
}
