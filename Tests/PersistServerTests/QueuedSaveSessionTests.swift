import Dispatch
import Foundation
@testable import PersistKit
import Testing
@testable import PersistServer

/// A batch of writes ending in a save queues that save for the store's group commit: the
/// session's context is free while it commits, the replies come once it committed, and a
/// `close` that comes meanwhile waits for it (its rollback would otherwise undo objects the
/// save is about to finish).
@Suite("Queued saves of a session", .timeLimit(.minutes(1)))
struct QueuedSaveSessionTests {
    typealias T = InsertSaveGroupCommitTests

    /// Waits (bounded) until `condition` holds; no timing is asserted, only that it happens.
    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<30_000 {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }

    @Test func aCloseDuringAQueuedSaveWaitsForIt() throws {
        try T.withState { state, store in
            let writer = Session(state: state, peer: T.root, name: "writer")
            // Hold the queue's leadership, so the save waits for the next group.
            let release = DispatchSemaphore(value: 0), holder = DispatchGroup()
            #expect(T.holdQueue(of: store, until: release, in: holder))

            let race = BatchAndClose()
            race.send(T.requests([T.insertBeer("Zombie Dust"), ("save", [:])]), to: writer)
            // A unit alone on a clean context ran its first half on this thread: the write is
            // queued by the time `handle` returned.
            #expect(store.commitQueue.waitingCount == 1)
            // The save is queued: the context's queue is free, and takes the close.
            race.close(writer)
            // The close's hop ran before this one (one serial queue), and was held off.
            writer.context.performAndWait {}
            #expect(race.events.withLock { $0 }.isEmpty)

            release.signal()
            #expect(race.wait())
            #expect(holder.wait(timeout: .now() + 30) == .success)
            #expect(race.events.withLock { $0 } == ["replied", "closed"])
            let answers = race.replies.withLock { $0 }
            #expect(answers.count == 2 && answers[1]["result"]?["inserted"] == .integer(1))
            let id = try #require(answers.first.flatMap(T.objectID))
            #expect(T.isPermanent(id), "\(id)")
            // Saved, not rolled back by the close: another session reads it.
            let reader = Session(state: state, peer: T.root, name: "reader")
            let read = try T.ask(reader, T.requests([("get", .object([JSON.Member("ids", .array([.string(id)]))]))]))
            #expect(read[0]["result"]?["objects"]?.arrayValue?.first?["values"]?["name"] == .string("Zombie Dust"))
        }
    }

    /// A lone `save` at the end of a batch is queued too, and answered once committed.
    @Test func aSaveEndingABatchIsQueued() throws {
        try T.withState { state, store in
            let writer = Session(state: state, peer: T.root, name: "writer")
            _ = try T.ask(writer, T.requests([T.insertBeer("Heady Topper")]))
            let release = DispatchSemaphore(value: 0), holder = DispatchGroup()
            #expect(T.holdQueue(of: store, until: release, in: holder))
            let reply = Locked<JSON?>(nil)
            let done = DispatchSemaphore(value: 0)
            writer.handle(T.requests([("save", [:])])) { answers in
                reply.withLock { $0 = answers.first?.json }
                done.signal()
            }
            #expect(Self.eventually { store.commitQueue.waitingCount == 1 })
            #expect(writer.context.performAndWait { writer.context.hasChanges })
            release.signal()
            #expect(done.wait(timeout: .now() + 30) == .success)
            #expect(reply.withLock { $0 }?["result"] == .object(["inserted": .integer(1), "updated": .integer(0), "deleted": .integer(0)]))
            #expect(!writer.context.performAndWait { writer.context.hasChanges })
            #expect(holder.wait(timeout: .now() + 30) == .success)
        }
    }
}
