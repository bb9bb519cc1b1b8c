import CSQLite
import Foundation

/// One prepared SQLite statement, owned by this object and finalized in `deinit`.
///
/// The corresponding C type is `sqlite3_stmt`. A statement belongs to its
/// ``SQLiteConnection`` and, like it, is used by one thread at a time (the store's lock).
/// Parameters are bound by 1-based index; columns are read by 0-based index, without
/// allocating except for text and blob values.
public final class SQLiteStatement {
    /// The statement handle; valid until `deinit`.
    let handle: OpaquePointer
    /// The connection that prepared the statement.
    unowned let connection: SQLiteConnection
    /// The connection's statement count and observer (see ``SQLiteStatementTally``).
    private let tally: SQLiteStatementTally
    /// The SQL text the statement was prepared from.
    public let sql: String
    // Unchecked exclusivity: a statement is used by one thread at a time (its connection's
    // owner); the dynamic checks cost more than the flag on the single-row read path.
    @exclusivity(unchecked) private var needsReset = false
    /// Whether the statement has parameters: a statement without (`BEGIN`, `COMMIT`, a
    /// savepoint) has no bindings to clear at each reset.
    private let hasParameters: Bool

    init(connection: SQLiteConnection, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        // "If the caller knows that the supplied string is nul-terminated, then there is a small
        // performance advantage to passing an nByte parameter that is the number of bytes in the
        // input string *including* the nul-terminator." (sqlite.org/c3ref/prepare.html) -1 reads to NUL.
        let code = sqlite3_prepare_v2(connection.handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw connection.lastError(code: code, sql: sql)
        }
        self.handle = statement
        self.hasParameters = sqlite3_bind_parameter_count(statement) > 0
        self.connection = connection
        self.tally = connection.tally
        self.sql = sql
    }

    deinit {
        // "Invoking sqlite3_finalize() on a NULL pointer is a harmless no-op"; the handle is
        // never NULL here. The return value repeats the last step's error, already reported.
        sqlite3_finalize(handle)
    }

    /// The number of parameters (`sqlite3_bind_parameter_count`).
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// The number of result columns (`sqlite3_column_count`).
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// Resets the statement so it can run again, and clears its bindings.
    public func reset() {
        // The result of sqlite3_reset repeats the error of the last step, already thrown.
        sqlite3_reset(handle)
        if hasParameters { sqlite3_clear_bindings(handle) }
        needsReset = false
    }

    /// Resets the statement so it can run again, keeping its bindings: for statements whose
    /// every parameter is bound again before each run.
    public func resetKeepingBindings() {
        // The result of sqlite3_reset repeats the error of the last step, already thrown.
        sqlite3_reset(handle)
        needsReset = false
    }

    /// Binds `values` to parameters 1, 2, …, resetting the statement first.
    public func bind(_ values: [StoreValue]) throws(SQLiteError) {
        if needsReset { reset() }
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to the 1-based parameter `index`.
    ///
    /// Text and blobs are bound with `SQLITE_TRANSIENT`, so SQLite copies them. Dates become
    /// seconds since 2001-01-01 (Core Data's reference date), booleans 0 or 1, UUIDs their 16
    /// bytes, URLs their absolute string, decimals their description, objects their primary key.
    public func bind(_ value: StoreValue, at index: Int32) throws(SQLiteError) {
        if needsReset { reset() }
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .integer(let v):
            code = sqlite3_bind_int64(handle, index, v)
        case .bool(let v):
            code = sqlite3_bind_int64(handle, index, v ? 1 : 0)
        case .double(let v):
            code = sqlite3_bind_double(handle, index, v)
        case .date(let v):
            code = sqlite3_bind_double(handle, index, v.timeIntervalSinceReferenceDate)
        case .decimal(let v):
            code = bindText(v.description, at: index)
        case .string(let v):
            code = bindText(v, at: index)
        case .url(let v):
            code = bindText(v.absoluteString, at: index)
        case .data(let v):
            code = v.withUnsafeBytes { buffer in
                // A zero-length blob must still bind as a blob, not NULL: sqlite3_bind_zeroblob.
                guard let base = buffer.baseAddress, buffer.count > 0 else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                return sqlite3_bind_blob64(handle, index, base, sqlite3_uint64(buffer.count), persist_sqlite_transient())
            }
        case .uuid(let v):
            let bytes = withUnsafeBytes(of: v.uuid) { Array($0) }
            code = bytes.withUnsafeBytes { buffer in
                // 16 bytes, never empty, so the base address exists.
                sqlite3_bind_blob64(handle, index, buffer.baseAddress, 16, persist_sqlite_transient())
            }
        case .object(let id):
            code = sqlite3_bind_int64(handle, index, id.primaryKey)
        case .array:
            throw SQLiteError(extendedResultCode: SQLITE_MISUSE, message: "a collection cannot be bound to one parameter", sql: sql)
        }
        guard code == SQLITE_OK else { throw connection.lastError(code: code, sql: sql) }
    }

