import CSQLite
import Foundation

/// One SQLite database connection: the `sqlite3` handle, owned by this object.
///
/// The connection is not `Sendable`: like GRDB's `Database`, it is used by one thread at a time,
/// here under ``SQLiteStore``'s lock. Close it explicitly with ``close()``; `deinit` closes a
/// connection that was left open as a last resort, and asserts in debug builds.
public final class SQLiteConnection {
    /// How to open a connection.
    public struct OpenFlags: OptionSet, Sendable {
        /// The raw `SQLITE_OPEN_*` bits.
        public let rawValue: Int32
        /// Creates flags from raw bits.
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// `SQLITE_OPEN_READONLY`.
        public static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
        /// `SQLITE_OPEN_READWRITE`.
        public static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
        /// `SQLITE_OPEN_CREATE`: create the file if it does not exist.
        public static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
        /// `SQLITE_OPEN_NOMUTEX`: the connection is confined by our own lock, so SQLite's
        /// per-connection mutex is not needed ("multi-thread" mode).
        public static let noMutex = OpenFlags(rawValue: SQLITE_OPEN_NOMUTEX)
    }

    /// The connection handle; valid until ``close()``.
    let handle: OpaquePointer
    /// The database file's path.
    public let path: String
    private var isClosed = false
    private let cache = SQLiteStatementCache()
    /// The statements that read one row by key, one per entity read so far (see
    /// ``singleRowStatement(for:)``). The entity is held so its identity cannot be reused.
    @exclusivity(unchecked) private var singleRowStatements: [(entity: EntityDescription, statement: SQLiteStatement)] = []
    // Unchecked exclusivity for the three below, as for `singleRowStatements`: the connection
    // is used by one thread at a time (the store's lock), and each save paid about 200
    // instructions of dynamic checks on them under callgrind.
    @exclusivity(unchecked) private var transactionDepth = 0
    /// Primary keys reserved ahead by this connection's saves (see ``SQLiteKeyReservations``).
    @exclusivity(unchecked) var keyReservations = SQLiteKeyReservations()
    /// Keys of history strings seen in committed transactions (see ``SQLiteHistoryStrings``):
    /// kept pending inside a transaction, trusted at `COMMIT`, dropped at `ROLLBACK`.
    @exclusivity(unchecked) var historyStrings = SQLiteHistoryStrings()
    /// The slab that single-row reads on this connection decode into (``SQLiteStore/row(for:)``):
    /// one allocation per many lookups, as a fetch has one per many rows. At most 64 rows a
    /// slab, since the connection keeps its last slab (and the values of rows no one holds any
    /// more in it) until the next one is made. Used by the thread holding the connection, as
    /// the rest of it is.
    let rowSlab = SlotSlab(maximumRows: 64)

    /// The statement count and observer, shared with this connection's statements.
    let tally = SQLiteStatementTally()
    /// The number of statements started on this connection (each run of a prepared statement,
    /// each statement of ``execute(_:)``), for tests and diagnostics.
    public var statementCount: Int { tally.count }
    /// The time limit on reads, when ``StoreOptions/queryTimeout`` sets one (kept alive here
    /// as long as the connection, whose progress handler points to it).
    var queryLimit: SQLiteQueryLimit?
    /// Called with the SQL of each statement started, if set (for tests that assert exact SQL).
    public var statementObserver: ((String) -> Void)? {
        get { tally.observer }
        set { tally.observer = newValue }
    }

    /// Opens the database at `path` (`sqlite3_open_v2`), through the registered VFS named
    /// `vfs`, or SQLite's default VFS when it is `nil`.
    public init(path: String, flags: OpenFlags = [.readWrite, .create, .noMutex], vfs: String? = nil) throws(SQLiteError) {
        SQLiteLibrary.prepare()
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, flags.rawValue, vfs)
        guard code == SQLITE_OK, let db else {
            // "Whether or not an error occurs when it is opened, resources associated with the
            // database connection handle should be released by passing it to sqlite3_close()."
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            let extended = db.map { sqlite3_extended_errcode($0) } ?? code
            sqlite3_close_v2(db)
            throw SQLiteError(extendedResultCode: extended, message: message)
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        assert(isClosed, "SQLiteConnection: the connection to \(path) was not closed")
        if !isClosed {
            singleRowStatements.removeAll()
            cache.removeAll()
            sqlite3_close_v2(handle)
        }
    }

    /// Finalizes cached statements and closes the connection (`sqlite3_close_v2`).
    ///
    /// Statements still held elsewhere keep the handle alive as a "zombie" until they are
    /// finalized: "If sqlite3_close_v2() is called with unfinalized prepared statements …
    /// then the database connection becomes an unusable zombie which will automatically be
    /// deallocated when the last prepared statement is finalized" (sqlite.org/c3ref/close.html).
    public func close() throws(SQLiteError) {
        guard !isClosed else { return }
        singleRowStatements.removeAll()
        cache.removeAll()
        // The history statements it holds (SQLiteHistoryBindings) go with the cached ones.
        historyStrings.rollBack()
        let code = sqlite3_close_v2(handle)
        guard code == SQLITE_OK else { throw lastError(code: code) }
        isClosed = true
    }

