/// The results of ``ManagedObjectContext/fetchBatched(_:)``: a collection that holds only the
/// matching objects' IDs, in compact form, and creates the objects one batch
/// (``FetchRequest/fetchBatchSize``) at a time, as Core Data's batch-faulting array does.
///
/// Reading an element loads its batch's rows with one store call. When another batch is
/// loaded, the objects of the one before are released by the context unless something else
/// keeps them: the caller holds them, or they have unsaved changes (Core Data's contexts hold
/// unchanged objects weakly). Memory stays at one batch of objects plus 8 bytes per result,
/// however many objects match. Like the objects, the collection is used on the context's queue.
public struct BatchedFetchResults<Element: ManagedObject>: RandomAccessCollection {
    let storage: BatchedFetchStorage

    /// Always 0.
    public var startIndex: Int { 0 }
    /// The number of results.
    public var endIndex: Int { storage.count }

    /// The object at `position`, loading its batch if needed.
    public subscript(position: Int) -> Element {
        let object = storage.object(at: position)
        guard let typed = object as? Element else {
            preconditionFailure("BatchedFetchResults: the object \(object.objectID) is a \(type(of: object)), not a \(Element.self)")
        }
        return typed
    }
}

/// The state of a ``BatchedFetchResults``: the IDs (or, when the fetch had to be done in
/// memory, the objects), and the batch of objects loaded.
final class BatchedFetchStorage {
    // Not Sendable: like the context's objects, it is used on the context's queue only.
    let context: ManagedObjectContext
    private let keys: StoreObjectKeys?
    private let objects: [ManagedObject]
    private let batchSize: Int
    private var batchStart = -1
    private var batch: [ManagedObject] = []

    /// Results whose objects are created batch by batch from `keys`.
    init(context: ManagedObjectContext, keys: StoreObjectKeys, batchSize: Int) {
        self.context = context
        self.keys = keys
        self.objects = []
        self.batchSize = max(1, batchSize)
    }

    /// Results that are all loaded already (a fetch with unsaved changes, done in memory).
    init(context: ManagedObjectContext, objects: [ManagedObject]) {
        self.context = context
        self.keys = nil
        self.objects = objects
        self.batchSize = max(1, objects.count)
    }

    var count: Int { keys?.count ?? objects.count }

    func object(at position: Int) -> ManagedObject {
        guard let keys else { return objects[position] }
        return context.onQueue {
            let start = position - position % batchSize
            if start != batchStart { load(start, keys) }
            return batch[position - start]
        }
    }

    /// Replaces the batch by the one at `start`: registered objects where the context has
    /// them, new faults otherwise, with the rows of every fault read in one store call.
    private func load(_ start: Int, _ keys: StoreObjectKeys) {
        releaseBatch()
        let end = min(start + batchSize, keys.count)
        var loaded: [ManagedObject] = []
        loaded.reserveCapacity(end - start)
        var needing: [ManagedObjectID] = []
        for position in start..<end {
            let id = keys.objectID(at: position)
            if let object = context.registered[id] {
                loaded.append(object)
                if object._isFault && object.pendingRow == nil { needing.append(id) }
            } else {
                loaded.append(context.registerFault(id, row: nil))
                needing.append(id)
            }
        }
        if !needing.isEmpty {
            // A row that cannot be read leaves its object a fault, which loads (or finds it
            // missing) on first access, as any fault does.
            for row in (try? context.loadRows(for: needing)) ?? [] {
                if let object = context.registered[row.key], object._isFault { object.pendingRow = CommittedState(row) }
            }
        }
        batch = loaded
        batchStart = start
    }

    /// Unregisters the batch's objects that only the context and the batch hold: nobody can
    /// reach them any more, and they have no changes (changed objects are also held by the
    /// context's change sets, so they stay).
    private func releaseBatch() {
        for index in batch.indices {
            let id = batch[index].objectKey
            guard context.registered[id] === batch[index] else { continue }
            context.registered.removeValue(forKey: id)
            if !isKnownUniquelyReferenced(&batch[index]) { context.registered[id] = batch[index] }
        }
        batch = []
        batchStart = -1
    }
}

extension ManagedObjectContext {
    /// The objects that match `request`, created one batch of ``FetchRequest/fetchBatchSize``
    /// at a time as they are read (a PersistKit addition: Core Data's `fetch(_:)` returns such
    /// a lazy array for a batched fetch; here ``fetch(_:)`` returns a Swift array, which holds
    /// every object at once). With a batch size of 0, pending changes of the fetched entity,
    /// or key paths to prefetch, the fetch is done at once as ``fetch(_:)`` does it.
    public func fetchBatched<T: ManagedObject>(_ request: FetchRequest<T>) throws -> BatchedFetchResults<T> {
        try onQueue {
            let entity = try resolveEntity(of: request)
            let pending = request.includesPendingChanges
                ? pendingChanges(for: entity, includesSubentities: request.includesSubentities) : .none
            let prefetches = !(request.relationshipKeyPathsForPrefetching ?? []).isEmpty
            guard request.fetchBatchSize > 0, pending.isEmpty, !prefetches, request.resultType == .managedObjectResultType,
                  parent == nil else {
                return BatchedFetchResults(storage: BatchedFetchStorage(context: self, objects: try fetch(request)))
            }
            let storeRequest = request.storeRequest(for: entity)
            let store = try rootStore(for: entity)
            let keys: StoreObjectKeys
            if let sqlite = store as? SQLiteStore {
                keys = try sqlite.fetchObjectKeys(storeRequest)
            } else {
                var collected = StoreObjectKeys(store: store.storeToken)
                for id in try store.fetchObjectIDs(storeRequest) { collected.append(id.entity, id.primaryKey) }
                keys = collected
            }
            return BatchedFetchResults(storage: BatchedFetchStorage(context: self, keys: keys, batchSize: request.fetchBatchSize))
        }
    }
}
