/// A comparison between two expressions, with an operator, a modifier and options.
///
/// The corresponding Core Data class is `NSComparisonPredicate`.
public struct ComparisonPredicate: Sendable, Hashable {
    /// The comparison made (`NSComparisonPredicate.Operator`).
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// `<`
        case lessThan
        /// `<=`, `=<`
        case lessThanOrEqualTo
        /// `>`
        case greaterThan
        /// `>=`, `=>`
        case greaterThanOrEqualTo
        /// `=`, `==`
        case equalTo
        /// `!=`, `<>`
        case notEqualTo
        /// `MATCHES`: the whole left string matches the right regular expression (ICU syntax).
        case matches
        /// `LIKE`: the left string matches a pattern where `*` is any run and `?` one character.
        case like
        /// `BEGINSWITH`
        case beginsWith
        /// `ENDSWITH`
        case endsWith
        /// `IN`: the left value is in the right collection (or substring of a right string).
        case `in`
        /// `CONTAINS`: the left collection or string contains the right value.
        case contains
        /// `BETWEEN`: the left value lies within the right two-element collection, bounds included.
        case between
    }

    /// How a to-many left side is compared (`NSComparisonPredicate.Modifier`).
    public enum Modifier: String, Sendable, Hashable {
        /// The left value itself is compared.
        case direct
        /// `ALL`: every element of the left collection satisfies the comparison.
        case all
        /// `ANY`/`SOME`: at least one element does (`NONE` is `NOT ANY`).
        case any
    }

    /// String comparison options (`NSComparisonPredicate.Options`).
    public struct Options: OptionSet, Sendable, Hashable {
        /// The raw bits.
        public let rawValue: Int
        /// Creates options from raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// `[c]`: ignore case.
        public static let caseInsensitive = Options(rawValue: 1)
        /// `[d]`: ignore diacritics.
        public static let diacriticInsensitive = Options(rawValue: 2)
        /// `[n]`: the strings are already normalized; compare them as they are.
        public static let normalized = Options(rawValue: 4)
        /// `[l]`: compare as the current locale does. Accepted by the parser, as Foundation's is;
        /// evaluation and the stores ignore it.
        public static let localeSensitive = Options(rawValue: 8)
    }

    /// The left expression.
    public var left: FetchExpression
    /// The comparison made.
    public var `operator`: Operator
    /// The right expression.
    public var right: FetchExpression
    /// How a to-many left side is compared.
    public var modifier: Modifier
    /// String comparison options.
    public var options: Options

    /// Creates a comparison predicate.
    public init(left: FetchExpression, operator: Operator, right: FetchExpression,
                modifier: Modifier = .direct, options: Options = []) {
        self.left = left
        self.operator = `operator`
        self.right = right
        self.modifier = modifier
        self.options = options
    }
}
