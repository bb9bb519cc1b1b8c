import Foundation

/// A store kept in one human-readable XML file, read whole when opened and written whole and
/// atomically at each save.
///
/// The corresponding Core Data store type is `NSXMLStoreType`. The format is described in
/// `docs/stores.md` and ``XMLStoreFormat``. A missing file is a new, empty store.
public final class XMLStore: AtomicStoreBacked {
    /// The engine holding the rows.
    public let atomicStore: AtomicStore

    /// Opens the store at `url`, loading the file if it exists. Throws
    /// ``PersistenceError/Code/persistentStoreOpen`` naming the file and the element at fault
    /// when the file is not a valid XML store for `model`.
    public init(model: ManagedObjectModel, configurationName: String?, url: URL?, options: StoreOptions) throws {
        atomicStore = try AtomicStore(type: .xml, model: model, configurationName: configurationName,
                                      url: url, options: options, format: XMLStoreFormat())
    }
}
