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
        // Same bytes, another inode: `cp store.sqlite-wal x; mv x store.sqlite-wal`.
        let wal = url.path + "-wal", copy = directory.appendingPathComponent("copy").path
        try FileManager.default.copyItem(atPath: wal, toPath: copy)
        #expect(rename(copy, wal) == 0)

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
}
