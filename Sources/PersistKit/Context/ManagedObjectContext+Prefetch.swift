import Foundation

/// The objects of one batch of a batched fetch (``FetchRequest/fetchBatchSize``) whose data is
/// loaded together, with one store call, when the first of them is touched.
final class FaultingBatch {
    /// The IDs of the batch, in fetch order.
    let objectIDs: [ManagedObjectID]

    init(objectIDs: [ManagedObjectID]) {
        self.objectIDs = objectIDs
    }
}

extension ManagedObjectContext {
    /// A batched fetch: every matching ID at once, the first batch's rows right away, and a
    /// ``FaultingBatch`` on each later object so touching one loads its batch.
    func fetchInBatches(_ request: StoreFetchRequest, batchSize: Int, store: any PersistentStore) throws -> [ManagedObject] {
        let ids = try store.fetchObjectIDs(request)
        let objects = ids.map { id in registeredObject(with: id) }
        for start in stride(from: 0, to: objects.count, by: batchSize) {
            let batch = objects[start..<min(start + batchSize, objects.count)]
            let needing = batch.filter { $0._isFault && $0.pendingRow == nil }
            if needing.isEmpty { continue }
            if start == 0 {
                for row in try loadRows(for: needing.map(\.objectID)) {
                    if let object = registered[row.key], object._isFault { object.pendingRow = CommittedState(row) }
                }
            } else {
                let group = FaultingBatch(objectIDs: needing.map(\.objectID))
                for object in needing { object.faultingBatch = group }
            }
        }
        return objects
    }

    /// Loads the rows of every object of `batch` that is still a fault without data, with one
    /// call to the parent or store, and leaves each row with its object.
    func loadFaultingBatch(_ batch: FaultingBatch) {
        let needing = batch.objectIDs.filter { id in
            guard let object = registered[id] else { return false }
            return object._isFault && object.pendingRow == nil
        }
        let rows = (try? loadRows(for: needing)) ?? []
        for row in rows {
            if let object = registered[row.key], object._isFault { object.pendingRow = CommittedState(row) }
        }
        for id in batch.objectIDs where registered[id]?.faultingBatch === batch {
            registered[id]?.faultingBatch = nil
        }
    }

    /// Fetches the destinations of each relationship key path for `objects`: one store call
    /// per hop (``PersistentStore/prefetchDestinations(of:relationship:)`` for a to-many hop,
    /// ``PersistentStore/rows(for:)`` for a to-one hop). To-many memberships become loaded,
    /// destinations become faults holding their rows. Objects without data at hand (later
    /// batches of a batched fetch) are skipped. A child context does not prefetch: its values
    /// come from its parent.
    func prefetch(_ keyPaths: [String], for objects: [ManagedObject], entity: EntityDescription) throws {
        guard parent == nil else { return }
        for keyPath in keyPaths {
            var sources = objects.filter { !$0._isDeleted }
            var current = entity
            let components = keyPath.split(separator: ".").map(String.init)
            for (hop, component) in components.enumerated() {
                guard let relationship = current.relationshipsByName[component] ?? sources.lazy.compactMap({
                    $0.entity.relationshipsByName[component]
                }).first, let destination = relationship.destinationEntity else {
                    throw PersistenceError(.persistentStoreOperation,
                                           "relationshipKeyPathsForPrefetching names \(keyPath), but \(current.name) has no relationship \(component)")
                }
                sources = try prefetch(relationship, for: sources, gathering: hop < components.count - 1)
                current = destination
                if sources.isEmpty { break }
            }
        }
    }

