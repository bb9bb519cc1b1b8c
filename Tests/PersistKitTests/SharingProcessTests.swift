import Foundation
import Testing
@testable import PersistKit

/// A SQLite store shared by several real processes (`PersistStress`): contention, merge
/// policies on real conflicts, upserts, and remote changes.
@Suite("Sharing a store between processes", .serialized)
struct SharingProcessTests {
    typealias S = SharingTestSupport

    @Test func concurrentProcessesLoseNoIncrementAndNoInsert() throws {
        let path = try S.storePath()
        try S.run(["create", "--store", path, "--history"])
        let workers = 3
        let children = try (1...workers).map { worker in
            try S.Child(["stress", "--store", path, "--worker", "\(worker)", "--seconds", "3", "--history"])
        }
        let results = try children.map { try $0.wait(timeout: 30) }
        var totalIncrements = 0
        for (index, result) in results.enumerated() {
            #expect(result["errors"] as? [String] == [], "worker \(index + 1): \(result)")
            let increments = try #require(result["increments"] as? Int)
            #expect(result["inserted"] as? Int == increments)
            #expect(increments > 0)
            totalIncrements += increments
            // Every item of the worker, exactly once: seq 0..<inserted.
            let seqs = try S.query(path, "SELECT ZSEQ FROM ZITEM WHERE ZWORKER = \(index + 1) ORDER BY ZSEQ").map { Int($0[0]) ?? -1 }
            #expect(seqs == Array(0..<increments))
        }
        #expect(try S.query(path, "SELECT ZVALUE FROM ZCOUNTER WHERE ZNAME = 'shared'") == [["\(totalIncrements)"]])
        #expect(try S.query(path, "SELECT COUNT(*) FROM ZITEM") == [["\(totalIncrements)"]])
        // One history transaction per save, plus the one that created the counter.
        #expect(try S.query(path, "SELECT COUNT(*) FROM ATRANSACTION") == [["\(totalIncrements + 1)"]])
        #expect(try S.query(path, "PRAGMA integrity_check") == [["ok"]])
    }

    /// Base: value 10, note "base", score 0. Here: value 11, score 5. Another process: value 20,
    /// note "theirs". This context also inserts an Item in the same save.
    static let expectations: [(MergePolicy, value: Int64, note: String, score: Int64)] = [
        (.mergeByPropertyStoreTrump, 20, "theirs", 5),
        (.mergeByPropertyObjectTrump, 11, "theirs", 5),
        (.overwrite, 11, "base", 5),
        (.rollback, 20, "theirs", 0),
    ]

    private func conflictSetUp(_ policy: MergePolicy) throws -> (String, ManagedObjectContext, ManagedObject) {
        let path = try S.storePath()
        try S.run(["insert", "--store", path, "--name", "c", "--set", "value=10", "--set", "note=base"])
        let coordinator = try S.coordinator(path, model: try S.model(), history: false)
        let context = ContextTestModel.context(coordinator)
        context.mergePolicy = policy
        let object = try #require(try S.counter("c", in: context))
        #expect(object.value(forKey: "value") as? Int64 == 10)
        object.setValue(Int64(11), forKey: "value")
        object.setValue(Int64(5), forKey: "score")
        _ = ContextTestModel.insert("Item", into: context, ["worker": Int64(9), "seq": Int64(0)])
        try S.run(["update", "--store", path, "--name", "c", "--set", "value=20", "--set", "note=theirs"])
        return (path, context, object)
    }

    @Test(arguments: expectations.indices)
    func mergePolicyResolvesARealTwoProcessConflict(_ index: Int) throws {
        let (policy, value, note, score) = Self.expectations[index]
        let (path, context, object) = try conflictSetUp(policy)
        try context.save()
        #expect(try S.query(path, "SELECT ZVALUE, ZNOTE, ZSCORE, Z_OPT FROM ZCOUNTER") == [["\(value)", note, "\(score)", policy == .rollback ? "2" : "3"]])
        #expect(try S.query(path, "SELECT COUNT(*) FROM ZITEM") == [["1"]])
        try context.performAndWait {
            #expect(object.value(forKey: "value") as? Int64 == value)
            #expect(object.value(forKey: "note") as? String == note)
            #expect(object.value(forKey: "score") as? Int64 == score)
            #expect(!context.hasChanges)
            // The object is current: another change saves without conflict.
            object.setValue(Int64(99), forKey: "score")
            try context.save()
        }
        #expect(try S.query(path, "SELECT ZSCORE FROM ZCOUNTER") == [["99"]])
    }

