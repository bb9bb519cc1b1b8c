import Dispatch
import Foundation
@testable import PersistKit
import Testing
@testable import PersistServer

/// A pipelined batch of `insert`+`save` units overlaps its saves: each unit's write is queued
/// for the store's group commit and the next unit runs meanwhile, so the batch's writes share
/// groups; the replies still come in order, each the one the unit would have had alone. A
/// request other than such a unit waits for the saves before it, and a `close` waits for every
/// save in flight.
@Suite("Overlapping saves of a pipelined batch", .timeLimit(.minutes(1)))
struct OverlappingSaveSessionTests {
    typealias T = InsertSaveGroupCommitTests

    /// Saves a beer named "Seed" through `writer`; its ID.
    static func seed(_ writer: Session) throws -> String {
        let seeded = try T.ask(writer, T.requests([T.insertBeer("Seed"), ("save", [:])]))
        return try #require(T.objectID(seeded[0]))
    }

    /// An `update` of the object `id` to the name `name`.
    static func rename(_ id: String, to name: String) -> (String, JSON) {
        ("update", .object([JSON.Member("object", .string(id)), JSON.Member("values", .object([JSON.Member("name", .string(name))]))]))
    }

    /// The `name` of each object `ids` names, read by a new session.
    static func names(_ ids: [String], state: ServerState) throws -> [String?] {
        let reader = Session(state: state, peer: T.root, name: "reader")
        let read = try T.ask(reader, T.requests([("get", .object([JSON.Member("ids", .array(ids.map(JSON.string)))]))]))
        let objects = try #require(read.first?["result"]?["objects"]?.arrayValue, "\(read)")
        return objects.map { $0["values"]?["name"]?.stringValue }
    }

    /// Sixteen units sent while a group holds the queue: all sixteen writes are queued before
    /// any commits (each unit ran while the one before waited), they commit together, and the
    /// replies come in order, each insert with the permanent ID its object keeps and each save
    /// counting its one insert.
    @Test func sixteenPipelinedUnitsAreQueuedTogetherAndAnsweredInOrder() throws {
        try T.withState { state, store in
            let writer = Session(state: state, peer: T.root, name: "writer")
            let release = DispatchSemaphore(value: 0), holder = DispatchGroup()
            #expect(T.holdQueue(of: store, until: release, in: holder))
            let before = store.groupCommitCounters
            let names = (0..<16).map { "Pipelined \($0)" }
            let replies = Locked<[JSON]?>(nil)
            let done = DispatchSemaphore(value: 0)
            writer.handle(T.requests(names.flatMap { [T.insertBeer($0), ("save", JSON.object([]))] })) { answers in
                replies.withLock { $0 = answers.map(\.json) }
                done.signal()
            }
            #expect(QueuedSaveSessionTests.eventually { store.commitQueue.waitingCount == 16 })
            #expect(replies.withLock { $0 } == nil)
            release.signal()
            #expect(done.wait(timeout: .now() + 30) == .success)
            #expect(holder.wait(timeout: .now() + 30) == .success)

            let answers = try #require(replies.withLock { $0 })
            #expect(answers.count == 32)
            #expect(answers.map { $0["id"] } == (1...32).map { JSON.integer(Int64($0)) })
            #expect(answers.allSatisfy { $0["ok"] == .bool(true) }, "\(answers)")
            let ids = stride(from: 0, to: 32, by: 2).compactMap { T.objectID(answers[$0]) }
            #expect(ids.count == 16 && ids.allSatisfy(T.isPermanent) && Set(ids).count == 16, "\(ids)")
            for index in stride(from: 1, to: 32, by: 2) {
                #expect(answers[index]["result"]?["inserted"] == .integer(1), "\(answers[index])")
            }
            let after = store.groupCommitCounters
            // The hold's write and the sixteen saves; the sixteen in one group.
            #expect(after.committed - before.committed == 17)
            #expect(after.largestGroup >= 16)
            #expect(try Self.names(ids, state: state) == names)
            #expect(!writer.context.performAndWait { writer.context.hasChanges || writer.context.hasOverlappingSaves })
        }
    }

