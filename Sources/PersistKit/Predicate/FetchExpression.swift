/// A value in a predicate: a constant, a key path, a variable, a function or a subquery.
///
/// The corresponding Core Data class is `NSExpression`.
public indirect enum FetchExpression: Sendable, Hashable {
    /// A constant value (`constantValue`).
    case constant(StoreValue)
    /// The object being evaluated (`SELF`).
    case evaluatedObject
    /// A key path from the evaluated object, such as `brewery.name` or `beers.@count`.
    case keyPath(String)
    /// A key path from the value of another expression, such as `$b.abv`.
    case member(FetchExpression, String)
    /// A variable (`$NAME`), replaced by ``FetchPredicate``'s substitution or bound by a subquery.
    case variable(String)
    /// A built-in function applied to arguments (`FUNCTION`, arithmetic, `now()`), by Foundation's
    /// selector name: `add:to:`, `from:subtract:`, `multiply:by:`, `divide:by:`, `raise:toPower:`,
    /// `now`, `count:`, `sum:`, `average:`, `min:`, `max:`, …
    case function(String, [FetchExpression])
    /// A literal collection (`{a, b, c}`).
    case aggregate([FetchExpression])
    /// `SUBQUERY(collection, $variable, predicate)`: the elements of a collection that satisfy a predicate.
    case subquery(collection: FetchExpression, variable: String, predicate: FetchPredicate)
    /// `TERNARY(predicate, a, b)`.
    case conditional(FetchPredicate, FetchExpression, FetchExpression)
    /// A format argument (`%@`, `%K`, `%d`, …) the format string named but no value was given
    /// for: the `position`-th argument (from 0), written as `specifier`. Such a predicate can
    /// be printed and inspected, but not evaluated or compiled.
    case unboundArgument(specifier: String, position: Int)
}
