/// What the ``PredicateEvaluator`` reads objects through: a context's managed objects (with
/// their pending changes) or a store's rows.
///
/// ```swift
/// struct Rows: PredicateObjectResolver {
///     func value(forKey key: String, of object: ManagedObjectID) throws -> EvaluatedValue { … }
/// }
/// let matches = try PredicateEvaluator(resolver: Rows()).evaluate(predicate, on: objectID)
/// ```
public protocol PredicateObjectResolver {
    /// The value of the attribute or relationship `key` of `object`: an attribute's value or a
    /// to-one destination as ``EvaluatedValue/value(_:)`` (``StoreValue/object(_:)`` or
    /// ``StoreValue/null``), a to-many relationship's destinations as ``EvaluatedValue/objects(_:)``.
    ///
    /// Throws a ``PersistenceError`` naming the key when `object`'s entity has no such property.
    func value(forKey key: String, of object: ManagedObjectID) throws -> EvaluatedValue
}

/// The value of one key of one object, as a ``PredicateObjectResolver`` answers it.
public enum EvaluatedValue: Sendable, Hashable {
    /// An attribute's value, or a to-one relationship's destination (or ``StoreValue/null``).
    case value(StoreValue)
    /// A to-many relationship's destinations, in order if the relationship is ordered.
    case objects([ManagedObjectID])

    /// The value as the evaluator uses it: a collection becomes ``StoreValue/array(_:)`` of objects.
    public var storeValue: StoreValue {
        switch self {
        case .value(let value): return value
        case .objects(let ids): return .array(ids.map { .object($0) })
        }
    }
}
