import CSQLite

/// A time limit on reads (``StoreOptions/queryTimeout``), enforced with SQLite's progress handler.
///
/// "The sqlite3_progress_handler(D,N,X,P) interface causes the callback function X to be invoked
/// periodically during long running calls to sqlite3_step() … If the progress callback returns
/// non-zero, the operation is interrupted" (sqlite.org/c3ref/progress_handler.html). The handler
/// is installed once; it interrupts only while ``run(_:)`` has set a deadline, so saves and
/// migrations are never cut short. A pathological `LIKE` over a large table then fails with
/// `SQLITE_INTERRUPT`, which ``SQLiteStore`` reports as ``PersistenceError/Code/queryTimeout``.
final class SQLiteQueryLimit {
    // Not Sendable, and need not be: SQLite calls the handler synchronously on the thread
    // running the statement, which holds the store's lock (see `SQLiteStore.state`).
    /// The limit in seconds; 0 for none.
    let timeout: Double
    private var deadline: ContinuousClock.Instant?

    /// Virtual machine instructions between two checks of the clock.
    static let instructionsPerCheck: Int32 = 10_000

    init(timeout: Double) {
        self.timeout = timeout.isFinite ? max(0, timeout) : 0
    }

    /// Installs the handler on `connection`. The store keeps this object alive as long as the connection.
    func install(on connection: SQLiteConnection) {
        guard timeout > 0 else { return }
        connection.queryLimit = self
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_progress_handler(connection.handle, Self.instructionsPerCheck, { context in
            // The context is the fourth argument of sqlite3_progress_handler; never NULL here.
            guard let context else { return 0 }
            return Unmanaged<SQLiteQueryLimit>.fromOpaque(context).takeUnretainedValue().isPastDeadline ? 1 : 0
        }, context)
        // MATCHES runs one ICU match per row, possibly for long: give it the deadline too.
        let code = sqlite3_create_function_v2(connection.handle, "NSCoreDataMatches", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                              context, SQLiteFunctions.matches, nil, nil, nil)
        precondition(code == SQLITE_OK, "SQLiteQueryLimit: registering NSCoreDataMatches failed with code \(code)")
    }

    /// Whether a read is running and its deadline has passed.
    var isPastDeadline: Bool {
        guard let deadline else { return false }
        return ContinuousClock.now >= deadline
    }

    /// Runs `body` (one read) with the deadline set.
    func run<T>(_ body: () throws -> T) rethrows -> T {
        guard timeout > 0 else { return try body() }
        deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        defer { deadline = nil }
        return try body()
    }
}

extension SQLiteStore {
    /// ``withConnection(_:_:_:)`` for one read, bounded by ``StoreOptions/queryTimeout``: a read
    /// still running then is interrupted and fails with ``PersistenceError/Code/queryTimeout``.
    func withQueryConnection<T: Sendable>(_ what: String, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try withConnection(.sqlite, what) { connection in
            guard let limit = connection.queryLimit else { return try body(connection) }
            do {
                return try limit.run { try body(connection) }
            } catch let error as SQLiteError where error.extendedResultCode & 0xFF == SQLITE_INTERRUPT {
                throw PersistenceError(.queryTimeout, "\(what): the query ran longer than \(limit.timeout) s (queryTimeout) and was interrupted",
                                       path: url?.path, underlying: error.description)
            }
        }
    }
}
