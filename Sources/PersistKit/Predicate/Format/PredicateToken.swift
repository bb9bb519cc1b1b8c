/// One token of a predicate format string, as ``PredicateLexer`` produces it.
struct PredicateToken: Sendable, Hashable {
    /// What kind of token this is.
    enum Kind: Sendable, Hashable {
        /// A bare word: a key, a keyword (`AND`, `ANY`, …), a function name. Keywords are
        /// recognised by the parser, case-insensitively.
        case identifier(String)
        /// A word escaped with `#` (`#cast`): always a key, never a keyword.
        case escapedIdentifier(String)
        /// A word starting with `@` (`@count`, `@sum`): a collection operator.
        case collectionOperator(String)
        /// `$NAME`.
        case variable(String)
        /// A quoted string, escapes resolved.
        case string(String)
        /// An integer literal, as its magnitude (a leading `-` is a separate token).
        case integer(UInt64)
        /// A floating-point literal.
        case double(Double)
        /// A format specifier: `%@`, `%K`, `%d`, `%1$@`, … `conversion` is the specifier
        /// without `%` and position (`@`, `K`, `lld`); `position` is from `%n$` (from 0).
        case specifier(conversion: String, position: Int?)
        /// Punctuation and operators: `( ) { } [ ] , . + - * / ** = == != <> < <= =< > >= => && || ! & | ^ :=`.
        case symbol(String)
        /// The end of the format string.
        case end
    }

    /// What kind of token this is.
    var kind: Kind
    /// The character offset of the token's first character.
    var offset: Int
    /// The token's text as written.
    var text: String

    /// How the token is described in an error message (`"+"`, `the end of the format`).
    var quoted: String {
        if case .end = kind { return "the end of the format" }
        return "\"" + text + "\""
    }
}
