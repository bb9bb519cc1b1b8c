import Foundation
import Testing
@testable import PersistKit

/// `SQLiteStore` notices its file moved away under it (docs/stores.md, "The store file
/// replaced…"): writes throw `persistentStoreReplaced`, reads go on, a rescued copy is written.
@Suite("SQLite store file moved under an open store", .timeLimit(.minutes(1)))
struct SQLiteFileWatchTests {
    typealias M = ContextTestModel

    @Test("the store file moved away: saves refused with persistentStoreReplaced, fetches go on, nothing lost")
    func storeFileMovedAway() throws {
        let directory = try M.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("watched.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            for index in 0..<3 { _ = M.insert("Beer", into: context, ["name": "b\(index)"]) }
            try context.save()
        }
        let moved = directory.appendingPathComponent("moved.sqlite")
        try FileManager.default.moveItem(at: url, to: moved)

        let error = context.performAndWait { () -> PersistenceError? in
            _ = M.insert("Beer", into: context, ["name": "late"])
            do { try context.save() } catch { return error as? PersistenceError }
            return nil
        }
        #expect(error?.code == .persistentStoreReplaced)
        #expect(error?.message.contains("deleted or moved away") == true)
        #expect(error?.path == url.path)
        context.performAndWait { context.rollback() }
        #expect(try context.performAndWait { try context.count(for: M.request("Beer")) } == 3)

        let copies = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("watched.sqlite.rescued-") }
        #expect(copies.count == 1)
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        for file in copies.map({ directory.appendingPathComponent($0) }) + [moved] {
            let reopened = try M.coordinator(type: .sqlite, at: file)
            let check = M.context(reopened)
            #expect(try check.performAndWait { try check.count(for: M.request("Beer")) } == 3, "\(file.lastPathComponent)")
            for store in reopened.persistentStores { try reopened.remove(store) }
        }
    }

    @Test("the -wal replaced by a copy of itself: saves refused, the rescued copy holds every saved object")
    func walReplaced() throws {
        let directory = try M.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("watched.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            for index in 0..<4 { _ = M.insert("Beer", into: context, ["name": "b\(index)"]) }
            try context.save()
        }
        try Self.replaceWAL(of: url.path, in: directory)

        let error = context.performAndWait { () -> PersistenceError? in
            _ = M.insert("Beer", into: context, ["name": "late"])
            do { try context.save() } catch { return error as? PersistenceError }
            return nil
        }
        #expect(error?.code == .persistentStoreReplaced)
        #expect(error?.message.contains("-wal file was replaced") == true)
        let copies = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("watched.sqlite.rescued-") }
        #expect(copies.count == 1)
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        for name in copies {
            let reopened = try M.coordinator(type: .sqlite, at: directory.appendingPathComponent(name))
            let check = M.context(reopened)
            #expect(try check.performAndWait { try check.count(for: M.request("Beer")) } == 4)
            for store in reopened.persistentStores { try reopened.remove(store) }
        }
    }

    // MARK: - The directory standing for both files (its stamp; no kernel events)

    /// A WAL database at `directory/name` with a row written (so its `-wal` exists), open on
    /// the returned connection.
    private func walDatabase(in directory: URL, _ name: String = "watched.sqlite") throws -> (String, SQLiteConnection) {
        let path = directory.appendingPathComponent(name).path
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("CREATE TABLE t (x INTEGER)")
        try connection.execute("INSERT INTO t VALUES (1)")
        return (path, connection)
    }

    /// Replaces the `-wal` of the database at `path` by a copy of itself: the same bytes,
    /// another inode (`cp store.sqlite-wal x; mv x store.sqlite-wal`).
    static func replaceWAL(of path: String, in directory: URL) throws {
        let wal = path + "-wal", copy = directory.appendingPathComponent("copy").path
        try FileManager.default.copyItem(atPath: wal, toPath: copy)
        #expect(rename(copy, wal) == 0)
    }

    /// Runs `body` with a WAL database (see ``walDatabase(in:_:)``) in a new directory, removed after.
    private func withWALDatabase(_ body: (_ directory: URL, _ path: String, _ connection: SQLiteConnection) throws -> Void) throws {
        let directory = try SQLiteTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (path, connection) = try walDatabase(in: directory)
        defer { try? connection.close() }
        try body(directory, path, connection)
    }

    /// The code `check` throws, or `nil`.
    private func checkError(_ watch: SQLiteFileWatch, _ connection: SQLiteConnection) -> PersistenceError? {
        do { try watch.check(connection) } catch { return error as? PersistenceError }
        return nil
    }

    /// A clock far past every file time: every directory stamp is settled.
    private static let lateClock: @Sendable () -> Int64 = { Int64.max / 2 }

    @Test("once the directory is settled it alone is looked at; a -wal replaced afterwards is still refused")
    func directoryStandsForFilesUntilWALReplaced() throws {
        try withWALDatabase { directory, path, connection in
            let watch = SQLiteFileWatch(path: path, watchesWAL: true, clock: Self.lateClock, events: nil)
            let exact = SQLiteDirectoryStamp.keepsExactTimes(cString: directory.path.utf8CString)
            for _ in 0..<3 { try watch.check(connection) }
            // One look at the files, then the directory alone (where its times can be trusted).
            #expect(watch.checkCounts == (exact ? (2, 1) : (0, 3)))

            try Self.replaceWAL(of: path, in: directory)
            let error = checkError(watch, connection)
            #expect(error?.code == .persistentStoreReplaced)
            #expect(error?.message.contains("-wal file was replaced") == true)
            #expect(watch.checkCounts.files == (exact ? 2 : 4))
            #expect(checkError(watch, connection)?.code == .persistentStoreReplaced)
        }
    }

    @Test("the store file moved away after the directory was trusted: refused")
    func storeMovedAfterDirectoryTrusted() throws {
        try withWALDatabase { directory, path, connection in
            let watch = SQLiteFileWatch(path: path, watchesWAL: true, clock: Self.lateClock, events: nil)
            for _ in 0..<2 { try watch.check(connection) }
            try FileManager.default.moveItem(atPath: path, toPath: directory.appendingPathComponent("moved.sqlite").path)
            let error = checkError(watch, connection)
            #expect(error?.code == .persistentStoreReplaced)
            #expect(error?.message.contains("deleted or moved away") == true)
        }
    }

    @Test("another file added to the directory: the files are looked at again, nothing is refused, the new stamp is trusted")
    func unrelatedChangeInDirectory() throws {
        try withWALDatabase { directory, path, connection in
            let watch = SQLiteFileWatch(path: path, watchesWAL: true, clock: Self.lateClock, events: nil)
            guard SQLiteDirectoryStamp.keepsExactTimes(cString: directory.path.utf8CString) else { return }
            for _ in 0..<2 { try watch.check(connection) }
            #expect(watch.checkCounts == (1, 1))
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent("other").path, contents: Data()))
            try watch.check(connection)
            #expect(watch.checkCounts == (1, 2))
            try watch.check(connection)
            #expect(watch.checkCounts == (2, 2))
        }
    }

    @Test("a directory changed too recently to be trusted: both files are looked at every time")
    func unsettledDirectoryIsNotTrusted() throws {
        try withWALDatabase { _, path, connection in
            // A clock before every file time: no stamp is ever settled.
            let watch = SQLiteFileWatch(path: path, watchesWAL: true, clock: { 0 }, events: nil)
            for _ in 0..<3 { try watch.check(connection) }
            #expect(watch.checkCounts == (0, 3))
            try FileManager.default.removeItem(atPath: path + "-wal")
            #expect(checkError(watch, connection)?.message.contains("-wal file was deleted") == true)
        }
    }

    @Test("a store path that is a symbolic link: its files are looked at every time, and a replaced target is refused")
    func symbolicLinkIsNotStoodFor() throws {
        let directory = try SQLiteTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let real = directory.appendingPathComponent("real"), links = directory.appendingPathComponent("links")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
        let (path, connection) = try walDatabase(in: real)
        defer { try? connection.close() }
        let link = links.appendingPathComponent("watched.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let watch = SQLiteFileWatch(path: link, watchesWAL: true, clock: Self.lateClock)
        for _ in 0..<3 { try watch.check(connection) }
        #expect(watch.checkCounts == (0, 3))
        // The target replaced in its own directory: the link's directory does not change.
        let other = real.appendingPathComponent("other.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: other)
        #expect(rename(other, path) == 0)
        #expect(checkError(watch, connection)?.code == .persistentStoreReplaced)
    }

    // MARK: - The kernel's events about the directory

    /// A file watch of `path` with the process's kernel events, or `nil` (the test then has
    /// nothing to check) where the directory cannot stand for the files or the kernel has no
    /// `inotify` for this process.
    private func eventWatch(_ path: String) -> SQLiteFileWatch? {
        let watch = SQLiteFileWatch(path: path, watchesWAL: true, clock: Self.lateClock)
        return watch.watchesEvents ? watch : nil
    }

    @Test("with the kernel's events, checks after the first make no stat; a -wal replaced afterwards is refused")
    func eventsStandForFilesUntilWALReplaced() throws {
        try withWALDatabase { directory, path, connection in
            guard let watch = eventWatch(path) else { return }
            for _ in 0..<4 { try watch.check(connection) }
            #expect(watch.checkCounts.files == 1)
            #expect(watch.eventCheckCount == 3)

            try Self.replaceWAL(of: path, in: directory)
            let error = checkError(watch, connection)
            #expect(error?.code == .persistentStoreReplaced)
            #expect(error?.message.contains("-wal file was replaced") == true)
            #expect(watch.checkCounts.files == 2)
            #expect(watch.eventCheckCount == 3)
            #expect(checkError(watch, connection)?.code == .persistentStoreReplaced)
        }
    }

    @Test("with the kernel's events, other files coming and going in the directory cost no look at the files")
    func eventsAboutOtherFilesAreIgnored() throws {
        try withWALDatabase { directory, path, connection in
            guard let watch = eventWatch(path) else { return }
            try watch.check(connection)
            let other = directory.appendingPathComponent("other").path
            #expect(FileManager.default.createFile(atPath: other, contents: Data()))
            #expect(rename(other, other + "-renamed") == 0)
            // A name the watched ones start with is another name.
            #expect(FileManager.default.createFile(atPath: path + "-walrus", contents: Data()))
            try FileManager.default.removeItem(atPath: other + "-renamed")
            for _ in 0..<2 { try watch.check(connection) }
            #expect(watch.checkCounts.files == 1)
            #expect(watch.eventCheckCount == 2)
        }
    }

    @Test("with the kernel's events: the store file moved away, or its directory moved, is refused")
    func eventsSeeStoreAndDirectoryMoved() throws {
        let directory = try SQLiteTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("first"), second = directory.appendingPathComponent("second")
        for folder in [first, second] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }

        let (path, connection) = try walDatabase(in: first)
        defer { try? connection.close() }
        guard let watch = eventWatch(path) else { return }
        for _ in 0..<2 { try watch.check(connection) }
        try FileManager.default.moveItem(atPath: path, toPath: first.appendingPathComponent("moved.sqlite").path)
        #expect(checkError(watch, connection)?.message.contains("deleted or moved away") == true)

        let (otherPath, otherConnection) = try walDatabase(in: second)
        defer { try? otherConnection.close() }
        guard let otherWatch = eventWatch(otherPath) else { return }
        for _ in 0..<2 { try otherWatch.check(otherConnection) }
        #expect(otherWatch.eventCheckCount == 1)
        try FileManager.default.moveItem(at: second, to: directory.appendingPathComponent("second-moved"))
        #expect(checkError(otherWatch, otherConnection)?.message.contains("deleted or moved away") == true)
    }

    @Test("with the kernel's events: two stores in one directory; one watch ended, the other still sees its store replaced")
    func eventsSharedDirectoryWatch() throws {
        let directory = try SQLiteTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (firstPath, firstConnection) = try walDatabase(in: directory, "first.sqlite")
        defer { try? firstConnection.close() }
        let (secondPath, secondConnection) = try walDatabase(in: directory, "second.sqlite")
        defer { try? secondConnection.close() }
        guard let second = eventWatch(secondPath) else { return }
        do {
            guard let first = eventWatch(firstPath) else { return }
            for _ in 0..<2 { try first.check(firstConnection) }
            #expect(first.eventCheckCount == 1)
            // The first store replaced: only its watch hears of it.
            let copy = directory.appendingPathComponent("copy").path
            try FileManager.default.copyItem(atPath: firstPath, toPath: copy)
            for _ in 0..<2 { try second.check(secondConnection) }
            #expect(rename(copy, firstPath) == 0)
            #expect(checkError(first, firstConnection)?.message.contains("store file was replaced") == true)
        }
        // The first watch has ended (its subscription cancelled); the second goes on.
        try second.check(secondConnection)
        #expect(second.checkCounts.files == 1)
        #expect(second.eventCheckCount == 2)
        let copy = directory.appendingPathComponent("copy2").path
        try FileManager.default.copyItem(atPath: secondPath, toPath: copy)
        #expect(rename(copy, secondPath) == 0)
        #expect(checkError(second, secondConnection)?.message.contains("store file was replaced") == true)
    }

    @Test("timestamp granularity read off the change time; settled a granularity after it")
    func directoryStampGranularity() {
        func stamp(_ changed: Int64) -> SQLiteDirectoryStamp {
            SQLiteDirectoryStamp(device: 1, inode: 2, changed: changed, modified: changed)
        }
        #expect(stamp(1_700_000_000_123_456_789).granularity == 1)
        #expect(stamp(1_700_000_000_120_000_000).granularity == 10_000_000)
        #expect(stamp(1_700_000_000_000_000_000).granularity == 2_000_000_000)
        #expect(stamp(1_000_000_001).isSettled(at: 1_000_000_002))
        #expect(!stamp(1_000_000_001).isSettled(at: 1_000_000_001))
        #expect(!stamp(1_000_000_000).isSettled(at: 2_999_999_999))
        #expect(stamp(1_000_000_000).isSettled(at: 3_000_000_000))
        #expect(stamp(1_000_000_001).settlesAt == 1_000_000_002)
    }
}
