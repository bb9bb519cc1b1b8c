import Foundation
import Testing
@testable import PersistKit

/// Writes that queue up while a group's statements run join that group before its `COMMIT`:
/// one transaction for all, each acknowledged only once it is committed, and a joiner that
/// fails is rolled back alone.
@Suite("Group commit joiners", .timeLimit(.minutes(1)))
struct GroupCommitJoinTests {
    typealias S = SharingTestSupport
    typealias M = ContextTestModel
    typealias G = GroupCommitConcurrencyTests

    struct Refused: Error {}

    /// Runs `sql` as a write of `store`'s group commit.
    static func write(_ store: SQLiteStore, _ sql: String) throws {
        try store.inGroupCommit("writing") { connection in try connection.execute(sql) }
    }

    @Test func writesQueuedWhileAGroupRunsShareItsCommit() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: G.model(), history: false)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        try Self.write(store, #"CREATE TABLE "LOG" ("N" INTEGER)"#)
        let before = store.groupCommitCounters

        // The leader's write waits, inside the transaction, until two more writes queued (the
        // first time it runs: the joiner that fails makes the group run again, see below).
        let started = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let outcomes = Locked<[String: String]>([:])
        let leaderRuns = Locked(0)
        DispatchQueue.global().async(group: done) {
            do {
                try store.inGroupCommit("leading") { connection in
                    try connection.execute(#"INSERT INTO "LOG" VALUES (1)"#)
                    guard leaderRuns.withLock({ $0 += 1; return $0 }) == 1 else { return }
                    started.signal()
                    _ = G.eventually { store.commitQueue.waitingCount == 2 }
                }
                outcomes.withLock { $0["leader"] = "saved" }
            } catch {
                outcomes.withLock { $0["leader"] = "failed: \(error)" }
            }
        }
        #expect(started.wait(timeout: .now() + 30) == .success)
        DispatchQueue.global().async(group: done) {
            do {
                try Self.write(store, #"INSERT INTO "LOG" VALUES (2)"#)
                // Acknowledged: another connection sees the row already.
                let seen = try S.query(path, #"SELECT count(*) FROM "LOG" WHERE "N" = 2"#)
                outcomes.withLock { $0["joiner"] = seen == [["1"]] ? "saved" : "acknowledged before durable" }
            } catch {
                outcomes.withLock { $0["joiner"] = "failed: \(error)" }
            }
        }
        DispatchQueue.global().async(group: done) {
            do {
                try store.inGroupCommit("refusing") { connection in
                    try connection.execute(#"INSERT INTO "LOG" VALUES (3)"#)
                    throw Refused()
                }
                outcomes.withLock { $0["refused"] = "saved" }
            } catch is Refused {
                outcomes.withLock { $0["refused"] = "refused" }
            } catch {
                outcomes.withLock { $0["refused"] = "failed: \(error)" }
            }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(outcomes.withLock { $0 } == ["leader": "saved", "joiner": "saved", "refused": "refused"])
        // One transaction for the three writes; the refused one's row is not written.
        let after = store.groupCommitCounters
        #expect(after.groups - before.groups == 1)
        #expect(after.largestGroup >= 3)
        #expect(after.committed - before.committed == 2)
        #expect(after.failed - before.failed == 1)
        #expect(try S.query(path, #"SELECT "N" FROM "LOG" ORDER BY "N""#) == [["1"], ["2"]])
        // The group ran its writes straight, then, once one failed, again with each write in a
        // savepoint of its own.
        #expect(leaderRuns.withLock { $0 } == 2)
        #expect(try Self.ranSavepoint(store))
    }

    /// Whether `store`'s write connection ever ran a group's `SAVEPOINT`.
    static func ranSavepoint(_ store: SQLiteStore) throws -> Bool {
        try store.inGroupCommit("checking") { connection in
            connection.hasCachedStatement(key: SQLiteWriteStatementKey.savepoint)
        }
    }

    /// No more than `groupLimit` writes share a transaction: the rest wait for the next one.
    @Test func joinersStopAtTheGroupLimit() throws {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: G.model(), history: false)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        try Self.write(store, #"CREATE TABLE "LOG" ("N" INTEGER)"#)
        let before = store.groupCommitCounters
        let writers = SQLiteStore.groupLimit + 4
        let started = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            try? store.inGroupCommit("leading") { connection in
                started.signal()
                _ = G.eventually { store.commitQueue.waitingCount == writers }
            }
        }
        #expect(started.wait(timeout: .now() + 30) == .success)
        let failures = Locked(0)
        // Threads of their own: each waits in the queue, more than Dispatch's pool may run.
        for index in 0..<writers {
            done.enter()
            Thread {
                do { try Self.write(store, #"INSERT INTO "LOG" VALUES (\#(index))"#) } catch { failures.withLock { $0 += 1 } }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(failures.withLock { $0 } == 0)
        let after = store.groupCommitCounters
        #expect(after.committed - before.committed == writers + 1)
        #expect(after.largestGroup == SQLiteStore.groupLimit)
        #expect(after.groups - before.groups == 2)
        #expect(try S.query(path, #"SELECT count(*) FROM "LOG""#) == [["\(writers)"]])
        // Every write succeeded: the groups ran them straight, without a savepoint each.
        #expect(try !Self.ranSavepoint(store))
    }
}
