import Dispatch
import Foundation
import Testing
@testable import PersistKit

/// A write's semaphore is made only when its thread may have to wait: a write that finds no
/// group running leads its own at once and makes none; a write queued behind a running group
/// makes one, is woken through it, and returns once its group is done. `make test` also runs
/// this suite under the thread sanitizer (its name has "Concurrency").
@Suite("Concurrency of commit-queue wake-ups", .timeLimit(.minutes(1)))
struct CommitQueueWakeConcurrencyTests {
    @Test func aWriteLeadingAtOnceMakesNoSemaphore() throws {
        let queue = SQLiteCommitQueue()
        let write = SQLiteCommitQueue.Write(what: "alone") { _ in }
        let groupSizes = Locked<[Int]>([])
        try queue.submit(write) { group in groupSizes.withLock { $0.append(group.count) } }
        #expect(groupSizes.withLock { $0 } == [1])
        #expect(write.isDone)
        #expect(write.wake == nil)
    }

    @Test func aWriteQueuedBehindALeaderMakesOneAndIsWoken() throws {
        let queue = SQLiteCommitQueue()
        let leading = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let groups = Locked<[[String]]>([])
        let run: @Sendable ([SQLiteCommitQueue.Write]) -> Void = { group in
            groups.withLock { $0.append(group.map(\.what)) }
            if group.contains(where: { $0.what == "leader" }) {
                leading.signal()
                release.wait()
            }
        }
        // The writes are made on the threads that submit them, and looked at here once those
        // threads are done (the group's wait orders it).
        let writes = Locked<[String: SQLiteCommitQueue.Write]>([:])
        DispatchQueue.global().async(group: done) {
            let leader = SQLiteCommitQueue.Write(what: "leader") { _ in }
            writes.withLock { $0["leader"] = leader }
            try? queue.submit(leader, runGroup: run)
        }
        #expect(leading.wait(timeout: .now() + 30) == .success)

        let returned = Locked(false)
        DispatchQueue.global().async(group: done) {
            let follower = SQLiteCommitQueue.Write(what: "follower") { _ in }
            writes.withLock { $0["follower"] = follower }
            try? queue.submit(follower, runGroup: run)
            returned.withLock { $0 = true }
        }
        // The follower is queued while the leader's group runs: it made its semaphore then.
        #expect(Self.eventually { queue.waitingCount == 1 })
        #expect(!returned.withLock { $0 })
        release.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(returned.withLock { $0 })
        let (leader, follower) = try writes.withLock { (try #require($0["leader"]), try #require($0["follower"])) }
        #expect(follower.isDone && follower.failure == nil)
        #expect(follower.wake != nil)
        #expect(leader.wake == nil)
        // The follower led the next group, after being woken as the oldest write waiting.
        #expect(groups.withLock { $0 } == [["leader"], ["follower"]])
    }

    /// Waits (bounded) until `condition` holds; no timing is asserted, only that it happens.
    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<30_000 {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }
}
