/// A format string that is not a valid predicate or expression, with where and why.
///
/// ```swift
/// do { _ = try FetchPredicate(format: "name ! 'x'") } catch let error as PredicateSyntaxError {
///     print(error)   // predicate syntax error at offset 5: expected a comparison operator after "name", found "!"
/// }
/// ```
///
/// Offsets count `Character`s from the start of the format string, from 0.
public struct PredicateSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The character offset in the format string where the problem was found.
    public var offset: Int
    /// What was wrong, in one sentence.
    public var message: String
    /// What the parser expected at ``offset`` (for example `"a comparison operator"`), or `nil`
    /// when the error is not about a missing token.
    public var expected: String?
    /// The format string that failed to parse.
    public var format: String
    /// Whether the format was refused for its size or nesting rather than its syntax
    /// ("predicate too complex"; the daemon's `predicate_too_complex`).
    public var isTooComplex: Bool


    /// Creates an error.
    public init(offset: Int, message: String, expected: String? = nil, format: String, isTooComplex: Bool = false) {
        self.isTooComplex = isTooComplex
        self.offset = offset
        self.message = message
        self.expected = expected
        self.format = format
    }

    /// `predicate syntax error at offset 12: <message>`.
    public var description: String {
        "predicate syntax error at offset \(offset): \(message)"
    }
}
