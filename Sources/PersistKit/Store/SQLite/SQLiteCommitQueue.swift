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
/// A write can also be queued without its thread waiting (``submitQueued(_:runGroup:)``): the
/// queue's committer thread, started on first use and ended after a second without work, leads
/// the groups such writes start and runs each queued write's completion once its group is done,
/// or hands it to the write's executor (``Write/completingOn``) (a group led by a waiting thread
/// hands its queued members' completions to the committer).
/// A context's save then frees its thread while the store commits, and a group of N queued
/// writes costs the committer one wake-up instead of N threads parked on semaphores. A queued
/// write submitted with nothing else going on may be led by its own thread instead
/// (`leadingIfIdle`), which then runs its completion itself: a lone write costs no wake-up.
///
/// A thread about to make a write can say so first (``expectWrite()``, ``settleExpectedWrite()``;
/// what PostgreSQL's `commit_delay` with `commit_siblings` guesses from the backends in a
/// transaction): a leader whose statements ran waits, a bounded time, for the writes expected
/// from other threads to join its group before it commits (``takeJoiners(limit:waitingUntil:)``),
/// so the saves of many threads running at once share one `COMMIT` rather than a few each.
final class SQLiteCommitQueue: @unchecked Sendable {
    // @unchecked Sendable: `waiting`, `joined`, `leaderActive`, `expected`, `announced`, `leaderAwaitsArrival`,
    // `arrivalWait`, the counters, the committer's state (`completions`, `committerRunning`,
    // `queuedRunGroup`), and every queued write's
    // `failure` and `isDone` are read and written only while `lock` is held, except a write's
    // `failure` while the leader runs its group — the write's own thread is then parked on its
    // semaphore in `submit`, and reads it only once woken, after taking `lock` (which the
    // leader took after setting it); a queued write has no such thread: the committer reads its
    // `failure` and clears its `completion` and `body` after taking it from `completions` under
    // `lock`, once its group is done, when no other thread touches the write any more (or, for
    // a queued write its own thread led, that thread, after its group is done; or, for a write
    // with an executor, the executor's thread, which the committer hands the whole write to).

    /// One write waiting for, or taking part in, a group.
    final class Write: @unchecked Sendable {
        // @unchecked Sendable: a write is touched under the queue's `lock`, or by one thread
        // at a time as the queue's comment says; a queued write with an executor is handed to
        // it whole once its group is done and the committer let go of it
        // (``completeQueued()``), when no other thread touches it any more.
        /// Runs the write's statements on the connection, inside the group's transaction;
        /// cleared once its group ran: by the write's own thread (the closure does not outlive
        /// the call that submitted it), or, for a queued write, by the committer.
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
        ///
        /// Made only for a write whose thread may have to wait: in `submit`, under the queue's
        /// lock, when the write is queued while another thread leads a group. A write that
        /// finds no group running leads its own at once, and a queued write has no thread
        /// waiting, so most writes of a lone saver make none (a semaphore made and destroyed
        /// cost about a tenth of the store's part of a one-object save). A leader signals only
        /// members and waiting writes, which were queued while it led and so have one.
        private(set) var wake: DispatchSemaphore?
        /// For a write queued without a waiting thread (``SQLiteCommitQueue/submitQueued(_:leadingIfIdle:runGroup:)``):
        /// called with its `failure` on the committer thread once its group is done (or on the
        /// thread that led the group itself), then cleared with `body` (``complete()``).
        var completion: (((any Error)?) -> Void)?
        /// Whether no thread waits for the write: it was made with a completion, which reports
        /// the outcome.
        let isQueued: Bool
        /// Where the committer has a queued write's completion run (``completeQueued()``):
        /// `nil`, on the committer thread itself. With an executor, the completion, and the
        /// release of what the write holds, run where the executor runs them, so the thread
        /// that made the write's objects (an event loop) frees them too: freed on the
        /// committer, each went back to the other thread's `malloc` arena under its lock,
        /// and the two threads waited for each other there.
        let completingOn: CompletionExecutor?

        init(what: String, body: @escaping (SQLiteConnection) throws -> Void, completion: (((any Error)?) -> Void)? = nil,
             completingOn: CompletionExecutor? = nil) {
            self.what = what
            self.body = body
            self.completion = completion
            self.isQueued = completion != nil
            self.completingOn = completingOn
        }

        /// ``wake``, made if the write has none yet; called with the queue's lock held.
        func madeWake() -> DispatchSemaphore {
            if let wake { return wake }
            let made = DispatchSemaphore(value: 0)
            wake = made
            return made
        }

