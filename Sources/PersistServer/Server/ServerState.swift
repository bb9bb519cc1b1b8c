import Foundation
import PersistKit

/// What every session shares: the container, the configuration, the counters.
///
/// Immutable after start, except for the counters, which are atomics.
public final class ServerState: Sendable {
    /// The container: model, coordinator, store, view context.
    public let container: PersistentContainer
    /// The configuration served.
    public let configuration: ServerConfiguration
    /// The counters `stats` reports.
    public let statistics = ServerStatistics()
    /// Who may do what.
    public let policy: AccessPolicy
    /// The model's normalized JSON, as `--check` prints it, parsed once for `model`.
    public let modelJSON: JSON
    /// When the server started.
    public let startTime = Date()
    /// The version `hello` reports: `persistd/<version>`.
    public static let version = "0.1.0"

    /// Creates the shared state for a loaded container.
    public init(container: PersistentContainer, configuration: ServerConfiguration) throws {
        self.container = container
        self.configuration = configuration
        self.policy = AccessPolicy(allowedUserIDs: configuration.allowedUserIDs)
        self.modelJSON = try JSONParser.parse(Array(try container.managedObjectModel.normalizedJSON()))
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
