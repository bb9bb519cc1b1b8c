import Foundation
import Testing
@testable import PersistKit

/// Keys allocated inside the save transaction, under group commit: saves of new objects queued
/// together get distinct keys, and a save of the group that fails gives its keys back.
/// `make test` also runs this suite under the thread sanitizer (its name has "Concurrency").
@Suite("Concurrency of key allocation in saves", .timeLimit(.minutes(1)))
struct SaveKeyAllocationConcurrencyTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel
    typealias G = GroupCommitConcurrencyTests

    @Test func queuedSavesOfNewObjectsGetDistinctKeysAndAFailedOneGivesItsKeysBack() throws {
        let path = try S.storePath()
        let model = G.model()
        let coordinator = try S.coordinator(path, model: model)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)

        let seed = M.context(coordinator)
        let sharedID = try seed.performAndWait {
            let shared = M.insert("Counter", into: seed, ["name": "shared"])
            try seed.save()
            return shared.objectID
        }
        // A stale save: it inserts new objects next to an update another context overtook.
        let stale = M.context(coordinator)
        let staleObjects = stale.performAndWait {
            stale.object(with: sharedID).setValue(Int64(99), forKey: "value")
            return (0..<3).map { M.insert("Counter", into: stale, ["name": "stale-\($0)"]) }
        }
        let other = M.context(coordinator)
        try other.performAndWait {
            other.object(with: sharedID).setValue(Int64(1), forKey: "value")
            try other.save()
        }

        // Writers of three new objects each, with temporary IDs until their save.
        let writers = 6
        let contexts = (0..<writers).map { _ in M.context(coordinator) }
        let inserted = contexts.enumerated().map { index, context in
            context.performAndWait { (0..<3).map { M.insert("Counter", into: context, ["name": "w\(index)-\($0)"]) } }
        }

        // Hold the queue's leadership until everyone queued, so they share one transaction.
        let hold = CommitQueueHold(store)
        #expect(hold.isLeading)
        let release = hold.release, done = hold.done
        let outcomes = Locked<[Int: String]>([:])
        for (index, context) in (contexts + [stale]).enumerated() {
            DispatchQueue.global().async(group: done) {
                let outcome: String
                do {
                    try context.save()
                    outcome = "saved"
                } catch let error as PersistenceError where error.code == .managedObjectMerge {
                    outcome = "conflict"
                } catch {
                    outcome = "failed: \(error)"
                }
                outcomes.withLock { $0[index] = outcome }
            }
        }
        let queued = G.eventually { store.commitQueue.waitingCount == writers + 1 }
        release.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(queued, "every save waited in the queue")

        var expected = Dictionary(uniqueKeysWithValues: (0..<writers).map { ($0, "saved") })
        expected[writers] = "conflict"
        #expect(outcomes.withLock { $0 } == expected)

        // Every writer's objects have permanent, distinct keys after the seed's; the stale
        // save's objects are still temporary and their keys were not used up.
        let keys = zip(contexts, inserted).flatMap { context, objects in
            context.performAndWait { objects.map(\.objectID) }
        }
        #expect(keys.allSatisfy { !$0.isTemporaryID })
        #expect(Set(keys.map(\.primaryKey)) == Set(2...Int64(1 + 3 * writers)))
        #expect(stale.performAndWait { staleObjects.allSatisfy(\.objectID.isTemporaryID) })
        let maxKey = try store.withConnection(.sqlite, "reading Z_MAX") { connection in
            try connection.int64("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = 'Counter'")
        }
        #expect(maxKey == Int64(1 + 3 * writers))

        // What another connection reads: each writer's rows under the keys its objects got.
        let reader = M.context(try S.coordinator(path, model: model))
        try reader.performAndWait {
            let rows = try reader.fetch(M.request("Counter"))
            #expect(rows.count == 1 + 3 * writers)
            for (index, objects) in inserted.enumerated() {
                let names = contexts[index].performAndWait { objects.map { ($0.objectID.primaryKey, $0.value(forKey: "name") as? String) } }
                for (key, name) in names {
                    #expect(rows.first { $0.objectID.primaryKey == key }?.value(forKey: "name") as? String == name)
                }
            }
        }
    }
}
