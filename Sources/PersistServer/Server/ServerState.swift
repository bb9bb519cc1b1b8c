import Foundation
import Synchronization
import PersistKit

/// What every session shares: the container, the configuration, the counters.
///
/// Immutable after start, except for the counters, which are atomics, and the configuration,
/// which a reload (SIGHUP) replaces as a whole (see ``reload(_:)``).
public final class ServerState: Sendable {
    /// The container: model, coordinator, store, view context.
    public let container: PersistentContainer
    /// The configuration served now. A connection keeps the limits in force when it was accepted.
    public var configuration: ServerConfiguration { current.withLock { $0 } }
    private let current: Locked<ServerConfiguration>
    /// Feeds subscriptions from the store's persistent history.
    let subscriptions: SubscriptionHub
    /// The counters `stats` reports.
    public let statistics = ServerStatistics()
    /// Who may do what, now: a reload applies to connections already open too.
    public var policy: AccessPolicy { current.withLock { $0.accessPolicy } }
    /// How many times the configuration was replaced (``reload(_:)``): raised under the lock
    /// of the configuration, with it, so a session keeps its peer's access decided under one
    /// generation until the generation changes (``Session/access()``), instead of copying the
    /// policy under the lock for every request or batch.
    let policyGeneration = Atomic<UInt64>(0)
    /// The model's normalized JSON, as `--check` prints it, parsed once for `model`.
    public let modelJSON: JSON
    /// `fetch` and `count` requests queued or running on the view context. While there are
    /// any, `get`s also go to the view context asynchronously, so an event loop's thread never
    /// waits behind a long query (see `Session.handle`).
    let queriesOnViewContext = Atomic<Int>(0)
    /// The store when it is SQLite's, found once at start: a save tells its group commit that
    /// it is coming (``Session/expectingWrite(adoptingAnnouncement:_:)``).
    let sqliteStore: SQLiteStore?
    /// When the server started.
    public let startTime = Date()
    /// The version `hello` reports: `persistd/<version>`.
    public static let version = "0.1.0"

    /// Creates the shared state for a loaded container.
    public init(container: PersistentContainer, configuration: ServerConfiguration) throws {
        self.container = container
        self.current = Locked(configuration)
        self.subscriptions = SubscriptionHub(container: container)
        self.sqliteStore = container.persistentStoreCoordinator.persistentStores.first as? SQLiteStore
        self.modelJSON = try JSONParser.parse(Array(try container.managedObjectModel.normalizedJSON()))
    }

    /// Replaces the configuration (a reload); the caller has checked that only reloadable
    /// settings differ.
    public func reload(_ configuration: ServerConfiguration) {
        current.withLock {
            $0 = configuration
            policyGeneration.add(1, ordering: .releasing)
        }
    }

    /// `peer`'s access under the policy in force, and the generation of that policy, read
    /// together under the configuration's lock.
    func access(for peer: PeerCredentials?) -> (access: PeerAccess, generation: UInt64) {
        current.withLock { ($0.accessPolicy.access(for: peer), policyGeneration.load(ordering: .relaxed)) }
    }

    /// The coordinator.
    public var coordinator: PersistentStoreCoordinator { container.persistentStoreCoordinator }

    /// The one store.
    public var store: (any PersistentStore)? { coordinator.persistentStores.first }

    /// Bytes the store takes on disk (with SQLite's `-wal` and `-shm` files), 0 in memory.
    public var storeSize: Int64 {
        guard let url = store?.url else { return 0 }
        var total: Int64 = 0
        for suffix in ["", "-wal", "-shm"] {
            let path = url.path + suffix
            if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber {
                total += size.int64Value
            }
        }
        return total
    }
}
