import Dispatch
import Foundation
@testable import PersistKit
import Testing
@testable import PersistServer

/// A lone `insert`+`save` unit handed to a session by a thread with nothing else to do
/// (`Session.handle(_:onIdleThread:completion:)`, what an event loop with no other client
/// ready passes): with the store's group commit idle, the unit commits on that thread and is
/// answered before `handle` returns; otherwise its write goes to the committer thread, which
/// answers. The replies are the same either way.
@Suite("Insert and save committed on an idle calling thread")
struct IdleThreadSaveSessionTests {
    typealias I = InsertSaveGroupCommitTests

    /// What one unit's handling gave: the replies, whether they came before `handle` returned,
    /// and whether on the calling thread.
    struct Handled {
        var replies: [JSON]
        var beforeReturn: Bool
        var onCallingThread: Bool
    }

    /// Hands `requests` to `session` with `onIdleThread`, and waits for the replies.
    static func handle(_ session: Session, _ requests: [WireRequest], onIdleThread: Bool) throws -> Handled {
        let caller = pthread_self()
        let answered = Locked<(replies: [JSON], thread: pthread_t)?>(nil)
        let done = DispatchSemaphore(value: 0)
        session.handle(requests, onIdleThread: onIdleThread) { answers in
            answered.withLock { $0 = (answers.map(\.json), pthread_self()) }
            done.signal()
        }
        let beforeReturn = answered.withLock { $0 != nil }
        #expect(done.wait(timeout: .now() + 30) == .success)
        let (replies, thread) = try #require(answered.withLock { $0 })
        return Handled(replies: replies, beforeReturn: beforeReturn, onCallingThread: pthread_equal(thread, caller) != 0)
    }

    @Test("on an idle thread the unit commits there and is answered before handle returns; otherwise the committer answers",
          .timeLimit(.minutes(1)), arguments: [true, false])
    func loneUnitCommitsOnAnIdleThread(_ idle: Bool) throws {
        try I.withState { state, store in
            let writer = Session(state: state, peer: I.root, name: "writer")
            let reader = Session(state: state, peer: I.root, name: "reader")
            let before = store.groupCommitCounters
            let handled = try Self.handle(writer, I.requests([I.insertBeer("Zombie Dust"), ("save", [:])]), onIdleThread: idle)
            if idle {
                #expect(handled.beforeReturn)
            }
            // Not asserted otherwise: the committer thread may answer before the calling
            // thread gets back from `handle`; only the answering thread tells the paths apart.
            #expect(handled.onCallingThread == idle)
            #expect(handled.replies[1]["result"] == .object(["inserted": .integer(1), "updated": .integer(0), "deleted": .integer(0)]))
            let id = try #require(I.objectID(handled.replies[0]))
            #expect(I.isPermanent(id), "\(id)")
            let after = store.groupCommitCounters
            #expect(after.groups - before.groups == 1)
            #expect(after.committed - before.committed == 1)
            #expect(after.ledWhenIdle - before.ledWhenIdle == (idle ? 1 : 0))

            // Acknowledged means readable from another connection.
            let read = try I.ask(reader, I.requests([("get", .object([JSON.Member("ids", .array([.string(id)]))]))]))
            #expect(read[0]["result"]?["objects"]?.arrayValue?.first?["values"]?["name"] == .string("Zombie Dust"))
        }
    }

    @Test("a unit whose save fails on an idle thread is answered as elsewhere: the save's error, and the insert's permanent ID",
          .timeLimit(.minutes(1)))
    func failedSaveOnAnIdleThread() throws {
        try I.withState { state, store in
            let writer = Session(state: state, peer: I.root, name: "writer")
            let before = store.groupCommitCounters
            // No name: the save fails validation before it reaches the store.
            let handled = try Self.handle(writer, I.requests([I.insertBeer(nil), ("save", [:])]), onIdleThread: true)
            #expect(handled.replies[0]["ok"] == .bool(true))
            #expect(handled.replies[1]["ok"] == .bool(false))
            #expect(handled.replies[1]["error"]?["code"] == .string("validation_failed"), "\(handled.replies[1])")
            let id = try #require(I.objectID(handled.replies[0]))
            #expect(I.isPermanent(id), "\(id)")
            #expect(store.groupCommitCounters.ledWhenIdle == before.ledWhenIdle, "nothing reached the group commit as a queued save")
        }
    }

    @Test("two units in one batch queue their saves for the committer even on an idle thread, so that they share a group",
          .timeLimit(.minutes(1)))
    func severalUnitsAreNotLedHere() throws {
        try I.withState { state, store in
            let writer = Session(state: state, peer: I.root, name: "writer")
            let before = store.groupCommitCounters
            let handled = try Self.handle(writer, I.requests([I.insertBeer("One"), ("save", [:]), I.insertBeer("Two"), ("save", [:])]),
                                          onIdleThread: true)
            #expect(handled.replies.map { $0["ok"] } == [.bool(true), .bool(true), .bool(true), .bool(true)])
            #expect(!handled.onCallingThread)
            let after = store.groupCommitCounters
            #expect(after.ledWhenIdle == before.ledWhenIdle)
            #expect(after.committed - before.committed == 2)
        }
    }
}
