import Foundation
import Testing
@testable import PersistKit

/// The object of a context's notifications: the context is an `NSObject` (as Core Data's is)
/// and posts itself held as one (`notificationSender`), which Foundation identifies without
/// dynamic casts. Observers must see exactly what they saw before: the context itself, found
/// by `as? ManagedObjectContext`, heard by observers registered for it and by no others.
@Suite("Notification sender", .serialized, .timeLimit(.minutes(1)))
struct NotificationSenderTests {
    typealias M = ContextTestModel

    static let names = [ManagedObjectContext.didChangeObjectsNotification, ManagedObjectContext.willSaveObjectsNotification,
                        ManagedObjectContext.didSaveObjectsNotification, ManagedObjectContext.didSaveObjectIDsNotification]

    /// What one observer heard: each notification's name and whether its object was the context.
    final class Heard: Sendable {
        let entries = Locked<[(name: Notification.Name, isContext: Bool, isSame: Bool)]>([])
    }

    @Test func everyNotificationOfASaveAndAMergeHasTheContextAsItsObject() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("sender.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let writer = M.context(coordinator)
        let viewer = M.context(coordinator)
        viewer.automaticallyMergesChangesFromParent = true
        let bystander = M.context(coordinator)
        let center = NotificationCenter.default
        let forWriter = Heard(), forViewer = Heard(), forBystander = Heard(), byName = Heard()
        var observers: [any NSObjectProtocol] = []
        for name in Self.names {
            observers.append(center.addObserver(forName: name, object: writer, queue: nil) { note in
                forWriter.entries.withLock { $0.append((note.name, note.object is ManagedObjectContext, (note.object as? ManagedObjectContext) === writer)) }
            })
            observers.append(center.addObserver(forName: name, object: viewer, queue: nil) { note in
                forViewer.entries.withLock { $0.append((note.name, note.object is ManagedObjectContext, (note.object as? ManagedObjectContext) === viewer)) }
            })
            observers.append(center.addObserver(forName: name, object: bystander, queue: nil) { note in
                forBystander.entries.withLock { $0.append((note.name, true, false)) }
            })
            // Registered for any object (other tests' contexts post too: only these three are
            // kept): the object is still the context, as `AnyObject` too.
            observers.append(center.addObserver(forName: name, object: nil, queue: nil) { note in
                let sender = note.object.map { $0 as AnyObject }
                guard sender === writer || sender === viewer || sender === bystander else { return }
                byName.entries.withLock { $0.append((note.name, sender is ManagedObjectContext, sender !== bystander)) }
            })
        }
        defer { for observer in observers { center.removeObserver(observer) } }

        var beer: ManagedObject?
        try writer.performAndWait {
            beer = M.insert("Beer", into: writer, ["name": "Orval"])
            try writer.save()
        }
        try writer.performAndWait {
            beer?.setValue(Int64(30), forKey: "ibu")
            try writer.save()
        }
        // The merges run on the viewer's queue, before this block.
        viewer.performAndWait {}

        let writerHeard = forWriter.entries.withLock { $0 }
        #expect(writerHeard.map(\.name) == Self.names + Self.names)
        #expect(writerHeard.allSatisfy { $0.isContext && $0.isSame })
        let viewerHeard = forViewer.entries.withLock { $0 }
        // The viewer merged both saves: each merge posts its objects-did-change.
        #expect(!viewerHeard.isEmpty)
        #expect(viewerHeard.allSatisfy { $0.name == ManagedObjectContext.didChangeObjectsNotification && $0.isContext && $0.isSame })
        #expect(forBystander.entries.withLock { $0.isEmpty })
        let all = byName.entries.withLock { $0 }
        #expect(all.count == writerHeard.count + viewerHeard.count)
        #expect(all.allSatisfy { $0.isContext && $0.isSame })
    }

    @Test func contextsCompareByIdentity() {
        let one = ManagedObjectContext(concurrencyType: .privateQueue)
        let other = ManagedObjectContext(concurrencyType: .privateQueue)
        #expect(one == one)
        #expect(one != other)
        #expect(Set([one, other, one]).count == 2)
    }
}
