import Foundation
import Testing
@testable import PersistKit

/// A write announced before it is made (`SQLiteStore.expectingWrite(_:)`) is waited for by a
/// group about to commit, and shares its transaction; an announcement that brings no write
/// lets the group commit without it.
@Suite("Group commit expected writes", .timeLimit(.minutes(1)))
struct GroupCommitExpectedWriteTests {
    typealias S = SharingTestSupport
    typealias G = GroupCommitConcurrencyTests
    typealias J = GroupCommitJoinTests

    /// A store with a `LOG` table, whose leaders wait for expected writes `commitDelay`
    /// seconds (``StoreOptions/commitDelay``): by default far longer than any test takes, so
    /// that what joins does not depend on the scheduler.
    static func store(commitDelay: Double = 120) throws -> (SQLiteStore, String, PersistentStoreCoordinator) {
        let path = try S.storePath()
        let coordinator = try S.coordinator(path, model: G.model(), history: false, commitDelay: commitDelay)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        try J.write(store, #"CREATE TABLE "LOG" ("N" INTEGER)"#)
        return (store, path, coordinator)
    }

    /// Starts, on another thread in `group`, a group commit that inserts 1 into `LOG`, signals
    /// `ran` once its statements ran, and records its outcome under "leader".
    static func lead(_ store: SQLiteStore, in group: DispatchGroup, ran: DispatchSemaphore,
                     outcomes: Locked<[String: String]>) {
        DispatchQueue.global().async(group: group) {
            do {
                try store.inGroupCommit("leading") { connection in
                    try connection.execute(#"INSERT INTO "LOG" VALUES (1)"#)
                    ran.signal()
                }
                outcomes.withLock { $0["leader"] = "saved" }
            } catch {
                outcomes.withLock { $0["leader"] = "failed: \(error)" }
            }
        }
    }

    /// Starts, on another thread, a write expected from the start (`SQLiteStore.expectingWrite(_:)`)
    /// that waits for `gate`, then inserts 2 into `LOG` and records its outcome under "expected";
    /// returns once the write is expected, with the group the thread runs in and the outcomes.
    static func expected(_ store: SQLiteStore, writingAfter gate: DispatchSemaphore)
        -> (DispatchGroup, Locked<[String: String]>) {
        let group = DispatchGroup()
        let outcomes = Locked<[String: String]>([:])
        let expecting = DispatchSemaphore(value: 0)
        DispatchQueue.global().async(group: group) {
            do {
                try store.expectingWrite { () throws(any Error) in
                    expecting.signal()
                    gate.wait()
                    try J.write(store, #"INSERT INTO "LOG" VALUES (2)"#)
                }
                outcomes.withLock { $0["expected"] = "saved" }
            } catch {
                outcomes.withLock { $0["expected"] = "failed: \(error)" }
            }
        }
        #expect(expecting.wait(timeout: .now() + 30) == .success)
        #expect(store.commitQueue.expectedCount == 1)
        return (group, outcomes)
    }

    /// Checks that the leader's write and one other were committed, in `groups` groups since
    /// `before`, and that no write is expected any more.
    static func checkBothCommitted(_ store: SQLiteStore, _ path: String,
                                   since before: (groups: Int, committed: Int, failed: Int, largestGroup: Int, ledWhenIdle: Int),
                                   inGroups groups: Int) throws {
        let after = store.groupCommitCounters
        #expect(after.groups - before.groups == groups)
        #expect(after.committed - before.committed == 2)
        #expect(store.commitQueue.expectedCount == 0)
        #expect(try S.query(path, #"SELECT "N" FROM "LOG" ORDER BY "N""#) == [["1"], ["2"]])
    }

    @Test func aGroupWaitsForAnExpectedWriteAndCommitsItToo() throws {
        let (store, path, coordinator) = try Self.store()
        defer { withExtendedLifetime(coordinator) {} }
        let before = store.groupCommitCounters
        let leaderRan = DispatchSemaphore(value: 0)
        // The expecting thread says so, then writes only once the leader's statements ran.
        let (done, outcomes) = Self.expected(store, writingAfter: leaderRan)
        Self.lead(store, in: done, ran: leaderRan, outcomes: outcomes)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(outcomes.withLock { $0 } == ["leader": "saved", "expected": "saved"])
        // Without the wait the leader would have committed alone, before the expected write came.
        try Self.checkBothCommitted(store, path, since: before, inGroups: 1)
    }

    @Test func anExpectationThatBringsNoWriteLetsTheGroupCommit() throws {
        let (store, path, coordinator) = try Self.store()
        defer { withExtendedLifetime(coordinator) {} }
        let before = store.groupCommitCounters
        let leaderRan = DispatchSemaphore(value: 0)
        let expecting = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let leaderDone = DispatchSemaphore(value: 0)
        DispatchQueue.global().async(group: done) {
            store.expectingWrite {
                expecting.signal()
                leaderRan.wait()
            }
        }
        #expect(expecting.wait(timeout: .now() + 30) == .success)
        DispatchQueue.global().async(group: done) {
            try? store.inGroupCommit("leading") { connection in
                try connection.execute(#"INSERT INTO "LOG" VALUES (1)"#)
                leaderRan.signal()
            }
            leaderDone.signal()
        }
        // The leader waits (its deadline is minutes away) until the expectation is settled,
        // which wakes it.
        #expect(leaderDone.wait(timeout: .now() + 30) == .success)
        #expect(done.wait(timeout: .now() + 30) == .success)
        let after = store.groupCommitCounters
        #expect(after.groups - before.groups == 1)
        #expect(after.committed - before.committed == 1)
        #expect(store.commitQueue.expectedCount == 0)
        #expect(try S.query(path, #"SELECT "N" FROM "LOG""#) == [["1"]])
    }

    /// A write announced before its work is handed to another thread is waited for from the
    /// announcement on, before that thread started the work.
    @Test func anAnnouncedWriteIsWaitedForBeforeItsThreadStarts() throws {
        let (store, path, coordinator) = try Self.store()
        defer { withExtendedLifetime(coordinator) {} }
        let before = store.groupCommitCounters
        let leaderRan = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let outcomes = Locked<[String: String]>([:])
        store.announceWrite()
        #expect(store.commitQueue.expectedCount == 1)
        Self.lead(store, in: done, ran: leaderRan, outcomes: outcomes)
        // The announced work starts only once the leader's statements ran.
        #expect(leaderRan.wait(timeout: .now() + 30) == .success)
        DispatchQueue.global().async(group: done) {
            do {
                try store.expectingWrite(adoptingAnnouncement: true) { () throws(any Error) in
                    try J.write(store, #"INSERT INTO "LOG" VALUES (2)"#)
                }
                outcomes.withLock { $0["announced"] = "saved" }
            } catch {
                outcomes.withLock { $0["announced"] = "failed: \(error)" }
            }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(outcomes.withLock { $0 } == ["leader": "saved", "announced": "saved"])
        try Self.checkBothCommitted(store, path, since: before, inGroups: 1)
    }

    /// An expected write that fails in the group is rolled back alone; the leader's commits.
    @Test func anExpectedWriteThatFailsFailsAlone() throws {
        let (store, path, coordinator) = try Self.store()
        defer { withExtendedLifetime(coordinator) {} }
        let leaderRan = DispatchSemaphore(value: 0)
        let expecting = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let outcomes = Locked<[String: String]>([:])
        DispatchQueue.global().async(group: done) {
            do {
                try store.expectingWrite { () throws(any Error) in
                    expecting.signal()
                    leaderRan.wait()
                    try store.inGroupCommit("refusing") { connection in
                        try connection.execute(#"INSERT INTO "LOG" VALUES (2)"#)
                        throw J.Refused()
                    }
                }
                outcomes.withLock { $0["expected"] = "saved" }
            } catch is J.Refused {
                outcomes.withLock { $0["expected"] = "refused" }
            } catch {
                outcomes.withLock { $0["expected"] = "failed: \(error)" }
            }
        }
        #expect(expecting.wait(timeout: .now() + 30) == .success)
        let before = store.groupCommitCounters
        Self.lead(store, in: done, ran: leaderRan, outcomes: outcomes)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(outcomes.withLock { $0 } == ["leader": "saved", "expected": "refused"])
        let after = store.groupCommitCounters
        #expect(after.groups - before.groups == 1)
        #expect(after.committed - before.committed == 1)
        #expect(after.failed - before.failed == 1)
        #expect(try S.query(path, #"SELECT "N" FROM "LOG""#) == [["1"]])
    }

    /// With a commit delay of 0 a leader never waits: a write expected from another thread that
    /// comes only once the leader is done commits in a group of its own. (With the delay of
    /// the other tests the leader would wait for it, minutes, and this test would fail.)
    @Test func withoutACommitDelayAGroupCommitsWithoutWaitingForAnExpectedWrite() throws {
        let (store, path, coordinator) = try Self.store(commitDelay: 0)
        defer { withExtendedLifetime(coordinator) {} }
        let before = store.groupCommitCounters
        let leaderDone = DispatchSemaphore(value: 0)
        // The expecting thread writes only once the leader's group committed.
        let (done, outcomes) = Self.expected(store, writingAfter: leaderDone)
        let leaderRan = DispatchSemaphore(value: 0)
        let leader = DispatchGroup()
        Self.lead(store, in: leader, ran: leaderRan, outcomes: outcomes)
        // The leader commits while the write is still expected, and returns.
        #expect(leader.wait(timeout: .now() + 30) == .success, "the leader waited for the expected write")
        #expect(store.commitQueue.expectedCount == 1)
        leaderDone.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(outcomes.withLock { $0 } == ["leader": "saved", "expected": "saved"])
        try Self.checkBothCommitted(store, path, since: before, inGroups: 2)
    }

    /// The store's leaders wait as long as its options' commit delay says: half a millisecond
    /// unless set.
    @Test func theCommitDelayComesFromTheStoreOptions() throws {
        #expect(StoreOptions().commitDelay == 0.000_5)
        let path = try S.storePath()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: G.model())
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path), options: StoreOptions())
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        #expect(store.commitQueue.expectedWriteWait == 0.000_5)
        let (delayed, _, delayedCoordinator) = try Self.store(commitDelay: 0.25)
        defer { withExtendedLifetime(delayedCoordinator) {} }
        #expect(delayed.commitQueue.expectedWriteWait == 0.25)
    }

    /// A commit delay that is negative or not finite does not open the store, and the error
    /// says which option and why.
    @Test(arguments: [-1, -0.000_1, Double.nan, Double.infinity])
    func aCommitDelayOutOfRangeIsRefused(delay: Double) throws {
        let path = try S.storePath()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: G.model())
        var options = StoreOptions()
        options.commitDelay = delay
        let error = try #require(throws: PersistenceError.self) {
            try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path), options: options)
        }
        #expect(error.code == .persistentStoreOpen)
        #expect(error.message == "commitDelay must be a number of seconds, 0 or more, not \(delay)", "\(error)")
        #expect(coordinator.persistentStores.isEmpty)
    }
}
