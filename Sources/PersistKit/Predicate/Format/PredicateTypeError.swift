/// A predicate that cannot apply to an entity: an unknown key, a comparison of values of
/// different types, a to-many key path compared as if it were one value. Found by
/// ``FetchPredicate/typeCheck(against:)`` before any SQL runs.
///
/// ```swift
/// try FetchPredicate(format: "nmae == 'x'").typeCheck(against: beer)
/// // predicate type error in "nmae == \"x\"": entity Beer has no property nmae (key path nmae)
/// ```
public struct PredicateTypeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in one sentence.
    public var message: String
    /// The entity the predicate was checked against.
    public var entityName: String
    /// The key path concerned, if any.
    public var keyPath: String?
    /// The canonical format of the comparison where the problem is.
    public var comparison: String

    /// Creates an error.
    public init(message: String, entityName: String, keyPath: String? = nil, comparison: String) {
        self.message = message
        self.entityName = entityName
        self.keyPath = keyPath
        self.comparison = comparison
    }

    /// `predicate type error in "<comparison>": <message>`.
    public var description: String {
        "predicate type error in \"\(comparison)\": \(message)"
    }
}
