/// A change a store makes by itself, without contexts: the store-level form of
/// ``BatchInsertRequest``, ``BatchUpdateRequest`` and ``BatchDeleteRequest``.
///
/// Values are already converted and checked against the model by the context that built the
/// request; the store writes them in one transaction.
public enum StoreBatchRequest: Sendable {
    /// New objects of a concrete entity, each a full row of slot values (laid out by
    /// ``EntityDescription/slots``; to-one and transient slots `.null`).
    case insert(entity: EntityDescription, rows: [[StoreValue]])
    /// Sets attributes of every object matching `fetch`'s entity and predicate (its sort,
    /// limit and offset are ignored) to the value of an expression evaluated on each object:
    /// a constant, or key paths of the object's own attributes combined with arithmetic.
    case update(fetch: StoreFetchRequest, assignments: [StoreBatchAssignment])
    /// Deletes every object matching `fetch`'s entity and predicate.
    case delete(fetch: StoreFetchRequest)
    /// Deletes the given objects.
    case deleteObjects([ManagedObjectID])
}

/// One attribute set by a batch update.
public struct StoreBatchAssignment: Sendable, Hashable {
    /// The attribute set.
    public var attribute: AttributeDescription
    /// Its new value, evaluated on each object.
    public var value: FetchExpression

    /// Creates an assignment.
    public init(attribute: AttributeDescription, value: FetchExpression) {
        self.attribute = attribute
        self.value = value
    }

    /// Equal when they assign the same expression to the same attribute (by identity).
    public static func == (lhs: StoreBatchAssignment, rhs: StoreBatchAssignment) -> Bool {
        lhs.attribute === rhs.attribute && lhs.value == rhs.value
    }

    /// Hashes the attribute's identity and the expression.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(attribute))
        hasher.combine(value)
    }
}

/// What a store reports after a batch request: how many objects it touched, and which.
public struct StoreBatchResult: Sendable, Hashable {
    /// The number of objects inserted, updated or deleted (deletes count the objects asked
    /// for, not rows nullified to keep relationships consistent).
    public var count: Int
    /// The IDs of those objects, in the order written.
    public var objectIDs: [ManagedObjectID]
    /// Objects whose to-one relationship was cleared because its destination was deleted
    /// (a batch delete's nullified inverses); contexts merge them as updates.
    public var nullifiedObjectIDs: [ManagedObjectID]

    /// Creates a result.
    public init(count: Int, objectIDs: [ManagedObjectID], nullifiedObjectIDs: [ManagedObjectID] = []) {
        self.count = count
        self.objectIDs = objectIDs
        self.nullifiedObjectIDs = nullifiedObjectIDs
    }
}
