import CSQLite

/// An error reported by SQLite, with its extended result code, message and statement.
///
/// Modeled on GRDB's `DatabaseError`. The bound arguments are kept in ``arguments`` but left
/// out of ``description``, since they may hold private data.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`), for example 2067 for
    /// `SQLITE_CONSTRAINT_UNIQUE`.
    public var extendedResultCode: Int32
    /// SQLite's message (`sqlite3_errmsg`), or a message of our own.
    public var message: String
    /// The SQL of the statement that failed, if any.
    public var sql: String?
    /// The arguments bound to the statement, if known; never printed.
    public var arguments: [StoreValue]?

    /// Creates an error.
    public init(extendedResultCode: Int32, message: String, sql: String? = nil, arguments: [StoreValue]? = nil) {
        self.extendedResultCode = extendedResultCode
        self.message = message
        self.sql = sql
        self.arguments = arguments
    }

    /// The primary result code: the low 8 bits of the extended code (`SQLITE_CONSTRAINT` for
    /// `SQLITE_CONSTRAINT_UNIQUE`).
    public var resultCode: Int32 { extendedResultCode & 0xFF }

    /// `SQLite error 19 (constraint failed): message - while executing `SQL``.
    public var description: String {
        // sqlite3_errstr returns a static English string for any code; it never returns NULL.
        let codeText = String(cString: sqlite3_errstr(extendedResultCode))
        var text = "SQLite error \(extendedResultCode) (\(codeText)): \(message)"
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }

    /// Matches an error against a primary or extended result code:
    /// `catch let error as SQLiteError where SQLiteError.constraint ~= error`.
    public static func ~= (code: Int32, error: SQLiteError) -> Bool {
        code > 0xFF ? error.extendedResultCode == code : error.resultCode == code
    }

    /// `SQLITE_CONSTRAINT` (19).
    public static let constraint: Int32 = SQLITE_CONSTRAINT
    /// `SQLITE_BUSY` (5).
    public static let busy: Int32 = SQLITE_BUSY
    /// `SQLITE_NOTADB` (26): the file is not a database.
    public static let notADatabase: Int32 = SQLITE_NOTADB
    /// `SQLITE_READONLY` (8).
    public static let readOnly: Int32 = SQLITE_READONLY

    /// This error as a ``PersistenceError`` with code ``PersistenceError/Code/sqlite`` (or
    /// `code`), keeping SQLite's description as the underlying cause.
    func persistenceError(_ code: PersistenceError.Code = .sqlite, _ message: String, path: String? = nil) -> PersistenceError {
        PersistenceError(code, message, path: path, underlying: description)
    }
}
