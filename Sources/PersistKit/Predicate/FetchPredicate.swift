/// A logical condition on objects, as Core Data's `NSPredicate` expresses it.
///
/// Named `FetchPredicate` so it does not collide with Foundation's `Predicate` and
/// `NSPredicate` when a program imports both. Build one in code:
///
/// ```swift
/// let strong = FetchPredicate.comparison(.keyPath("abv"), .greaterThan, .constant(.double(8)))
/// let both = strong && .comparison(.keyPath("name"), .beginsWith, .constant(.string("D")), options: .caseInsensitive)
/// ```
///
/// Stores compile it to SQL; in-memory stores evaluate it directly.
public indirect enum FetchPredicate: Sendable, Hashable {
    /// Always true (`TRUEPREDICATE`).
    case alwaysTrue
    /// Always false (`FALSEPREDICATE`).
    case alwaysFalse
    /// A comparison of two expressions (`NSComparisonPredicate`).
    case comparison(ComparisonPredicate)
    /// `AND`, `OR` or `NOT` over other predicates (`NSCompoundPredicate`).
    case compound(CompoundPredicate)

    /// A comparison predicate `left op right`.
    public static func comparison(
        _ left: FetchExpression,
        _ op: ComparisonPredicate.Operator,
        _ right: FetchExpression,
        modifier: ComparisonPredicate.Modifier = .direct,
        options: ComparisonPredicate.Options = []
    ) -> FetchPredicate {
        .comparison(ComparisonPredicate(left: left, operator: op, right: right, modifier: modifier, options: options))
    }

    /// `key == value`, the most common predicate.
    public static func equal(_ key: String, _ value: StoreValue) -> FetchPredicate {
        .comparison(.keyPath(key), .equalTo, .constant(value))
    }

    /// Both predicates.
    public static func && (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        .compound(CompoundPredicate(type: .and, subpredicates: [lhs, rhs]))
    }

    /// Either predicate.
    public static func || (lhs: FetchPredicate, rhs: FetchPredicate) -> FetchPredicate {
        .compound(CompoundPredicate(type: .or, subpredicates: [lhs, rhs]))
    }

    /// The negation of a predicate.
    public static prefix func ! (predicate: FetchPredicate) -> FetchPredicate {
        .compound(CompoundPredicate(type: .not, subpredicates: [predicate]))
    }
}
