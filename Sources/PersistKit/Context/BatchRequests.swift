import Foundation

/// A request a context hands to the stores to run directly: ``BatchInsertRequest``,
/// ``BatchUpdateRequest``, ``BatchDeleteRequest`` (Core Data's `NSPersistentStoreRequest`).
/// Run one with ``ManagedObjectContext/execute(_:)``.
public protocol PersistentStoreRequest: AnyObject {
    /// What the result reports.
    var resultType: BatchRequestResultType { get }
}

/// What a batch request's result reports (Core Data's `NSBatchInsertRequestResultType`,
/// `NSBatchUpdateRequestResultType` and `NSBatchDeleteRequestResultType` in one).
public enum BatchRequestResultType: Sendable, Hashable {
    /// Only whether the request succeeded (`statusOnly`).
    case statusOnly
    /// The number of objects changed (`count`).
    case count
    /// The IDs of the objects changed (`objectIDs`).
    case objectIDs
}

/// The result of ``ManagedObjectContext/execute(_:)`` (Core Data's `NSPersistentStoreResult`
/// and its `NSBatchInsertResult`, `NSBatchUpdateResult`, `NSBatchDeleteResult`).
///
/// ```swift
/// let request = BatchDeleteRequest(fetchRequest: FetchRequest<ManagedObject>(entityName: "Beer"))
/// request.resultType = .objectIDs
/// let result = try context.execute(request)
/// ManagedObjectContext.mergeChanges(fromRemoteContextSave: [ManagedObjectContext.deletedObjectsKey: result.objectIDs ?? []],
///                                   into: [context])
/// ```
public struct BatchResult: Sendable, Hashable {
    /// What the result reports.
    public let resultType: BatchRequestResultType
    /// The number of objects changed, for ``BatchRequestResultType/count``.
    public let count: Int?
    /// The IDs of the objects changed, for ``BatchRequestResultType/objectIDs``.
    public let objectIDs: [ManagedObjectID]?

    /// The change as ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)`` takes it,
    /// whatever the result type: the inserted, updated or deleted IDs, and for a delete also
    /// the objects whose to-one relationship to a deleted object was cleared, as updated.
    /// (A PersistKit addition; Core Data users build this dictionary from `result`.)
    public let changes: [String: [ManagedObjectID]]

    /// The value Core Data's `result` holds: `true`, the count, or the IDs.
    public var result: Any {
        switch resultType {
        case .statusOnly: return true
        case .count: return count ?? 0
        case .objectIDs: return objectIDs ?? []
        }
    }

    /// Which kind of change a batch made.
    enum Change {
        case inserted, updated, deleted
    }

    init(_ resultType: BatchRequestResultType, _ store: StoreBatchResult, _ change: Change) {
        self.resultType = resultType
        self.count = resultType == .count ? store.count : nil
        self.objectIDs = resultType == .objectIDs ? store.objectIDs : nil
        switch change {
        case .inserted: changes = [ManagedObjectContext.insertedObjectIDsKey: store.objectIDs]
        case .updated: changes = [ManagedObjectContext.updatedObjectIDsKey: store.objectIDs]
        case .deleted: changes = [ManagedObjectContext.deletedObjectIDsKey: store.objectIDs,
                                  ManagedObjectContext.updatedObjectIDsKey: store.nullifiedObjectIDs]
        }
    }
}

/// Inserts objects of one entity straight into the store, from dictionaries of attribute
/// values, without contexts, validation or change notifications (Core Data's `NSBatchInsertRequest`).
///
/// Values are converted per attribute type as ``ManagedObject/setValue(_:forKey:)`` converts
/// them (an `Int` for a `Double` attribute, …); a value of the wrong type, an unknown key, a
/// relationship key, or a missing value of a non-optional attribute without a default throws.
/// Missing attributes take their default values.
public final class BatchInsertRequest: PersistentStoreRequest {
    /// The entity name the objects are created for.
    public var entityName: String
    /// The entity; takes precedence over ``entityName``.
    public var entity: EntityDescription?
    /// One dictionary of attribute values per object.
    public var objects: [[String: Any]]
    /// What the result reports; ``BatchRequestResultType/statusOnly`` by default.
    public var resultType: BatchRequestResultType = .statusOnly

    /// A request inserting `objects` as objects of the entity named `entityName`.
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.objects = objects
    }

    /// A request inserting `objects` as objects of `entity`.
    public init(entity: EntityDescription, objects: [[String: Any]]) {
        self.entityName = entity.name
        self.entity = entity
        self.objects = objects
    }
}

/// Sets attributes of every object matching a predicate straight in the store, without
/// contexts or validation (Core Data's `NSBatchUpdateRequest`). Each updated object's version
/// (`Z_OPT`) goes up by one, so contexts holding it must merge the change before saving their own.
///
/// ```swift
/// let request = BatchUpdateRequest(entityName: "Beer")
/// request.predicate = .equal("brewery.name", .string("Orval"))
/// request.propertiesToUpdate = ["abv": .function("add:to:", [.keyPath("abv"), .constant(.double(1))])]
/// ```
public final class BatchUpdateRequest: PersistentStoreRequest {
    /// The entity name of the objects updated.
    public var entityName: String
    /// The entity; takes precedence over ``entityName``.
    public var entity: EntityDescription?
    /// Which objects are updated; `nil` for all.
    public var predicate: FetchPredicate?
    /// Whether objects of sub-entities are updated too.
    public var includesSubentities = true
    /// The new value of each attribute: a constant, or an expression over the object's own
    /// attributes (`abv + 1` is `.function("add:to:", [.keyPath("abv"), .constant(.integer(1))])`).
    public var propertiesToUpdate: [String: FetchExpression] = [:]
    /// What the result reports; ``BatchRequestResultType/statusOnly`` by default.
    public var resultType: BatchRequestResultType = .statusOnly

    /// A request updating objects of the entity named `entityName`.
    public init(entityName: String) {
        self.entityName = entityName
    }

    /// A request updating objects of `entity`.
    public init(entity: EntityDescription) {
        self.entityName = entity.name
        self.entity = entity
    }
}

/// Deletes objects straight in the store, without loading them (Core Data's `NSBatchDeleteRequest`).
///
/// As in Core Data, validation and delete rules are not run: no `deny` check, no cascade.
/// What the store does keep consistent is relationships: join-table rows of many-to-many
/// relationships go, and every to-one relationship that pointed at a deleted object is
/// cleared (its object's version goes up). Contexts see the deletes once they merge the
/// result's IDs with ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``.
public final class BatchDeleteRequest: PersistentStoreRequest {
    /// The objects deleted, as a fetch request's entity and predicate (its sort descriptors,
    /// limit and offset are not used); `nil` when the request was made from IDs.
    public let fetchRequest: FetchRequest<ManagedObject>?
    /// The objects deleted, when the request was made from IDs.
    public let objectIDs: [ManagedObjectID]?
    /// What the result reports; ``BatchRequestResultType/statusOnly`` by default.
    public var resultType: BatchRequestResultType = .statusOnly

    /// A request deleting the objects `fetchRequest` matches.
    public init(fetchRequest: FetchRequest<ManagedObject>) {
        self.fetchRequest = fetchRequest
        self.objectIDs = nil
    }

    /// A request deleting the given objects, which must all be of one entity.
    public init(objectIDs: [ManagedObjectID]) {
        self.fetchRequest = nil
        self.objectIDs = objectIDs
    }
}
