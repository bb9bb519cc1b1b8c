import CSQLite
import Foundation

/// The baseline: the sqlite3 C API used directly, with prepared statements.
///
/// Opened in SQLite's multi-thread mode (`SQLITE_OPEN_NOMUTEX`), as PersistKit opens its own
/// connections: each connection here is used by one thread, and in the default serialized mode
/// every bind, step and column read would take the connection's mutex (about 34 instructions
/// a call), a cost the raw side need not pay.
final class RawSQLite {
    private var db: OpaquePointer?

    init(path: String) {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            fatalError("bench: cannot open \(path)")
        }
        exec("PRAGMA journal_mode=WAL")
        exec("PRAGMA synchronous=NORMAL")
    }

    deinit { sqlite3_close_v2(db) }

    func exec(_ sql: String) {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            fatalError("bench: \(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    func prepare(_ sql: String) -> OpaquePointer? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            fatalError("bench: \(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        return statement
    }

    static let columns = (0..<10).map { "ZI\($0)" }

    func createItemTable() {
        exec("CREATE TABLE IF NOT EXISTS ZITEM (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, "
             + Self.columns.map { "\($0) INTEGER" }.joined(separator: ", ") + ")")
    }

    /// Inserts `count` rows of 10 integers in one transaction with one prepared statement.
    func insertItems(_ count: Int, firstKey: Int64 = 1) {
        let statement = prepare("INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, " + Self.columns.joined(separator: ", ")
                                + ") VALUES (?, 1, 1" + String(repeating: ", ?", count: 10) + ")")
        exec("BEGIN")
        for row in 0..<Int64(count) {
            sqlite3_bind_int64(statement, 1, firstKey + row)
            for column in 0..<10 { sqlite3_bind_int64(statement, Int32(column + 2), Bench.value(row, column)) }
            stepOnce(statement, "INSERT")
        }
        exec("COMMIT")
        sqlite3_finalize(statement)
    }

    /// Sets `ZI3` of rows 1…`count` of `ZITEM` to its first value plus one and raises each
    /// row's version, in one transaction with one prepared statement.
    func updateItems(_ count: Int) {
        eachRow(count, "UPDATE ZITEM SET ZI3 = ?, Z_OPT = Z_OPT + 1 WHERE Z_PK = ? AND Z_OPT = ?") { statement, row in
            sqlite3_bind_int64(statement, 1, Bench.value(row - 1, 3) + 1)
            sqlite3_bind_int64(statement, 2, row)
            sqlite3_bind_int64(statement, 3, 1)
        }
    }

    /// Deletes rows 1…`count` of `ZITEM` in one transaction with one prepared statement.
    func deleteItems(_ count: Int) {
        eachRow(count, "DELETE FROM ZITEM WHERE Z_PK = ?") { statement, row in sqlite3_bind_int64(statement, 1, row) }
    }

    /// Runs `sql` once for each key 1…`count`, in key order, in one transaction, `bind` binding
    /// each run's parameters.
    private func eachRow(_ count: Int, _ sql: String, bind: (OpaquePointer?, Int64) -> Void) {
        let statement = prepare(sql)
        exec("BEGIN")
        for row in 1...Int64(count) {
            bind(statement, row)
            stepOnce(statement, sql)
        }
        exec("COMMIT")
        sqlite3_finalize(statement)
    }

    /// Steps every column of every row; returns a checksum so nothing is optimized away.
    func selectAll(_ sql: String, bind: [Int64] = []) -> Int64 {
        let statement = prepare(sql)
        for (index, value) in bind.enumerated() { sqlite3_bind_int64(statement, Int32(index + 1), value) }
        var sum: Int64 = 0
        let count = sqlite3_column_count(statement)
        while sqlite3_step(statement) == SQLITE_ROW {
            for column in 0..<count { sum &+= sqlite3_column_int64(statement, column) }
        }
        sqlite3_finalize(statement)
        return sum
    }

    /// Looks up each key with one prepared statement inside one read transaction.
    func lookups(_ keys: [Int64]) -> Int64 {
        let statement = prepare("SELECT * FROM ZITEM WHERE Z_PK = ?")
        var sum: Int64 = 0
        exec("BEGIN")
        for key in keys {
            sqlite3_bind_int64(statement, 1, key)
            // A key names at most one row: reset after it, as a store's read of one row does,
            // rather than stepping again to learn there is no other (about 190 instructions a
            // lookup under callgrind).
            if sqlite3_step(statement) == SQLITE_ROW {
                for column in 0..<13 { sum &+= sqlite3_column_int64(statement, Int32(column)) }
            }
            sqlite3_reset(statement)
        }
        exec("COMMIT")
        sqlite3_finalize(statement)
        return sum
    }

    /// `count` one-row transactions.
    func singleRowTransactions(_ count: Int, firstKey: Int64) {
        let statement = prepare("INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, " + Self.columns.joined(separator: ", ")
                                + ") VALUES (?, 1, 1" + String(repeating: ", ?", count: 10) + ")")
        // The transaction's own statements are prepared once too, as a store keeps them: only
        // the commits are measured, not parsing `BEGIN` and `COMMIT` a thousand times.
        let begin = prepare("BEGIN IMMEDIATE")
        let commit = prepare("COMMIT")
        for row in 0..<Int64(count) {
            stepOnce(begin, "BEGIN IMMEDIATE")
            sqlite3_bind_int64(statement, 1, firstKey + row)
            for column in 0..<10 { sqlite3_bind_int64(statement, Int32(column + 2), Bench.value(row, column)) }
            stepOnce(statement, "INSERT")
            stepOnce(commit, "COMMIT")
        }
        sqlite3_finalize(begin)
        sqlite3_finalize(commit)
        sqlite3_finalize(statement)
    }

    /// Runs a prepared statement that returns no row, and resets it for the next use.
    private func stepOnce(_ statement: OpaquePointer?, _ what: String) {
        guard sqlite3_step(statement) == SQLITE_DONE else {
            fatalError("bench: \(what): \(String(cString: sqlite3_errmsg(db)))")
        }
        sqlite3_reset(statement)
    }
}
