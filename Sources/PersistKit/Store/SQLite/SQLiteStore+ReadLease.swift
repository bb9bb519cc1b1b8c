import Foundation

/// Read leases: the single-object reads of one ``ReadScope`` (a context's `perform` or
/// `performAndWait` block) share one SQLite read transaction.
///
/// Outside a transaction every `SELECT` starts and ends its own read transaction, which costs
/// SQLite more than the read of one row by its key (locks on the database and the WAL index,
/// checks of the schema and the WAL header). From the second single-object read of a scope on
/// (``rows(for:)``, ``row(for:)``: faults firing, `existingObject(with:)`), the store opens a
/// read transaction (`BEGIN`) and keeps it after the read; later reads of the same scope run in
/// it. The transaction ends (`COMMIT`) when:
/// - the scope ends (its block returns): the WAL is never pinned beyond the block;
/// - anything else uses the connection first: a save, a fetch, a count, another scope's read
///   (``withConnection(_:_:_:)`` ends it before running), so a context always sees its own
///   saves and other contexts of the process never read an older snapshot than before;
/// - the store closes.
/// Other processes' commits made during the block are seen by the block's next read after one
/// of these, at the latest by the next block (docs/core-data-differences.md, "Stores"). Only
/// stores in WAL mode lease: with a rollback journal a reader blocks other connections' commits.
extension SQLiteStore: ReadLeaseHolder {
    /// ``withConnection(_:_:_:)`` for a read of single objects, sharing the current scope's
    /// read transaction (opening it from the scope's second read on).
    func withLeasedReadConnection<T: Sendable>(_ what: String, _ body: (SQLiteConnection) throws -> T) throws -> T {
        // WAL only: there a read transaction never blocks another connection's commit. With a
        // rollback journal its SHARED lock would keep every other connection from committing
        // until the block ends.
        guard fileWatch.watchesWAL, let current = ReadScope.unretainedCurrent else { return try withConnection(.sqlite, what, body) }
        // The scope outlives this call: it is the running block's, kept until the block returns.
        return try current._withUnsafeGuaranteedRef { scope in
            do {
                // One attempt first, outside the retry loop: it reads the clock only once the
                // store is found busy, not on every read of one row.
                do {
                    return try leasedRead(scope, body)
                } catch let error as SQLiteError where Self.isBusy(error) {
                    return try Self.retryingWhileBusy(timeout: busyTimeout, what: what, path: url?.path) {
                        try leasedRead(scope, body)
                    }
                }
            } catch let error as SQLiteError {
                throw error.persistenceError(.sqlite, what, path: url?.path)
            }
        }
    }

    /// One attempt of ``withLeasedReadConnection(_:_:)``: under the store's lock, ends another
    /// scope's lease, opens this scope's from its second read on, and runs `body`.
    private func leasedRead<T>(_ scope: ReadScope, _ body: (SQLiteConnection) throws -> T) throws -> T {
        let owner = ObjectIdentifier(scope)
        return try state.withLock { state throws -> T in
            guard let connection = state.connection else {
                throw PersistenceError(.persistentStoreOperation, "the store is closed", path: url?.path)
            }
            if state.readLease != owner {
                Self.endReadLease(&state, connection)
                // The scope's first read runs alone: a block that reads one object pays nothing extra.
                if scope.reads > 0, connection.isAutocommit, connection.executeLeaseStatement("BEGIN") {
                    state.readLease = owner
                    scope.holds(self)
                }
            }
            scope.reads += 1
            do {
                return try body(connection)
            } catch {
                // A failed read ends the transaction, so a retry starts afresh.
                Self.endReadLease(&state, connection)
                throw error
            }
        }
    }

    /// Ends the read transaction of scope `owner`, if the connection still holds it.
    func endReadLease(of owner: ObjectIdentifier) {
        state.withLock { state in
            guard state.readLease == owner, let connection = state.connection else { return }
            Self.endReadLease(&state, connection)
        }
    }

    /// Ends the open read lease, if any (called under the store's lock).
    static func endReadLease(_ state: inout State, _ connection: SQLiteConnection) {
        guard state.readLease != nil else { return }
        state.readLease = nil
        // A read transaction commits unless a statement is still running; every read resets
        // its statement, but if one did not, ROLLBACK still ends the transaction.
        if !connection.isAutocommit && !connection.executeLeaseStatement("COMMIT") {
            _ = connection.executeLeaseStatement("ROLLBACK")
        }
    }
}