        /// Calls the queued write's completion with its `failure`, once its group is done,
        /// clearing the completion and `body` first (neither outlives the write's group).
        func complete() {
            let completion = self.completion
            self.completion = nil
            body = nil
            completion?(failure)
        }

        /// ``complete()``, on the committer thread: handed to ``completingOn`` when the write
        /// has one, else called at once.
        func completeQueued() {
            guard let completingOn else { return complete() }
            completingOn { self.complete() }
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
        /// Queued writes whose own thread led their group, the queue being idle
        /// (``SQLiteCommitQueue/submitQueued(_:leadingIfIdle:runGroup:)``).
        var ledWhenIdle = 0
    }

    /// Guards the queue's state (see the `@unchecked Sendable` note above); the committer thread
    /// waits on it for work (signalled by ``wakeCommitter()``).
    ///
    /// The state below that every write touches has its dynamic exclusivity checks off: it is
    /// read and written only under this lock, and the checks cost about 400 instructions a
    /// save under callgrind (workload 6).
    private let lock = NSCondition()
    /// Queued writes whose group is done, for the committer to complete.
    @exclusivity(unchecked) private var completions: [Write] = []
    /// Whether the committer thread runs (it ends after ``committerIdleTime`` without work).
    @exclusivity(unchecked) private var committerRunning = false
    /// How groups of queued writes are run, as the last ``submitQueued(_:runGroup:)`` gave it;
    /// dropped when the committer ends.
    private var queuedRunGroup: (([Write]) -> Void)?
    /// How long the committer thread waits for work before it ends.
    private static let committerIdleTime: TimeInterval = 1
    /// Wakes a leader waiting for expected writes (``takeJoiners(limit:waitingUntil:)``), which
    /// waits on it without holding `lock`. Its own lock is taken only on its own, or with `lock`
    /// taken inside it.
    private let arrival = NSCondition()
    /// The threads that expect to submit a write (``expectWrite()``) and have not yet.
    @exclusivity(unchecked) private var expected: [pthread_t] = []
    /// Writes announced for work handed to a thread that has not started it yet
    /// (``announceWrite()``, taken over by ``expectWrite(adoptingAnnouncement:)``).
    @exclusivity(unchecked) private var announced = 0
    /// Whether the running group's leader is waiting for expected writes.
    @exclusivity(unchecked) private var leaderAwaitsArrival = false
    /// The longest a group's leader waits, once its statements ran, for the writes other
    /// threads expect to make (``expectWrite()``) before it commits without them; 0: never.
    /// The store's ``StoreOptions/commitDelay``.
    private var arrivalWait: TimeInterval
    @exclusivity(unchecked) private var waiting: [Write] = []
    /// Writes the running group's leader took from `waiting` after the group began.
    @exclusivity(unchecked) private var joined: [Write] = []
    @exclusivity(unchecked) private var leaderActive = false
    @exclusivity(unchecked) private var counters = Counters()

    /// A queue whose leaders wait at most `arrivalWait` seconds for expected writes
    /// (``expectedWriteWait``).
    init(arrivalWait: TimeInterval = StoreOptions.defaultCommitDelay) {
        self.arrivalWait = arrivalWait
    }

    /// Runs `write` in a group, leading the group if none is running; returns once the group's
    /// transaction committed, or throws why `write` failed. `runGroup` runs a group's writes in
    /// one transaction and sets each one's `failure`; it is called without the queue's lock.
    func submit(_ write: Write, runGroup: ([Write]) -> Void) throws {
        lock.lock()
        // Another thread leads: this one may wait, and is signalled, on the write's semaphore.
        // (With none leading, this thread leads, holding the lock until it does: a leader
        // waiting for arrivals, the one case that lets go of it below, is a leader running.)
        if leaderActive { _ = write.madeWake() }
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
            let wake = write.madeWake()
            lock.unlock()
            wake.wait()
            lock.lock()
        }
        if write.isDone {
            lock.unlock()
            if let failure = write.failure { throw failure }
            return
        }
        // Lead: take every write waiting, including this one (which is not woken: its thread
        // is this one).
        let (waiters, next) = leadGroup(runGroup, completingHere: write)
        lock.unlock()
        next?.wake?.signal()
        for member in waiters { member.wake?.signal() }
        if let failure = write.failure { throw failure }
    }

