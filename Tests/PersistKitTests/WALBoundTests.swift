import Foundation
import Testing
@testable import PersistKit

/// The size of a store's `-wal` file (issue 9, item 5; the bound is in `docs/stores.md`):
/// without long readers it stays within 4 x `wal_autocheckpoint` pages; a reader that pins a snapshot
/// makes it grow with every page written meanwhile; once the reader ends, the next
/// checkpoint resets it and it is truncated to `journal_size_limit`.
@Suite("WAL growth under a pinned reader", .timeLimit(.minutes(1)))
struct WALBoundTests {
    typealias M = ContextTestModel

    /// Saves per phase (`PERSIST_WAL_SAVES`); each inserts 20 objects of about 1 KiB.
    static var saves: Int { ProcessInfo.processInfo.environment["PERSIST_WAL_SAVES"].flatMap(Int.init) ?? 300 }

    static func walSize(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path + "-wal"))?[.size] as? Int) ?? 0
    }

    /// Saves `count` times 20 Beers with 1 KiB names; returns the largest WAL size seen after a save.
    static func write(_ count: Int, _ context: ManagedObjectContext, url: URL, tag: String) throws -> Int {
        let filler = String(repeating: "x", count: 1000)
        var largest = 0
        try context.performAndWait {
            for save in 0..<count {
                for index in 0..<20 { _ = M.insert("Beer", into: context, ["name": "\(tag)-\(save)-\(index)-\(filler)"]) }
                try context.save()
                context.reset()
                largest = max(largest, walSize(url))
            }
        }
        return largest
    }

    @Test("a pinned reader lets the WAL grow past its bound; after it ends the WAL shrinks to journal_size_limit")
    func pinnedReader() throws {
        let directory = try M.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("wal.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let (pageSize, sizeLimit) = try store.withConnection(.sqlite, "reading pragmas") { connection in
            (Int(try connection.pragma("page_size") ?? "") ?? 0,
             Int(try connection.pragma("journal_size_limit") ?? "") ?? 0)
        }
        let checkpointer = try #require(store.checkpointer)
        #expect(checkpointer.threshold == 1000, "wal_autocheckpoint's default")
        #expect(sizeLimit == checkpointer.journalSizeLimit(pageSize: pageSize), "the WAL's working size, not truncated at each restart")
        // The bound without long readers (docs/stores.md): background checkpoints start the WAL
        // again whenever commits pause; under commits that never pause, the one that takes the
        // WAL to the limit (4 x wal_autocheckpoint frames) checkpoints itself, so the WAL holds
        // at most that many frames plus the largest transaction's (here a few dozen pages; 100
        // leaves room).
        let bound = 32 + (pageSize + 24) * (Int(checkpointer.limit) + 100)

        // 1. No reader: the WAL stays within the bound.
        let steady = try Self.write(Self.saves, context, url: url, tag: "steady")
        #expect(steady <= bound)

        // 2. A reader in another connection pins its snapshot: every frame written meanwhile stays.
        let reader = try SQLiteConnection(path: url.path, flags: [.readOnly, .noMutex])
        defer { try? reader.close() }
        try reader.execute("BEGIN DEFERRED TRANSACTION")
        let seen = try reader.int64("SELECT COUNT(*) FROM ZBEER")
        #expect(seen == Int64(Self.saves * 20))
        let pinned = try Self.write(Self.saves * 2, context, url: url, tag: "pinned")
        #expect(pinned > bound, "the WAL grows past its bound while a snapshot is pinned")
        #expect(try reader.int64("SELECT COUNT(*) FROM ZBEER") == seen, "the reader still sees its snapshot")
        try reader.execute("COMMIT TRANSACTION")

        // 3. The reader is gone: the next commits checkpoint, reset the WAL and truncate it.
        _ = try Self.write(3, context, url: url, tag: "after")
        let after = Self.walSize(url)
        #expect(after <= sizeLimit)
        #expect(after < pinned)
        print("WALBoundTests: page \(pageSize) B, bound \(bound) B; WAL max \(steady) B without a reader, \(pinned) B with a pinned reader, \(after) B after it ended")
        #expect(try context.performAndWait { try context.count(for: M.request("Beer")) } == Self.saves * 3 * 20 + 60)
    }
}
