extension ManagedObjectContext {
    /// Whether `object`, with its unsaved changes, satisfies `predicate`.
    func matchesInMemory(_ object: ManagedObject, _ predicate: FetchPredicate?) throws -> Bool {
        guard predicate != nil else { return true }
        throw PersistenceError(.persistentStoreOperation, "in-memory evaluation is not available yet")
    }

    /// `objects` sorted by `sortDescriptors`.
    func sortInMemory(_ objects: [ManagedObject], by sortDescriptors: [FetchSortDescriptor]) throws -> [ManagedObject] {
        throw PersistenceError(.persistentStoreOperation, "in-memory sorting is not available yet")
    }
}
