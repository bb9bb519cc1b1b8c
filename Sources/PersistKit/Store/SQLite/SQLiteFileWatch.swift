import Foundation

/// Notices when a SQLite store's file, or its `-wal` file, is no longer the one the store
/// opened, and then refuses every write.
///
/// SQLite keeps its files open by descriptor and never looks at their paths again, so a store
/// file renamed over by another, or a `-wal` file deleted, under a running process goes
/// unnoticed: writes "succeed" into a file no one can open any more, and a later process may
/// even apply the old `-wal` to the new file. ``check(_:)`` runs before every write
/// transaction and compares both files' identities with the ones seen at open. On the first
/// mismatch it rescues what the connection still sees (see ``rescue(_:)``) and from then on
/// throws ``PersistenceError/Code/persistentStoreReplaced``; reads go on, from the file the
/// store opened. See `docs/stores.md` ("The store file replaced").
///
/// Both files are in one directory, and neither can be replaced, moved or deleted without
/// changing it. Where the kernel reports changes to the directory (``SQLiteDirectoryEvents``),
/// a check that found both files in place is trusted until an event names either file (or the
/// directory itself moved): later checks make no `stat` at all, only an `ioctl` asking whether
/// events are queued. Otherwise, once a check found both files in place right after taking a
/// settled stamp of the directory (``SQLiteDirectoryStamp``), later checks look at the
/// directory alone (one `stat` instead of two) for as long as its stamp stays the same. Neither
/// shortcut for paths that are symbolic links (their files may live in another directory), nor
/// on file systems not known to keep directory times exactly
/// (``SQLiteDirectoryStamp/keepsExactTimes(cString:)``), which are the local ones.
final class SQLiteFileWatch: Sendable {
    struct State {
        /// The store file's identity at open.
        var store: SQLiteFileIdentity?
        /// The `-wal` file's identity, once it exists (WAL mode only).
        var wal: SQLiteFileIdentity?
        /// The error every write throws once a change was seen.
        var failure: PersistenceError?
        /// The directory's stamp, settled, taken just before a check found both files in place:
        /// while the directory's stamp is the same, neither file changed.
        var trustedDirectory: SQLiteDirectoryStamp?
        /// The coarse time before which the directory, last seen changed too recently to be
        /// trusted, is not looked at (the checks look at both files meanwhile).
        var directoryUnsettledUntil: Int64 = 0
        /// Whether the directory may stand for the files: cleared for good once either path
        /// is found to be a symbolic link.
        var directoryStandsForFiles: Bool
        /// The count of events concerning the files (``SQLiteDirectoryEvents``) when a check
        /// last found both in place: while the count stays the same, neither changed.
        var trustedEventCount: UInt64?
        /// Checks answered by the directory's events, by the directory alone, and checks that
        /// looked at the files (for tests).
        var eventChecks = 0
        var directoryChecks = 0
        var fileChecks = 0
    }

    /// The store file's path.
    let path: String
    /// `path` and `path` followed by `-wal`, as C strings made once: ``check(_:)`` looks at
    /// both before every write.
    private let pathCString: ContiguousArray<CChar>
    private let walPathCString: ContiguousArray<CChar>
    /// The directory holding both files, as a C string.
    private let directoryCString: ContiguousArray<CChar>
    /// Whether the store is in WAL mode, so its `-wal` file is watched too.
    let watchesWAL: Bool
    /// The coarse real-time clock (``SQLiteDirectoryStamp/coarseNow()``; tests may pass another).
    private let clock: @Sendable () -> Int64
    private let state: Locked<State>
    /// The kernel's events about both files, where the directory stands for them and the
    /// kernel reports them.
    private let subscription: SQLiteDirectoryEvents.Subscription?

