import Foundation

extension ManagedObjectContext {
    /// The objects (or IDs, dictionaries, count) that match `request` (Core Data's `fetch(_:)`).
    ///
    /// With ``FetchRequest/includesPendingChanges`` (the default), unsaved inserts, updates and
    /// deletes of this context and its ancestors are reflected: they are evaluated in memory
    /// and merged into the store's results.
    public func fetch<T: FetchRequestResult>(_ request: FetchRequest<T>) throws -> [T] {
        try onQueue {
            let entity = try resolveEntity(of: request)
            if request.resultType == .countResultType {
                return try [castResult(countMatching(request, entity: entity), as: T.self)]
            }
            if request.resultType == .dictionaryResultType {
                return try fetchDictionaries(request, entity: entity).map { try castResult($0, as: T.self) }
            }
            // A generated class's objects are checked against it while each is made, in cache.
            let objectClass = request.resultType == .managedObjectResultType && T.self != ManagedObject.self
                ? T.self as? ManagedObject.Type : nil
            let (objects, allOfClass) = try fetchObjects(request, entity: entity, checkingClass: objectClass)
            switch request.resultType {
            case .managedObjectIDResultType:
                return try objects.map { try castResult($0.objectID, as: T.self) }
            default:
                // The common request type: the array is already a [T], no per-object cast needed.
                if T.self == ManagedObject.self { return unsafeBitCast(objects, to: [T].self) }
                if let objectClass {
                    // Every object is of exactly `T`'s class (a class, whose arrays share one layout).
                    if allOfClass { return unsafeBitCast(objects, to: [T].self) }
                    return try castObjects(objects, to: T.self, objectClass: objectClass)
                }
                return try objects.map { try castResult($0, as: T.self) }
            }
        }
    }

    /// The number of objects that match `request` (Core Data's `count(for:)`).
    public func count<T: FetchRequestResult>(for request: FetchRequest<T>) throws -> Int {
        try onQueue { try countMatching(request, entity: try resolveEntity(of: request)) }
    }

    // MARK: - Internals

    func resolveEntity<T>(of request: FetchRequest<T>) throws -> EntityDescription {
        if let entity = request.entity { return entity }
        guard let coordinator = persistentStoreCoordinator else {
            throw PersistenceError(.persistentStoreOperation, "the context has neither a coordinator nor a parent")
        }
        guard let name = request.entityName, let entity = coordinator.managedObjectModel.entitiesByName[name] else {
            throw PersistenceError(.persistentStoreOperation,
                                   "the fetch request names entity \"\(request.entityName ?? "")\", which is not in the model")
        }
        return entity
    }

    /// `objects` as a `[T]`, where `T` is `objectClass`, a class of managed objects (a
    /// generated class): the same array, once each object is known to be a `T`. An object of
    /// `T` itself is checked by comparing classes; only one of a subclass of `T` (or of another
    /// class) is cast, which costs hundreds of instructions through the runtime.
    private func castObjects<T>(_ objects: [ManagedObject], to type: T.Type, objectClass: ManagedObject.Type) throws -> [T] {
        let exactClass = ObjectIdentifier(objectClass)
        for object in objects where ObjectIdentifier(Swift.type(of: object)) != exactClass {
            guard object is T else {
                throw PersistenceError(.persistentStoreOperation, "a fetch result of type \(Swift.type(of: object)) is not a \(T.self)")
            }
        }
        // Every element is a `T`, a class: an array of class references has one layout whatever
        // its element class, as the standard library's own array downcast relies on.
        return unsafeBitCast(objects, to: [T].self)
    }

    private func castResult<T>(_ value: Any, as type: T.Type) throws -> T {
        guard let result = value as? T else {
            throw PersistenceError(.persistentStoreOperation, "a fetch result of type \(Swift.type(of: value)) is not a \(T.self)")
        }
        return result
    }

    func countMatching<T>(_ request: FetchRequest<T>, entity: EntityDescription) throws -> Int {
        let pending = request.includesPendingChanges ? pendingChanges(for: entity, includesSubentities: request.includesSubentities) : .none
        if pending.isEmpty {
            var storeRequest = request.storeRequest(for: entity)
            storeRequest.sortDescriptors = []
            storeRequest.fetchLimit = 0
            storeRequest.fetchOffset = 0
            let total = try rootStore(for: entity).count(storeRequest)
            let afterOffset = max(0, total - request.fetchOffset)
            return request.fetchLimit > 0 ? min(afterOffset, request.fetchLimit) : afterOffset
        }
        return try fetchObjects(request, entity: entity).objects.count
    }

