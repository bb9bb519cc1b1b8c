/// A computed column of a dictionary fetch: an expression (usually an aggregate) and the name
/// its value has in each result dictionary.
///
/// The corresponding Core Data class is `NSExpressionDescription`:
///
/// ```swift
/// let strongest = ExpressionDescription(name: "strongest", expression: .function("max:", [.keyPath("abv")]),
///                                       resultType: .double)
/// request.resultType = .dictionaryResultType
/// request.propertiesToFetch = ["brewery.name", strongest]
/// request.propertiesToGroupBy = ["brewery.name"]
/// ```
///
/// Aggregates are `count:`, `sum:`, `average:`, `min:` and `max:` over one key path (`nil`
/// values are skipped, as SQL does); plain expressions may use key paths, constants and
/// arithmetic (`add:to:`, `from:subtract:`, `multiply:by:`, `divide:by:`).
public struct ExpressionDescription: Sendable, Hashable {
    /// The key of the value in each result dictionary.
    public var name: String
    /// What is computed.
    public var expression: FetchExpression
    /// The type the value is converted to (`expressionResultType`), such as `.integer64` for a
    /// count or `.double` for an average.
    public var resultType: AttributeType

    /// Creates an expression description.
    public init(name: String, expression: FetchExpression, resultType: AttributeType) {
        self.name = name
        self.expression = expression
        self.resultType = resultType
    }

    /// The aggregate function names a dictionary fetch accepts.
    static let aggregateFunctions: Set<String> = ["count:", "sum:", "average:", "min:", "max:"]

    /// Whether the expression is an aggregate over a group of rows.
    var isAggregate: Bool {
        if case .function(let name, _) = expression { return Self.aggregateFunctions.contains(name) }
        return false
    }
}
