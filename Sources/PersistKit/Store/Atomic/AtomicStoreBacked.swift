import Foundation

/// A ``PersistentStore`` whose whole implementation is an ``AtomicStore``: conforming types
/// provide `init` and ``atomicStore``, and get every other requirement from this extension.
public protocol AtomicStoreBacked: PersistentStore {
    /// The engine holding the store's rows.
    var atomicStore: AtomicStore { get }
}

extension AtomicStoreBacked {
    /// `false`: an atomic store keeps no persistent history, the only reader of
    /// ``StoreSaveRequest/updatedKeys``.
    public var readsUpdatedKeys: Bool { false }

    /// The store's type.
    public var type: StoreType { atomicStore.type }
    /// The file the store lives in, or `nil` for an in-memory store.
    public var url: URL? { atomicStore.url }
    /// The store's unique identifier (`NSStoreUUID`).
    public var identifier: String { atomicStore.identifier }
    /// The configuration of the model the store holds, or `nil` for all entities.
    public var configurationName: String? { atomicStore.configurationName }
    /// The model the store was opened with.
    public var model: ManagedObjectModel { atomicStore.model }

    /// The store's metadata (`NSStoreType`, `NSStoreUUID`, …).
    public func metadata() -> [String: any Sendable] { atomicStore.metadata() }
    /// The rows that match `request`, in its order, within its limit and offset.
    public func fetch(_ request: StoreFetchRequest) throws -> [RowSnapshot] { try atomicStore.fetch(request) }
    /// The number of rows that match `request`.
    public func count(_ request: StoreFetchRequest) throws -> Int { try atomicStore.count(request) }
    /// The rows of the given objects; objects not in the store are left out.
    public func rows(for objectIDs: [ManagedObjectID]) throws -> [RowSnapshot] { try atomicStore.rows(for: objectIDs) }
    /// The destinations of `objectID`'s to-many `relationship`, in order if it is ordered.
    public func destinations(of objectID: ManagedObjectID, relationship: RelationshipDescription) throws -> [ManagedObjectID] {
        try atomicStore.destinations(of: objectID, relationship: relationship)
    }
    /// Reserves `count` new primary keys for objects of `entity`.
    public func allocatePrimaryKeys(for entity: EntityDescription, count: Int) throws -> [Int64] {
        try atomicStore.allocatePrimaryKeys(for: entity, count: count)
    }
    /// Writes `changes` atomically: all of them, or on error none.
    public func save(_ changes: StoreSaveRequest) throws { try atomicStore.save(changes) }
    /// Releases the store; later calls fail.
    public func close() throws { try atomicStore.close() }
}
