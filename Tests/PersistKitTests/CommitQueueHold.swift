import Dispatch
@testable import PersistKit

/// Holds a SQLite store's commit-queue leadership (without its connection) on another thread,
/// so that writes submitted meanwhile queue up and share the next transaction.
struct CommitQueueHold {
    /// Lets the held leadership go.
    let release = DispatchSemaphore(value: 0)
    /// The group that the holder and the test's writers run in.
    let done = DispatchGroup()

    /// Starts holding `store`'s commit queue; returns once the hold leads the queue, or after
    /// 30 seconds (`isLeading` is then false).
    init(_ store: SQLiteStore) {
        let leading = DispatchSemaphore(value: 0)
        let release = self.release
        DispatchQueue.global().async(group: done) {
            let hold = SQLiteCommitQueue.Write(what: "holding the queue") { _ in }
            try? store.commitQueue.submit(hold) { _ in
                leading.signal()
                release.wait()
            }
        }
        isLeading = leading.wait(timeout: .now() + 30) == .success
    }

    /// Whether the hold took the queue's leadership in time.
    let isLeading: Bool
}