    /// An update in the middle of a batch of units waits for the saves before it: while the
    /// queue is held, only the first unit's write is queued; once released, the update and the
    /// saves after it run, and every reply is right, in order.
    @Test func anUpdateInTheMiddleWaitsForTheSavesBeforeIt() throws {
        try T.withState { state, store in
            let writer = Session(state: state, peer: T.root, name: "writer")
            let seed = try Self.seed(writer)
            let release = DispatchSemaphore(value: 0), holder = DispatchGroup()
            #expect(T.holdQueue(of: store, until: release, in: holder))

            let update = Self.rename(seed, to: "Seed, renamed")
            let replies = Locked<[JSON]?>(nil)
            let done = DispatchSemaphore(value: 0)
            writer.handle(T.requests([T.insertBeer("Before"), ("save", [:]), update, ("save", [:]),
                                      T.insertBeer("After"), ("save", [:])])) { answers in
                replies.withLock { $0 = answers.map(\.json) }
                done.signal()
            }
            #expect(QueuedSaveSessionTests.eventually { store.commitQueue.waitingCount == 1 })
            // The update waits: nothing else reaches the queue while the first write is held.
            writer.context.performAndWait {}
            #expect(store.commitQueue.waitingCount == 1)
            release.signal()
            #expect(done.wait(timeout: .now() + 30) == .success)
            #expect(holder.wait(timeout: .now() + 30) == .success)

            let answers = try #require(replies.withLock { $0 })
            #expect(answers.map { $0["ok"] } == Array(repeating: JSON.bool(true), count: 6), "\(answers)")
            #expect(answers[3]["result"]?["updated"] == .integer(1), "\(answers[3])")
            #expect(answers[5]["result"]?["inserted"] == .integer(1), "\(answers[5])")
            let ids = [T.objectID(answers[0]), seed, T.objectID(answers[4])].compactMap { $0 }
            #expect(try Self.names(ids, state: state) == ["Before", "Seed, renamed", "After"])
        }
    }

    /// A `close` that comes while several units' writes are in flight waits for all of them:
    /// the batch is answered first, and every object is saved, not rolled back.
    @Test func aCloseWaitsForEverySaveInFlight() throws {
        try T.withState { state, store in
            let writer = Session(state: state, peer: T.root, name: "writer")
            let release = DispatchSemaphore(value: 0), holder = DispatchGroup()
            #expect(T.holdQueue(of: store, until: release, in: holder))
            let names = (0..<4).map { "Closing \($0)" }
            let race = BatchAndClose()
            race.send(T.requests(names.flatMap { [T.insertBeer($0), ("save", JSON.object([]))] }), to: writer)
            #expect(QueuedSaveSessionTests.eventually { store.commitQueue.waitingCount == 4 })
            race.close(writer)
            writer.context.performAndWait {}
            #expect(race.events.withLock { $0 }.isEmpty)
            release.signal()
            #expect(race.wait())
            #expect(holder.wait(timeout: .now() + 30) == .success)
            #expect(race.events.withLock { $0 } == ["replied", "closed"])
            let answers = race.replies.withLock { $0 }
            let ids = stride(from: 0, to: answers.count, by: 2).compactMap { T.objectID(answers[$0]) }
            #expect(ids.count == 4)
            let read = try Self.names(ids, state: state)
            #expect(read == names)
        }
    }

    /// A `close` that comes while the first save of a batch is in flight, with an update and a
    /// save still to run after it, waits for the whole batch, not only for that save: the
    /// update is saved, not rolled back.
    @Test func aCloseWaitsForTheRestOfTheBatch() throws {
        try T.withState { state, store in
            let writer = Session(state: state, peer: T.root, name: "writer")
            let seed = try Self.seed(writer)
            let release = DispatchSemaphore(value: 0), holder = DispatchGroup()
            #expect(T.holdQueue(of: store, until: release, in: holder))
            let update = Self.rename(seed, to: "Seed, renamed")
            let race = BatchAndClose()
            race.send(T.requests([T.insertBeer("First"), ("save", [:]), update, ("save", [:])]), to: writer)
            #expect(QueuedSaveSessionTests.eventually { store.commitQueue.waitingCount == 1 })
            race.close(writer)
            writer.context.performAndWait {}
            release.signal()
            #expect(race.wait())
            #expect(holder.wait(timeout: .now() + 30) == .success)
            #expect(race.events.withLock { $0 } == ["replied", "closed"])
            let answers = race.replies.withLock { $0 }
            #expect(answers.map { $0["ok"] } == Array(repeating: JSON.bool(true), count: 4), "\(answers)")
            let read = try Self.names([seed], state: state)
            #expect(read == ["Seed, renamed"])
        }
    }
}
