import Foundation
import Testing
@testable import PersistKit

/// The history of a save of many new objects: after a transaction's first change, the
/// `ACHANGE` rows of inserted rows go in statements of ``SQLiteStore/changeRunRows`` rows each,
/// and read back exactly as rows written one at a time: one insert change per object, in
/// the order saved, numbered one after another (above a purge's floor).
@Suite("SQLite history in runs", .timeLimit(.minutes(1)))
struct SQLiteHistoryRunTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    /// Saves `count` new Counters named `prefix0`, `prefix1`, …; returns their IDs in order.
    static func saveCounters(_ count: Int, _ prefix: String, _ context: ManagedObjectContext) throws -> [ManagedObjectID] {
        let objects = (0..<count).map { M.insert("Counter", into: context, ["name": "\(prefix)\($0)", "value": Int64($0)]) }
        try context.save()
        return context.performAndWait { objects.map(\.objectID) }
    }

    static func history(_ context: ManagedObjectContext, after token: PersistentHistoryToken?) throws -> PersistentHistoryResult {
        try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
    }

    @Test func insertedRowsChangesGoInRunsAndReadBackInOrder() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: PersistentHistoryTests.model())
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        _ = try Self.saveCounters(1, "first", context)
        let token = try Self.history(context, after: nil).token

        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        let runs = SQLiteStore.changeRunRows
        let count = 2 * runs + 3
        let ids = try Self.saveCounters(count, "bulk", context)
        store.setStatementObserver(nil)

        // The transaction's first change alone (numbered above any purge's floor), two runs,
        // then the two left one at a time.
        let changeInserts = seen.withLock { $0 }.filter { $0.hasPrefix(#"INSERT INTO "ACHANGE""#) }
        #expect(changeInserts.count == 5)
        #expect(changeInserts.filter { $0.contains("?\(runs + 2), ?2, NULL, NULL)") }.count == 2)

        let transactions = try Self.history(context, after: token).transactions
        #expect(transactions.map(\.transactionNumber) == [2])
        let changes = try #require(transactions.first?.changes)
        #expect(changes.map(\.changedObjectID) == ids)
        #expect(changes.allSatisfy { $0.changeType == .insert && $0.tombstone.isEmpty && $0.updatedProperties.isEmpty })
        #expect(changes.map(\.changeNumber) == (2...Int64(count + 1)).map { $0 })
        let counter = try #require(store.schema.layout(of: coordinator.managedObjectModel.entitiesByName["Counter"]!)?.number)
        #expect(try S.query(path, "SELECT DISTINCT ZCHANGETYPE, ZENTITY, ZTRANSACTIONID, Z_ENT, Z_OPT, ZCOLUMNS IS NULL, ZTOMBSTONE IS NULL FROM ACHANGE WHERE ZTRANSACTIONID = 2")
            == [["0", "\(counter)", "2", "16002", "1", "1", "1"]])
    }

    @Test func runsAfterAPurgeStayAboveItsFloor() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: PersistentHistoryTests.model())
        let context = M.context(coordinator)
        _ = try Self.saveCounters(3, "a", context)
        _ = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: Self.history(context, after: nil).token))
        #expect(try S.query(path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16002") == [["3"]])

        let count = SQLiteStore.changeRunRows + 2
        let ids = try Self.saveCounters(count, "b", context)
        let changes = try #require(Self.history(context, after: nil).transactions.first?.changes)
        #expect(changes.map(\.changedObjectID) == ids)
        #expect(changes.map(\.changeNumber) == (4...Int64(count + 3)).map { $0 })
    }

    @Test func runsOfSeveralEntitiesKeepEachChangesEntity() throws {
        let path = try S.storePath()
        let counter = EntityDescription(name: "Counter", properties: [AttributeDescription(name: "name", type: .string)])
        let gauge = EntityDescription(name: "Gauge", properties: [AttributeDescription(name: "name", type: .string)])
        let coordinator = try S.coordinator(path, model: ManagedObjectModel(entities: [counter, gauge]))
        let context = M.context(coordinator)
        let runs = SQLiteStore.changeRunRows
        // Counters, then a run and a half of gauges, then counters again, in one save.
        let names = ["Counter"] + Array(repeating: "Counter", count: runs) + Array(repeating: "Gauge", count: runs + runs / 2)
            + Array(repeating: "Counter", count: runs + 1)
        let objects = names.enumerated().map { M.insert($0.element, into: context, ["name": "\($0.element) \($0.offset)"]) }
        try context.save()
        let ids = context.performAndWait { objects.map(\.objectID) }
        let changes = try #require(Self.history(context, after: nil).transactions.first?.changes)
        #expect(changes.map(\.changedObjectID) == ids)
        #expect(changes.map(\.changedObjectID.entity.name) == names)
    }

    /// Deletes every Counter `context` has registered, saves, and returns the SQL the store ran.
    static func deleteAll(_ ids: [ManagedObjectID], _ context: ManagedObjectContext, _ store: SQLiteStore) throws -> [String] {
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        defer { store.setStatementObserver(nil) }
        try context.performAndWait {
            for id in ids { context.delete(context.object(with: id)) }
            try context.save()
        }
        return seen.withLock { $0 }
    }

    @Test func deletedRowsChangesGoInRunsInKeyOrder() throws {
        let path = try S.storePath()
        let counter = EntityDescription(name: "Counter", properties: [AttributeDescription(name: "name", type: .string)])
        let coordinator = try S.coordinator(path, model: ManagedObjectModel(entities: [counter]))
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        let runs = SQLiteStore.changeRunRows
        let count = 2 * runs + 3
        let objects = (0..<count).map { M.insert("Counter", into: context, ["name": "c\($0)"]) }
        try context.save()
        let ids = context.performAndWait { objects.map(\.objectID) }
        let token = try Self.history(context, after: nil).token

        let sql = try Self.deleteAll(ids.shuffled(), context, store)
        // The first change alone, two runs, the two left one at a time.
        let changeInserts = sql.filter { $0.hasPrefix(#"INSERT INTO "ACHANGE""#) }
        #expect(changeInserts.count == 5)
        let delete = PersistentHistoryChange.ChangeType.delete.rawValue
        #expect(changeInserts.filter { $0.contains("(16002, 1, \(delete), ?1, ?\(runs + 2), ?2, NULL, NULL)") }.count == 2)

        let changes = try #require(Self.history(context, after: token).transactions.first?.changes)
        // In the order the rows were deleted: by key.
        #expect(changes.map(\.changedObjectID) == ids.sorted { $0.primaryKey < $1.primaryKey })
        #expect(changes.allSatisfy { $0.changeType == .delete && $0.tombstone.isEmpty })
        let first = try #require(changes.first?.changeNumber)
        #expect(changes.map(\.changeNumber) == (first..<(first + Int64(count))).map { $0 })
    }

    @Test func deletedRowsThatKeepValuesInTombstonesGoOneAtATime() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: PersistentHistoryTests.model())
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        let count = SQLiteStore.changeRunRows + 5
        let ids = try Self.saveCounters(count, "kept", context)
        let token = try Self.history(context, after: nil).token

        let sql = try Self.deleteAll(ids, context, store)
        #expect(sql.filter { $0.hasPrefix(#"INSERT INTO "ACHANGE""#) }.count == count)
        let changes = try #require(Self.history(context, after: token).transactions.first?.changes)
        #expect(changes.map(\.changedObjectID) == ids.sorted { $0.primaryKey < $1.primaryKey })
        let names = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, "kept\($0)") })
        #expect(changes.allSatisfy { $0.changeType == .delete && $0.tombstone == ["name": .string(names[$0.changedObjectID]!)] })
    }

    @Test func updatedRowsChangesGoInRunsWhenTheyChangedTheSameProperties() throws {
        let path = try S.storePath()
        let counter = EntityDescription(name: "Counter", properties: [AttributeDescription(name: "name", type: .string),
                                                                     AttributeDescription(name: "value", type: .integer64)])
        let coordinator = try S.coordinator(path, model: ManagedObjectModel(entities: [counter]))
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = M.context(coordinator)
        let runs = SQLiteStore.changeRunRows
        let count = 2 * runs + 3
        let objects = (0..<count).map { M.insert("Counter", into: context, ["name": "c\($0)", "value": Int64(0)]) }
        try context.save()
        let ids = context.performAndWait { objects.map(\.objectID) }
        let byKey = ids.sorted { $0.primaryKey < $1.primaryKey }

        // Every object changes `value`: the first change alone, two runs, two one at a time.
        var token = try Self.history(context, after: nil).token
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        try context.performAndWait {
            for object in objects.shuffled() { object.setValue(Int64(1), forKey: "value") }
            try context.save()
        }
        store.setStatementObserver(nil)
        let changeInserts = seen.withLock { $0 }.filter { $0.hasPrefix(#"INSERT INTO "ACHANGE""#) }
        #expect(changeInserts.count == 5)
        let update = PersistentHistoryChange.ChangeType.update.rawValue
        #expect(changeInserts.filter { $0.contains("(16002, 1, \(update), ?1, ?\(runs + 3), ?2, ?3, NULL)") }.count == 2)
        var changes = try #require(Self.history(context, after: token).transactions.first?.changes)
        #expect(changes.map(\.changedObjectID) == byKey)
        #expect(changes.allSatisfy { $0.changeType == .update && $0.updatedProperties == ["value"] && $0.tombstone.isEmpty })

        // Some change `name` too: each change names exactly what its object changed.
        token = try Self.history(context, after: token).token
        let renamed = Set(byKey.enumerated().filter { $0.offset % 7 == 3 }.map(\.element))
        try context.performAndWait {
            for object in objects {
                object.setValue(Int64(2), forKey: "value")
                if renamed.contains(object.objectID) { object.setValue("renamed", forKey: "name") }
            }
            try context.save()
        }
        changes = try #require(Self.history(context, after: token).transactions.first?.changes)
        #expect(changes.map(\.changedObjectID) == byKey)
        #expect(changes.allSatisfy { $0.updatedProperties == (renamed.contains($0.changedObjectID) ? ["name", "value"] : ["value"]) })
    }
}
