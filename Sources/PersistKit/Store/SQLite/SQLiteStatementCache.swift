/// Prepared statements of one connection, keyed by their SQL text.
///
/// Reusing a prepared statement saves parsing and planning: a save that inserts a thousand
/// rows of one entity prepares one `INSERT`. The cache is owned by its ``SQLiteConnection``
/// and emptied before the connection closes.
final class SQLiteStatementCache {
    private var statements: [String: SQLiteStatement] = [:]

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

    /// The number of statements cached.
    var count: Int { statements.count }

    /// Finalizes every cached statement.
    func removeAll() { statements.removeAll() }
}
