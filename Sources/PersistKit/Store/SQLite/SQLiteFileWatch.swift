import Foundation

/// Notices when a SQLite store's file, or its `-wal` file, is no longer the one the store
/// opened, and then refuses every write.
///
/// SQLite keeps its files open by descriptor and never looks at their paths again, so a store
/// file renamed over by another, or a `-wal` file deleted, under a running process goes
/// unnoticed: writes "succeed" into a file no one can open any more, and a later process may
/// even apply the old `-wal` to the new file. ``check(_:)`` runs before every write
/// transaction (two `stat` calls) and compares both files' identities with the ones seen at
/// open. On the first mismatch it rescues what the connection still sees (see ``rescue(_:)``)
/// and from then on throws ``PersistenceError/Code/persistentStoreReplaced``; reads go on,
/// from the file the store opened. See `docs/stores.md` ("The store file replaced").
final class SQLiteFileWatch: Sendable {
    struct State {
        /// The store file's identity at open.
        var store: SQLiteFileIdentity?
        /// The `-wal` file's identity, once it exists (WAL mode only).
        var wal: SQLiteFileIdentity?
        /// The error every write throws once a change was seen.
        var failure: PersistenceError?
    }

    /// The store file's path.
    let path: String
    /// `path` and `path` followed by `-wal`, as C strings made once: ``check(_:)`` looks at
    /// both before every write.
    private let pathCString: ContiguousArray<CChar>
    private let walPathCString: ContiguousArray<CChar>
    /// Whether the store is in WAL mode, so its `-wal` file is watched too.
    let watchesWAL: Bool
    private let state: Locked<State>

    /// Records the identities of `path` and, when `watchesWAL`, of `path-wal` now.
    init(path: String, watchesWAL: Bool) {
        self.path = path
        self.pathCString = path.utf8CString
        self.walPathCString = (path + "-wal").utf8CString
        self.watchesWAL = watchesWAL
        state = Locked(State(store: SQLiteFileIdentity.of(cString: pathCString),
                             wal: watchesWAL ? SQLiteFileIdentity.of(cString: walPathCString) : nil))
    }

    /// The error writes throw, once the files were found changed.
    var failure: PersistenceError? { state.withLock { $0.failure } }

    /// Throws ``PersistenceError/Code/persistentStoreReplaced`` when the store file or its
    /// `-wal` is not the one opened (rescuing first, the first time). Called with the store's
    /// connection, under the store's lock, before a write transaction begins.
    func check(_ connection: SQLiteConnection) throws {
        let problem: String? = try state.withLock { state in
            if let failure = state.failure { throw failure }
            guard let opened = state.store else {
                state.store = SQLiteFileIdentity.of(cString: pathCString)
                return nil
            }
            guard let now = SQLiteFileIdentity.of(cString: pathCString) else {
                return "the store file was deleted or moved away while it was open"
            }
            if now != opened {
                return "the store file was replaced by another file while it was open (device:inode \(opened) is now \(now))"
            }
            guard watchesWAL else { return nil }
            let wal = SQLiteFileIdentity.of(cString: walPathCString)
            guard let recorded = state.wal else {
                state.wal = wal
                return nil
            }
            guard let wal else { return "its -wal file was deleted while the store was open" }
            if wal != recorded { return "its -wal file was replaced while the store was open (device:inode \(recorded) is now \(wal))" }
            return nil
        }
        guard let problem else { return }
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
            try fileWatch.check(connection)
            return try body(connection)
        }
    }
}
