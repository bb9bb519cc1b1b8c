import Foundation

/// A store that keeps its objects in memory only, and loses them when it is closed.
///
/// The corresponding Core Data store type is `NSInMemoryStoreType`.
public final class InMemoryStore: AtomicStoreBacked {
    /// The engine holding the rows.
    public let atomicStore: AtomicStore

    /// Creates an empty store; `url` is kept but never read or written.
    public init(model: ManagedObjectModel, configurationName: String?, url: URL?, options: StoreOptions) throws {
        atomicStore = try AtomicStore(type: .inMemory, model: model, configurationName: configurationName,
                                      url: url, options: options, format: nil)
    }
}
