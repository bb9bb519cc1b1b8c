import Foundation

/// Read snapshots: a read made of several statements whose rows go to a consumer as they are
/// read (a streamed prefetch) runs in one read transaction, begun before its first statement.
///
/// Outside a transaction every `SELECT` reads the store as of its own start, so a commit by
/// another connection between two statements of one read shows the second statement a later
/// store than the first. And ``SQLiteStore/withConnection(_:_:_:)`` runs its body again when the
/// store is found locked, which is safe for a body that gathers its result before returning,
/// but hands a consumer the rows it already had a second time. Here the wait for locks happens
/// while the transaction begins (``SQLiteConnection/beginReadSnapshot()``), before any row is
/// read; once the snapshot is held, the reads need no further lock. Should the store still be
/// found locked, the read starts again only if no row was handed over yet; after that, it fails.
extension SQLiteStore {
    /// Runs `body` in a read transaction begun under the store's lock: every statement of
    /// `body` reads the same snapshot of the store. Waiting for another connection's lock (the
    /// busy handler, then a retry with backoff, for at most ``busyTimeout`` seconds) happens
    /// while the transaction begins. `body` sets `handedOver` before it hands its first row to
    /// anyone: from then on it is never run again, and an SQLite error inside it, `SQLITE_BUSY`
    /// included, is thrown as a ``PersistenceError`` with code ``PersistenceError/Code/sqlite``.
    /// The transaction ends when `body` returns or throws.
    ///
    /// With `oneStatement`, `body` runs one statement, which reads one snapshot by itself: no
    /// transaction is begun, and the wait for locks happens at the statement's first step,
    /// before it yields a row.
    func withReadSnapshot<T: Sendable>(_ what: String, oneStatement: Bool = false,
                                       _ body: (SQLiteConnection, _ handedOver: inout Bool) throws -> T) throws -> T {
        do {
            return try Self.retryingWhileBusy(timeout: busyTimeout, what: what, path: url?.path) {
                try onConnection { connection throws -> T in
                    if !oneStatement { try connection.beginReadSnapshot() }
                    defer { if !oneStatement { connection.endReadSnapshot() } }
                    var handedOver = false
                    do {
                        return try body(connection, &handedOver)
                    } catch let error as SQLiteError where handedOver {
                        // Not retried, busy or not: the rows handed over would be handed over again.
                        throw snapshotError(error, what)
                    }
                }
            }
        } catch let error as SQLiteError {
            throw error.persistenceError(.sqlite, what, path: url?.path)
        }
    }

    /// An SQLite error met inside a read snapshot's body after it handed rows over, as the
    /// error the read fails with.
    private func snapshotError(_ error: SQLiteError, _ what: String) -> PersistenceError {
        guard Self.isBusy(error) else { return error.persistenceError(.sqlite, what, path: url?.path) }
        return PersistenceError(.sqlite,
                                "\(what): the store was found locked (SQLITE_BUSY) after some of the rows were handed over; the read is not repeated, as that would hand them over again",
                                path: url?.path, underlying: error.description)
    }
}
