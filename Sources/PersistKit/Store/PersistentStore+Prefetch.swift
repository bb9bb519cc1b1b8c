import Foundation

extension PersistentStore {
    /// The IDs of ``fetch(_:)``'s rows: the default for stores that hold rows in memory.
    public func fetchObjectIDs(_ request: StoreFetchRequest) throws -> [ManagedObjectID] {
        try fetch(request).map(\.objectID)
    }

    /// One ``destinations(of:relationship:)`` call per source, then one ``rows(for:)`` call:
    /// the default for stores that hold rows in memory, where a call costs no round trip.
    public func prefetchDestinations(of sources: [ManagedObjectID], relationship: RelationshipDescription) throws
        -> [ManagedObjectID: [RowSnapshot]] {
        var members: [ManagedObjectID: [ManagedObjectID]] = [:]
        var all: [ManagedObjectID] = []
        var seen: Set<ManagedObjectID> = []
        for source in sources {
            let destinations = try destinations(of: source, relationship: relationship)
            members[source] = destinations
            for id in destinations where seen.insert(id).inserted { all.append(id) }
        }
        var rowsByID: [ManagedObjectID: RowSnapshot] = [:]
        for row in try rows(for: all) { rowsByID[row.objectID] = row }
        return members.mapValues { ids in ids.compactMap { rowsByID[$0] } }
    }
}

extension PersistentStore {
    /// ``prefetchDestinations(of:relationship:)``'s rows handed over source by source: the
    /// default for stores that answer with the whole table of rows at once.
    public func prefetchDestinations(of sources: [ManagedObjectID], relationship: RelationshipDescription,
                                     expect: (_ rowCount: Int) -> Void,
                                     each body: (_ sourceIndex: Int, _ row: consuming RowSnapshot) throws -> Void) throws {
        var destinations = try prefetchDestinations(of: sources, relationship: relationship)
        expect(destinations.values.reduce(0) { $0 + $1.count })
        for (index, source) in sources.enumerated() {
            // Taken out of the table and moved out row by row: no copy of a row's values.
            guard var rows = destinations.removeValue(forKey: source) else { continue }
            rows.reverse()
            while let row = rows.popLast() { try body(index, row) }
        }
    }

    /// ``prefetchDestinations(of:relationship:expect:each:)``'s rows taken apart: the default
    /// for stores that make whole rows.
    public func prefetchDestinations(of sources: [ManagedObjectID], relationship: RelationshipDescription,
                                     expect: (_ rowCount: Int) -> Void,
                                     eachRowParts body: PrefetchedRowPartsHandler) throws {
        try prefetchDestinations(of: sources, relationship: relationship, expect: expect) { (index, row: consuming RowSnapshot) in
            var values = row.values
            try body(index, row.key, row.entity, row.objectIDIfMade, row.version, &values)
        }
    }
}

/// Reads a store's rows for the ``PredicateEvaluator``, through the store's public
/// requirements, caching each row it reads. Used by the in-memory defaults of
/// ``PersistentStore/fetchDictionaries(_:)`` and ``PersistentStore/execute(_:)``, within one call.
final class StoreRowResolver: PredicateObjectResolver {
    let store: any PersistentStore
    private var cache: [ManagedObjectID: RowSnapshot?] = [:]

    init(store: any PersistentStore, rows: [RowSnapshot] = []) {
        self.store = store
        for row in rows { cache[row.objectID] = row }
    }

    func row(_ id: ManagedObjectID) throws -> RowSnapshot? {
        if let cached = cache[id] { return cached }
        let row = try store.rows(for: [id]).first
        cache[id] = row
        return row
    }

    func value(forKey key: String, of object: ManagedObjectID) throws -> EvaluatedValue {
        let entity = object.entity
        if let slot = entity.slotIndex(of: key) {
            guard let row = try row(object), slot < row.values.count else { return .value(.null) }
            return .value(row.values[slot])
        }
        if let relationship = entity.propertiesByName[key] as? RelationshipDescription, relationship.isToMany {
            return .objects(try store.destinations(of: object, relationship: relationship))
        }
        throw PersistenceError.predicate("entity \(entity.name) has no property named \(key)", key: key)
    }
}