    /// Prefetches one relationship for `sources` and returns the destination objects, the
    /// sources of the next hop; with `gathering` false (the key path's last hop) it returns
    /// none and gathers none.
    ///
    /// Gathering a hop's destinations retains each one once more, in an array the last hop
    /// throws away, and the release of each comes when the objects are out of cache.
    private func prefetch(_ relationship: RelationshipDescription, for sources: [ManagedObject],
                          gathering: Bool) throws -> [ManagedObject] {
        // A struct, not a local function capturing two variables: variables a local function
        // captures get a dynamic exclusivity check at every access from the row closure below.
        var next = PrefetchedObjects()
        if relationship.isToMany {
            var needing: [ManagedObject] = []
            // Whether an entity has the relationship, asked once per run of sources of one
            // entity rather than by hashing its name per source.
            var checkedEntity: EntityDescription?
            var entityHasIt = false
            for source in sources {
                if source.entity !== checkedEntity {
                    checkedEntity = source.entity
                    entityHasIt = source.entity.relationshipsByName[relationship.name] === relationship
                }
                guard entityHasIt else { continue }
                if source._isInserted || source.objectKey.isTemporaryID
                    || (source.hasToManyStates && source.toMany[relationship.name]?.isLoaded == true) {
                    // Nothing to read: its members are the next hop's sources, if there is one.
                    if gathering {
                        for id in source.toManyMembers(relationship) { next.add(registeredObject(with: id)) }
                    }
                } else {
                    needing.append(source)
                }
            }
            guard let first = needing.first else { return next.objects }
            let store = try rootStore(for: first.entity)
            // With a to-one inverse, a destination row belongs to one source: the store's rows
            // repeat no object, so they need no check against `seen` (only objects added above do).
            let disjoint = relationship.inverseRelationship.map { !$0.isToMany } ?? false
            let checked = !next.objects.isEmpty || !disjoint
            // Rows that repeat no object, of entities with none registered, find none: each is
            // registered without a look-up.
            let unfiled = disjoint && relationship.destinationEntity.map { registersUnfiled($0, includesSubentities: true) } == true
            // Taken before any member is looked up: a registry that lets go of an object while
            // they are (none does) leaves the recorded members unused.
            let generation = registryGeneration
            // Each row becomes its object as the store reads it (while the row is in cache, and
            // with no table of rows by source in between); the members are recorded as their
            // objects, so reading the relationship looks none of them up, and no member makes
            // its ID here (only when asked for).
            var members = [[ManagedObject]](repeating: [], count: needing.count)
            var rowsSoFar = 0
            var sourcesSoFar = 0
            try store.prefetchDestinations(of: needing.map(\.objectID), relationship: relationship, expect: { rowCount in
                if gathering { next.objects.reserveCapacity(next.objects.count + rowCount) }
                registered.reserveCapacity(registered.count + rowCount, unfiled: unfiled)
            }, eachRowParts: { index, key, entity, id, version, values in
                let object = materialize(key, entity, id, version, &values, isRoot: true, unfiled: unfiled)
                // A source's array is made at its first member with room for the sources' mean
                // so far (plus one), not grown from empty through several reallocations.
                if members[index].capacity == 0 {
                    members[index].reserveCapacity(sourcesSoFar == 0 ? 8 : rowsSoFar / sourcesSoFar + 1)
                    sourcesSoFar += 1
                }
                rowsSoFar += 1
                members[index].append(object)
                if !gathering { return }
                if checked { next.add(object) } else { next.objects.append(object) }
            })
            for (index, source) in needing.enumerated() {
                source.toMany[relationship.name, default: ToManyState()]
                    .setCommitted(objects: members[index], generation: generation)
            }
            return next.objects
        }

        var wanted: [ManagedObjectID] = []
        var wantedSet: Set<ManagedObjectID> = []
        for source in sources {
            guard let slot = source.entity.slotIndex(of: relationship.name) else { continue }
            let values = source._isFault ? source.pendingRow?.values : source.values
            guard let values, slot < values.count, case .object(let id) = values[slot] else { continue }
            let destination = registeredObject(with: id)
            if gathering { next.add(destination) }
            if destination._isFault && destination.pendingRow == nil && !id.isTemporaryID && wantedSet.insert(id).inserted {
                wanted.append(id)
            }
        }
        if !wanted.isEmpty {
            for row in try loadRows(for: wanted) { _ = materialize(row, isRoot: true) }
        }
        return next.objects
    }
}
