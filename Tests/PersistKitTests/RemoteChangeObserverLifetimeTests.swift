import Foundation
import Testing
@testable import PersistKit

/// The remote-change observer holds its store strongly (see `RemoteChangeObserver.store`): the
/// store still goes when the coordinator drops it, whether the store is removed or the
/// coordinator goes.
@Suite("Remote-change observer and the store's lifetime", .timeLimit(.minutes(1)))
struct RemoteChangeObserverLifetimeTests {
    typealias S = SharingTestSupport

    /// A coordinator observing remote changes of a new store, and the store, held weakly.
    private func observed() throws -> (PersistentStoreCoordinator, RemoteChangeObserver, () -> (any PersistentStore)?) {
        let coordinator = try S.coordinator(try S.storePath(), model: PersistentHistoryTests.model(), remote: true)
        let store = try #require(coordinator.persistentStores.first)
        let observer = try #require(coordinator.remoteChangeObserver(forStoreWithIdentifier: store.identifier))
        weak let weakStore = store as? SQLiteStore
        return (coordinator, observer, { weakStore })
    }

    @Test("a removed store goes once its observer's last poll ended")
    func removedStoreGoes() throws {
        var (coordinator, observer, store): (PersistentStoreCoordinator?, RemoteChangeObserver?, () -> (any PersistentStore)?)
        (coordinator, observer, store) = try observed()
        #expect(store() != nil)
        try coordinator!.remove(store()!)
        observer!.drain()
        observer = nil
        #expect(store() == nil)
        #expect(coordinator!.persistentStores.isEmpty)
    }

    @Test("the store goes with its coordinator")
    func storeGoesWithCoordinator() throws {
        var (coordinator, observer, store): (PersistentStoreCoordinator?, RemoteChangeObserver?, () -> (any PersistentStore)?)
        (coordinator, observer, store) = try observed()
        observer!.drain()
        observer = nil
        #expect(store() != nil && coordinator?.persistentStores.count == 1)
        coordinator = nil
        #expect(store() == nil)
    }
}
