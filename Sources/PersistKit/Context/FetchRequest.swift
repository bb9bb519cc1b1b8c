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
    /// How many objects are loaded at a time; 0 loads all at once.
    public var fetchBatchSize: Int = 0
    /// What the fetch returns.
    public var resultType: FetchRequestResultType = .managedObjectResultType
    /// Whether objects of sub-entities are included.
    public var includesSubentities = true
    /// Whether the context's unsaved inserts, updates and deletes are reflected.
    public var includesPendingChanges = true
    /// Whether objects come back as faults (their data ready but not yet unpacked).
    public var returnsObjectsAsFaults = true
    /// Relationship key paths whose destinations are fetched along with the results.
    public var relationshipKeyPathsForPrefetching: [String]?
    /// For dictionary results, the attribute and relationship names to include.
    public var propertiesToFetch: [String]?
    /// For dictionary results, whether duplicate dictionaries are removed.
    public var returnsDistinctResults = false

    /// A request for objects of the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
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
