/// Reads an atomic store's rows for the ``PredicateEvaluator``.
struct AtomicRowResolver: PredicateObjectResolver, Sendable {
    /// The store contents read.
    let contents: AtomicStoreContents

    /// The slot value or to-many destinations of `key` for `object`; `nil` for an object the
    /// store does not hold (a dangling to-one reference).
    func value(forKey key: String, of object: ManagedObjectID) throws -> EvaluatedValue {
        let entity = object.entity
        if let slot = entity.slotIndex(of: key) {
            guard let row = contents.row(for: object), slot < row.values.count else { return .value(.null) }
            return .value(row.values[slot])
        }
        if let relationship = entity.propertiesByName[key] as? RelationshipDescription, relationship.isToMany {
            return .objects(contents.memberships[object]?[key] ?? [])
        }
        throw PersistenceError.predicate("entity \(entity.name) has no property named \(key)", key: key)
    }
}
