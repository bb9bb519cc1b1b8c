/// Prepared statements of one connection, keyed by their SQL text.
///
/// Reusing a prepared statement saves parsing and planning: a save that inserts a thousand
/// rows of one entity prepares one `INSERT`. The cache is owned by its ``SQLiteConnection``
/// and emptied before the connection closes.
final class SQLiteStatementCache {
    // Unchecked exclusivity: the cache is used only by its connection's thread of the moment
    // (the store's lock), and the dynamic checks cost more than the lookups they guard.
    @exclusivity(unchecked) private var statements: [String: SQLiteStatement] = [:]
    /// Statements whose SQL is costly to build, under a number the caller chose (see
    /// ``statement(key:on:sql:)``): the hot read paths skip building their SQL text.
    @exclusivity(unchecked) private var keyed: [Int: SQLiteStatement] = [:]
    /// The statements of the keys that have a ``SQLiteWriteStatementKey/directSlot(_:)``, by
    /// slot (empty until the first is cached): a save finds its `BEGIN`, `INSERT` and `COMMIT`
    /// by index, where a dictionary lookup cost about a hundred instructions each.
    @exclusivity(unchecked) private var direct: [SQLiteStatement?] = []

    /// The cached statement for `sql`, prepared on `connection` the first time.
    func statement(_ sql: String, on connection: SQLiteConnection) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statements[sql] {
            statement.reset()
            return statement
        }
        let statement = try SQLiteStatement(connection: connection, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// The cached statement under `key`, prepared from `sql()` the first time, reset (and its
    /// bindings cleared unless `keepingBindings`). The caller guarantees that one key always
    /// stands for the same SQL on this connection.
    func statement(key: Int, on connection: SQLiteConnection, keepingBindings: Bool = false,
                   sql: () -> String) throws(SQLiteError) -> SQLiteStatement {
        let slot = SQLiteWriteStatementKey.directSlot(key)
        let cached: SQLiteStatement?
        if let slot {
            cached = slot < direct.count ? direct[slot] : nil
        } else {
            cached = keyed[key]
        }
        if let statement = cached {
            if keepingBindings { statement.resetKeepingBindings() } else { statement.reset() }
            return statement
        }
        let statement = try SQLiteStatement(connection: connection, sql: sql())
        if let slot {
            if direct.isEmpty { direct = Array(repeating: nil, count: SQLiteWriteStatementKey.directSlotCount) }
            direct[slot] = statement
        } else {
            keyed[key] = statement
        }
        return statement
    }

    /// Whether a statement is cached under `key` (``statement(key:on:keepingBindings:sql:)``).
    func contains(key: Int) -> Bool {
        if let slot = SQLiteWriteStatementKey.directSlot(key) { return slot < direct.count && direct[slot] != nil }
        return keyed[key] != nil
    }

    /// The number of statements cached.
    var count: Int { statements.count + keyed.count + direct.lazy.filter { $0 != nil }.count }

    /// Finalizes every cached statement.
    func removeAll() {
        statements.removeAll()
        keyed.removeAll()
        direct.removeAll()
    }
}