    func rootStore(for entity: EntityDescription) throws -> any PersistentStore {
        guard let coordinator = persistentStoreCoordinator else {
            throw PersistenceError(.persistentStoreOperation, "the context has neither a coordinator nor a parent")
        }
        return try coordinator.persistentStore(for: entity)
    }

    /// Unsaved changes of this context and its ancestors that concern `entity`.
    struct PendingChanges {
        var candidates: [ManagedObjectID] = []
        var deleted: Set<ManagedObjectID> = []
        static let none = PendingChanges()
        var isEmpty: Bool { candidates.isEmpty && deleted.isEmpty }
    }

    func pendingChanges(for entity: EntityDescription, includesSubentities: Bool) -> PendingChanges {
        func concerns(_ object: ManagedObject) -> Bool {
            includesSubentities ? object.entity.isKind(of: entity) : object.entity === entity
        }
        var result = parent.map { parent in
            parent.onQueue { parent.pendingChanges(for: entity, includesSubentities: includesSubentities) }
        } ?? PendingChanges()
        for object in insertedInOrder.objects where !object._isDeleted && concerns(object) {
            result.candidates.append(object.objectID)
        }
        for object in changedList.objects where !object._isDeleted && object.hasPersistentChangedValues && concerns(object) {
            result.candidates.append(object.objectID)
        }
        for object in deletedList.objects where concerns(object) {
            result.deleted.insert(object.objectID)
        }
        return result
    }

