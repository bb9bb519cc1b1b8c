import Foundation

/// Group commit: saves and primary-key allocations from many threads share transactions.
///
/// Every write goes through ``SQLiteStore/inGroupCommit(_:_:)``. The writes that queue up while
/// a transaction commits are run together in the next one. A write that fails (an
/// optimistic-locking conflict, a uniqueness violation, a bad row) gets its own error, and the
/// others are committed: the group's writes run straight in the transaction, and if one fails
/// the transaction is rolled back and the group run again with each write inside a `SAVEPOINT`
/// of its own, so that the failing one is rolled back alone (`ROLLBACK TO`).
/// Writes that queue up while the group's statements run join it before its `COMMIT`
/// (up to ``groupLimit`` writes a transaction): no write waits longer for its
/// acknowledgement than for a transaction of its own would make it, and one commit's pages
/// are written for all of them.
/// Each write's thread waits until `COMMIT` returned (or, for a queued write, its completion
/// runs only then, on the committer thread), so no save is acknowledged before it is durable; if `COMMIT` itself fails, every write of the group fails with that error and
/// nothing of it was written.
extension SQLiteStore {
    /// The most writes one transaction of the group commit runs, joiners included (the first
    /// group taken from the queue is never cut).
    static let groupLimit = 64

    /// Runs `body` (a write's statements) in the transaction of a group commit, and returns its
    /// result once that transaction committed. `body` may run more than once when the group
    /// has to be retried (another process held the write lock); its last run counts. SQLite
    /// errors become ``PersistenceError``s saying `what` failed.
    ///
    /// The body's result goes into a variable of this call, through its address: the write's
    /// closure captures the address, not the variable (a variable captured by an escaping
    /// closure is boxed on the heap and checked for exclusive access at each use, about 130
    /// instructions a save), and no class holds it either (a generic class's `deinit` looked up
    /// `Optional<T>`'s metadata in the runtime's cache at every save, about 600 instructions,
    /// beside the allocation). The body writes it on the thread that leads the write's group;
    /// this thread reads it only after `SQLiteCommitQueue.submit` returned, which happens after
    /// the group is done (the queue's lock and semaphore order the two).
    func inGroupCommit<T>(_ what: String, _ body: (SQLiteConnection) throws -> T) throws -> T {
        var value: T?
        try withUnsafeMutablePointer(to: &value) { slot in
            // The closure only waits in the queue while this call waits for its group, and is
            // cleared before the call returns: `slot` is never used after.
            try withoutActuallyEscaping(body) { body in
                let write = SQLiteCommitQueue.Write(what: what) { connection in slot.pointee = try body(connection) }
                defer { write.body = nil }
                try commitQueue.submit(write) { group in commitGroup(group) }
            }
        }
        guard let result = value else {
            // Cannot happen: a write without failure ran its body to the end in the committed group.
            throw PersistenceError(.persistentStoreSave, "\(what): the write was not run", path: url?.path)
        }
        return result
    }

    /// Queues `body` (a write's statements) for a transaction of the group commit and returns
    /// at once; `completion` is called on the group commit's committer thread once that
    /// transaction committed (`nil`), or with why the write failed (SQLite errors as
    /// ``PersistenceError``s saying `what` failed). `body` may run more than once, as for
    /// ``inGroupCommit(_:_:)``, on whichever thread leads its group. `leadingIfIdle`: with
    /// nothing else going on in the group commit, this thread runs the transaction and calls
    /// `completion` before returning (`SQLiteCommitQueue.submitQueued(_:leadingIfIdle:runGroup:)`).
    /// `completingOn`: where the committer thread has `completion` run instead
    /// (`SQLiteCommitQueue.Write.completingOn`).
    func inGroupCommitQueued(_ what: String, leadingIfIdle: Bool = false, _ body: @escaping (SQLiteConnection) throws -> Void,
                             completingOn: CompletionExecutor? = nil, completion: @escaping ((any Error)?) -> Void) {
        let write = SQLiteCommitQueue.Write(what: what, body: body, completion: completion, completingOn: completingOn)
        commitQueue.submitQueued(write, leadingIfIdle: leadingIfIdle) { [self] group in commitGroup(group) }
    }

    /// Runs `body`, which is about to make a write to this store (a context's `save()`), telling
    /// the group commit so: a group that is about to commit while `body` has not submitted its
    /// write yet waits for it a little (at most `SQLiteCommitQueue.expectedWriteWait`), so that saves made at the
    /// same time on several threads share one transaction. Changes nothing else: `body` runs,
    /// and its write commits, exactly as without.
    ///
    /// `adoptingAnnouncement`: `body` is the work a ``announceWrite()`` announced, on the thread
    /// it was handed to; the announcement ends when `body` does.
    public func expectingWrite<T, E: Error>(adoptingAnnouncement: Bool = false, _ body: () throws(E) -> T) throws(E) -> T {
        commitQueue.expectWrite(adoptingAnnouncement: adoptingAnnouncement)
        defer { commitQueue.settleExpectedWrite() }
        return try body()
    }

    /// Says that work about to be handed to another thread (a connection's requests, queued on
    /// its context) will make a write: a group about to commit waits for it a little, as for
    /// ``expectingWrite(adoptingAnnouncement:_:)``, which the work must run in with
    /// `adoptingAnnouncement` set, exactly once for each announcement.
    public func announceWrite() {
        commitQueue.announceWrite()
    }

