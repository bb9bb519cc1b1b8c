import Foundation
import Testing
@testable import PersistKit

/// The commit queue on its own: writes that arrive while a group runs wait on their own
/// semaphores, the oldest of them is woken when the group ends and runs the next group on its
/// own thread, and each write's thread returns once, with its own outcome.
@Suite("Commit queue hand-off", .timeLimit(.minutes(1)))
struct CommitQueueHandoffConcurrencyTests {
    typealias G = GroupCommitConcurrencyTests

    struct Refused: Error {}

    /// What the groups ran: each group's writes (by `what`) and the thread that ran it.
    final class Log: @unchecked Sendable {
        // @unchecked Sendable: every field is read and written under `lock`.
        private let lock = NSLock()
        private var groups: [(writes: [String], thread: pthread_t)] = []
        private var threads: [String: pthread_t] = [:]
        private var outcomes: [String: String] = [:]

        func ranGroup(_ writes: [String]) {
            lock.withLock { groups.append((writes, pthread_self())) }
        }
        func submitted(_ what: String) {
            lock.withLock { threads[what] = pthread_self() }
        }
        func returned(_ what: String, _ outcome: String) {
            lock.withLock { outcomes[what] = outcome }
        }
        var snapshot: (groups: [(writes: [String], thread: pthread_t)], threads: [String: pthread_t], outcomes: [String: String]) {
            lock.withLock { (groups, threads, outcomes) }
        }
    }

    /// Submits a write named `what` to `queue` on a thread of its own; its group refuses the
    /// writes named in `refusing` (sets their failure).
    static func submit(_ what: String, to queue: SQLiteCommitQueue, log: Log, done: DispatchGroup,
                       refusing: Set<String> = [], holding hold: DispatchSemaphore? = nil, leading: DispatchSemaphore? = nil) {
        let thread = Thread {
            log.submitted(what)
            let write = SQLiteCommitQueue.Write(what: what) { _ in }
            do {
                try queue.submit(write) { group in
                    log.ranGroup(group.map(\.what))
                    for member in group where refusing.contains(member.what) { member.failure = Refused() }
                    leading?.signal()
                    hold?.wait()
                }
                log.returned(what, "committed")
            } catch is Refused {
                log.returned(what, "refused")
            } catch {
                log.returned(what, "\(error)")
            }
            done.leave()
        }
        done.enter()
        thread.start()
    }

    /// A group held open; three writes queue meanwhile. When it ends, the oldest queued write's
    /// thread (the only one woken before the next group is done) runs the next group, holding
    /// all three; each thread returns once, the refused write alone with its failure.
    @Test func theOldestQueuedWriteLeadsTheNextGroup() throws {
        let queue = SQLiteCommitQueue()
        let log = Log()
        let done = DispatchGroup()
        let hold = DispatchSemaphore(value: 0), leading = DispatchSemaphore(value: 0)
        Self.submit("first", to: queue, log: log, done: done, holding: hold, leading: leading)
        #expect(leading.wait(timeout: .now() + 30) == .success)

        // Queued one after another, so their order in the queue is known.
        for (index, what) in ["second", "third", "fourth"].enumerated() {
            Self.submit(what, to: queue, log: log, done: done, refusing: ["third"])
            #expect(G.eventually { queue.waitingCount == index + 1 })
        }
        hold.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)

        let (groups, threads, outcomes) = log.snapshot
        #expect(groups.map(\.writes) == [["first"], ["second", "third", "fourth"]])
        #expect(groups.count == 2)
        if groups.count == 2, let first = threads["first"], let second = threads["second"] {
            #expect(pthread_equal(groups[0].thread, first) != 0)
            #expect(pthread_equal(groups[1].thread, second) != 0)
        }
        #expect(outcomes == ["first": "committed", "second": "committed", "third": "refused", "fourth": "committed"])
        #expect(queue.snapshot == SQLiteCommitQueue.Counters(groups: 2, committed: 3, failed: 1, largestGroup: 3))
        #expect(queue.waitingCount == 0)
    }

    /// Many threads submitting at once, in rounds: every write returns exactly once, committed,
    /// and the groups together ran each write exactly once (no write is lost between a group's
    /// end and the next leader, none runs twice).
    @Test func everyWriteRunsOnceUnderContention() throws {
        let queue = SQLiteCommitQueue()
        let log = Log()
        let done = DispatchGroup()
        let names = (0..<64).map { "write \($0)" }
        for name in names { Self.submit(name, to: queue, log: log, done: done) }
        #expect(done.wait(timeout: .now() + 30) == .success)

        let (groups, _, outcomes) = log.snapshot
        #expect(groups.flatMap(\.writes).sorted() == names.sorted())
        #expect(outcomes.count == names.count)
        #expect(outcomes.values.allSatisfy { $0 == "committed" })
        let counters = queue.snapshot
        #expect(counters.committed == names.count)
        #expect(counters.groups == groups.count)
        #expect(queue.waitingCount == 0)
    }
}
