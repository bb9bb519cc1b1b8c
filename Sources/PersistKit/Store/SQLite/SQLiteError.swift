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

    /// `SQLite error 19 (constraint failed): message - while executing `SQL``, the SQL cut
    /// after ``describedSQLLength`` characters (an `INSERT` of many rows repeats its row's
    /// parameters for kilobytes), saying how long it was.
    public var description: String {
        // sqlite3_errstr returns a static English string for any code; it never returns NULL.
        let codeText = String(cString: sqlite3_errstr(extendedResultCode))
        var text = "SQLite error \(extendedResultCode) (\(codeText)): \(message)"
        if let sql {
            if sql.count > Self.describedSQLLength {
                text += " - while executing `\(sql.prefix(Self.describedSQLLength))…` (\(sql.count) characters)"
            } else {
                text += " - while executing `\(sql)`"
            }
        }
        return text
    }

    /// The most characters of its SQL an error's ``description`` shows.
    public static let describedSQLLength = 300

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
    /// `code`), keeping SQLite's description as the underlying cause. A storage failure (an I/O
    /// error, a full disk) is named in the message itself, so a client that sees only the
    /// message (persistd's `internal` error) still learns why: "saving to the store failed:
    /// database or disk is full (SQLITE_FULL)".
    func persistenceError(_ code: PersistenceError.Code = .sqlite, _ message: String, path: String? = nil) -> PersistenceError {
        PersistenceError(code, storageFailure.map { "\(message): \($0)" } ?? message, path: path, underlying: description)
    }

    /// For an I/O error or a full disk, SQLite's text and the code's name, as
    /// "disk I/O error (SQLITE_IOERR_FSYNC)"; `nil` for any other error.
    var storageFailure: String? {
        guard resultCode == SQLITE_IOERR || resultCode == SQLITE_FULL else { return nil }
        // sqlite3_errstr returns a static English string for any code; it never returns NULL.
        let text = String(cString: sqlite3_errstr(extendedResultCode))
        return "\(text) (\(Self.storageCodeNames[extendedResultCode] ?? "SQLite error \(extendedResultCode)"))"
    }

    /// The names of the codes ``storageFailure`` names most often.
    private static let storageCodeNames: [Int32: String] = [
        SQLITE_FULL: "SQLITE_FULL", SQLITE_IOERR: "SQLITE_IOERR",
        SQLITE_IOERR | (1 << 8): "SQLITE_IOERR_READ", SQLITE_IOERR | (2 << 8): "SQLITE_IOERR_SHORT_READ",
        SQLITE_IOERR | (3 << 8): "SQLITE_IOERR_WRITE", SQLITE_IOERR | (4 << 8): "SQLITE_IOERR_FSYNC",
        SQLITE_IOERR | (5 << 8): "SQLITE_IOERR_DIR_FSYNC", SQLITE_IOERR | (6 << 8): "SQLITE_IOERR_TRUNCATE",
        SQLITE_IOERR | (7 << 8): "SQLITE_IOERR_FSTAT", SQLITE_IOERR | (10 << 8): "SQLITE_IOERR_DELETE",
        SQLITE_IOERR | (13 << 8): "SQLITE_IOERR_NOMEM", SQLITE_IOERR | (18 << 8): "SQLITE_IOERR_SHMOPEN",
        SQLITE_IOERR | (19 << 8): "SQLITE_IOERR_SHMSIZE", SQLITE_IOERR | (21 << 8): "SQLITE_IOERR_SHMMAP",
    ]
}
