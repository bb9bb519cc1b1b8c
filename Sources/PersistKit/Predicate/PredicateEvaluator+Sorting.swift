extension PredicateEvaluator {
    /// `items` sorted by `descriptors`, each item read as the object `objectID(item)`: the one
    /// order atomic stores and contexts (for unsaved changes) share. Key paths may go through
    /// to-one relationships; `nil` sorts first; ties keep the incoming order.
    public func sorted<Item>(_ items: [Item], by descriptors: [FetchSortDescriptor],
                             objectID: (Item) -> ManagedObjectID) throws -> [Item] {
        let keyed = try items.enumerated().map { index, item in
            (index, item, try descriptors.map { try value(at: $0.key, from: .object(objectID(item))) })
        }
        return keyed.sorted { a, b in
            for (i, descriptor) in descriptors.enumerated() {
                let result = StoreValueComparison.compare(a.2[i], b.2[i], using: descriptor.comparison)
                if result != .orderedSame { return (result == .orderedAscending) == descriptor.ascending }
            }
            return a.0 < b.0
        }.map(\.1)
    }
}