    /// What the group commit has done since the store was opened: transactions run for groups,
    /// writes committed and failed, the largest group, and the queued writes committed by the
    /// thread that saved them because nothing else was going on (`ledWhenIdle`; persistd logs
    /// them when it stops).
    public var groupCommitCounters: (groups: Int, committed: Int, failed: Int, largestGroup: Int, ledWhenIdle: Int) {
        let counters = commitQueue.snapshot
        return (counters.groups, counters.committed, counters.failed, counters.largestGroup, counters.ledWhenIdle)
    }

    /// Runs `group`, and the writes that join it meanwhile, in one `BEGIN IMMEDIATE`
    /// transaction and sets each write's `failure`.
    private func commitGroup(_ group: [SQLiteCommitQueue.Write]) {
        // Every write run so far: a retry (the store was busy) runs them all again.
        var members = group
        let deadline = commitQueue.arrivalDeadline()
        do {
            // A write connection: the store file and its -wal are checked first (SQLiteFileWatch).
            try withWriteConnection(.sqlite, group.count == 1 ? group[0].what : "committing \(group.count) writes failed") { connection in
                // First every write straight in the transaction; only if one fails is the
                // group run again, each write in a savepoint of its own (``run(_:isolated:_:)``).
                var isolated = false
                while true {
                    for write in members { write.failure = nil }
                    do {
                        try connection.inTransaction(.immediate) {
                            for write in members { try run(write, isolated: isolated, connection) }
                            // Writes that queued while these ran join before the commit.
                            while members.count < Self.groupLimit {
                                let joiners = commitQueue.takeJoiners(limit: Self.groupLimit - members.count, waitingUntil: deadline)
                                if joiners.isEmpty { break }
                                members += joiners
                                for write in joiners { try run(write, isolated: isolated, connection) }
                            }
                        }
                        break
                    } catch {
                        // Keys reserved ahead in a transaction rolled back are not covered by
                        // Z_MAX any more: the connection forgets its blocks (SQLiteKeyReservations).
                        connection.keyReservations.forgetBlocks()
                        // A write alone owns its failure; a busy store is retried as a whole
                        // (SQLiteStore+Busy.swift); and a failure of the isolated run ended
                        // the transaction itself (SQLITE_FULL and the like).
                        if isolated || members.count == 1 { throw error }
                        if let sqlite = error as? SQLiteError, Self.isBusy(sqlite) { throw error }
                        isolated = true
                    }
                }
            }
        } catch {
            for write in members { write.failure = write.failure ?? mapped(error, write.what) }
        }
    }

    /// Runs `write`'s statements in the group's transaction: straight, or, when `isolated`, in a
    /// savepoint of their own (``runInSavepoint(_:_:)``).
    ///
    /// A group runs its writes straight first: a savepoint per write costs its `SAVEPOINT` and
    /// `RELEASE` statements and a copy of every page the write changes (SQLite's statement
    /// journal keeps each page's content as the savepoint began), about a sixth of what a
    /// one-row save with history costs the committing thread. Writes rarely fail; when one
    /// does, the group's transaction is rolled back and every write of the group run again,
    /// isolated, so that the failing one is rolled back alone. (A write's statements may run
    /// more than once anyway: a busy store retries the group.)
    private func run(_ write: SQLiteCommitQueue.Write, isolated: Bool, _ connection: SQLiteConnection) throws {
        if isolated {
            try runInSavepoint(write, connection)
        } else {
            try write.body?(connection)
        }
    }

    /// Runs `write` inside a `SAVEPOINT` of the group's transaction: if it fails, it alone is
    /// rolled back and given its failure; an error that ends the whole transaction (SQLITE_FULL
    /// and the like), or a busy store, is thrown for the group to fail, or be retried, as one.
    private func runInSavepoint(_ write: SQLiteCommitQueue.Write, _ connection: SQLiteConnection) throws {
        // Prepared once per connection, found by integer keys.
        func run(_ key: Int, _ sql: String) throws {
            try connection.cachedStatement(key: key) { sql }.execute()
        }
        try run(SQLiteWriteStatementKey.savepoint, #"SAVEPOINT "persist_write""#)
        do {
            try write.body?(connection)
            try run(SQLiteWriteStatementKey.releaseSavepoint, #"RELEASE "persist_write""#)
        } catch {
            if connection.isAutocommit { throw error }
            if let sqlite = error as? SQLiteError, Self.isBusy(sqlite) { throw error }
            try run(SQLiteWriteStatementKey.rollbackToSavepoint, #"ROLLBACK TO "persist_write""#)
            try run(SQLiteWriteStatementKey.releaseSavepoint, #"RELEASE "persist_write""#)
            connection.keyReservations.forgetBlocks()
            // History strings the write inserted are gone with it.
            connection.historyStrings.rollBack()
            write.failure = mapped(error, write.what)
        }
    }

    /// `error` as the store reports it: SQLite errors become ``PersistenceError``s.
    private func mapped(_ error: any Error, _ what: String) -> any Error {
        if let error = error as? SQLiteError { return error.persistenceError(.sqlite, what, path: url?.path) }
        return error
    }
}
