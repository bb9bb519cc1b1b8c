extension ManagedObjectContext {
    /// Whether `object`, with its unsaved changes, satisfies `predicate`.
    func matchesInMemory(_ object: ManagedObject, _ predicate: FetchPredicate?) throws -> Bool {
        guard let predicate else { return true }
        return try PredicateEvaluator(resolver: ContextObjectResolver(context: self)).evaluate(predicate, on: object.objectID)
    }

    /// `objects` sorted by `sortDescriptors`, reading their current (unsaved) values; ties keep
    /// the incoming order.
    func sortInMemory(_ objects: [ManagedObject], by sortDescriptors: [FetchSortDescriptor]) throws -> [ManagedObject] {
        try PredicateEvaluator(resolver: ContextObjectResolver(context: self)).sorted(objects, by: sortDescriptors, objectID: \.objectID)
    }
}

/// Reads a context's managed objects, with their unsaved changes, for the ``PredicateEvaluator``.
struct ContextObjectResolver: PredicateObjectResolver {
    /// The context whose objects are read; used on its queue only.
    let context: ManagedObjectContext

    func value(forKey key: String, of objectID: ManagedObjectID) throws -> EvaluatedValue {
        let object = context.object(with: objectID)
        let entity = object.entity
        if let slot = entity.slotIndex(of: key) {
            object.willAccessValue()
            return .value(slot < object.values.count ? object.values[slot] : .null)
        }
        if let relationship = entity.propertiesByName[key] as? RelationshipDescription, relationship.isToMany {
            return .objects(object.toManyMembers(relationship))
        }
        throw PersistenceError.predicate("entity \(entity.name) has no property named \(key)", key: key)
    }
}
