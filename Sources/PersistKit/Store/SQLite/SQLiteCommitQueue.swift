import Foundation

/// The queue of a SQLite store's group commit: writes that arrive from many threads while a
/// transaction is committing are committed together in the next one, as PostgreSQL's group
/// commit does.
///
/// A thread that submits a write while no group is running becomes the leader: it takes every
/// write waiting (its own included), runs them in one transaction (see
/// `SQLiteStore.commitGroup`), and then wakes their threads. Writes submitted while the leader
/// runs its group's statements join that group before its `COMMIT` (``takeJoiners(limit:)``),
/// so they share its commit instead of waiting for a transaction of their own. A write
/// submitted while a group is committing waits for the next group: when a group ends, its
/// leader wakes the oldest write waiting to lead the next one, which the first thread to
/// find no group running does (the woken one, or one submitting meanwhile, which then takes
/// the waiting writes into its group). No write's thread returns before its group's `COMMIT`
/// returned (or the group failed), so nothing is acknowledged before it is durable.
///
/// Each waiting thread sleeps on its write's own semaphore and is woken by the leader, once
/// when its group is done, and once more if it was the oldest waiting when a group ended: a
/// group of N writes costs about N wake-ups, and the woken threads do not all reach for one
/// mutex at the same moment, as the members of a broadcast on a shared condition variable do
/// (each sleeping on the mutex again while the others hold it in turn).
///
/// A thread about to make a write can say so first (``expectWrite()``, ``settleExpectedWrite()``;
/// what PostgreSQL's `commit_delay` with `commit_siblings` guesses from the backends in a
/// transaction): a leader whose statements ran waits, a bounded time, for the writes expected
/// from other threads to join its group before it commits (``takeJoiners(limit:waitingUntil:)``),
/// so the saves of many threads running at once share one `COMMIT` rather than a few each.
final class SQLiteCommitQueue: @unchecked Sendable {
    // @unchecked Sendable: `waiting`, `joined`, `leaderActive`, `expected`, `announced`, `leaderAwaitsArrival`,
    // `arrivalWait`, the counters, and every queued write's
    // `failure` and `isDone` are read and written only while `lock` is held, except a write's
    // `failure` while the leader runs its group — the write's own thread is then parked on its
    // semaphore in `submit`, and reads it only once woken, after taking `lock` (which the
    // leader took after setting it).

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
        /// Signalled by a leader, while the write's thread waits in
        /// ``SQLiteCommitQueue/submit(_:runGroup:)``: when the write's group is done, and when a
        /// group ends with the write the oldest waiting (a signal left over when the write is
        /// done is dropped with it).
        let wake = DispatchSemaphore(value: 0)

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

    /// Guards the queue's state (see the `@unchecked Sendable` note above).
    private let lock = NSLock()
    /// Wakes a leader waiting for expected writes (``takeJoiners(limit:waitingUntil:)``), which
    /// waits on it without holding `lock`. Its own lock is taken only on its own, or with `lock`
    /// taken inside it.
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
        lock.lock()
        waiting.append(write)
        removeExpectation()
        if leaderAwaitsArrival {
            lock.unlock()
            wakeLeader()
            lock.lock()
        }
        // Woken once for each signal: the write's group is done, or the group before ended
        // and the write is the oldest waiting (another thread may have taken the lead since,
        // and then the write is in its group, or waits for the next).
        while leaderActive && !write.isDone {
            lock.unlock()
            write.wake.wait()
            lock.lock()
        }
        if write.isDone {
            lock.unlock()
            if let failure = write.failure { throw failure }
            return
        }
        // Lead: take every write waiting, including this one.
        leaderActive = true
        let group = waiting
        waiting = []
        lock.unlock()

        runGroup(group)

        lock.lock()
        leaderActive = false
        let members = joined.isEmpty ? group : group + joined
        joined = []
        counters.groups += 1
        counters.largestGroup = max(counters.largestGroup, members.count)
        for member in members {
            member.isDone = true
            if member.failure == nil { counters.committed += 1 } else { counters.failed += 1 }
        }
        // The oldest write that came too late for this group is woken to lead the next one,
        // unless a thread that submits first takes the lead (and the write into its group).
        let next = waiting.first
        lock.unlock()
        next?.wake.signal()
        for member in members where member !== write { member.wake.signal() }
        if let failure = write.failure { throw failure }
    }

    /// Says that work about to be handed to another thread will submit a write: a leader about
    /// to commit waits for it, up to its deadline, until the thread that runs the work takes
    /// the announcement over (``expectWrite(adoptingAnnouncement:)``) and then submits or settles.
    func announceWrite() {
        lock.lock()
        announced += 1
        lock.unlock()
    }

    /// Says that the calling thread is about to submit a write: until it does (or calls
    /// ``settleExpectedWrite()``), a leader about to commit waits for it, up to its deadline.
    /// `adoptingAnnouncement`: the thread runs work that was announced (``announceWrite()``),
    /// whose announcement this replaces.
    func expectWrite(adoptingAnnouncement: Bool = false) {
        let thread = pthread_self()
        lock.lock()
        if adoptingAnnouncement && announced > 0 { announced -= 1 }
        if !expected.contains(where: { pthread_equal($0, thread) != 0 }) { expected.append(thread) }
        lock.unlock()
    }

    /// Withdraws the calling thread's ``expectWrite()`` if no write of it came since (the write
    /// it expected changed nothing, or failed before reaching the store).
    func settleExpectedWrite() {
        lock.lock()
        let removed = removeExpectation()
        let wake = removed && leaderAwaitsArrival
        lock.unlock()
        if wake { wakeLeader() }
    }

    /// The longest a group's leader waits for expected writes (``arrivalDeadline()``); tests
    /// set it long, so that an expected write joins whatever the scheduler does.
    var expectedWriteWait: TimeInterval {
        get {
            lock.lock()
            defer { lock.unlock() }
            return arrivalWait
        }
        set {
            lock.lock()
            arrivalWait = newValue
            lock.unlock()
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
        lock.lock()
        defer { lock.unlock() }
        return expected.count + announced
    }

    /// Removes the calling thread from `expected`; whether it was there. Called with
    /// `lock` held.
    @discardableResult
    private func removeExpectation() -> Bool {
        guard !expected.isEmpty else { return false }
        let thread = pthread_self()
        guard let index = expected.firstIndex(where: { pthread_equal($0, thread) != 0 }) else { return false }
        expected.remove(at: index)
        return true
    }

    /// Wakes the leader if it waits for an expected write. Called without `lock` held.
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
        lock.lock()
        defer { lock.unlock() }
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
                lock.lock()
                leaderAwaitsArrival = false
                lock.unlock()
                return
            }
        }
    }

    /// Whether the leader has to go on waiting for expected writes (none is waiting, and some
    /// thread or announcement still expects one), kept in `leaderAwaitsArrival` under the same
    /// lock as the check, so that writes and settlements know to wake it.
    private func leaderStillAwaitsArrival() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        leaderAwaitsArrival = waiting.isEmpty && (!expected.isEmpty || announced > 0)
        return leaderAwaitsArrival
    }

    /// The writes waiting for the running group to finish (for tests).
    var waitingCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return waiting.count
    }

    /// What the queue has done so far.
    var snapshot: Counters {
        lock.lock()
        defer { lock.unlock() }
        return counters
    }
}
