import Foundation

/// A place objects are kept: the interface every store (SQLite, in-memory, XML, binary, and
/// later other SQL engines) implements, and all that contexts know of stores.
///
/// The corresponding Core Data class is `NSPersistentStore`. A store is shared by every
/// context of its coordinator, on many threads at once, so each implementation is
/// `Sendable` and guards its own state (a SQLite store its connection, an atomic store its rows).
///
/// ## Fetching beyond rows, and batch requests
/// Four requirements let a store answer whole requests itself instead of handing rows to the
/// context: ``fetchObjectIDs(_:)`` (batched fetches), ``prefetchDestinations(of:relationship:)``
/// (prefetching to-many relationships), ``fetchDictionaries(_:)`` (dictionary results with
/// grouping, aggregates, `HAVING` and `DISTINCT`) and ``execute(_:)`` (batch insert, update
/// and delete). Each has a default implementation in terms of the other requirements
/// (`fetch`, `rows(for:)`, `destinations(of:relationship:)`, `allocatePrimaryKeys`, `save`),
/// which computes the same results in memory: that is what the atomic stores use. A SQL store
/// overrides them to push the work into SQL (`GROUP BY`, one `UPDATE … WHERE`, one query per
/// prefetched key path); its results must equal the defaults', which the tests check store by store.
public protocol PersistentStore: AnyObject, Sendable {
    /// Opens (creating if needed) the store at `url` for the entities of `model` in the
    /// configuration `configurationName` (`nil` for all). `model` is frozen already.
    /// Throws ``PersistenceError`` when the file cannot be opened or does not fit the model.
    init(model: ManagedObjectModel, configurationName: String?, url: URL?, options: StoreOptions) throws

    /// The store's type.
    var type: StoreType { get }
    /// The file the store lives in, or `nil` for an in-memory store.
    var url: URL? { get }
    /// The store's unique identifier (`NSStoreUUID`), used in object IDs' URIs.
    var identifier: String { get }
    /// The interned token of ``identifier`` (``StoreToken``): what object keys name the store
    /// by. A store whose identifier never changes keeps it (the default interns per call).
    var storeToken: StoreToken { get }
    /// The configuration of the model the store holds, or `nil` for all entities.
    var configurationName: String? { get }
    /// The model the store was opened with.
    var model: ManagedObjectModel { get }

    /// The store's metadata (`NSStoreType`, `NSStoreUUID`, `NSStoreModelVersionHashes`, …).
    func metadata() -> [String: any Sendable]

    /// Whether the store reads a save's ``StoreSaveRequest/updatedKeys`` (a store that keeps
    /// persistent history does): a context lists each updated object's changed properties only
    /// for a store that reads them. The default is `true`.
    var readsUpdatedKeys: Bool { get }

    /// The rows that match `request`, in its order, within its limit and offset.
    func fetch(_ request: StoreFetchRequest) throws -> [RowSnapshot]

    /// The rows ``fetch(_:)`` gives, handed to `body` one by one, in order, as they are read,
    /// so the caller can make each row's object while the row is in cache instead of keeping
    /// every row until the last is read. If `body` throws, the read stops and the error is
    /// thrown. The default asks ``fetch(_:)`` and hands its rows over.
    func fetch(_ request: StoreFetchRequest, each body: (_ row: consuming RowSnapshot) throws -> Void) throws

    /// The rows ``fetch(_:each:)`` gives, handed to `body` in parts, as a context makes its
    /// objects of them: the key the object is filed under, its entity, the ID the row was made
    /// with (`nil` for a row read by key), the version, and the values, which the callee may
    /// take (see ``RowPartsHandler``).
    ///
    /// No ``RowSnapshot`` is made and destroyed per row, and the entity is lent for the call:
    /// a store that reads rows one by one hands them over without touching the entity's
    /// reference count, and the values go into the object as they are. The default takes
    /// ``fetch(_:each:)``'s rows apart.
    func fetch(_ request: StoreFetchRequest, eachRowParts body: RowPartsHandler) throws

    /// The rows ``fetch(_:eachRowParts:)`` gives, with `expect` told, at most once and possibly
    /// after some rows were handed over, how many rows the whole fetch hands over (at most
    /// the number of rows of the request's entity), so a caller making objects of many rows
    /// can make room for them at once. A store need not call it. The default calls
    /// ``fetch(_:eachRowParts:)`` and never `expect`.
    func fetch(_ request: StoreFetchRequest, expect: (_ rowCount: Int) -> Void, eachRowParts body: RowPartsHandler) throws

