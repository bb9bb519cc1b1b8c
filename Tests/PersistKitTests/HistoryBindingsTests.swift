import Foundation
import Testing
@testable import PersistKit

/// The history `INSERT`s keep their bindings from save to save and bind only what changed
/// (`SQLiteHistoryBindings`): every transaction and change must still carry its own author,
/// context name, type, entity, columns and tombstone, also after a save that failed and was
/// rolled back.
@Suite("History bindings kept across saves", .timeLimit(.minutes(1)))
struct HistoryBindingsTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    @Test("saves alternating authors, context names and change kinds, with a failed save between, are recorded exactly")
    func alternatingSaves() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: PersistentHistoryTests.model())
        let first = M.context(coordinator)
        first.name = "first"
        let second = M.context(coordinator)
        second.name = "second"

        // (context, author, what the save does)
        first.transactionAuthor = "alice"
        let a = M.insert("Counter", into: first, ["name": "a"])
        try first.save()                                        // 1: alice/first insert
        _ = M.insert("Counter", into: first, ["name": "b"])
        try first.save()                                        // 2: alice/first insert
        first.transactionAuthor = nil
        a.setValue(Int64(1), forKey: "value")
        try first.save()                                        // 3: nil/first update
        second.transactionAuthor = "bob"
        _ = M.insert("Counter", into: second, ["name": "c"])
        try second.save()                                       // 4: bob/second insert

        // A save that fails in the store (a conflict with the save before it), with an author
        // new to the store: rolled back, nothing recorded.
        let stale = try second.existingObject(with: a.objectID)
        a.setValue(Int64(2), forKey: "value")
        first.transactionAuthor = "carol"
        try first.save()                                        // 5: carol/first update
        second.transactionAuthor = "dave"
        stale.setValue(Int64(3), forKey: "value")
        #expect(throws: (any Error).self) { try second.save() }
        second.rollback()

        second.transactionAuthor = "dave"
        _ = M.insert("Counter", into: second, ["name": "d"])
        try second.save()                                       // 6: dave/second insert
        first.delete(a)
        first.transactionAuthor = "alice"
        try first.save()                                        // 7: alice/first delete
        _ = M.insert("Counter", into: first, ["name": "e"])
        try first.save()                                        // 8: alice/first insert

        let history = try first.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        let transactions = history.transactions
        #expect(transactions.map(\.transactionNumber) == Array(1...8))
        #expect(transactions.map(\.author) == ["alice", "alice", nil, "bob", "carol", "dave", "alice", "alice"])
        #expect(transactions.map(\.contextName) == ["first", "first", "first", "second", "first", "second", "first", "first"])
        #expect(transactions.allSatisfy { $0.processID == String(ProcessInfo.processInfo.processIdentifier) && $0.bundleID != nil })
        #expect(transactions.map { $0.changes.map(\.changeType) } == [[.insert], [.insert], [.update], [.insert], [.update], [.insert], [.delete], [.insert]])
        #expect(transactions.allSatisfy { $0.changes.allSatisfy { $0.changedObjectID.entity.name == "Counter" } })
        #expect(transactions[2].changes[0].updatedProperties == ["value"])
        #expect(transactions[3].changes[0].updatedProperties.isEmpty)
        #expect(transactions[6].changes[0].tombstone == ["name": .string("a")])
        #expect(transactions[7].changes[0].tombstone.isEmpty && transactions[7].changes[0].updatedProperties.isEmpty)
        #expect(transactions[0].changes[0].changedObjectID == a.objectID)
        // The changes point at their own transactions (the transaction number bound once per save).
        #expect(try S.query(path, #"SELECT COUNT(*) FROM "ACHANGE" c JOIN "ATRANSACTION" t ON t."Z_PK" = c."ZTRANSACTIONID""#) == [["8"]])
    }
}
