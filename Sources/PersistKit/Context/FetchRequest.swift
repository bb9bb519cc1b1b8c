import Foundation

/// A type a fetch request can return: ``ManagedObject`` (and subclasses),
/// ``ManagedObjectID``, `[String: Any]` dictionaries, or `Int` counts.
///
/// The corresponding Core Data protocol is `NSFetchRequestResult`.
public protocol FetchRequestResult {}

extension ManagedObject: FetchRequestResult {}
extension ManagedObjectID: FetchRequestResult {}
extension Dictionary: FetchRequestResult where Key == String, Value == Any {}
extension Int: FetchRequestResult {}

/// What a fetch returns (`NSFetchRequestResultType`).
public enum FetchRequestResultType: Sendable, Hashable {
    /// Managed objects.
    case managedObjectResultType
    /// Object IDs only.
    case managedObjectIDResultType
    /// Dictionaries of the ``FetchRequest/propertiesToFetch``.
    case dictionaryResultType
    /// One `Int`: the number of matching objects.
    case countResultType
}

/// A search for objects of one entity: which ones, in what order, how many.
///
/// The corresponding Core Data class is `NSFetchRequest`:
///
/// ```swift
/// let request = FetchRequest<ManagedObject>(entityName: "Beer")
/// request.predicate = .comparison(.keyPath("abv"), .greaterThan, .constant(.double(8)))
/// request.sortDescriptors = [FetchSortDescriptor(key: "name", ascending: true)]
/// let strong = try context.fetch(request)
/// ```
public final class FetchRequest<Result: FetchRequestResult> {
    /// The name of the entity fetched; resolved against the context's model.
    public var entityName: String?
    /// The entity fetched; takes precedence over ``entityName``.
    public var entity: EntityDescription?
    /// The condition objects must meet; `nil` for all.
    public var predicate: FetchPredicate?
    /// The order of the results, most significant first; `nil` for the store's order.
    public var sortDescriptors: [FetchSortDescriptor]?
    /// The most objects returned; 0 for no limit.
    public var fetchLimit: Int = 0
    /// How many matching objects are skipped first.
    public var fetchOffset: Int = 0
    /// How many objects have their data loaded at a time; 0 loads all at once.
    ///
    /// With a batch size, the fetch finds every matching object but reads the data of the
    /// first batch only; the other objects are faults without data, and touching one loads
    /// its whole batch with one store call (Core Data's batched result array).
    public var fetchBatchSize: Int = 0
    /// What the fetch returns.
    public var resultType: FetchRequestResultType = .managedObjectResultType
    /// Whether objects of sub-entities are included.
    public var includesSubentities = true
    /// Whether the context's unsaved inserts, updates and deletes are reflected.
    public var includesPendingChanges = true
    /// Whether objects come back as faults (their data ready but not yet unpacked); `false`
    /// realizes them, as if each had been touched.
    public var returnsObjectsAsFaults = true
    /// Relationship key paths (`brewery`, `beers`, `brewery.beers`) whose destinations are
    /// fetched along with the results, with one extra store query per key path: to-many
    /// memberships are loaded and destination objects come back as faults holding their data.
    public var relationshipKeyPathsForPrefetching: [String]?
    /// For dictionary results, what each dictionary holds: attribute names, to-one key paths
    /// (`"brewery.name"`, keyed by the path), relationship names (keyed by name, the
    /// destination's ``ManagedObjectID``), ``PropertyDescription``s, and
    /// ``ExpressionDescription``s (keyed by their ``ExpressionDescription/name``). `nil` for
    /// every attribute and to-one relationship.
    public var propertiesToFetch: [Any]?
    /// For dictionary results, the properties the results are grouped by: names, key paths,
    /// ``PropertyDescription``s or ``ExpressionDescription``s. Every property to fetch that is
    /// not an aggregate must be in this list.
    public var propertiesToGroupBy: [Any]?
    /// For grouped dictionary results, the condition each group must meet; it may name
    /// grouped key paths and the ``ExpressionDescription/name`` of aggregates.
    public var havingPredicate: FetchPredicate?
    /// For dictionary results, whether duplicate dictionaries are removed (`SELECT DISTINCT`).
    public var returnsDistinctResults = false

    /// A request for objects of the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// A request for objects of the entity named `entityName` that match `predicate`, in the
    /// order of `sortDescriptors`.
    ///
    /// ```swift
    /// let request = FetchRequest<ManagedObject>(entityName: "Beer", predicate: .equal("name", .string("Orval")),
    ///                                           sortDescriptors: [FetchSortDescriptor(key: "abv")])
    /// ```
    public convenience init(entityName: String, predicate: FetchPredicate?, sortDescriptors: [FetchSortDescriptor]? = nil) {
        self.init(entityName: entityName)
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// A request for objects of `entity`.
    public init(entity: EntityDescription) {
        self.entity = entity
        self.entityName = entity.name
    }

    /// The store-level request for `entity`.
    func storeRequest(for entity: EntityDescription) -> StoreFetchRequest {
        StoreFetchRequest(entity: entity, predicate: predicate, sortDescriptors: sortDescriptors ?? [],
                          fetchLimit: fetchLimit, fetchOffset: fetchOffset, includesSubentities: includesSubentities)
    }
}