    /// The number of rows that match `request`'s entity and predicate; its limit, offset and
    /// sort descriptors are ignored.
    func count(_ request: StoreFetchRequest) throws -> Int

    /// The rows of the given objects, in any order; objects not in the store are left out.
    func rows(for objectIDs: [ManagedObjectID]) throws -> [RowSnapshot]

    /// The row of one object, or `nil` if the store does not hold it: what a fault firing and
    /// `existingObject(with:)` ask. The default takes ``rows(for:)``'s first row; a store may
    /// answer one object more cheaply.
    func row(for objectID: ManagedObjectID) throws -> RowSnapshot?

    /// The destinations of `objectID`'s to-many `relationship`, in order if it is ordered.
    func destinations(of objectID: ManagedObjectID, relationship: RelationshipDescription) throws -> [ManagedObjectID]

    /// Reserves `count` new primary keys for objects of `entity`.
    func allocatePrimaryKeys(for entity: EntityDescription, count: Int) throws -> [Int64]

    /// Writes `changes` atomically: all of them, or on error none.
    func save(_ changes: StoreSaveRequest) throws

    /// Releases the store's resources; later calls fail.
    func close() throws

    /// The IDs of the rows that match `request`, in its order, within its limit and offset,
    /// without reading their values (for ``FetchRequest/fetchBatchSize``).
    /// The default takes the IDs of ``fetch(_:)``'s rows.
    func fetchObjectIDs(_ request: StoreFetchRequest) throws -> [ManagedObjectID]

    /// The destination rows of the to-many `relationship` of each of `sources`, in order if the
    /// relationship is ordered; sources without destinations may be left out (for
    /// ``FetchRequest/relationshipKeyPathsForPrefetching``). The default asks
    /// ``destinations(of:relationship:)`` per source, then ``rows(for:)`` once.
    func prefetchDestinations(of sources: [ManagedObjectID], relationship: RelationshipDescription) throws
        -> [ManagedObjectID: [RowSnapshot]]

    /// The rows ``prefetchDestinations(of:relationship:)`` gives, handed to `body` one by one
    /// with the index in `sources` of the row's source, as they are read: each source's rows
    /// in their order, the rows of different sources possibly interleaved. `expect`, if the
    /// store calls it (once, before any row), is given an estimate of how many rows follow
    /// (at most the destination table's size), so the caller can make room. The default asks
    /// ``prefetchDestinations(of:relationship:)`` and hands its rows over source by source.
    func prefetchDestinations(of sources: [ManagedObjectID], relationship: RelationshipDescription,
                              expect: (_ rowCount: Int) -> Void,
                              each body: (_ sourceIndex: Int, _ row: consuming RowSnapshot) throws -> Void) throws

    /// The rows ``prefetchDestinations(of:relationship:expect:each:)`` gives, handed to `body`
    /// in parts with their source's index, as a context makes its objects of them (see
    /// ``fetch(_:eachRowParts:)``). The default takes that requirement's rows apart.
    func prefetchDestinations(of sources: [ManagedObjectID], relationship: RelationshipDescription,
                              expect: (_ rowCount: Int) -> Void,
                              eachRowParts body: PrefetchedRowPartsHandler) throws

    /// The dictionaries `request` describes, in its order, within its limit and offset; a
    /// `nil` value leaves its key out. The default computes them in memory from ``fetch(_:)``.
    func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: StoreValue]]

    /// Runs a batch insert, update or delete in the store, atomically, without contexts.
    /// The default fetches the affected rows and writes them with one ``save(_:)``.
    func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult
}

extension PersistentStore {
    /// The row of one object, or `nil` if the store does not hold it: the first row of ``rows(for:)``.
    public func row(for objectID: ManagedObjectID) throws -> RowSnapshot? {
        try rows(for: [objectID]).first
    }
}

extension PersistentStore {
    /// `true`: a store that says nothing is given every updated object's changed properties.
    public var readsUpdatedKeys: Bool { true }
}

extension PersistentStore {
    /// ``identifier`` interned (a lock and a hash of the string per call).
    public var storeToken: StoreToken { StoreToken.forIdentifier(identifier) }
}
