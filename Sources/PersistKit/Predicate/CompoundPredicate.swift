/// Predicates joined by `AND` or `OR`, or one predicate negated by `NOT`.
///
/// The corresponding Core Data class is `NSCompoundPredicate`.
public struct CompoundPredicate: Sendable, Hashable {
    /// How the subpredicates combine.
    public enum LogicalType: String, Sendable, Hashable {
        /// All subpredicates hold; true for none.
        case and
        /// Any subpredicate holds; false for none.
        case or
        /// The single subpredicate does not hold.
        case not
    }

    /// How the subpredicates combine.
    public var type: LogicalType
    /// The predicates combined.
    public var subpredicates: [FetchPredicate]

    /// Creates a compound predicate.
    public init(type: LogicalType, subpredicates: [FetchPredicate]) {
        self.type = type
        self.subpredicates = subpredicates
    }

    /// All of `subpredicates` (`NSCompoundPredicate(andPredicateWithSubpredicates:)`).
    public static func and(_ subpredicates: [FetchPredicate]) -> FetchPredicate {
        .compound(CompoundPredicate(type: .and, subpredicates: subpredicates))
    }

    /// Any of `subpredicates` (`NSCompoundPredicate(orPredicateWithSubpredicates:)`).
    public static func or(_ subpredicates: [FetchPredicate]) -> FetchPredicate {
        .compound(CompoundPredicate(type: .or, subpredicates: subpredicates))
    }

    /// The negation of `predicate` (`NSCompoundPredicate(notPredicateWithSubpredicate:)`).
    public static func not(_ predicate: FetchPredicate) -> FetchPredicate {
        .compound(CompoundPredicate(type: .not, subpredicates: [predicate]))
    }
}