    /// The objects that match `request`, and whether each is of exactly `objectClass` (checked
    /// only on the path that streams rows into objects; `false` elsewhere and without a class).
    func fetchObjects<T>(_ request: FetchRequest<T>, entity: EntityDescription,
                         checkingClass objectClass: ManagedObject.Type? = nil) throws -> (objects: [ManagedObject], allOfClass: Bool) {
        let pending = request.includesPendingChanges ? pendingChanges(for: entity, includesSubentities: request.includesSubentities) : .none
        var storeRequest = request.storeRequest(for: entity)
        let store = try rootStore(for: entity)
        if pending.isEmpty && request.fetchBatchSize > 0 && request.resultType == .managedObjectResultType {
            let objects = try fetchInBatches(storeRequest, batchSize: request.fetchBatchSize, store: store)
            return (try finish(objects, request: request, entity: entity), false)
        }
        let isRoot = parent == nil
        if pending.isEmpty {
            // Each row becomes its object as it is read, while the row is in cache.
            var objects: [ManagedObject] = []
            // Without a class asked for, the answer starts (and stays) `false`.
            let exactClass = objectClass.map { ObjectIdentifier($0) }
            var allOfClass = exactClass != nil
            // With no object of the entities it reads registered, none of the fetch's rows
            // (each key once) can find one: each object is registered without a look-up.
            let unfiled = registersUnfiled(entity, includesSubentities: request.includesSubentities)
            try store.fetch(storeRequest, expect: { rowCount in
                // Room for every row at once, told after the first rows of a large fetch: the
                // registry grows once instead of rehashing at every doubling.
                objects.reserveCapacity(rowCount)
                registered.reserveCapacity(registered.count + max(0, rowCount - objects.count), unfiled: unfiled)
            }, eachRowParts: { key, entity, id, version, values in
                objects.append(materialize(key, entity, id, version, &values, isRoot: isRoot, unfiled: unfiled))
                // Looked at in the array: a local checked before the append was retained and
                // released once more. Only while the answer can still be `true`: not at all
                // without a class asked for, nor after the first object of another class.
                if allOfClass && ObjectIdentifier(Swift.type(of: objects[objects.count &- 1])) != exactClass { allOfClass = false }
            })
            return (try finish(objects, request: request, entity: entity), allOfClass)
        }
        storeRequest.fetchLimit = 0
        storeRequest.fetchOffset = 0
        var rows = try store.fetch(storeRequest)
        var objects: [ManagedObject] = []
        objects.reserveCapacity(rows.count)
        // One growth of the registry instead of one rehash per doubling.
        registered.reserveCapacity(registered.count + rows.count)
        // Each row is moved out of the array (reversed, then popped from the end) into its
        // object while both are in cache: iterating would retain each row's ID and values
        // and then release them all again when the array dies, a second pass over cold memory.
        rows.reverse()
        while let row = rows.popLast() {
            objects.append(materialize(row, isRoot: isRoot))
        }
        // Reflect unsaved changes: drop deleted objects, re-evaluate changed ones, add inserted ones.
        let candidateSet = Set(pending.candidates)
        var seen = Set<ManagedObjectID>()
        var result: [ManagedObject] = []
        for object in objects where !pending.deleted.contains(object.objectID) && !object._isDeleted {
            seen.insert(object.objectID)
            if candidateSet.contains(object.objectID) {
                if try matchesInMemory(object, request.predicate) { result.append(object) }
            } else {
                result.append(object)
            }
        }
        for id in pending.candidates where !seen.contains(id) && !pending.deleted.contains(id) {
            let object = self.object(with: id)
            if object._isDeleted { continue }
            seen.insert(id)
            if try matchesInMemory(object, request.predicate) { result.append(object) }
        }
        if let sortDescriptors = request.sortDescriptors, !sortDescriptors.isEmpty {
            result = try sortInMemory(result, by: sortDescriptors)
        }
        if request.fetchOffset > 0 { result = Array(result.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0 { result = Array(result.prefix(request.fetchLimit)) }
        return (try finish(result, request: request, entity: entity), false)
    }

    /// Prefetches the request's relationship key paths, then realizes the objects unless the
    /// request wants faults.
    private func finish<T>(_ objects: [ManagedObject], request: FetchRequest<T>, entity: EntityDescription) throws -> [ManagedObject] {
        if let keyPaths = request.relationshipKeyPathsForPrefetching, !keyPaths.isEmpty, request.resultType == .managedObjectResultType {
            try prefetch(keyPaths, for: objects, entity: entity)
        }
        if !request.returnsObjectsAsFaults && request.resultType == .managedObjectResultType {
            for object in objects { object.willAccessValue() }
        }
        return objects
    }

    /// The registered object for a fetched row, or a new fault holding the row.
    ///
    /// `isRoot` is whether the context has no parent (asked once per fetch by the caller: the
    /// parent is behind the settings lock). A child context takes its values from its parent,
    /// which may have unsaved changes, so only a root context keeps the row with the fault.
    @inline(__always)
    func materialize(_ row: consuming RowSnapshot, isRoot: Bool) -> ManagedObject {
        // A new fault, or a registered fault, holds the row; a realized object keeps its values.
        let object = registeredObject(for: row)
        if object._isFault && isRoot { object.pendingRow = CommittedState(row) }
        return object
    }

    /// Whether no object of `entity` (nor of its subentities, when the fetch includes them) is
    /// registered, so a fetch's rows can be registered with
    /// ``ObjectRegistry/appendUnfiled(_:)`` (``materialize(_:_:_:_:_:isRoot:unfiled:)``).
    func registersUnfiled(_ entity: EntityDescription, includesSubentities: Bool) -> Bool {
        guard registered.hasNoObjects(ofEntity: ObjectIdentifier(entity)) else { return false }
        guard includesSubentities else { return true }
        return entity.subentities.allSatisfy { registersUnfiled($0, includesSubentities: true) }
    }

    /// ``materialize(_:isRoot:)`` for a row handed over in parts (``PersistentStore/fetch(_:eachRowParts:)``):
    /// the values are taken (moved out of `values`) when the fault keeps them. With `unfiled`,
    /// the registry holds no object under the row's key (``registersUnfiled(_:includesSubentities:)``):
    /// a new fault is registered without a look-up (``ObjectRegistry/appendUnfiled(_:)``).
    @inline(__always)
    func materialize(_ key: ObjectKey, _ entity: EntityDescription, _ id: ManagedObjectID?, _ version: Int64,
                     _ values: inout SlotValues, isRoot: Bool, unfiled: Bool = false) -> ManagedObject {
        guard unfiled else {
            let object = registeredObject(key, entity, id)
            if object._isFault && isRoot { keepRow(of: object, version, &values) }
            return object
        }
        let object = id.map { makeFault($0) } ?? makeFault(key, entity: entity)
        registered.appendUnfiled(object)
        // A new fault.
        if isRoot { keepRow(of: object, version, &values) }
        return object
    }

    /// Moves the row's `values` (with `version`) into the fault `object`, as the row it
    /// fills its values from at first access, leaving `values` empty.
    @inline(__always)
    private func keepRow(of object: ManagedObject, _ version: Int64, _ values: inout SlotValues) {
        let taken = consume values
        values = SlotValues()
        object.pendingRow = CommittedState(version: version, values: taken)
    }
}