    /// Binds an integer to the 1-based parameter `index` of a statement already made ready for
    /// binding since its last step (a parameter bound through ``bind(_:at:)``, which resets a
    /// stepped statement, or ``resetKeepingBindings()``): the save's per-column path, with no
    /// switch over ``StoreValue`` and no reset check.
    @inline(__always)
    func bindInteger(_ value: Int64, at index: Int32) throws(SQLiteError) {
        let code = sqlite3_bind_int64(handle, index, value)
        guard code == SQLITE_OK else { throw connection.lastError(code: code, sql: sql) }
    }

    private func bindText(_ text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { buffer in
            // withUTF8 of a native string always has a base address, even when empty;
            // SQLITE_TRANSIENT makes SQLite copy the bytes before returning.
            sqlite3_bind_text64(handle, index, buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                sqlite3_uint64(buffer.count), persist_sqlite_transient(), UInt8(SQLITE_UTF8))
        }
    }

    /// Runs one step: `true` when a row is available to read, `false` when the statement is done.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        if !needsReset { tally.noteStarted(sql) }
        needsReset = true
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.lastError(code: code, sql: sql)
            sqlite3_reset(handle)
            needsReset = false
            throw error
        }
    }

    /// Runs the statement to its end with `values` bound, ignoring any rows.
    public func execute(_ values: [StoreValue] = []) throws(SQLiteError) {
        try bind(values)
        while try step() {}
        reset()
    }

    /// Runs the statement with `values` bound and calls `body` for each row.
    public func forEachRow(_ values: [StoreValue] = [], _ body: (SQLiteStatement) throws -> Void) throws {
        try bind(values)
        defer { reset() }
        while try step() { try body(self) }
    }

    // MARK: - Columns (valid after step() returned true)

    /// Whether column `index` is NULL.
    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }
    /// The SQLite storage class of column `index` (`SQLITE_INTEGER`, `SQLITE_FLOAT`, …).
    public func columnType(_ index: Int32) -> Int32 { sqlite3_column_type(handle, index) }
    /// Column `index` as an integer (`sqlite3_column_int64`).
    public func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }
    /// Column `index` as a double (`sqlite3_column_double`).
    public func double(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// Column `index` as a string, `""` for NULL.
    public func string(_ index: Int32) -> String {
        guard let text = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Column `index` as bytes, empty for NULL.
    public func data(_ index: Int32) -> Data {
        // sqlite3_column_blob must be called before sqlite3_column_bytes (sqlite.org/c3ref/column_blob.html).
        guard let blob = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: blob, count: Int(sqlite3_column_bytes(handle, index)))
    }

    /// The name of result column `index`.
    public func columnName(_ index: Int32) -> String {
        sqlite3_column_name(handle, index).map { String(cString: $0) } ?? ""
    }
}

extension SQLiteStatement {
    /// `SQLITE_INTEGER`, as ``columnType(_:)`` returns it.
    static let integerType = SQLITE_INTEGER
    /// `SQLITE_FLOAT`.
    static let floatType = SQLITE_FLOAT
    /// `SQLITE_TEXT`.
    static let textType = SQLITE_TEXT
    /// `SQLITE_BLOB`.
    static let blobType = SQLITE_BLOB
}
