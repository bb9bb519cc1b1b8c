/// What a context asks a store for when it fetches: the store-level part of a ``FetchRequest``.
public struct StoreFetchRequest: Sendable {
    /// The entity fetched.
    public var entity: EntityDescription
    /// Whether instances of sub-entities are included.
    public var includesSubentities: Bool = true
    /// The condition rows must meet; `nil` for all rows.
    public var predicate: FetchPredicate?
    /// The order of the results, most significant first.
    public var sortDescriptors: [FetchSortDescriptor] = []
    /// The most rows returned; 0 for no limit.
    public var fetchLimit: Int = 0
    /// How many matching rows are skipped first.
    public var fetchOffset: Int = 0

    /// Creates a store fetch request for `entity`.
    public init(entity: EntityDescription, predicate: FetchPredicate? = nil,
                sortDescriptors: [FetchSortDescriptor] = [], fetchLimit: Int = 0, fetchOffset: Int = 0,
                includesSubentities: Bool = true) {
        self.entity = entity
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.includesSubentities = includesSubentities
    }
}
