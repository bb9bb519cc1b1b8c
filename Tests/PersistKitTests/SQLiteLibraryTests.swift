import CSQLite
import Foundation
@testable import PersistKit
import Testing

/// SQLite's process-wide settings (`SQLiteLibrary`): memory statistics off before SQLite
/// initializes.
///
/// Everything in this test process that uses SQLite goes through `SQLiteConnection` or, for the
/// fault VFS, calls `SQLiteLibrary.prepare()` first, so whichever test runs first, the settings
/// were given before SQLite initialized.
@Suite("SQLiteLibrary")
struct SQLiteLibraryTests {
    @Test("the first preparation of the process configured SQLite, and later calls say the same")
    func configuredBeforeSQLiteInitialized() {
        #expect(SQLiteLibrary.prepare() == .configured)
        #expect(SQLiteLibrary.prepare() == .configured)
    }

    @Test("with memory statistics off, SQLite counts none of the memory a store's writes and reads use")
    func memoryStatisticsOff() throws {
        let directory = try SQLiteTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try SQLiteConnection(path: directory.appendingPathComponent("memstatus.sqlite").path)
        defer { try? connection.close() }
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, body BLOB)")
        try connection.inTransaction(.immediate) {
            for index in 0..<2_000 {
                try connection.execute("INSERT INTO t (name, body) VALUES (?, ?)",
                                       [.string("row \(index)"), .data(Data(repeating: UInt8(index & 0xFF), count: 256))])
            }
        }
        #expect(try connection.int64("SELECT count(*) FROM t") == 2_000)
        #expect(try connection.int64("SELECT sum(length(body)) FROM t") == 512_000)
        // With statistics on (SQLite's default), the connection's schema, page cache and
        // statements alone would count hundreds of KiB here.
        #expect(sqlite3_memory_used() == 0)
        #expect(sqlite3_memory_highwater(0) == 0)
    }
}
