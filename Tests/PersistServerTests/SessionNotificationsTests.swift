import Dispatch
import Foundation
@testable import PersistKit
import Testing
@testable import PersistServer

/// A connection's context posts no notifications (nothing outside persistd observes it), nor
/// does the view context when saves are merged into it, and what persistd feeds from its saves
/// still works: the view context has every save merged in, so other connections read it, and
/// the history records it.
@Suite("Session contexts post no notifications", .timeLimit(.minutes(1)))
struct SessionNotificationsTests {
    typealias G = InsertSaveGroupCommitTests

    /// Counts the context notifications whose object is `context`, from any thread.
    final class Counter: @unchecked Sendable {
        // @unchecked Sendable: `count` is a `Locked`; `observers` is set in init only.
        let count = Locked(0)
        private var observers: [any NSObjectProtocol] = []

        init(_ context: ManagedObjectContext) {
            for name in [ManagedObjectContext.didChangeObjectsNotification, ManagedObjectContext.willSaveObjectsNotification,
                         ManagedObjectContext.didSaveObjectsNotification, ManagedObjectContext.didSaveObjectIDsNotification] {
                observers.append(NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [count, weak context] note in
                    guard let context, note.object as AnyObject === context else { return }
                    count.withLock { $0 += 1 }
                })
            }
        }

        func stop() { for observer in observers { NotificationCenter.default.removeObserver(observer) } }
    }

    @Test("inserts, updates, deletes and saves of a connection post nothing; other connections read them; history has them")
    func sessionSavesPostNothingAndStillReachReadersAndHistory() throws {
        try G.withState { state, _ in
            let writer = Session(state: state, peer: G.root, name: "writer")
            let reader = Session(state: state, peer: G.root, name: "reader")
            #expect(!writer.context.postsNotifications)
            let counter = Counter(writer.context)
            let viewCounter = Counter(state.container.viewContext)
            defer { counter.stop(); viewCounter.stop() }

            let inserted = try G.ask(writer, G.requests([G.insertBeer("Pliny"), G.insertBeer("Heady"), ("save", [:])]))
            #expect(inserted[2]["result"]?["inserted"] == .integer(2))
            let kept = try #require(G.objectID(inserted[0]))
            let gone = try #require(G.objectID(inserted[1]))
            let changed = try G.ask(writer, G.requests([
                ("update", .object([JSON.Member("object", .string(kept)), JSON.Member("values", .object([JSON.Member("name", .string("Pliny the Elder"))]))])),
                ("delete", .object([JSON.Member("object", .string(gone))])),
                ("save", [:]),
            ]))
            #expect(changed[2]["result"] == .object(["inserted": .integer(0), "updated": .integer(1), "deleted": .integer(1)]))
            #expect(counter.count.withLock { $0 } == 0)

            // Another connection reads the saves (through the view context, which merged them).
            let read = try G.ask(reader, G.requests([("get", .object([JSON.Member("ids", .array([.string(kept)]))]))]))
            #expect(read[0]["result"]?["objects"]?.arrayValue?.first?["values"]?["name"] == .string("Pliny the Elder"))
            let fetched = try G.ask(reader, G.requests([("count", .object([JSON.Member("entity", .string("Beer"))]))]))
            #expect(fetched[0]["result"]?["count"] == .integer(1))
            // The view context merged both saves, posting nothing either (persistd turns its
            // notifications off too).
            #expect(viewCounter.count.withLock { $0 } == 0)

            // The history has both transactions.
            let history = try G.ask(reader, G.requests([("history", [:])]))
            let transactions = history[0]["result"]?["transactions"]?.arrayValue ?? []
            #expect(transactions.count == 2, "\(history[0].encoded)")
        }
    }
}
