import CSQLite
import Foundation
import Synchronization

/// Checkpoints a SQLite store's WAL on a thread and connection of its own, so that the thread
/// that commits a save does not wait for a checkpoint's `fsync` calls.
///
/// SQLite's automatic checkpoint runs inside the `COMMIT` that takes the WAL past
/// `wal_autocheckpoint` frames: that commit waits for the WAL to be synced, the frames copied
/// and the database file synced, and the next one for the restarted WAL's header to be
/// synced. The store installs this checkpointer's WAL hook on its connection instead
/// (`sqlite3_wal_hook` replaces the automatic checkpoints), and after each commit:
///
/// - when `threshold` frames or more are not yet checkpointed, it wakes the checkpointer
///   thread, which runs a `PASSIVE` checkpoint on its own connection (it never waits for
///   readers or the writer, and the writer never waits for it);
/// - a WAL starts again from its beginning only at a write that finds it checkpointed whole,
///   which a checkpoint running beside a steady stream of commits rarely achieves; so once no
///   commit came for ``quietTime``, the thread checkpoints what is left, and the next write
///   starts the WAL again;
/// - when the WAL holds `limit` frames (4 x `threshold`) or more, under writes that never
///   pause, the committing thread checkpoints itself, as SQLite would, after any background
///   checkpoint in progress: the WAL stays within `limit` frames plus one transaction's,
///   readers that pin a snapshot aside (`docs/stores.md`, "WAL size").
///
/// The WAL is synced about as often as with SQLite's own checkpoints (when `threshold` frames
/// are not yet checkpointed), so with `synchronous=NORMAL` a power loss can take back about as
/// much as before: `threshold` frames, and those committed while a checkpoint runs.
///
/// The WAL file's working size is then `limit` frames rather than `threshold`; a store whose
/// options set no `journal_size_limit` gets ``journalSizeLimit(pageSize:)``, so that the file
/// is not truncated and grown again at every restart (on ext4 that churn cost more than the
/// checkpoints saved).
// @unchecked Sendable: the mutable state below is guarded by `condition`; the atomics are read
// and written without it; `connection` is used only by the checkpointer thread while it runs a
// checkpoint, and by `stop()`'s caller once the thread has ended.
final class SQLiteCheckpointer: @unchecked Sendable {
    /// What the checkpointer did so far (for tests and the daemon's stop log).
    struct Counters: Sendable, Equatable {
        /// Checkpoints run on the checkpointer thread.
        var background = 0
        /// Checkpoints run on the committing thread, at the WAL's limit.
        var onCommit = 0
        /// Times a commit found the WAL started again from its beginning.
        var restarts = 0
    }

    /// Frames not yet checkpointed that wake the checkpointer thread (`wal_autocheckpoint`).
    let threshold: Int32
    /// Frames in the WAL at which the committing thread checkpoints itself.
    let limit: Int32
    /// ``limit`` as a multiple of ``threshold``.
    static let limitFactor: Int32 = 4
    /// How long without a commit before the thread checkpoints what is left of a WAL of
    /// ``threshold`` frames or more, so that the next write can restart it.
    static let quietTime: TimeInterval = 0.005
    /// How long the thread waits for work before it ends (it is started again when needed).
    static let idleTime: TimeInterval = 1

    /// The checkpointer's own connection to the store file.
    let connection: SQLiteConnection
    private let condition = NSCondition()
    /// A checkpoint is wanted (guarded by `condition`).
    private var requested = false
    /// The thread runs (guarded by `condition`).
    private var threadRunning = false
    /// A checkpoint runs on the thread, or on a committing thread (guarded by `condition`).
    private var backgroundRunning = false
    private var commitRunning = false
    /// The commit count when the last background checkpoint began, and when the last one that
    /// found the WAL finished began (guarded by `condition`).
    private var lastStartedAt: Int?
    private var lastCompleteAt: Int?
    private var counters = Counters()

    /// Set once by ``stop()``: no more background checkpoints; commits checkpoint themselves.
    private let stopped = Atomic<Bool>(false)
    /// Whether a wake-up is already asked for, so commits meanwhile skip the lock.
    private let wakePending = Atomic<Bool>(false)
    /// Whether the thread runs, readable without the lock (a hint for ``committed(frames:on:)``).
    private let threadAlive = Atomic<Bool>(false)
    /// Commits seen by the hook.
    private let commits = Atomic<Int>(0)
    /// The WAL's frames after the last commit.
    private let walFrames = Atomic<Int32>(0)
    /// The frames the last checkpoint left in the database file (0 once the WAL restarted).
    private let checkpointed = Atomic<Int32>(0)

    /// Opens the checkpointer's connection to the store file at `path` (through the VFS named
    /// `vfs`, as the store's own), checkpointing at `threshold` frames.
    ///
    /// The connection reads the database once, so that it opens the `-wal` file now, with the
    /// store's own connection: opened later, after the file was replaced, it could be another's.
    init(path: String, vfs: String?, threshold: Int32) throws(SQLiteError) {
        precondition(threshold > 0, "SQLiteCheckpointer: the threshold must be positive")
        self.threshold = threshold
        let (product, overflow) = threshold.multipliedReportingOverflow(by: Self.limitFactor)
        self.limit = overflow ? Int32.max : product
        connection = try SQLiteConnection(path: path, flags: [.readWrite, .noMutex], vfs: SQLiteWALWriteVFS.name(over: vfs))
        do {
            _ = try connection.int64("SELECT COUNT(*) FROM sqlite_master")
        } catch {
            try? connection.close()
            throw error
        }
    }

