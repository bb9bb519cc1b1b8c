import Foundation
import Testing
@testable import PersistKit

/// The SQLite store's group commit: saves from many threads committed in one transaction.
/// `make test` also runs this suite under the thread sanitizer (its name has "Concurrency").
@Suite("Concurrency of the group commit", .timeLimit(.minutes(1)))
struct GroupCommitConcurrencyTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel

    static func model() -> ManagedObjectModel {
        let counter = EntityDescription(name: "Counter", properties: [
            AttributeDescription(name: "name", type: .string, isOptional: false),
            AttributeDescription(name: "value", type: .integer64, defaultValue: .integer(0)),
        ])
        return ManagedObjectModel(entities: [counter])
    }

    static func count(_ name: String, in context: ManagedObjectContext) throws -> Int {
        try context.count(for: M.request("Counter", .equal("name", .string(name))))
    }

    /// Waits (bounded) until `condition` holds; no timing is asserted, only that it happens.
    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<30_000 {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }

    /// Eight saves and one conflicting save queue up while a group is running; they are then
    /// committed in one transaction: the conflicting one is rolled back alone with its own
    /// error, the others are written, each with its own history transaction, and each save
    /// returns only once another connection can read what it wrote.
    @Test func queuedSavesCommitTogetherAndAConflictFailsAlone() throws {
        let path = try S.storePath()
        let model = Self.model()
        let coordinator = try S.coordinator(path, model: model)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        // Another connection to the same file, to see what is committed.
        let reader = M.context(try S.coordinator(path, model: model))

        let seed = M.context(coordinator)
        let shared = M.insert("Counter", into: seed, ["name": "shared"])
        try seed.save()
        let sharedID = shared.objectID

        // A stale change: read at version 1, then someone else saves version 2.
        let stale = M.context(coordinator)
        stale.name = "stale"
        stale.performAndWait {
            stale.object(with: sharedID).setValue(Int64(99), forKey: "value")
        }
        let other = M.context(coordinator)
        try other.performAndWait {
            other.object(with: sharedID).setValue(Int64(1), forKey: "value")
            try other.save()
        }

        // Writers with their keys already allocated, so each save is one write of the queue.
        let writers = 8
        let contexts = (0..<writers).map { index in
            let context = M.context(coordinator)
            context.name = "writer-\(index)"
            context.transactionAuthor = "author-\(index)"
            return context
        }
        for (index, context) in contexts.enumerated() {
            try context.performAndWait {
                let object = M.insert("Counter", into: context, ["name": "c\(index)"])
                try context.obtainPermanentIDs(for: [object])
            }
        }

        // Hold the queue's leadership (without the store's connection) until everyone queued.
        let before = store.groupCommitCounters
        let hold = CommitQueueHold(store)
        #expect(hold.isLeading)
        let release = hold.release, done = hold.done

        let outcomes = Locked<[String: String]>([:])
        for (index, context) in contexts.enumerated() {
            DispatchQueue.global().async(group: done) {
                let outcome: String
                do {
                    try context.save()
                    // Acknowledged: another connection must see the row already.
                    let visible = try reader.performAndWait { try Self.count("c\(index)", in: reader) }
                    outcome = visible == 1 ? "saved" : "acknowledged before durable"
                } catch {
                    outcome = "failed: \(error)"
                }
                outcomes.withLock { $0["writer-\(index)"] = outcome }
            }
        }
        DispatchQueue.global().async(group: done) {
            let outcome: String
            do {
                try stale.save()
                outcome = "saved"
            } catch let error as PersistenceError {
                outcome = error.code == .managedObjectMerge ? "conflict" : "failed: \(error)"
            } catch {
                outcome = "failed: \(error)"
            }
            outcomes.withLock { $0["stale"] = outcome }
        }
        let queued = Self.eventually { store.commitQueue.waitingCount == writers + 1 }
        release.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(queued, "every save waited in the queue")

        var expected = Dictionary(uniqueKeysWithValues: (0..<writers).map { ("writer-\($0)", "saved") })
        expected["stale"] = "conflict"
        #expect(outcomes.withLock { $0 } == expected)

        // One transaction for the held group, one for the nine queued writes.
        let after = store.groupCommitCounters
        #expect(after.groups - before.groups == 2)
        #expect(after.largestGroup >= writers + 1)
        #expect(after.committed - before.committed == writers + 1)
        #expect(after.failed - before.failed == 1)

        // The conflicting change was not written; each writer's row was.
        let values = try reader.performAndWait {
            try reader.fetch(M.request("Counter", .equal("name", .string("shared")))).map { $0.value(forKey: "value") as? Int64 }
        }
        #expect(values == [1])
        for index in 0..<writers { #expect(try reader.performAndWait { try Self.count("c\(index)", in: reader) } == 1) }

        // Persistent history: one transaction per successful save, with its own author and context.
        let history = try seed.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?))
        let writerTransactions = history.transactions.filter { $0.contextName?.hasPrefix("writer-") == true }
        #expect(writerTransactions.count == writers)
        #expect(Set(writerTransactions.compactMap(\.author)) == Set((0..<writers).map { "author-\($0)" }))
        for transaction in writerTransactions {
            #expect(transaction.author?.dropFirst("author-".count) == transaction.contextName?.dropFirst("writer-".count))
            #expect(transaction.changes.map(\.changeType) == [.insert])
        }
        #expect(!history.transactions.contains { $0.contextName == "stale" })
    }

    /// Saves and key allocations from many threads at once: every save is written once, with
    /// distinct keys, however the writes are grouped.
    @Test func concurrentInsertsAndSavesGetDistinctKeys() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: Self.model())
        let workers = 8, perWorker = 25
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let context = M.context(coordinator)
            context.performAndWait {
                for index in 0..<perWorker {
                    let object = M.insert("Counter", into: context, ["name": "w\(worker)-\(index)"])
                    do {
                        try context.obtainPermanentIDs(for: [object])
                        try context.save()
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        let context = M.context(coordinator)
        let objects = try context.fetch(M.request("Counter"))
        #expect(objects.count == workers * perWorker)
        #expect(Set(objects.map(\.objectID.primaryKey)).count == workers * perWorker)
        #expect(Set(objects.compactMap { $0.value(forKey: "name") as? String }).count == workers * perWorker)
    }
}
