import Foundation
import Synchronization

/// The shared engine of the stores that hold every row in memory: ``InMemoryStore``,
/// ``XMLStore`` and ``BinaryStore``.
///
/// The corresponding Core Data class is `NSAtomicStore`. All state is one
/// ``AtomicStoreContents`` value behind a `Locked` lock. Reads copy it (copy-on-write, so a copy is
/// cheap) and work without the lock. A save, serialized by a second lock, applies the changes
/// to a copy, writes the copy to the file (if any) atomically, and only then swaps it in: a
/// failed save changes neither memory nor disk.
public final class AtomicStore: Sendable {
    /// The store's type.
    public let type: StoreType
    /// The file the store lives in, or `nil` for an in-memory store.
    public let url: URL?
    /// The store's unique identifier (`NSStoreUUID`).
    public let identifier: String
    /// The configuration of the model the store holds, or `nil` for all entities.
    public let configurationName: String?
    /// The model the store was opened with.
    public let model: ManagedObjectModel
    /// How the store was opened.
    public let options: StoreOptions

    /// The names of the entities this store holds.
    let entityNames: Set<String>
    let format: (any AtomicStoreFileFormat)?
    private let state: Locked<State>
    /// Serializes saves, so one save's copy is not lost under another's; counts them.
    ///
    /// Not a `Locked<Void>`: a zero-sized value has the address just past its object, which
    /// the thread sanitizer does not clear when the object is freed, so a later lock at the
    /// same address was reported as racing with a freed one.
    private let saveLock = Locked(0)
    /// Test hook run when a save's temporary file is durable, before it replaces the store file.
    let beforeRename = Locked<(@Sendable (URL) throws -> Void)?>(nil)

    private struct State: Sendable {
        var contents: AtomicStoreContents
        var isClosed = false
    }

    /// Opens a store; with a `format` and a `url`, loads the file if it exists.
    init(type: StoreType, model: ManagedObjectModel, configurationName: String?, url: URL?,
         options: StoreOptions, format: (any AtomicStoreFileFormat)?) throws {
        self.type = type
        self.url = url
        self.configurationName = configurationName
        self.model = model
        self.options = options
        self.format = format
        self.entityNames = Set(model.entities(forConfiguration: configurationName).map(\.name))
        var identifier = UUID().uuidString
        var contents = AtomicStoreContents()
        if let format {
            guard let url else {
                throw PersistenceError(.persistentStoreOpen, "A \(type) store needs a file URL")
            }
            if let data = try AtomicStore.read(url) {
                (identifier, contents) = try format.decode(data, path: url.path, model: model)
            }
        }
        self.identifier = identifier
        self.state = Locked(State(contents: contents))
    }