    @Test func errorPolicyThrowsEveryConflictAndWritesNothing() throws {
        let (path, context, object) = try conflictSetUp(.error)
        let error = try #require(throws: PersistenceError.self) { try context.save() }
        #expect(error.code == .managedObjectMerge)
        #expect(error.conflicts.count == 1)
        let conflict = try #require(error.conflicts.first)
        #expect(conflict.objectID == object.objectID)
        #expect(conflict.oldVersion == 1)
        #expect(conflict.newVersion == 2)
        #expect(conflict.properties == [
            MergeConflict.Property(key: "value", ours: .integer(11), theirs: .integer(20), original: .integer(10), changedByUs: true, changedByThem: true),
            MergeConflict.Property(key: "note", ours: .string("base"), theirs: .string("theirs"), original: .string("base"), changedByUs: false, changedByThem: true),
            MergeConflict.Property(key: "score", ours: .integer(5), theirs: .integer(0), original: .integer(0), changedByUs: true, changedByThem: false),
        ])
        #expect(conflict.persistedSnapshot?["value"] == .integer(20))
        #expect(conflict.objectSnapshot?["value"] == .integer(11))
        #expect(conflict.cachedSnapshot["value"] == .integer(10))
        // Nothing partial: the other process's values stay, the Item was not inserted.
        #expect(try S.query(path, "SELECT ZVALUE, ZNOTE, ZSCORE, Z_OPT FROM ZCOUNTER") == [["20", "theirs", "0", "2"]])
        #expect(try S.query(path, "SELECT COUNT(*) FROM ZITEM") == [["0"]])
        #expect(context.hasChanges)
    }

    @Test(arguments: [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump])
    func updateOfAnObjectDeletedByAnotherProcess(_ policy: MergePolicy) throws {
        let path = try S.storePath()
        try S.run(["insert", "--store", path, "--name", "d", "--set", "value=1"])
        let context = ContextTestModel.context(try S.coordinator(path, model: try S.model(), history: false))
        context.mergePolicy = policy
        let object = try #require(try S.counter("d", in: context))
        object.setValue(Int64(2), forKey: "value")
        try S.run(["delete", "--store", path, "--name", "d"])
        try context.save()
        if policy == .mergeByPropertyObjectTrump {
            #expect(try S.query(path, "SELECT ZNAME, ZVALUE, Z_OPT FROM ZCOUNTER") == [["d", "2", "1"]])
            #expect(context.registeredObjects.contains(object))
        } else {
            #expect(try S.query(path, "SELECT COUNT(*) FROM ZCOUNTER") == [["0"]])
            #expect(context.performAndWait { object.managedObjectContext == nil })
        }
    }

    @Test func insertThatCollidesIsAConstraintErrorUnderErrorAndAnUpsertUnderTrump() throws {
        let path = try S.storePath()
        try S.run(["insert", "--store", path, "--name", "u", "--set", "value=3", "--set", "note=stored"])
        let model = try S.model()
        let strict = ContextTestModel.context(try S.coordinator(path, model: model, history: false))
        _ = ContextTestModel.insert("Counter", into: strict, ["name": "u", "score": Int64(7)])
        let error = try #require(throws: PersistenceError.self) { try strict.save() }
        #expect(error.code == .managedObjectConstraintValidation)

        let upserting = ContextTestModel.context(try S.coordinator(path, model: model, history: false))
        upserting.mergePolicy = .mergeByPropertyObjectTrump
        let object = ContextTestModel.insert("Counter", into: upserting, ["name": "u", "score": Int64(7)])
        object.setValue(nil, forKey: "value")
        try upserting.save()
        // One row: ours where we set a value (score), the store's elsewhere (value, note).
        #expect(try S.query(path, "SELECT ZNAME, ZVALUE, ZNOTE, ZSCORE, Z_OPT FROM ZCOUNTER") == [["u", "3", "stored", "7", "2"]])
        #expect(upserting.performAndWait { object.objectID.isTemporaryID == false && object.value(forKey: "note") as? String == "stored" })
    }

    @Test func remoteChangeIsNoticedAndMergedIntoTheViewContextWithinOneSecond() throws {
        let path = try S.storePath()
        try S.run(["insert", "--store", path, "--name", "r", "--set", "value=1", "--history"])
        let container = PersistentContainer(name: "Remote", managedObjectModel: try S.model())
        var description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.options = StoreOptions(persistentHistoryTracking: true, remoteChangeNotificationPost: true)
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        let view = container.viewContext
        let object = try #require(try S.counter("r", in: view))
        #expect(view.performAndWait { object.value(forKey: "value") as? Int64 } == 1)

        let tokens = Locked<[PersistentHistoryToken]>([])
        let noticedAt = Locked<[Date]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: PersistentStoreCoordinator.storeRemoteChangeNotification, object: container.persistentStoreCoordinator, queue: nil) { note in
            noticedAt.withLock { $0.append(Date()) }
            if let token = note.userInfo?[PersistentStoreCoordinator.historyTokenKey] as? PersistentHistoryToken {
                tokens.withLock { $0.append(token) }
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        // The bound (issue 6: a change saved elsewhere is seen within 1 s) is checked on the
        // change's own latency, not by a deadline: the waits below allow 10 s, so a machine
        // starved of CPU for a moment fails none of them. A latency over 1 s is measured again
        // with the next change (three at most): a stall of the test's own process fails one
        // measurement, a notice that does not work fails all three.
        var latencies: [TimeInterval] = []
        for attempt in 0..<3 {
            let value = Int64(42 + attempt)
            try S.run(["update", "--store", path, "--name", "r", "--set", "value=\(value)", "--author", "remote-writer", "--history"])
            let exited = ContinuousClock.now
            var merged = false
            while ContinuousClock.now - exited < .seconds(10) {
                merged = view.performAndWait { object.value(forKey: "value") as? Int64 == value }
                if merged { break }
                usleep(2_000)
            }
            #expect(merged, "the view context did not see the remote change \(value)")
            // The merge is scheduled on the view context before the notification is posted from
            // the observer's thread, so the merged value may be seen first: wait for the post too.
            while tokens.withLock({ $0.count }) < attempt + 1 && ContinuousClock.now - exited < .seconds(10) { usleep(2_000) }
            // One notification per transaction, in order: the first remote one is number 2.
            #expect(tokens.withLock { $0.map(\.transactionNumber) } == Array(2...Int64(2 + attempt)))
            // Latency: from the commit (the transaction's timestamp, taken just before COMMIT in
            // the other process) to the notification, posted after the merge was scheduled.
            let transaction = try #require(try view.execute(PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)).transactions.last)
            #expect(transaction.author == "remote-writer")
            let noticed = try #require(noticedAt.withLock { $0.count > attempt ? $0[attempt] : nil })
            latencies.append(noticed.timeIntervalSince(transaction.timestamp))
            if let last = latencies.last, last < 1 { break }
        }
        print("remote-change latency (commit in another process → notification): \(latencies.map { "\(Int($0 * 1000)) ms" })")
        #expect(latencies.last.map { $0 < 1 } == true, "every remote change took 1 s or more to be noticed: \(latencies)")
        let remoteUpdates = Int64(latencies.count)

        // An insert elsewhere reaches a fetch, and the notification says which transaction.
        try S.run(["insert", "--store", path, "--name", "r2", "--history"])
        let deadline = ContinuousClock.now + .seconds(10)
        while tokens.withLock({ $0.count }) < latencies.count + 1 && ContinuousClock.now < deadline { usleep(2_000) }
        #expect(tokens.withLock { $0.map(\.transactionNumber) } == Array(2...Int64(2 + remoteUpdates)))
        #expect(try S.counter("r2", in: view) != nil)
        // This process's own saves are merged in-process, never announced as remote.
        let background = container.newBackgroundContext()
        try background.performAndWait {
            try #require(try S.counter("r2", in: background)).setValue(Int64(7), forKey: "value")
            try background.save()
        }
        usleep(150_000)
        #expect(tokens.withLock { $0.count } == latencies.count + 1)
        let storeID = try #require(container.persistentStoreCoordinator.persistentStores.first?.identifier)
        let remote = try #require(container.persistentStoreCoordinator.remoteChangeObserver(forStoreWithIdentifier: storeID))
        #expect(remote.lastToken?.transactionNumber == 3 + remoteUpdates)
        #expect(remote.lastError == nil)
        container.persistentStoreCoordinator.persistentStores.forEach { store in
            container.persistentStoreCoordinator.remoteChangeObserver(forStoreWithIdentifier: store.identifier)?.stop()
        }
    }
}