    /// Queues `write`, which has a `completion`, and returns at once: the write joins the
    /// running group or the next one (led by the committer thread, unless a waiting thread
    /// leads it first), and its completion is called on the committer thread (or handed to the
    /// write's ``Write/completingOn``) once its group's `COMMIT` returned, or the write failed.
    /// `runGroup` is as for ``submit(_:runGroup:)``.
    ///
    /// `leadingIfIdle`: when no group runs, no write waits, no completion is pending, and no
    /// other thread expects or announced a write, the calling thread leads the write's group
    /// itself and calls the completion before this returns, as a write made alone by a waiting
    /// thread would: a lone write then wakes neither the committer nor, through it, the thread
    /// waiting for its completion. Writes that come meanwhile join the group, or wait for the
    /// next one, as they would for the committer's group; the completions of queued writes that
    /// joined still run on the committer thread.
    func submitQueued(_ write: Write, leadingIfIdle: Bool = false, runGroup: @escaping ([Write]) -> Void) {
        precondition(write.isQueued, "SQLiteCommitQueue: a queued write needs a completion")
        lock.lock()
        removeExpectation()
        if leadingIfIdle && isIdle {
            counters.ledWhenIdle += 1
            waiting.append(write)
            let (waiters, next) = leadGroup(runGroup, completingHere: write)
            lock.unlock()
            next?.wake?.signal()
            for member in waiters { member.wake?.signal() }
            write.complete()
            return
        }
        waiting.append(write)
        queuedRunGroup = runGroup
        let awaiting = leaderAwaitsArrival
        // A running group takes it (as a joiner, or its leader wakes the committer for the
        // next group when it ends); with none running, the committer leads.
        if !leaderActive { wakeCommitter() }
        lock.unlock()
        if awaiting { wakeLeader() }
    }

    /// Runs every waiting write as one group, this thread leading: called with `lock` held and
    /// no group running, returns with `lock` held, once the group is done. Marks the members
    /// done and hands the queued ones' completions to the committer; returns the members whose
    /// threads wait (to wake), and the waiting write to wake to lead the next group (`nil` when
    /// none waits, or when the oldest is queued: the committer then leads).
    ///
    /// `completingHere`: the member the calling thread submitted, whose outcome it reads (or,
    /// for a queued one, whose completion it runs) itself once this returns; it is neither
    /// handed to the committer nor returned to wake.
    private func leadGroup(_ runGroup: ([Write]) -> Void, completingHere own: Write? = nil) -> (waiters: [Write], next: Write?) {
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
        // Sized only for a group of several: a lone write led by its own thread has none to
        // wake, and then no list is allocated.
        var waiters: [Write] = []
        if members.count > 1 { waiters.reserveCapacity(members.count) }
        for member in members {
            member.isDone = true
            if member.failure == nil { counters.committed += 1 } else { counters.failed += 1 }
            if member === own { continue }
            if member.isQueued { completions.append(member) } else { waiters.append(member) }
        }
        // The oldest write that came too late for this group is woken to lead the next one,
        // unless a thread that submits first takes the lead (and the write into its group).
        var next = waiting.first
        if next?.isQueued == true { next = nil }
        if !completions.isEmpty || (waiting.first?.isQueued ?? false) { wakeCommitter() }
        return (waiters, next)
    }

    /// Whether nothing is going on that a write led at once could delay or leave out: no group
    /// runs, no write waits, no completion is pending for the committer, and no thread expects
    /// or announced a write. Called with `lock` held, after the caller's own expectation was
    /// removed.
    private var isIdle: Bool {
        !leaderActive && waiting.isEmpty && completions.isEmpty && expected.isEmpty && announced == 0
    }

    /// Wakes the committer thread, starting it if it does not run. Called with `lock` held.
    private func wakeCommitter() {
        if committerRunning {
            lock.signal()
            return
        }
        committerRunning = true
        let thread = Thread { [self] in runCommitter() }
        thread.name = "persist-commit"
        thread.start()
    }

    /// The committer thread: completes the queued writes of groups that are done, and leads a
    /// group whenever none runs and the oldest waiting write is queued; ends after
    /// ``committerIdleTime`` without either.
    private func runCommitter() {
        lock.lock()
        while true {
            if !completions.isEmpty {
                let done = completions
                completions = []
                lock.unlock()
                for write in done { write.completeQueued() }
                lock.lock()
                continue
            }
            if !leaderActive, let first = waiting.first, first.isQueued, let runGroup = queuedRunGroup {
                let (waiters, next) = leadGroup(runGroup)
                lock.unlock()
                next?.wake?.signal()
                for member in waiters { member.wake?.signal() }
                lock.lock()
                continue
            }
            if !lock.wait(until: Date(timeIntervalSinceNow: Self.committerIdleTime)),
               completions.isEmpty, !(waiting.first?.isQueued ?? false) {
                committerRunning = false
                queuedRunGroup = nil
                break
            }
        }
        lock.unlock()
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

    /// The longest a group's leader waits for expected writes (``arrivalDeadline()``): the
    /// store's ``StoreOptions/commitDelay``. Tests set it long, so that an expected write joins
    /// whatever the scheduler does.
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
