import Foundation

/// The queue of a SQLite store's group commit: writes that arrive from many threads while a
/// transaction is committing are committed together in the next one, as PostgreSQL's group
/// commit does.
///
/// A thread that submits a write while no group is running becomes the leader: it takes every
/// write waiting (its own included), runs them in one transaction (see
/// `SQLiteStore.commitGroup`), and then wakes their threads. Writes submitted while the leader
/// runs its group's statements join that group before its `COMMIT` (``takeJoiners(limit:)``),
/// so they share its commit instead of waiting for a transaction of their own. A thread that
/// submits while a group is committing waits; the first of those to wake after the group
/// becomes the next leader. No write's thread returns before its group's `COMMIT` returned (or
/// the group failed), so nothing is acknowledged before it is durable.
final class SQLiteCommitQueue: @unchecked Sendable {
    // @unchecked Sendable: `waiting`, `joined`, `leaderActive`, the counters, and every queued write's
    // `failure` and `isDone` are read and written only while `condition` (a pthread mutex with
    // its condition variable) is held, except a write's `failure` while the leader runs its
    // group — the write's own thread is then parked in `submit` and reads it only after the
    // leader's broadcast, under `condition`.

    /// One write waiting for, or taking part in, a group.
    final class Write {
        /// Runs the write's statements on the connection, inside the group's transaction;
        /// cleared by the write's own thread once its group ran (the closure does not outlive
        /// the call that submitted it).
        var body: ((SQLiteConnection) throws -> Void)?
        /// What the write does, for errors ("saving to the store failed").
        let what: String
        /// Why the write failed, once its group ran; `nil` if it was committed.
        var failure: (any Error)?
        /// Whether its group has run.
        var isDone = false

        init(what: String, body: @escaping (SQLiteConnection) throws -> Void) {
            self.what = what
            self.body = body
        }
    }

    /// What the queue has done so far (for tests and statistics).
    struct Counters: Sendable, Equatable {
        /// Transactions run for groups.
        var groups = 0
        /// Writes committed.
        var committed = 0
        /// Writes that failed (rolled back alone, or with their group).
        var failed = 0
        /// The size of the largest group so far.
        var largestGroup = 0
    }

    private let condition = NSCondition()
    private var waiting: [Write] = []
    /// Writes the running group's leader took from `waiting` after the group began.
    private var joined: [Write] = []
    private var leaderActive = false
    private var counters = Counters()

    /// Runs `write` in a group, leading the group if none is running; returns once the group's
    /// transaction committed, or throws why `write` failed. `runGroup` runs a group's writes in
    /// one transaction and sets each one's `failure`; it is called without the queue's lock.
    func submit(_ write: Write, runGroup: ([Write]) -> Void) throws {
        condition.lock()
        waiting.append(write)
        while leaderActive && !write.isDone { condition.wait() }
        if write.isDone {
            condition.unlock()
            if let failure = write.failure { throw failure }
            return
        }
        // Lead: take every write waiting, including this one.
        leaderActive = true
        let group = waiting
        waiting = []
        condition.unlock()

        runGroup(group)

        condition.lock()
        leaderActive = false
        let members = joined.isEmpty ? group : group + joined
        joined = []
        counters.groups += 1
        counters.largestGroup = max(counters.largestGroup, members.count)
        for member in members {
            member.isDone = true
            if member.failure == nil { counters.committed += 1 } else { counters.failed += 1 }
        }
        condition.broadcast()
        condition.unlock()
        if let failure = write.failure { throw failure }
    }

    /// Takes up to `limit` of the writes waiting, oldest first, into the running group: called
    /// by its leader (inside `runGroup`) before `COMMIT`. The writes taken are done, and their
    /// threads woken, when the group is; until then their threads wait as any member's does.
    func takeJoiners(limit: Int) -> [Write] {
        condition.lock()
        defer { condition.unlock() }
        guard !waiting.isEmpty, limit > 0 else { return [] }
        let taken = waiting.count <= limit ? waiting : Array(waiting.prefix(limit))
        waiting.removeFirst(taken.count)
        joined += taken
        return taken
    }

    /// The writes waiting for the running group to finish (for tests).
    var waitingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting.count
    }

    /// What the queue has done so far.
    var snapshot: Counters {
        condition.lock()
        defer { condition.unlock() }
        return counters
    }
}
