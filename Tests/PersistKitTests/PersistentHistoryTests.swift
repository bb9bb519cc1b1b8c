import Foundation
import Testing
@testable import PersistKit

/// Persistent history in the SQLite store, and waiting for other connections' locks.
@Suite("Persistent history and busy stores")
struct PersistentHistoryTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    /// A model with a Counter whose name is kept in tombstones.
    static func model() -> ManagedObjectModel {
        let name = AttributeDescription(name: "name", type: .string, isOptional: false)
        name.preservesValueInHistoryOnDeletion = true
        let counter = EntityDescription(name: "Counter", properties: [
            name, AttributeDescription(name: "value", type: .integer64, defaultValue: .integer(0)),
        ])
        return ManagedObjectModel(entities: [counter])
    }

    @Test func savesAreRecordedWithAuthorChangesAndTombstones() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: Self.model())
        let context = M.context(coordinator)
        context.name = "editor"
        context.transactionAuthor = "alice"
        let counter = M.insert("Counter", into: context, ["name": "a"])
        try context.save()
        counter.setValue(Int64(5), forKey: "value")
        try context.save()
        context.delete(counter)
        try context.save()

        let all = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        #expect(all.transactions.map(\.transactionNumber) == [1, 2, 3])
        #expect(all.transactions.allSatisfy { $0.author == "alice" && $0.contextName == "editor" })
        #expect(all.transactions.allSatisfy { $0.processID == String(ProcessInfo.processInfo.processIdentifier) })
        #expect(all.transactions.map { $0.changes.map(\.changeType) } == [[.insert], [.update], [.delete]])
        #expect(all.transactions[1].changes[0].updatedProperties == ["value"])
        #expect(all.transactions[2].changes[0].tombstone == ["name": .string("a")])
        #expect(all.token?.transactionNumber == 3)
        let storeID = try #require(coordinator.persistentStores.first?.identifier)
        #expect(try coordinator.currentPersistentHistoryTokens() == [storeID: PersistentHistoryToken(storeIdentifier: storeID, transactionNumber: 3)])

        let first = all.transactions[0].token
        #expect(first.description == "\(storeID):1")
        #expect(PersistentHistoryToken(string: first.description) == first)
        let encoded = try JSONEncoder().encode([first])
        #expect(try JSONDecoder().decode([PersistentHistoryToken].self, from: encoded) == [first])
        let after = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: first, limit: 1))
        #expect(after.transactions.map(\.transactionNumber) == [2])
        #expect(after.token?.transactionNumber == 2)

        // Purge through the first two; the third stays; the first token is now expired.
        let purge = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: after.token))
        #expect(purge.deletedCount == 2)
        #expect(try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: after.token)).transactions.map(\.transactionNumber) == [3])
        let expired = try #require(throws: PersistenceError.self) {
            try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: first))
        }
        #expect(expired.code == .persistentHistoryTokenExpired)
        #expect(try S.query(path, "SELECT COUNT(*) FROM ACHANGE") == [["1"]])

        // Purge by date: everything committed before now.
        let byDate = try context.execute(PersistentHistoryChangeRequest.deleteHistory(before: Date().addingTimeInterval(1)))
        #expect(byDate.deletedCount == 1)
        // Numbers never go back after a purge; a token from before the purge is expired.
        _ = M.insert("Counter", into: context, ["name": "b"])
        try context.save()
        #expect(try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: byDate.token)).transactions.map(\.transactionNumber) == [4])
        #expect(throws: PersistenceError.self) { try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: after.token)) }
    }

    @Test func batchRequestsAreRecorded() throws {
        let context = M.context(try S.coordinator(try S.storePath(), model: Self.model()))
        _ = try context.execute(BatchInsertRequest(entityName: "Counter", objects: [["name": "x"], ["name": "y"]]))
        let update = BatchUpdateRequest(entityName: "Counter")
        update.propertiesToUpdate = ["value": .constant(.integer(3))]
        _ = try context.execute(update)
        let delete = BatchDeleteRequest(fetchRequest: M.request("Counter", .equal("name", .string("x"))))
        _ = try context.execute(delete)
        let history = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        #expect(history.transactions.map { $0.changes.map(\.changeType) } == [[.insert, .insert], [.update, .update], [.delete]])
        #expect(history.transactions.map(\.contextName) == ["batch", "batch", "batch"])
        #expect(history.transactions[1].changes.map(\.updatedProperties) == [["value"], ["value"]])
    }

    @Test func historyNeedsTrackingAndASQLiteStore() throws {
        let memory = M.context(try M.coordinator(type: .inMemory, model: Self.model()))
        let error = try #require(throws: PersistenceError.self) {
            try memory.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        }
        #expect(error.code == .persistentStoreOperation)
        let untracked = M.context(try S.coordinator(try S.storePath(), model: Self.model(), history: false))
        #expect(throws: PersistenceError.self) {
            try untracked.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        }
    }

    @Test func aWriterWaitsForAnotherConnectionsLockThenTimesOutWithABusyError() throws {
        let path = try S.storePath()
        let context = M.context(try S.coordinator(path, model: Self.model(), history: false, busyTimeout: 1))
        _ = M.insert("Counter", into: context, ["name": "first"])
        try context.save()

        // Another connection holds the write lock for 150 ms: the save waits, then succeeds.
        // nonisolated(unsafe): used by one thread at a time — the delayed COMMIT runs while this
        // thread waits inside save(), and this thread uses it again only after save() returned.
        nonisolated(unsafe) let blocker = try SQLiteConnection(path: path)
        defer { try? blocker.close() }
        try blocker.execute("BEGIN IMMEDIATE TRANSACTION")
        // A thread of its own: the Dispatch pool may be busy with other tests on a 2-core machine.
        Thread {
            usleep(150_000)
            try? blocker.execute("COMMIT TRANSACTION")
        }.start()
        _ = M.insert("Counter", into: context, ["name": "second"])
        let started = ContinuousClock.now
        try context.save()
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        #expect(try S.query(path, "SELECT COUNT(*) FROM ZCOUNTER") == [["2"]])

        // Held for longer than busyTimeout: a clear timeout error, nothing written.
        try blocker.execute("BEGIN IMMEDIATE TRANSACTION")
        _ = M.insert("Counter", into: context, ["name": "third"])
        let error = try #require(throws: PersistenceError.self) { try context.save() }
        try blocker.execute("COMMIT TRANSACTION")
        #expect(error.code == .persistentStoreTimeout)
        #expect(error.message.contains("busyTimeout"))
        #expect(try S.query(path, "SELECT COUNT(*) FROM ZCOUNTER") == [["2"]])
    }
}
