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
///
/// A thread about to make a write can say so first (``expectWrite()``, ``settleExpectedWrite()``;
/// what PostgreSQL's `commit_delay` with `commit_siblings` guesses from the backends in a
/// transaction): a leader whose statements ran waits, a bounded time, for the writes expected
/// from other threads to join its group before it commits (``takeJoiners(limit:waitingUntil:)``),
/// so the saves of many threads running at once share one `COMMIT` rather than a few each.
final class SQLiteCommitQueue: @unchecked Sendable {
    // @unchecked Sendable: `waiting`, `joined`, `leaderActive`, `expected`, `announced`, `leaderAwaitsArrival`,
    // `arrivalWait`, the counters, and every queued write's
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
    /// Wakes a leader waiting for expected writes (``takeJoiners(limit:waitingUntil:)``): kept
    /// apart from `condition` so that an arriving write does not wake the group's parked members.
    /// Its lock is taken only on its own, or with `condition`'s taken inside it.
    private let arrival = NSCondition()
    /// The threads that expect to submit a write (``expectWrite()``) and have not yet.
    private var expected: [pthread_t] = []
    /// Writes announced for work handed to a thread that has not started it yet
    /// (``announceWrite()``, taken over by ``expectWrite(adoptingAnnouncement:)``).
    private var announced = 0
    /// Whether the running group's leader is waiting for expected writes.
    private var leaderAwaitsArrival = false
    /// The longest a group's leader waits, once its statements ran, for the writes other
    /// threads expect to make (``expectWrite()``) before it commits without them; 0: never.
    /// Half a millisecond: a save's own work before it reaches the store takes some tens of
    /// microseconds, and a wait that runs out costs every member of the group that much latency.
    private var arrivalWait: TimeInterval = 0.000_5
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
        removeExpectation()
        if leaderAwaitsArrival {
            condition.unlock()
            wakeLeader()
            condition.lock()
        }
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

    /// Says that work about to be handed to another thread will submit a write: a leader about
    /// to commit waits for it, up to its deadline, until the thread that runs the work takes
    /// the announcement over (``expectWrite(adoptingAnnouncement:)``) and then submits or settles.
    func announceWrite() {
        condition.lock()
        announced += 1
        condition.unlock()
    }

    /// Says that the calling thread is about to submit a write: until it does (or calls
    /// ``settleExpectedWrite()``), a leader about to commit waits for it, up to its deadline.
    /// `adoptingAnnouncement`: the thread runs work that was announced (``announceWrite()``),
    /// whose announcement this replaces.
    func expectWrite(adoptingAnnouncement: Bool = false) {
        let thread = pthread_self()
        condition.lock()
        if adoptingAnnouncement && announced > 0 { announced -= 1 }
        if !expected.contains(where: { pthread_equal($0, thread) != 0 }) { expected.append(thread) }
        condition.unlock()
    }

    /// Withdraws the calling thread's ``expectWrite()`` if no write of it came since (the write
    /// it expected changed nothing, or failed before reaching the store).
    func settleExpectedWrite() {
        condition.lock()
        let removed = removeExpectation()
        let wake = removed && leaderAwaitsArrival
        condition.unlock()
        if wake { wakeLeader() }
    }

    /// The longest a group's leader waits for expected writes (``arrivalDeadline()``); tests
    /// set it long, so that an expected write joins whatever the scheduler does.
    var expectedWriteWait: TimeInterval {
        get {
            condition.lock()
            defer { condition.unlock() }
            return arrivalWait
        }
        set {
            condition.lock()
            arrivalWait = newValue
            condition.unlock()
        }
    }

    /// The time until which a group starting now waits for expected writes, `nil` if it does
    /// not wait.
    func arrivalDeadline() -> Date? {
        let wait = expectedWriteWait
        return wait > 0 ? Date(timeIntervalSinceNow: wait) : nil
    }

    /// How many writes are expected: threads that expect to submit one, and announcements not
    /// taken over yet (for tests).
    var expectedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return expected.count + announced
    }

    /// Removes the calling thread from `expected`; whether it was there. Called with
    /// `condition` held.
    @discardableResult
    private func removeExpectation() -> Bool {
        guard !expected.isEmpty else { return false }
        let thread = pthread_self()
        guard let index = expected.firstIndex(where: { pthread_equal($0, thread) != 0 }) else { return false }
        expected.remove(at: index)
        return true
    }

    /// Wakes the leader if it waits for an expected write. Called without `condition` held.
    private func wakeLeader() {
        arrival.lock()
        arrival.signal()
        arrival.unlock()
    }

    /// Takes up to `limit` of the writes waiting, oldest first, into the running group: called
    /// by its leader (inside `runGroup`) before `COMMIT`. The writes taken are done, and their
    /// threads woken, when the group is; until then their threads wait as any member's does.
    ///
    /// With a `deadline`, when none is waiting but another thread expects to submit a write
    /// (``expectWrite()``), waits for one to come (or every expectation to be settled) until
    /// then, rather than returning none at once.
    func takeJoiners(limit: Int, waitingUntil deadline: Date? = nil) -> [Write] {
        guard limit > 0 else { return [] }
        if let deadline { awaitArrival(until: deadline) }
        condition.lock()
        defer { condition.unlock() }
        guard !waiting.isEmpty else { return [] }
        let taken = waiting.count <= limit ? waiting : Array(waiting.prefix(limit))
        waiting.removeFirst(taken.count)
        joined += taken
        return taken
    }

    /// Waits until a write is waiting, none is expected or announced, or `deadline` passed.
    private func awaitArrival(until deadline: Date) {
        arrival.lock()
        defer { arrival.unlock() }
        // `arrival` is held from before each check until the wait after it: a write or
        // settlement after a check signals `arrival` only once this thread waits, so no
        // wake-up is lost.
        while leaderStillAwaitsArrival() {
            if !arrival.wait(until: deadline) {
                condition.lock()
                leaderAwaitsArrival = false
                condition.unlock()
                return
            }
        }
    }

    /// Whether the leader has to go on waiting for expected writes (none is waiting, and some
    /// thread or announcement still expects one), kept in `leaderAwaitsArrival` under the same
    /// lock as the check, so that writes and settlements know to wake it.
    private func leaderStillAwaitsArrival() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        leaderAwaitsArrival = waiting.isEmpty && (!expected.isEmpty || announced > 0)
        return leaderAwaitsArrival
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