    /// The file's bytes, or `nil` when there is no file yet.
    private static func read(_ url: URL) throws -> Data? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw PersistenceError(.persistentStoreOpen, "Cannot read the store file", path: url.path,
                                   underlying: String(describing: error))
        }
    }

    /// The current contents; throws if the store is closed.
    func snapshot() throws -> AtomicStoreContents {
        try state.withLock { state throws(PersistenceError) -> AtomicStoreContents in
            if state.isClosed {
                throw PersistenceError(.persistentStoreOperation, "The \(type) store is closed", path: url?.path)
            }
            return state.contents
        }
    }

    // MARK: - PersistentStore

    /// `NSStoreType`, `NSStoreUUID` and any metadata kept in the file.
    public func metadata() -> [String: any Sendable] {
        var metadata: [String: any Sendable] = state.withLock { $0.contents.metadata }
        metadata["NSStoreType"] = type.rawValue
        metadata["NSStoreUUID"] = identifier
        return metadata
    }

    /// The rows that match `request`, in its order, within its limit and offset.
    public func fetch(_ request: StoreFetchRequest) throws -> [RowSnapshot] {
        let contents = try snapshot()
        var rows = try matches(request, in: contents)
        if !request.sortDescriptors.isEmpty {
            rows = try sort(rows, by: request.sortDescriptors, in: contents)
        }
        let start = min(max(request.fetchOffset, 0), rows.count)
        let end = request.fetchLimit > 0 ? min(start + request.fetchLimit, rows.count) : rows.count
        return Array(rows[start..<end])
    }

    /// The number of rows that match `request`, within its limit and offset.
    public func count(_ request: StoreFetchRequest) throws -> Int {
        let total = try matches(request, in: try snapshot()).count
        let afterOffset = max(total - max(request.fetchOffset, 0), 0)
        return request.fetchLimit > 0 ? min(afterOffset, request.fetchLimit) : afterOffset
    }

    /// The rows of the given objects the store holds.
    public func rows(for objectIDs: [ManagedObjectID]) throws -> [RowSnapshot] {
        let contents = try snapshot()
        return objectIDs.compactMap { contents.row(for: $0) }
    }

    /// The destinations of `objectID`'s to-many `relationship`, in order if it is ordered.
    public func destinations(of objectID: ManagedObjectID, relationship: RelationshipDescription) throws -> [ManagedObjectID] {
        try snapshot().memberships[objectID]?[relationship.name] ?? []
    }

    /// Reserves `count` new primary keys in the key space of `entity`'s root entity.
    public func allocatePrimaryKeys(for entity: EntityDescription, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        let root = entity.rootEntity.name
        let first = try state.withLock { state throws(PersistenceError) -> Int64 in
            if state.isClosed {
                throw PersistenceError(.persistentStoreOperation, "The \(type) store is closed", path: url?.path)
            }
            let last = state.contents.lastPrimaryKeys[root] ?? 0
            state.contents.lastPrimaryKeys[root] = last + Int64(count)
            return last + 1
        }
        return (0..<Int64(count)).map { first + $0 }
    }

    /// Applies `changes`, writes the file (if any) atomically, then makes the changes visible.
    public func save(_ changes: StoreSaveRequest) throws {
        if options.readOnly {
            throw PersistenceError(.persistentStoreSave, "The \(type) store was opened read-only", path: url?.path)
        }
        try saveLock.withLock { saves in
            saves += 1
            var contents = try snapshot()
            try contents.apply(changes, storeIdentifier: identifier, entities: entityNames, path: url?.path)
            if let format, let url {
                let data = try format.encode(contents, identifier: identifier, model: model)
                try AtomicFileWriter.write(data, to: url, beforeRename: beforeRename.withLock { $0 })
            }
            let saved = contents
            state.withLock { state in
                var merged = saved
                // Keys allocated while the file was written must not be handed out again.
                merged.lastPrimaryKeys.merge(state.contents.lastPrimaryKeys) { max($0, $1) }
                state.contents = merged
            }
        }
    }

    /// Closes the store; later calls throw.
    public func close() throws {
        state.withLock { $0.isClosed = true }
    }

    // MARK: - Fetching

    /// The rows of the request's entities that match its predicate, by primary key.
    private func matches(_ request: StoreFetchRequest, in contents: AtomicStoreContents) throws -> [RowSnapshot] {
        let entities = request.includesSubentities ? request.entity.selfAndDescendants : [request.entity]
        var rows = entities.filter { entityNames.contains($0.name) }
            .flatMap { contents.rows[$0.name].map { Array($0.values) } ?? [] }
        rows.sort { ($0.objectID.primaryKey, $0.objectID.entity.name) < ($1.objectID.primaryKey, $1.objectID.entity.name) }
        guard let predicate = request.predicate else { return rows }
        let evaluator = PredicateEvaluator(resolver: AtomicRowResolver(contents: contents))
        return try rows.filter { try evaluator.evaluate(predicate, on: $0.objectID) }
    }

    /// `rows` sorted by `descriptors`; key paths may go through to-one relationships. Ties keep
    /// primary key order.
    private func sort(_ rows: [RowSnapshot], by descriptors: [FetchSortDescriptor], in contents: AtomicStoreContents) throws -> [RowSnapshot] {
        try PredicateEvaluator(resolver: AtomicRowResolver(contents: contents)).sorted(rows, by: descriptors, objectID: \.objectID)
    }
}