    /// What the checkpointer did so far.
    var counts: Counters { condition.withLock { counters } }

    /// The `journal_size_limit` for a WAL of `pageSize` pages that restarts at ``limit``
    /// frames: the WAL header, and `limit + threshold` frames (the margin for the transactions
    /// committed while the limit's checkpoint waits for a background one).
    func journalSizeLimit(pageSize: Int) -> Int {
        32 + (pageSize + 24) * (Int(limit) + Int(threshold))
    }

    /// The WAL's frames after the last commit (for tests).
    var walFramesAfterLastCommit: Int32 { walFrames.load(ordering: .relaxed) }

    /// Whether a background checkpoint that began after the last commit found the WAL
    /// finished: the next write starts it again, unless a reader uses it (for tests).
    var isWALFinished: Bool {
        condition.withLock { lastCompleteAt != nil && lastCompleteAt == commits.load(ordering: .relaxed) }
    }

    // MARK: - The committing thread

    /// The WAL hook: called by SQLite on the committing thread after each commit of the
    /// store's connection (`handle`), with the write lock released, the WAL holding `frames`.
    func committed(frames: Int32, on handle: OpaquePointer) {
        commits.add(1, ordering: .relaxed)
        let previous = walFrames.exchange(frames, ordering: .relaxed)
        // Fewer frames than after the last commit: the WAL started again from its beginning.
        if frames < previous {
            checkpointed.store(0, ordering: .relaxed)
            condition.withLock { counters.restarts += 1 }
        }
        if stopped.load(ordering: .relaxed) {
            if frames >= threshold { _ = SQLiteConnection.checkpointPassive(handle) }
            return
        }
        if frames >= limit {
            checkpointOnCommit(handle)
            return
        }
        let done = checkpointed.load(ordering: .relaxed)
        let pending = frames >= done ? frames - done : frames
        // Also wake a thread that ended while a WAL of threshold frames was left unfinished.
        if pending >= threshold || (frames >= threshold && !threadAlive.load(ordering: .relaxed)) { wake() }
    }

    /// Asks the thread for a checkpoint, starting it if it does not run.
    private func wake() {
        guard !wakePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        condition.withLock {
            requested = true
            if threadRunning {
                condition.signal()
            } else if !stopped.load(ordering: .relaxed) {
                threadRunning = true
                threadAlive.store(true, ordering: .relaxed)
                let thread = Thread { [self] in run() }
                thread.name = "persist-checkpoint"
                thread.start()
            }
        }
    }

    /// The limit reached: checkpoints on the committing thread, once a background checkpoint in
    /// progress has ended, so that this one copies the rest and the next write restarts the WAL.
    private func checkpointOnCommit(_ handle: OpaquePointer) {
        condition.withLock {
            while backgroundRunning { condition.wait() }
            commitRunning = true
        }
        let result = SQLiteConnection.checkpointPassive(handle)
        condition.withLock {
            commitRunning = false
            counters.onCommit += 1
            if result.code == SQLITE_OK { checkpointed.store(result.checkpointedFrames, ordering: .relaxed) }
            condition.broadcast()
        }
    }

    // MARK: - The checkpointer thread

    private func run() {
        condition.lock()
        while !stopped.load(ordering: .relaxed) {
            if requested {
                requested = false
                wakePending.store(false, ordering: .releasing)
                checkpoint()
                continue
            }
            // Commits came since the last checkpoint began, and the WAL is long enough to be
            // worth restarting: checkpoint the rest once they pause.
            let unfinished = lastStartedAt != commits.load(ordering: .relaxed) && walFrames.load(ordering: .relaxed) >= threshold
            if unfinished {
                let before = commits.load(ordering: .relaxed)
                if !condition.wait(until: Date(timeIntervalSinceNow: Self.quietTime)), !requested,
                   commits.load(ordering: .relaxed) == before {
                    checkpoint()
                }
                continue
            }
            if !condition.wait(until: Date(timeIntervalSinceNow: Self.idleTime)), !requested { break }
        }
        threadRunning = false
        threadAlive.store(false, ordering: .relaxed)
        condition.broadcast()
        condition.unlock()
    }

    /// Runs one background checkpoint. Called on the thread with `condition` locked; unlocks it
    /// while the checkpoint runs.
    private func checkpoint() {
        while commitRunning { condition.wait() }
        backgroundRunning = true
        lastStartedAt = commits.load(ordering: .relaxed)
        // Counted as done from now on, so that commits meanwhile do not ask for another at once.
        checkpointed.store(walFrames.load(ordering: .relaxed), ordering: .relaxed)
        condition.unlock()
        let result = connection.checkpointPassive()
        condition.lock()
        backgroundRunning = false
        counters.background += 1
        if result.code == SQLITE_OK { checkpointed.store(result.checkpointedFrames, ordering: .relaxed) }
        if result.isComplete { lastCompleteAt = lastStartedAt }
        condition.broadcast()
    }

    /// Ends background checkpoints, waiting for one in progress; from then on a commit that
    /// leaves ``threshold`` frames or more checkpoints itself, as SQLite's own hook does. The
    /// caller may then close ``connection`` (or keep it open, see ``SQLiteFileWatch``).
    func stop() {
        stopped.store(true, ordering: .relaxed)
        condition.withLock {
            condition.broadcast()
            while threadRunning || backgroundRunning { condition.wait() }
        }
    }
}