    /// The error for a failed call, from the connection's last error.
    func lastError(code: Int32, sql: String? = nil) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        // sqlite3_errmsg never returns NULL for a valid handle.
        let message = String(cString: sqlite3_errmsg(handle))
        return SQLiteError(extendedResultCode: (extended & 0xFF) == (code & 0xFF) ? extended : code, message: message, sql: sql)
    }

    func noteStatementStarted(_ sql: String) {
        tally.noteStarted(sql)
    }

    private func checkOpen(_ sql: String?) throws(SQLiteError) {
        if isClosed { throw SQLiteError(extendedResultCode: SQLITE_MISUSE, message: "the connection is closed", sql: sql) }
    }

    // MARK: - Statements

    /// Prepares a new statement (not cached).
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try checkOpen(sql)
        return try SQLiteStatement(connection: self, sql: sql)
    }

    /// The cached prepared statement for `sql`, reset and ready to bind.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try checkOpen(sql)
        return try cache.statement(sql, on: self)
    }

    /// The cached prepared statement under `key`, reset and ready to bind; `sql` builds its
    /// text only the first time. For hot paths whose SQL text costs more to build than to
    /// look up; one key must always stand for the same SQL.
    ///
    /// `keepingBindings`: the values bound at its last use stay bound, for a caller that binds
    /// every parameter before each step (clearing them costs about as much as binding them).
    func cachedStatement(key: Int, keepingBindings: Bool = false, _ sql: () -> String) throws(SQLiteError) -> SQLiteStatement {
        try checkOpen(nil)
        return try cache.statement(key: key, on: self, keepingBindings: keepingBindings, sql: sql)
    }

    /// Whether a statement was prepared under `key` by ``cachedStatement(key:keepingBindings:_:)``
    /// since the connection opened: whether this connection ever ran it (tests ask which
    /// statements a group commit ran).
    func hasCachedStatement(key: Int) -> Bool {
        cache.contains(key: key)
    }

    /// The statement kept for reading one row of `entity` by key, if one was kept: a linear
    /// search of a short list (a store has few entities), cheaper than hashing on the path of
    /// every fault that fires.
    func singleRowStatement(for entity: EntityDescription) -> SQLiteStatement? {
        for entry in singleRowStatements where entry.entity === entity { return entry.statement }
        return nil
    }

    /// Keeps `statement` as the one that reads one row of `entity` by key; finalized when the
    /// connection closes.
    func keepSingleRowStatement(_ statement: SQLiteStatement, for entity: EntityDescription) {
        singleRowStatements.append((entity, statement))
    }

    /// Runs one or more statements with no parameters (`sqlite3_exec`).
    public func execute(_ sql: String) throws(SQLiteError) {
        try checkOpen(sql)
        noteStatementStarted(sql)
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(extendedResultCode: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Runs `BEGIN`, `COMMIT` or `ROLLBACK` of a read lease (`SQLiteStore+ReadLease.swift`) or
    /// of a read snapshot (``beginReadSnapshot()``, ``endReadSnapshot()``): bookkeeping of the
    /// store, so neither counted in ``statementCount`` nor shown to the ``statementObserver``.
    /// Returns whether it succeeded.
    func executeLeaseStatement(_ sql: String) -> Bool {
        guard !isClosed else { return false }
        return sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK
    }

    /// Begins a read transaction and takes its snapshot at once: `BEGIN` alone takes no lock,
    /// reading the schema version does (it starts the read, waiting through the busy handler
    /// for a lock another connection holds). Until ``endReadSnapshot()`` every read of the
    /// connection sees the store as of this moment and needs no further lock. Bookkeeping, like
    /// ``executeLeaseStatement(_:)``: neither counted nor observed. On failure the transaction
    /// is ended before the error is thrown, so a retry starts afresh.
    func beginReadSnapshot() throws(SQLiteError) {
        try checkOpen("BEGIN")
        var code = sqlite3_exec(handle, "BEGIN", nil, nil, nil)
        if code == SQLITE_OK { code = sqlite3_exec(handle, "PRAGMA schema_version", nil, nil, nil) }
        guard code != SQLITE_OK else { return }
        let error = lastError(code: code, sql: "PRAGMA schema_version")
        endReadSnapshot()
        throw error
    }

    /// Ends the transaction ``beginReadSnapshot()`` began, if it is still open: `COMMIT`, or
    /// `ROLLBACK` when a statement still running keeps `COMMIT` from ending it.
    func endReadSnapshot() {
        if !isAutocommit && !executeLeaseStatement("COMMIT") {
            _ = executeLeaseStatement("ROLLBACK")
        }
    }

    /// The first column of the first row of `sql` as an integer, or `nil` when there is no row
    /// or the value is NULL: for the store's planning reads (the largest key of a table), which
    /// are neither counted in ``statementCount`` nor shown to the ``statementObserver``, as they
    /// are not reads the program asked for. A failed statement throws: a plan made from a
    /// value that could not be read would be wrong, not merely slower.
    func planningInt64(_ sql: String) throws(SQLiteError) -> Int64? {
        try checkOpen(sql)
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK, let statement else { throw lastError(code: prepared, sql: sql) }
        defer { sqlite3_finalize(statement) }
        let code = sqlite3_step(statement)
        switch code {
        case SQLITE_ROW:
            return sqlite3_column_type(statement, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, 0)
        case SQLITE_DONE:
            return nil
        default:
            throw lastError(code: code, sql: sql)
        }
    }

    /// Runs a cached statement with `arguments` and ignores its rows.
    public func execute(_ sql: String, _ arguments: [StoreValue]) throws(SQLiteError) {
        try cachedStatement(sql).execute(arguments)
    }

    /// The first column of the first row of `sql`, as an integer, or `nil` if there is no row or it is NULL.
    public func int64(_ sql: String, _ arguments: [StoreValue] = []) throws(SQLiteError) -> Int64? {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        guard try statement.step(), !statement.isNull(0) else { return nil }
        return statement.int64(0)
    }

    /// The first column of every row of `sql`, as strings.
    public func strings(_ sql: String, _ arguments: [StoreValue] = []) throws(SQLiteError) -> [String] {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        var result: [String] = []
        while try statement.step() { result.append(statement.string(0)) }
        return result
    }

    /// The rowid of the last row inserted (`sqlite3_last_insert_rowid`).
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The number of rows changed by the last statement (`sqlite3_changes64`).
    public var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Whether the connection is outside any transaction (`sqlite3_get_autocommit`).
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// Sets how long a statement waits for another connection's lock (`sqlite3_busy_timeout`).
    public func setBusyTimeout(seconds: Double) {
        sqlite3_busy_timeout(handle, Int32(clamping: Int((seconds * 1000).rounded())))
    }

    // MARK: - Pragmas

    /// Sets a pragma: `PRAGMA name = value`. Pragmas take no bound parameters, so callers
    /// pass only names and values they checked (see ``SQLiteStore``'s allow-list).
    public func setPragma(_ name: String, _ value: String) throws(SQLiteError) {
        try execute("PRAGMA \(name) = \(value)")
    }

    /// The value of a pragma, as text.
    public func pragma(_ name: String) throws(SQLiteError) -> String? {
        let statement = try prepare("PRAGMA \(name)")
        noteStatementStarted(statement.sql)
        guard try statement.step() else { return nil }
        return statement.string(0)
    }

    // MARK: - Transactions

    /// The kind of lock a transaction takes when it begins.
    public enum TransactionKind: String, Sendable {
        /// `BEGIN DEFERRED`: locks on first use.
        case deferred = "DEFERRED"
        /// `BEGIN IMMEDIATE`: takes the write lock now, so a writer fails early or waits.
        case immediate = "IMMEDIATE"
        /// `BEGIN EXCLUSIVE`.
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` in a transaction: commits if it returns, rolls back if it throws.
    public func inTransaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        precondition(transactionDepth == 0, "SQLiteConnection: transactions do not nest")
        // Prepared once per connection (sqlite3_exec would parse them at every transaction).
        // Found by an integer key: no SQL text built or hashed per transaction.
        try cachedStatement(key: SQLiteWriteStatementKey.begin(kind)) { "BEGIN \(kind.rawValue) TRANSACTION" }.execute()
        historyStrings.began()
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        do {
            let result = try body()
            try cachedStatement(key: SQLiteWriteStatementKey.commit) { "COMMIT TRANSACTION" }.execute()
            historyStrings.commit()
            keyReservations.committed()
            return result
        } catch {
            historyStrings.rollBack()
            // A failed statement may already have rolled back the transaction (for example
            // SQLITE_FULL); "ROLLBACK" then fails with "no transaction is active", which is fine.
            if !isAutocommit { try? execute("ROLLBACK TRANSACTION") }
            throw error
        }
    }

    // MARK: - Functions and collations

    /// Registers the SQL functions and collations of ``SQLiteFunctions`` (Unicode case and
    /// diacritic folding, `LIKE`, `MATCHES`, string search, sort collations) on this connection
    /// (`sqlite3_create_function_v2`, `sqlite3_create_collation_v2`).
    ///
    /// Registration fails only when SQLite is out of memory or misused; that is a programmer
    /// error, so it traps.
    func registerFunctions() {
        let code = SQLiteFunctions.register(on: handle)
        precondition(code == SQLITE_OK, "SQLiteConnection: registering SQL functions failed with code \(code)")
    }
}
