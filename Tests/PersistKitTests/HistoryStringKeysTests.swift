import Foundation
import Testing
@testable import PersistKit

/// The keys of history strings (authors, context names, the process) a connection remembers
/// from committed transactions, so a save does not look its four strings up again.
@Suite("History string keys", .timeLimit(.minutes(1)))
struct HistoryStringKeysTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    struct Abort: Error {}

    @Test func keysAreTrustedOnlyOnceCommitted() {
        var strings = SQLiteHistoryStrings()
        strings.note("alice", key: 1)
        // The transaction in progress sees its own keys.
        #expect(strings.key(of: "alice") == 1)
        strings.rollBack()
        #expect(strings.key(of: "alice") == nil)
        strings.note("bob", key: 2)
        strings.commit()
        #expect(strings.key(of: "bob") == 2)
        #expect(strings.committed == ["bob": 2])
        // A rollback later does not drop what was committed.
        strings.note("carol", key: 3)
        strings.rollBack()
        #expect(strings.committed == ["bob": 2])
    }

    @Test func theTableStartsAgainPastItsLimit() {
        var strings = SQLiteHistoryStrings()
        for number in 0..<SQLiteHistoryStrings.limit {
            strings.note("s\(number)", key: Int64(number))
        }
        strings.commit()
        #expect(strings.committed.count == SQLiteHistoryStrings.limit)
        strings.note("one more", key: -1)
        strings.commit()
        #expect(strings.committed == ["one more": -1])
    }

    /// A history string inserted by a transaction that rolled back is not remembered: its key
    /// goes to the next new string, and the author saved after that is still the right one.
    @Test func aStringOfARolledBackTransactionIsNotRemembered() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: PersistentHistoryTests.model())
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        var request = StoreSaveRequest()
        request.transactionAuthor = "ghost"
        _ = try store.withWriteConnection(.sqlite, "a transaction rolled back") { connection in
            #expect(throws: Abort.self) {
                try connection.inTransaction(.immediate) {
                    _ = try store.recordHistory(request, connection)
                    throw Abort()
                }
            }
        }
        #expect(try S.query(path, "SELECT COUNT(*) FROM ATRANSACTIONSTRING WHERE ZNAME = 'ghost'") == [["0"]])

        let context = M.context(coordinator)
        for author in ["other", "ghost", "other", "ghost"] {
            context.transactionAuthor = author
            _ = M.insert("Counter", into: context, ["name": author])
            try context.save()
        }
        let history = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        #expect(history.transactions.map(\.author) == ["other", "ghost", "other", "ghost"])
    }

    /// Two coordinators on one file (as two processes) add strings in turn: each connection's
    /// remembered keys stay right, whichever of them inserted the row.
    @Test func connectionsSharingAStoreRecordTheRightStrings() throws {
        let path = try S.storePath()
        let first = M.context(try S.coordinator(path, model: PersistentHistoryTests.model()))
        let second = M.context(try S.coordinator(path, model: PersistentHistoryTests.model()))
        var expected: [String?] = []
        for round in 0..<4 {
            for (index, context) in [first, second].enumerated() {
                let author = "author \((round + index) % 3)"
                context.transactionAuthor = author
                context.name = "context \(index)"
                _ = M.insert("Counter", into: context, ["name": author])
                try context.save()
                expected.append(author)
            }
        }
        let history = try first.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        #expect(history.transactions.map(\.author) == expected)
        #expect(history.transactions.map(\.contextName) == (0..<8).map { "context \($0 % 2)" })
        #expect(try S.query(path, "SELECT COUNT(*) FROM ATRANSACTIONSTRING") == [["7"]])
    }

    /// Objects given their keys inside the save's transaction are recorded under their
    /// permanent IDs, with the updates and deletes of the same save.
    @Test func insertedObjectsAreRecordedUnderTheirPermanentIDs() throws {
        let coordinator = try S.coordinator(try S.storePath(), model: PersistentHistoryTests.model())
        let context = M.context(coordinator)
        let kept = M.insert("Counter", into: context, ["name": "kept"])
        let gone = M.insert("Counter", into: context, ["name": "gone"])
        try context.save()
        kept.setValue(Int64(2), forKey: "value")
        context.delete(gone)
        let new = (0..<3).map { M.insert("Counter", into: context, ["name": "new \($0)"]) }
        try context.save()
        #expect(new.allSatisfy { !$0.objectID.isTemporaryID })
        let history = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        #expect(history.transactions.count == 2)
        #expect(Set(history.transactions[0].changes.map(\.changedObjectID)) == [kept.objectID, gone.objectID])
        let last = try #require(history.transactions.last)
        #expect(Set(last.changes.filter { $0.changeType == .insert }.map(\.changedObjectID)) == Set(new.map(\.objectID)))
        #expect(last.changes.filter { $0.changeType == .update }.map(\.changedObjectID) == [kept.objectID])
        #expect(last.changes.filter { $0.changeType == .delete }.map(\.changedObjectID) == [gone.objectID])
    }
}