    /// Records the identities of `path` and, when `watchesWAL`, of `path-wal` now. `events`
    /// reports changes to the directory (none: the checks make `stat`s, as for a file system
    /// without `inotify`).
    init(path: String, watchesWAL: Bool, clock: @escaping @Sendable () -> Int64 = SQLiteDirectoryStamp.coarseNow,
         events: SQLiteDirectoryEvents? = SQLiteDirectoryEvents.shared) {
        self.path = path
        self.pathCString = path.utf8CString
        self.walPathCString = (path + "-wal").utf8CString
        let directory = (path as NSString).deletingLastPathComponent
        self.directoryCString = (directory.isEmpty ? "." : directory).utf8CString
        self.watchesWAL = watchesWAL
        self.clock = clock
        var isLink = false
        let store = SQLiteFileIdentity.of(cString: pathCString, isLink: &isLink)
        let wal = watchesWAL ? SQLiteFileIdentity.of(cString: walPathCString, isLink: &isLink) : nil
        // With one file to look at, the directory would save nothing.
        let standsForFiles = watchesWAL && !isLink && SQLiteDirectoryStamp.keepsExactTimes(cString: directoryCString)
        state = Locked(State(store: store, wal: wal, directoryStandsForFiles: standsForFiles))
        let name = (path as NSString).lastPathComponent
        self.subscription = standsForFiles ? events?.subscribe(directory: directoryCString, names: [name, name + "-wal"]) : nil
    }

    deinit {
        if let subscription { subscription.events.cancel(subscription) }
    }

    /// How many checks the directory answered alone, and how many looked at the files (for tests).
    var checkCounts: (directory: Int, files: Int) { state.withLock { ($0.directoryChecks, $0.fileChecks) } }

    /// How many checks the directory's events answered (for tests).
    var eventCheckCount: Int { state.withLock { $0.eventChecks } }

    /// Whether the kernel reports changes to the files (for tests).
    var watchesEvents: Bool { subscription != nil }

    /// The error writes throw, once the files were found changed.
    var failure: PersistenceError? { state.withLock { $0.failure } }

    /// Throws ``PersistenceError/Code/persistentStoreReplaced`` when the store file or its
    /// `-wal` is not the one opened (rescuing first, the first time, after `beforeRescue`).
    /// Called with the store's connection, under the store's lock, before a write transaction begins.
    func check(_ connection: SQLiteConnection, beforeRescue: () -> Void = {}) throws {
        let problem: String? = try state.withLock { state in
            if let failure = state.failure { throw failure }
            // Counted before the files are looked at: an event queued later counts after.
            let eventCount = state.directoryStandsForFiles ? subscription.flatMap { $0.events.changeCount(of: $0) } : nil
            if let eventCount, eventCount == state.trustedEventCount {
                state.eventChecks += 1
                return nil
            }
            // Read before the directory is looked at: see SQLiteDirectoryStamp.isSettled(at:).
            let now = state.directoryStandsForFiles ? clock() : 0
            var directory: SQLiteDirectoryStamp?
            if let trusted = state.trustedDirectory {
                directory = SQLiteDirectoryStamp.of(cString: directoryCString)
                if directory == trusted {
                    state.directoryChecks += 1
                    state.trustedEventCount = eventCount
                    return nil
                }
                state.trustedDirectory = nil
            } else if state.directoryStandsForFiles && now >= state.directoryUnsettledUntil {
                directory = SQLiteDirectoryStamp.of(cString: directoryCString)
            }
            state.fileChecks += 1
            var isLink = false
            let problem = compare(&state, store: SQLiteFileIdentity.of(cString: pathCString, isLink: &isLink),
                                       wal: watchesWAL ? SQLiteFileIdentity.of(cString: walPathCString, isLink: &isLink) : nil)
            if isLink { state.directoryStandsForFiles = false }
            state.trustedEventCount = problem == nil && state.directoryStandsForFiles ? eventCount : nil
            if problem == nil, state.directoryStandsForFiles, let directory {
                if directory.isSettled(at: now) {
                    state.trustedDirectory = directory
                } else {
                    state.directoryUnsettledUntil = directory.settlesAt
                }
            }
            return problem
        }
        guard let problem else { return }
        // The rescue's checkpoint must not meet another connection's (it would fail with BUSY).
        beforeRescue()
        let rescued = rescue(connection)
        var message = "\(problem); writes are refused until the store is opened again (persistd restarted)"
        if let rescued {
            message += "; everything saved before is in \(rescued)"
        } else {
            message += "; no copy of the data saved before could be written"
        }
        let error = PersistenceError(.persistentStoreReplaced, message, path: path)
        state.withLock { $0.failure = error }
        throw error
    }

