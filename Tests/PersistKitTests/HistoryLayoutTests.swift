import Foundation
import Testing
@testable import PersistKit

/// How the history tables are keyed: a plain `INTEGER PRIMARY KEY` (no `sqlite_sequence`),
/// numbers that never go back after a purge of the newest transactions, and stores written
/// with the earlier `AUTOINCREMENT` layout rewritten once when opened.
@Suite("History table layout", .timeLimit(.minutes(1)))
struct HistoryLayoutTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    /// Saves one Counter named `name`.
    static func save(_ name: String, _ context: ManagedObjectContext) throws {
        _ = M.insert("Counter", into: context, ["name": name])
        try context.save()
    }

    static func history(_ context: ManagedObjectContext, after token: PersistentHistoryToken?) throws -> PersistentHistoryResult {
        try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
    }

    @Test func newStoresKeyHistoryWithoutAutoincrement() throws {
        let path = try S.storePath()
        let context = M.context(try S.coordinator(path, model: PersistentHistoryTests.model()))
        for name in ["a", "b", "c"] { try Self.save(name, context) }
        let tables = try S.query(path, "SELECT name, sql FROM sqlite_master WHERE name IN ('ATRANSACTION', 'ACHANGE') ORDER BY name")
        #expect(tables.count == 2)
        #expect(tables.allSatisfy { $0[1].contains(#""Z_PK" INTEGER PRIMARY KEY,"#) && !$0[1].uppercased().contains("AUTOINCREMENT") })
        #expect(try S.query(path, "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'") == [["0"]])
        #expect(try S.query(path, "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'A%' ORDER BY name")
            == [["ACHANGE_ZTRANSACTIONID_INDEX"], ["ATRANSACTION_ZTIMESTAMP_INDEX"]])
        #expect(try Self.history(context, after: nil).transactions.map(\.transactionNumber) == [1, 2, 3])
        #expect(try S.query(path, "SELECT Z_PK, ZTRANSACTIONID FROM ACHANGE ORDER BY Z_PK") == [["1", "1"], ["2", "2"], ["3", "3"]])
        // No purge removed the newest rows: the history has no row in Z_PRIMARYKEY.
        #expect(try S.query(path, "SELECT count(*) FROM Z_PRIMARYKEY WHERE Z_ENT > 16000") == [["0"]])
    }

    /// A purge of every transaction leaves floors in Z_PRIMARYKEY: the next transaction and
    /// change are numbered above the purged ones, a token from before the purge still reads
    /// exactly what came after it, and reopening the store (another connection) keeps counting.
    @Test func numbersNeverGoBackAfterPurgingTheNewest() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: PersistentHistoryTests.model())
        let context = M.context(coordinator)
        for name in ["a", "b", "c"] { try Self.save(name, context) }
        let beforePurge = try #require(Self.history(context, after: nil).token)
        #expect(beforePurge.transactionNumber == 3)

        let purge = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: beforePurge))
        #expect(purge.deletedCount == 3)
        #expect(purge.token?.transactionNumber == 3)
        #expect(try S.query(path, "SELECT Z_ENT, Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT")
            == [["16001", "TRANSACTION", "3"], ["16002", "CHANGE", "3"]])
        let storeID = try #require(coordinator.persistentStores.first?.identifier)
        #expect(try coordinator.currentPersistentHistoryTokens()[storeID]?.transactionNumber == 3)
        #expect(try Self.history(context, after: beforePurge).transactions.isEmpty)

        try Self.save("d", context)
        let after = try Self.history(context, after: beforePurge)
        #expect(after.transactions.map(\.transactionNumber) == [4])
        #expect(after.transactions.first?.changes.map(\.changeNumber) == [4])

        // Another coordinator (as another process) continues above the same floor.
        let other = M.context(try S.coordinator(path, model: PersistentHistoryTests.model()))
        try Self.save("e", other)
        #expect(try Self.history(other, after: beforePurge).transactions.map(\.transactionNumber) == [4, 5])
        // A purge that keeps the newest transaction leaves the floors where they were.
        _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: after.token))
        #expect(try S.query(path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT") == [["3"], ["3"]])
        #expect(try Self.history(other, after: after.token).transactions.map(\.transactionNumber) == [5])
    }

    /// Only a transaction's first history row of each table is numbered by the subquery that
    /// respects a purge's floor; the rows after it are numbered by SQLite. Both stay above the
    /// floor: the rows of a save of several objects right after a purge, and, in a group
    /// commit, the row of a write that follows a write rolled back to its savepoint after it
    /// had written the group's first rows (without the floor those would be numbered 1).
    @Test func rowsAfterATransactionsFirstStayAboveThePurgeFloor() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: PersistentHistoryTests.model())
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        for name in ["a", "b", "c"] { try Self.save(name, context) }
        _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: Self.history(context, after: nil).token))

        for name in ["d", "e", "f"] { _ = M.insert("Counter", into: context, ["name": name]) }
        try context.save()
        let several = try Self.history(context, after: nil).transactions
        #expect(several.map(\.transactionNumber) == [4])
        #expect(several.first?.changes.map(\.changeNumber) == [4, 5, 6])
        _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: Self.history(context, after: nil).token))
        #expect(try S.query(path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT") == [["4"], ["6"]])

        // Two writes queued behind a held group, so that they share the next transaction, in
        // the order queued: the first records history and fails (the group then runs again with
        // each write in a savepoint), the second records history.
        let counter = try #require(coordinator.managedObjectModel.entitiesByName["Counter"])
        @Sendable func changes(_ key: Int64) -> StoreSaveRequest {
            var request = StoreSaveRequest()
            request.inserted = [RowSnapshot(objectID: ManagedObjectID(entity: counter, storeIdentifier: store.identifier, primaryKey: key),
                                            version: 0, values: [])]
            return request
        }
        let hold = CommitQueueHold(store)
        #expect(hold.isLeading)
        let outcomes = Locked<[String: String]>([:])
        DispatchQueue.global().async(group: hold.done) {
            do {
                try store.inGroupCommit("refused") { connection in
                    let number = try store.recordHistory(changes(100), connection)
                    outcomes.withLock { $0["refused wrote"] = "\(number)" }
                    throw GroupCommitJoinTests.Refused()
                }
                outcomes.withLock { $0["refused"] = "saved" }
            } catch {
                outcomes.withLock { $0["refused"] = error is GroupCommitJoinTests.Refused ? "refused" : "failed: \(error)" }
            }
        }
        #expect(GroupCommitConcurrencyTests.eventually { store.commitQueue.waitingCount == 1 })
        DispatchQueue.global().async(group: hold.done) {
            do {
                let number = try store.inGroupCommit("recorded") { connection in try store.recordHistory(changes(101), connection) }
                outcomes.withLock { $0["recorded"] = "\(number)" }
            } catch {
                outcomes.withLock { $0["recorded"] = "failed: \(error)" }
            }
        }
        #expect(GroupCommitConcurrencyTests.eventually { store.commitQueue.waitingCount == 2 })
        hold.release.signal()
        #expect(hold.done.wait(timeout: .now() + 30) == .success)
        #expect(outcomes.withLock { $0 } == ["refused wrote": "5", "refused": "refused", "recorded": "5"])
        #expect(try S.query(path, "SELECT Z_PK, ZENTITYPK, ZTRANSACTIONID FROM ACHANGE ORDER BY Z_PK") == [["7", "101", "5"]])
        #expect(try S.query(path, "SELECT Z_PK FROM ATRANSACTION ORDER BY Z_PK") == [["5"]])
    }

    /// The tables as stores made before the current layout have them.
    static let oldLayoutSQL = [
        #"CREATE TABLE IF NOT EXISTS "ATRANSACTIONSTRING" ("Z_PK" INTEGER PRIMARY KEY, "Z_ENT" INTEGER, "Z_OPT" INTEGER, "ZNAME" VARCHAR NOT NULL UNIQUE)"#,
        """
        CREATE TABLE IF NOT EXISTS "ATRANSACTION" ("Z_PK" INTEGER PRIMARY KEY AUTOINCREMENT, "Z_ENT" INTEGER, "Z_OPT" INTEGER, \
        "ZAUTHORTS" INTEGER, "ZBUNDLEIDTS" INTEGER, "ZCONTEXTNAMETS" INTEGER, "ZPROCESSIDTS" INTEGER, "ZTIMESTAMP" FLOAT, \
        "ZQUERYGEN" BLOB)
        """,
        """
        CREATE TABLE IF NOT EXISTS "ACHANGE" ("Z_PK" INTEGER PRIMARY KEY AUTOINCREMENT, "Z_ENT" INTEGER, "Z_OPT" INTEGER, \
        "ZCHANGETYPE" INTEGER, "ZENTITY" INTEGER, "ZENTITYPK" INTEGER, "ZTRANSACTIONID" INTEGER, "ZCOLUMNS" BLOB, \
        "ZTOMBSTONE" BLOB)
        """,
        #"CREATE INDEX IF NOT EXISTS "ACHANGE_ZTRANSACTIONID_INDEX" ON "ACHANGE" ("ZTRANSACTIONID")"#,
        #"CREATE INDEX IF NOT EXISTS "ATRANSACTION_ZTIMESTAMP_INDEX" ON "ATRANSACTION" ("ZTIMESTAMP")"#,
    ]

    /// A store whose history tables were made by the old layout's SQL and written as the old
    /// code wrote them: transactions 1 to 5 (two changes each, 1 to 10), of which 4 and 5 were
    /// purged, so `sqlite_sequence` is ahead of the rows (5 and 10); then 1 purged too.
    static func makeOldLayoutStore(_ path: String) throws {
        // The model's tables and metadata, without history.
        do {
            let context = M.context(try S.coordinator(path, model: PersistentHistoryTests.model(), history: false))
            try Self.save("seed", context)
        }
        let connection = try SQLiteConnection(path: path, flags: [.readWrite])
        defer { try? connection.close() }
        try connection.inTransaction(.immediate) {
            for sql in oldLayoutSQL { try connection.execute(sql) }
            try connection.execute(#"INSERT INTO "ATRANSACTIONSTRING" ("Z_ENT", "Z_OPT", "ZNAME") VALUES (16003, 1, 'old author')"#)
            for number in 1...5 {
                try connection.execute("""
                    INSERT INTO "ATRANSACTION" ("Z_ENT", "Z_OPT", "ZAUTHORTS", "ZTIMESTAMP") VALUES (16001, 1, 1, ?)
                    """, [.double(Date().timeIntervalSinceReferenceDate)])
                for key in 0..<2 {
                    try connection.execute("""
                        INSERT INTO "ACHANGE" ("Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID") VALUES (16002, 1, 0, 1, ?, ?)
                        """, [.integer(Int64(100 * number + key)), .integer(Int64(number))])
                }
            }
            try connection.execute(#"DELETE FROM "ACHANGE" WHERE "ZTRANSACTIONID" IN (1, 4, 5)"#)
            try connection.execute(#"DELETE FROM "ATRANSACTION" WHERE "Z_PK" IN (1, 4, 5)"#)
        }
        #expect(try S.query(path, #"SELECT name, seq FROM sqlite_sequence ORDER BY name"#) == [["ACHANGE", "10"], ["ATRANSACTION", "5"]])
    }

    @Test func anOldLayoutStoreIsRewrittenOnceKeepingNumbersAndTokens() throws {
        let path = try S.storePath()
        try Self.makeOldLayoutStore(path)
        let coordinator = try S.coordinator(path, model: PersistentHistoryTests.model())
        let context = M.context(coordinator)
        let storeID = try #require(coordinator.persistentStores.first?.identifier)

        // The layout is the current one, with its indexes; every row kept with its number.
        let tables = try S.query(path, "SELECT sql FROM sqlite_master WHERE name IN ('ATRANSACTION', 'ACHANGE')")
        #expect(tables.count == 2 && tables.allSatisfy { !$0[0].uppercased().contains("AUTOINCREMENT") })
        #expect(try S.query(path, "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'A%' ORDER BY name")
            == [["ACHANGE_ZTRANSACTIONID_INDEX"], ["ATRANSACTION_ZTIMESTAMP_INDEX"]])
        #expect(try S.query(path, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%__PKHISTORY'") == [["0"]])
        #expect(try S.query(path, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT") == [["16001", "5"], ["16002", "10"]])

        // History reads across the change: the old transactions, their changes and author.
        let old = try Self.history(context, after: nil)
        #expect(old.transactions.map(\.transactionNumber) == [2, 3])
        #expect(old.transactions.map { $0.changes.map(\.changeNumber) } == [[3, 4], [5, 6]])
        #expect(old.transactions.map { $0.changes.map(\.changedObjectID.primaryKey) } == [[200, 201], [300, 301]])
        #expect(old.transactions.allSatisfy { $0.author == "old author" })
        #expect(try coordinator.currentPersistentHistoryTokens()[storeID]?.transactionNumber == 5)
        // A token of the old layout is still valid; one before the purge still expired.
        let oldToken = PersistentHistoryToken(storeIdentifier: storeID, transactionNumber: 2)
        #expect(try Self.history(context, after: oldToken).transactions.map(\.transactionNumber) == [3])
        #expect(throws: PersistenceError.self) {
            try Self.history(context, after: PersistentHistoryToken(storeIdentifier: storeID, transactionNumber: 0))
        }

        // Numbering continues above the old maximum (5 and 10, though 4, 5, 9 and 10 are gone).
        try Self.save("new", context)
        let new = try Self.history(context, after: PersistentHistoryToken(storeIdentifier: storeID, transactionNumber: 5))
        #expect(new.transactions.map(\.transactionNumber) == [6])
        #expect(new.transactions.first?.changes.map(\.changeNumber) == [11])

        // Opened again, the store is left as it is.
        let schema = try S.query(path, "SELECT sql FROM sqlite_master ORDER BY name")
        let again = M.context(try S.coordinator(path, model: PersistentHistoryTests.model()))
        #expect(try S.query(path, "SELECT sql FROM sqlite_master ORDER BY name") == schema)
        #expect(try Self.history(again, after: nil).transactions.map(\.transactionNumber) == [2, 3, 6])
    }

    /// A failure part-way through the rewrite leaves the old layout whole (one transaction).
    @Test func aFailedRewriteLeavesTheOldLayout() throws {
        let path = try S.storePath()
        try Self.makeOldLayoutStore(path)
        let connection = try SQLiteConnection(path: path, flags: [.readWrite])
        defer { try? connection.close() }
        // A view named as the second rewrite's temporary table makes it fail (DROP TABLE
        // refuses a view), after the first table was rewritten.
        try connection.execute(#"CREATE VIEW "ACHANGE__PKHISTORY" AS SELECT 1"#)
        let before = try S.query(path, "SELECT name, sql FROM sqlite_master ORDER BY name")
        #expect(throws: (any Error).self) { try SQLiteStore.createHistoryTables(connection) }
        #expect(try S.query(path, "SELECT name, sql FROM sqlite_master ORDER BY name") == before)
        #expect(try S.query(path, "SELECT Z_PK FROM ATRANSACTION ORDER BY Z_PK") == [["2"], ["3"]])
        #expect(try S.query(path, "SELECT name, seq FROM sqlite_sequence ORDER BY name") == [["ACHANGE", "10"], ["ATRANSACTION", "5"]])
    }

    /// A lightweight migration of the model keeps the history's floors in Z_PRIMARYKEY, and
    /// the store's open ignores them when it reads its entity numbers.
    @Test func aModelMigrationKeepsTheHistoryFloors() throws {
        let path = try S.storePath()
        do {
            let context = M.context(try S.coordinator(path, model: PersistentHistoryTests.model()))
            for name in ["a", "b"] { try Self.save(name, context) }
            _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: Date().addingTimeInterval(60)))
        }
        #expect(try S.query(path, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT") == [["16001", "2"], ["16002", "2"]])
        // The next model version adds an optional attribute.
        let v2 = PersistentHistoryTests.model()
        let counter = try #require(v2.entitiesByName["Counter"])
        counter.properties = counter.properties + [AttributeDescription(name: "note", type: .string)]
        let context = M.context(try S.coordinator(path, model: v2))
        #expect(try S.query(path, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT") == [["16001", "2"], ["16002", "2"]])
        try Self.save("c", context)
        #expect(try Self.history(context, after: nil).transactions.map(\.transactionNumber) == [3])
        #expect(try S.query(path, "SELECT count(*) FROM ZCOUNTER") == [["3"]])
    }
}
