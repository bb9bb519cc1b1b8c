import Foundation
@testable import PersistKit
import Testing

/// The VFS that gathers a transaction's WAL frames and writes them with one call
/// (`CWALWriteVFS`, ``SQLiteWALWriteVFS``): fewer writes, the same file, the same failures.
@Suite("WAL writes: a commit's frames in one write")
struct WALWriteVFSTests {
    typealias M = ContextTestModel

    /// A connection in WAL mode through the WAL-writing VFS over `below` (the default VFS when
    /// `nil`), with table `t` (an indexed text column, so a one-row insert changes two pages).
    /// `synchronous=NORMAL`, as stores run: no sync at a commit writes the frames for it.
    static func writer(at path: String, below: String? = nil) throws -> SQLiteConnection {
        let vfs = try #require(SQLiteWALWriteVFS.name(over: below))
        let connection = try SQLiteConnection(path: path, vfs: vfs)
        #expect(try connection.pragma("journal_mode=WAL")?.lowercased() == "wal")
        try connection.setPragma("synchronous", "NORMAL")
        try connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b BLOB); CREATE INDEX t_a ON t (a)")
        return connection
    }

    /// The writes SQLite made on `connection`'s WAL and the writes that went below, since `since`.
    static func writes(_ connection: SQLiteConnection, since: (received: Int64, issued: Int64)) throws -> (received: Int64, issued: Int64) {
        let now = try #require(SQLiteWALWriteVFS.counts(of: connection))
        return (now.received - since.received, now.issued - since.issued)
    }

    /// Inserts `rows` rows of 700-byte blobs into `t` through `connection`.
    static func insertRows(_ rows: Int, through connection: SQLiteConnection) throws {
        for row in 0..<rows {
            try connection.execute("INSERT INTO t (a, b) VALUES (?, ?)",
                                   [.string("row \(row)"), .data(Data(repeating: UInt8(row % 251), count: 700))])
        }
    }

    /// A writer through the WAL-writing VFS over the fault-injecting one, in a directory of its
    /// own whose faults `scope` arms, and a reader of the same store through SQLite's own VFS.
    struct Faulting {
        let scope: FaultScope
        let writer: SQLiteConnection
        let reader: SQLiteConnection

        init() throws {
            let directory = try SQLiteTestSupport.temporaryDirectory()
            scope = try FaultScope(directory: directory)
            let path = directory.appendingPathComponent("faulting.sqlite").path
            writer = try WALWriteVFSTests.writer(at: path, below: FaultScope.vfsName)
            reader = try SQLiteConnection(path: path)
        }

        func close() {
            try? writer.close()
            try? reader.close()
        }
    }

    @Test("a commit's frames reach the file in one write, and a connection through SQLite's own VFS reads the commit at once")
    func oneWritePerCommit() throws {
        let path = try SQLiteTestSupport.temporaryDirectory().appendingPathComponent("one.sqlite").path
        let writer = try Self.writer(at: path)
        defer { try? writer.close() }
        let reader = try SQLiteConnection(path: path)
        defer { try? reader.close() }
        #expect(SQLiteWALWriteVFS.counts(of: reader) == nil, "SQLite's default VFS opened the reader's WAL")
        for round in 1...3 {
            let before = try #require(SQLiteWALWriteVFS.counts(of: writer))
            try writer.execute("INSERT INTO t (a) VALUES (?)", [.string("row \(round)")])
            let made = try Self.writes(writer, since: before)
            // Two pages (the table's and the index's), a header and a page each.
            #expect(made.received >= 4 && made.received % 2 == 0, "SQLite wrote \(made.received) times")
            #expect(made.issued == 1, "\(made.received) writes went down as \(made.issued)")
            #expect(try reader.int64("SELECT count(*) FROM t") == Int64(round))
        }
    }

    @Test("a transaction larger than the buffer, spilled and read back before its commit, commits whole")
    func largeSpilledTransaction() throws {
        let directory = try SQLiteTestSupport.temporaryDirectory()
        let path = directory.appendingPathComponent("large.sqlite").path
        let writer = try Self.writer(at: path)
        defer { try? writer.close() }
        // A cache of a few pages: the transaction's pages spill to the WAL before its commit,
        // and reading them back inside it reads the WAL.
        try writer.setPragma("cache_size", "5")
        let before = try #require(SQLiteWALWriteVFS.counts(of: writer))
        let rows = 600
        try writer.inTransaction {
            try Self.insertRows(rows, through: writer)
            #expect(try writer.int64("SELECT count(*) FROM t") == Int64(rows))
            #expect(try writer.int64("SELECT sum(length(b)) FROM t") == Int64(rows * 700))
        }
        let made = try Self.writes(writer, since: before)
        // About 600 × 700 bytes: well over a hundred frames, more than one buffer's worth, and
        // spills read back between them: fewer writes went down than frames were written.
        #expect(made.received > 200)
        #expect(made.issued > 1 && made.issued * 2 < made.received, "\(made.received) writes went down as \(made.issued)")
        let reader = try SQLiteConnection(path: path)
        defer { try? reader.close() }
        #expect(try reader.int64("SELECT count(*) FROM t") == Int64(rows))
        #expect(try reader.int64("SELECT sum(length(b)) FROM t") == Int64(rows * 700))
        #expect(try reader.strings("PRAGMA integrity_check") == ["ok"])
    }

    @Test("a commit whose one write fails fails whole, leaves nothing behind, and the next commit goes on")
    func failedWriteFailsTheCommit() throws {
        let faulting = try Faulting()
        defer { faulting.close() }
        let (scope, writer, reader) = (faulting.scope, faulting.writer, faulting.reader)
        #expect(SQLiteWALWriteVFS.counts(of: writer) != nil)
        scope.arm(.write, at: 1, error: FaultScope.Code.ioErrWrite)
        let error = #expect(throws: SQLiteError.self) {
            try writer.inTransaction {
                for row in 0..<20 { try writer.execute("INSERT INTO t (a) VALUES (?)", [.string("lost \(row)")]) }
            }
        }
        #expect(error?.extendedResultCode == FaultScope.Code.ioErrWrite, "\(String(describing: error))")
        // The whole commit was the one write that failed.
        #expect(scope.count(.write) == 1)
        #expect(scope.injected == 1)
        scope.disarm()
        #expect(try reader.int64("SELECT count(*) FROM t") == 0)
        try writer.execute("INSERT INTO t (a) VALUES (?)", [.string("kept")])
        #expect(try reader.strings("SELECT a FROM t") == ["kept"])
        #expect(try reader.strings("PRAGMA integrity_check") == ["ok"])
    }

    @Test("a spilled transaction whose N-th write fails, for N = 1, 2, … until it commits, leaves nothing readable; then it commits whole")
    func everyWriteOfASpilledTransactionFails() throws {
        let faulting = try Faulting()
        defer { faulting.close() }
        let (scope, writer, reader) = (faulting.scope, faulting.writer, faulting.reader)
        try writer.setPragma("cache_size", "5")
        let rows = 300
        var failed = 0
        for n in 1...200 {
            scope.arm(.write, at: n, error: FaultScope.Code.ioErrWrite)
            do {
                try writer.inTransaction { try Self.insertRows(rows, through: writer) }
            } catch let error as SQLiteError {
                #expect(error.resultCode == 10, "write \(n): \(error)")
                failed += 1
                scope.disarm()
                #expect(try reader.int64("SELECT count(*) FROM t") == 0, "write \(n) failed, yet rows are readable")
                #expect(try reader.strings("PRAGMA integrity_check") == ["ok"])
                continue
            }
            scope.disarm()
            break
        }
        print("WAL writes: a spilled transaction of \(rows) rows failed at each of its first \(failed) writes, then committed")
        // About 300 × 750 bytes of frames, more than the buffer holds: at least two full
        // buffers went down before the commit's write, and each of those writes was failed once.
        #expect(failed >= 3, "only \(failed) writes failed before the transaction committed")
        #expect(try reader.int64("SELECT count(*) FROM t") == Int64(rows))
        #expect(try reader.int64("SELECT sum(length(b)) FROM t") == Int64(rows * 700))
        #expect(try reader.strings("PRAGMA integrity_check") == ["ok"])
    }

    @Test("a store's save of one object with persistent history commits its five pages with one write")
    func storeSaveIsOneWrite() throws {
        let url = try SQLiteTestSupport.temporaryDirectory().appendingPathComponent("store.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
        var options = StoreOptions()
        options.persistentHistoryTracking = true
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        try context.performAndWait {
            _ = M.insert("Brewery", into: context, ["name": "first"])
            try context.save()
        }
        let before = try #require(try store.onConnection { SQLiteWALWriteVFS.counts(of: $0) })
        try context.performAndWait {
            _ = M.insert("Brewery", into: context, ["name": "second"])
            try context.save()
        }
        let after = try #require(try store.onConnection { SQLiteWALWriteVFS.counts(of: $0) })
        // The object's table, the history's two tables and their indexes.
        #expect(after.received - before.received >= 6)
        #expect(after.issued - before.issued == 1)
        let reader = M.context(coordinator)
        #expect(try reader.performAndWait { try reader.fetch(M.request("Brewery")).count } == 2)
    }
}
