import CSQLite

extension SQLiteConnection {
    /// What a checkpoint of the WAL found and did (`sqlite3_wal_checkpoint_v2`).
    struct CheckpointResult: Sendable, Equatable {
        /// The SQLite result code: `SQLITE_OK`, or `SQLITE_BUSY` when another connection was
        /// checkpointing, or an I/O error.
        var code: Int32
        /// The frames in the WAL when the checkpoint ran.
        var walFrames: Int32
        /// How many of them are in the database file now.
        var checkpointedFrames: Int32

        /// Whether the checkpoint left every frame of the WAL in the database file, so the
        /// next write starts the WAL again from its beginning (unless a reader still uses it).
        var isComplete: Bool { code == SQLITE_OK && walFrames >= 0 && checkpointedFrames == walFrames }
    }

    /// Runs a `PASSIVE` checkpoint of the main database's WAL: copies as many frames as it can
    /// into the database file without waiting for readers or writers, syncing the WAL before
    /// and the database file after ("sqlite3_wal_checkpoint_v2", sqlite.org/c3ref/wal_checkpoint_v2.html).
    func checkpointPassive() -> CheckpointResult {
        Self.checkpointPassive(handle)
    }

    /// ``checkpointPassive()`` on a raw handle, for the WAL hook, which SQLite calls with the
    /// handle of the connection that committed.
    static func checkpointPassive(_ handle: OpaquePointer) -> CheckpointResult {
        var frames: Int32 = -1
        var checkpointed: Int32 = -1
        let code = sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_PASSIVE, &frames, &checkpointed)
        return CheckpointResult(code: code, walFrames: frames, checkpointedFrames: checkpointed)
    }

    /// Installs `checkpointer`'s WAL hook (`sqlite3_wal_hook`), which replaces SQLite's
    /// automatic checkpoints on this connection, or removes the hook with `nil`.
    ///
    /// The connection does not retain `checkpointer`: its owner keeps it alive for as long as
    /// the hook is installed, and removes the hook before letting it go.
    func setWALHook(_ checkpointer: SQLiteCheckpointer?) {
        guard let checkpointer else {
            sqlite3_wal_hook(handle, nil, nil)
            return
        }
        let context = Unmanaged.passUnretained(checkpointer).toOpaque()
        sqlite3_wal_hook(handle, { context, handle, _, frames in
            // "The first parameter passed to the callback function … is a copy of the third
            // parameter passed to sqlite3_wal_hook()", never NULL here; the second is the handle.
            if let context, let handle {
                Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(frames: frames, on: handle)
            }
            // Any other result would make the committed statement report an error.
            return SQLITE_OK
        }, context)
    }
}