    /// What changed, comparing the files' identities now (`store`, and `wal` when the `-wal` is
    /// watched) with the recorded ones, or `nil` when nothing did (recording an identity not
    /// known yet).
    private func compare(_ state: inout State, store: SQLiteFileIdentity?, wal: SQLiteFileIdentity?) -> String? {
        guard let opened = state.store else {
            state.store = store
            return nil
        }
        guard let store else {
            return "the store file was deleted or moved away while it was open"
        }
        if store != opened {
            return "the store file was replaced by another file while it was open (device:inode \(opened) is now \(store))"
        }
        guard watchesWAL else { return nil }
        guard let recorded = state.wal else {
            state.wal = wal
            return nil
        }
        guard let wal else { return "its -wal file was deleted while the store was open" }
        if wal != recorded { return "its -wal file was replaced while the store was open (device:inode \(recorded) is now \(wal))" }
        return nil
    }

    /// Connections of stores whose files were found changed, kept open until the process
    /// exits (see ``keepsOpen(_:)``).
    private static let keptOpen = Locked<[SQLiteConnection]>([])

    /// Whether `connection` must not be closed, because the files were found changed; if so,
    /// it is kept open until the process exits.
    ///
    /// Closing the last connection to a WAL database checkpoints the WAL and deletes the
    /// `-wal` and `-shm` files *by name*. Once the path names another file, those may be the
    /// new file's: closing could copy the new file's WAL frames into the old file and delete
    /// its `-wal`. A connection never closed leaves the files as a crash would, which SQLite
    /// recovers from; its WAL was already checkpointed and emptied by ``rescue(_:)``.
    func keepsOpen(_ connection: SQLiteConnection) -> Bool {
        guard failure != nil else { return false }
        Self.keptOpen.withLock { $0.append(connection) }
        return true
    }

    /// Saves what the connection still sees, which may be nowhere else any more.
    ///
    /// 1. `VACUUM INTO <store>.rescued-<seconds since 1970>`: a consistent copy of the database
    ///    the store opened, its WAL content included — all it ever acknowledged.
    /// 2. `PRAGMA wal_checkpoint(TRUNCATE)`: copies the WAL into the opened database file (so a
    ///    deleted `-wal`'s content reaches the store file, which is still in place) and empties
    ///    the WAL (so a `-wal` left next to a replacement file holds nothing of the old one).
    ///
    /// Returns the copy's path, or `nil` when it could not be written.
    private func rescue(_ connection: SQLiteConnection) -> String? {
        let copy = path + ".rescued-\(Int(Date().timeIntervalSince1970))"
        var written: String? = copy
        do {
            if FileManager.default.fileExists(atPath: copy) { try FileManager.default.removeItem(atPath: copy) }
            try connection.execute("VACUUM INTO ?", [.string(copy)])
        } catch {
            written = nil
        }
        if watchesWAL { try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        return written
    }
}

extension PersistenceError.Code {
    /// The store file, or its `-wal` file, was replaced, moved or deleted while the store had it
    /// open; writes are refused (persistd's own code; the daemon calls it `store_replaced`).
    public static let persistentStoreReplaced = PersistenceError.Code(rawValue: 134092)
}

extension SQLiteStore {
    /// ``withConnection(_:_:_:)`` for an operation that writes: first checks that the store
    /// file and its `-wal` are still the ones opened (``SQLiteFileWatch``).
    func withWriteConnection<T: Sendable>(_ code: PersistenceError.Code = .sqlite, _ what: String,
                                          _ body: (SQLiteConnection) throws -> T) throws -> T {
        try withConnection(code, what) { connection in
            try fileWatch.check(connection, beforeRescue: { checkpointer?.stop() })
            return try body(connection)
        }
    }
}
