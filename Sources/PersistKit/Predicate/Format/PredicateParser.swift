import Foundation

/// A recursive-descent parser from format strings to ``FetchPredicate`` and ``FetchExpression``
/// trees, following Apple's "Predicate Format String Syntax".
///
/// Precedence, loosest first: `OR`/`||`, `AND`/`&&`, `NOT`/`!` (prefix), comparisons (with
/// `ANY`/`SOME`/`ALL`/`NONE` and `[cdnl]` options); in expressions `|`, `^`, `&`, `+ -`,
/// `* /`, unary `-`, `**` (right-associative), then postfix `.key` and `[index]`. `AND` and
/// `OR` associate to the left and build binary compounds, as Foundation does
/// (`a AND b AND c` is `(a AND b) AND c`).
///
/// Format arguments are consumed in order (or by `%n$` position); a specifier with no argument
/// becomes ``FetchExpression/unboundArgument(specifier:position:)``.
struct PredicateParser {
    /// Keywords of the format syntax (compared case-insensitively); as keys they need `#`.
    static let reservedWords: Set<String> = [
        "AND", "OR", "IN", "NOT", "ALL", "ANY", "SOME", "NONE", "LIKE", "CASEINSENSITIVE", "CI", "MATCHES",
        "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN", "NULL", "NIL", "SELF", "TRUE", "YES", "FALSE", "NO",
        "FIRST", "LAST", "SIZE", "ANYKEY", "SUBQUERY", "FETCH", "CAST", "TRUEPREDICATE", "FALSEPREDICATE",
        "UTI",
    ]

    /// The selectors of the infix arithmetic and bitwise operators.
    static let infixOperators: [String: String] = [
        "+": "add:to:", "-": "from:subtract:", "*": "multiply:by:", "/": "divide:by:", "**": "raise:toPower:",
        "&": "bitwiseAnd:with:", "|": "bitwiseOr:with:", "^": "bitwiseXor:with:",
    ]

    /// Selectors the parser gives a meaning to: the symbolic indexes of `[FIRST]`, `[LAST]`, `[SIZE]`.
    static let indexSymbols: Set<String> = ["FIRST", "LAST", "SIZE"]

    let format: String
    private let tokens: [PredicateToken]
    private var position = 0
    private let arguments: [StoreValue]
    /// The next sequential (`%@`) argument.
    private var sequentialIndex = 0
    /// How many arguments the format uses (one past the highest index used).
    private var argumentsUsed = 0
    /// Current nesting of predicates and expressions, bounded by ``maximumDepth``.
    private var depth = 0
    /// The token positions of `(` that failed to read as a predicate, and why: kept across the
    /// backtracking of ``parsePrimaryPredicate()``, so nested parentheses are not read again and
    /// again (which took seconds for 40 levels, found by the FuzzPredicateParser fuzz target).
    private var failedPredicateReadings: [Int: PredicateSyntaxError] = [:]

    /// The deepest nesting accepted: format strings may come from clients of the daemon, and
    /// each level costs stack in the parser, the printer and the evaluator.
    static let maximumDepth = 128

    /// The deepest predicate tree accepted, counting each `AND`/`OR` of a chain as a level
    /// (`a OR b OR c` is two binary compounds deep): every visitor of the tree recurses, and
    /// SQLite refuses expressions deeper than 1000 (`SQLITE_MAX_EXPR_DEPTH`).
    static let maximumTreeDepth = 100
    /// The most tokens a format may have.
    static let maximumTokens = 20_000
    /// The chained `AND`s and `OR`s enclosing the term being parsed; with ``depth``, bounded by ``maximumTreeDepth``.
    private var treeDepth = 0

    init(format: String, arguments: [StoreValue]) throws(PredicateSyntaxError) {
        self.format = format
        var lexer = PredicateLexer(format)
        self.tokens = try lexer.tokens()
        self.arguments = arguments
        if tokens.count > Self.maximumTokens {
            throw PredicateSyntaxError(offset: 0, message: "predicate too complex: more than \(Self.maximumTokens) tokens",
                                       format: format, isTooComplex: true)
        }
    }

    // MARK: - Entry points

    /// The whole format as a predicate.
    mutating func parsePredicateFormat() throws(PredicateSyntaxError) -> FetchPredicate {
        let predicate = try parseOr()
        try finish()
        return predicate
    }

    /// The whole format as an expression.
    mutating func parseExpressionFormat() throws(PredicateSyntaxError) -> FetchExpression {
        let expression = try parseExpression()
        try finish()
        return expression
    }

    private mutating func finish() throws(PredicateSyntaxError) {
        guard case .end = current.kind else {
            if case .symbol(")") = current.kind {
                throw error(at: current, "unbalanced \")\": no \"(\" opens it", expected: "the end of the format")
            }
            throw error(at: current, "expected the end of the format after \"\(textBefore(current))\", found \(current.quoted)",
                        expected: "the end of the format")
        }
        if arguments.count > argumentsUsed {
            throw PredicateSyntaxError(offset: format.count,
                                       message: "\(arguments.count) arguments were given but the format uses \(argumentsUsed)",
                                       expected: nil, format: format)
        }
    }

    // MARK: - Tokens

    private var current: PredicateToken { tokens[position] }
    private func peek(_ ahead: Int) -> PredicateToken { tokens[min(position + ahead, tokens.count - 1)] }

    private mutating func advance() -> PredicateToken {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    private func isSymbol(_ symbol: String, _ token: PredicateToken? = nil) -> Bool {
        if case .symbol(let s) = (token ?? current).kind { return s == symbol }
        return false
    }

    /// The keyword (uppercased) that `token` spells, if it is a bare word.
    private func keyword(_ token: PredicateToken? = nil) -> String? {
        if case .identifier(let word) = (token ?? current).kind {
            let upper = word.uppercased()
            if Self.reservedWords.contains(upper) || upper == "TERNARY" || upper == "FUNCTION" { return upper }
        }
        return nil
    }

    private mutating func match(_ symbol: String) -> Bool {
        if isSymbol(symbol) { _ = advance(); return true }
        return false
    }

    private mutating func matchKeyword(_ word: String) -> Bool {
        if keyword() == word { _ = advance(); return true }
        return false
    }

    private mutating func expect(_ symbol: String, _ context: String) throws(PredicateSyntaxError) {
        guard match(symbol) else {
            throw error(at: current, "expected \"\(symbol)\" \(context), found \(current.quoted)", expected: "\"\(symbol)\"")
        }
    }

    private func error(at token: PredicateToken, _ message: String, expected: String? = nil) -> PredicateSyntaxError {
        PredicateSyntaxError(offset: token.offset, message: message, expected: expected, format: format)
    }

    /// The format text from `start` up to (not including) `token`, trimmed.
    private func textBefore(_ token: PredicateToken, from start: Int = 0) -> String {
        let characters = Array(format)
        let end = min(token.offset, characters.count)
        return String(characters[min(start, end)..<end]).trimmingCharacters(in: .whitespaces)
    }

    // MARK: - Predicates

    /// Enters one level of nesting; call ``leave()`` when done.
    private mutating func enter() throws(PredicateSyntaxError) {
        depth += 1
        if depth > Self.maximumDepth {
            var tooDeep = error(at: current, "the format is nested more than \(Self.maximumDepth) levels deep")
            tooDeep.isTooComplex = true
            throw tooDeep
        }
    }

    private mutating func leave() { depth -= 1 }

    /// One more level of a chain of `AND`s or `OR`s; undone by the caller at the chain's end.
    private mutating func checkTreeDepth() throws(PredicateSyntaxError) {
        if depth + treeDepth > Self.maximumTreeDepth {
            var tooDeep = error(at: current, "predicate too complex: more than \(Self.maximumTreeDepth) levels of nested or chained terms")
            tooDeep.isTooComplex = true
            throw tooDeep
        }
    }

    private mutating func parseOr() throws(PredicateSyntaxError) -> FetchPredicate {
        try enter()
        defer { leave() }
        var left = try parseAnd()
        let chainStart = treeDepth
        defer { treeDepth = chainStart }
        while matchKeyword("OR") || match("||") {
            treeDepth += 1
            try checkTreeDepth()
            left = .compound(CompoundPredicate(type: .or, subpredicates: [left, try parseAnd()]))
        }
        return left
    }

    private mutating func parseAnd() throws(PredicateSyntaxError) -> FetchPredicate {
        var left = try parseNot()
        let chainStart = treeDepth
        defer { treeDepth = chainStart }
        while matchKeyword("AND") || match("&&") {
            treeDepth += 1
            try checkTreeDepth()
            left = .compound(CompoundPredicate(type: .and, subpredicates: [left, try parseNot()]))
        }
        return left
    }

    private mutating func parseNot() throws(PredicateSyntaxError) -> FetchPredicate {
        if matchKeyword("NOT") || match("!") {
            try enter()
            defer { leave() }
            return .compound(CompoundPredicate(type: .not, subpredicates: [try parseNot()]))
        }
        return try parsePrimaryPredicate()
    }

    private mutating func parsePrimaryPredicate() throws(PredicateSyntaxError) -> FetchPredicate {
        if matchKeyword("TRUEPREDICATE") { return .alwaysTrue }
        if matchKeyword("FALSEPREDICATE") { return .alwaysFalse }
        guard isSymbol("(") else { return try parseComparison() }
        // `(` opens either a predicate or an expression (`(a + 1) > 2`): try the predicate first.
        let saved = self
        let start = position
        let predicateError: PredicateSyntaxError
        if let known = failedPredicateReadings[start] {
            predicateError = known
        } else {
            do {
                _ = advance()
                let predicate = try parseOr()
                try expect(")", "to close the \"(\"")
                if !continuesExpression(current) { return predicate }
                predicateError = error(at: current, "unexpected \(current.quoted)")
            } catch {
                predicateError = error
            }
        }
        let failed = failedPredicateReadings
        self = saved
        failedPredicateReadings = failed
        // A limit error depends on the nesting around this position, not on the position alone.
        if !predicateError.isTooComplex { failedPredicateReadings[start] = predicateError }
        do {
            return try parseComparison()
        } catch {
            // Report whichever reading got further into the format.
            throw error.offset >= predicateError.offset ? error : predicateError
        }
    }

    /// Whether `token` can continue an expression (so a parenthesized text before it was one).
    private func continuesExpression(_ token: PredicateToken) -> Bool {
        if case .symbol(let s) = token.kind {
            return ["==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "+", "-", "*", "/", "**", ".", "[", "&", "|", "^"].contains(s)
        }
        if let word = keyword(token) {
            return ["IN", "LIKE", "MATCHES", "CONTAINS", "BEGINSWITH", "ENDSWITH", "BETWEEN"].contains(word)
        }
        return false
    }

    private mutating func parseComparison() throws(PredicateSyntaxError) -> FetchPredicate {
        var modifier = ComparisonPredicate.Modifier.direct
        var negated = false
        switch keyword() {
        case "ANY", "SOME": _ = advance(); modifier = .any
        case "ALL": _ = advance(); modifier = .all
        case "NONE": _ = advance(); modifier = .any; negated = true
        default: break
        }
        let leftStart = current.offset
        let left = try parseExpression()
        let operatorToken = current
        guard let op = comparisonOperator() else {
            // A bare expression (`%K`, `isHidden`, `TERNARY(…)`) is true when its value is true,
            // as Foundation reads `NSPredicate(format: "%K", "hidden")`: `hidden == TRUE`.
            if modifier == .direct, endsPredicate(operatorToken) {
                return .comparison(ComparisonPredicate(left: left, operator: .equalTo, right: .constant(.bool(true))))
            }
            if keyword() == "UTI" {
                throw error(at: operatorToken, "UTI-CONFORMS-TO and UTI-EQUALS are not supported (they need uniform type identifiers, which Linux lacks)")
            }
            let leftText = textBefore(operatorToken, from: leftStart)
            throw error(at: operatorToken, "expected a comparison operator after \"\(leftText)\", found \(operatorToken.quoted)",
                        expected: "a comparison operator")
        }
        var options: ComparisonPredicate.Options = []
        if isSymbol("[") {
            _ = advance()
            guard case .identifier(let letters) = current.kind else {
                throw error(at: current, "expected comparison options such as c, d, cd or n inside \"[ ]\", found \(current.quoted)",
                            expected: "comparison options")
            }
            let lettersToken = advance()
            for letter in letters.lowercased() {
                switch letter {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n": options.insert(.normalized)
                case "l": options.insert(.localeSensitive)
                default:
                    throw error(at: lettersToken, "unknown comparison option \"\(letter)\" (known: c, d, n, l)", expected: "c, d, n or l")
                }
            }
            try expect("]", "to close the comparison options")
        }
        let right = try parseExpression()
        let comparison = FetchPredicate.comparison(ComparisonPredicate(left: left, operator: op, right: right,
                                                                       modifier: modifier, options: options))
        return negated ? .compound(CompoundPredicate(type: .not, subpredicates: [comparison])) : comparison
    }

    /// Whether `token` ends a predicate: the end, `)`, `,`, `AND`, `OR`, `&&`, `||`.
    private func endsPredicate(_ token: PredicateToken) -> Bool {
        switch token.kind {
        case .end: return true
        case .symbol(let s): return [")", ",", "&&", "||"].contains(s)
        default: return keyword(token) == "AND" || keyword(token) == "OR"
        }
    }

    private mutating func comparisonOperator() -> ComparisonPredicate.Operator? {
        let op: ComparisonPredicate.Operator?
        switch current.kind {
        case .symbol(let s):
            switch s {
            case "=", "==": op = .equalTo
            case "!=", "<>": op = .notEqualTo
            case "<": op = .lessThan
            case "<=", "=<": op = .lessThanOrEqualTo
            case ">": op = .greaterThan
            case ">=", "=>": op = .greaterThanOrEqualTo
            default: op = nil
            }
        case .identifier:
            switch keyword() {
            case "MATCHES": op = .matches
            case "LIKE": op = .like
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "IN": op = .in
            case "CONTAINS": op = .contains
            case "BETWEEN": op = .between
            default: op = nil
            }
        default:
            op = nil
        }
        if op != nil { _ = advance() }
        return op
    }

    // MARK: - Expressions

    private mutating func parseExpression() throws(PredicateSyntaxError) -> FetchExpression {
        try enter()
        defer { leave() }
        return try parseBinary(level: 0)
    }

    /// Binary operator levels, loosest first; all associate to the left.
    private static let binaryLevels: [[String]] = [["|"], ["^"], ["&"], ["+", "-"], ["*", "/"]]

    private mutating func parseBinary(level: Int) throws(PredicateSyntaxError) -> FetchExpression {
        guard level < Self.binaryLevels.count else { return try parseUnary() }
        var left = try parseBinary(level: level + 1)
        while case .symbol(let s) = current.kind, Self.binaryLevels[level].contains(s), let selector = Self.infixOperators[s] {
            _ = advance()
            left = .function(selector, [left, try parseBinary(level: level + 1)])
        }
        return left
    }

    private mutating func parseUnary() throws(PredicateSyntaxError) -> FetchExpression {
        guard isSymbol("-") else { return try parsePower() }
        _ = advance()
        // A negative literal is a constant (so -9223372036854775808 fits), unless `**` follows.
        if !isSymbol("**", peek(1)) {
            switch current.kind {
            case .integer(let magnitude):
                let token = advance()
                guard magnitude <= UInt64(Int64.max) + 1 else {
                    throw error(at: token, "the integer -\(token.text) is too small (the smallest is \(Int64.min))")
                }
                let value = magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
                return try parsePostfix(.constant(.integer(value)))
            case .double(let value):
                _ = advance()
                return try parsePostfix(.constant(.double(-value)))
            default:
                break
            }
        }
        try enter()
        defer { leave() }
        let operand = try parseUnary()
        return .function("from:subtract:", [.constant(.integer(0)), operand])
    }

    private mutating func parsePower() throws(PredicateSyntaxError) -> FetchExpression {
        let base = try parsePostfix(try parsePrimary())
        guard match("**") else { return base }
        return .function("raise:toPower:", [base, try parseUnary()])
    }

    private mutating func parsePostfix(_ start: FetchExpression) throws(PredicateSyntaxError) -> FetchExpression {
        var expression = start
        while true {
            if match(".") {
                let token = advance()
                switch token.kind {
                case .identifier(let key), .escapedIdentifier(let key), .collectionOperator(let key):
                    expression = Self.appending(key, to: expression)
                case .specifier(conversion: "K", _):
                    let key = try argument(token)
                    if case .keyPath(let path) = key {
                        expression = Self.appending(path, to: expression)
                    } else {
                        expression = .function("valueForKeyPath:", [expression, key])
                    }
                default:
                    throw error(at: token, "expected a key after \".\", found \(token.quoted)", expected: "a key")
                }
            } else if isSymbol("[") {
                _ = advance()
                let index: FetchExpression
                if let word = keyword(), Self.indexSymbols.contains(word) {
                    _ = advance()
                    index = .function(word, [])
                } else {
                    index = try parseExpression()
                }
                try expect("]", "to close the index")
                expression = .function("objectFrom:withIndex:", [expression, index])
            } else {
                return expression
            }
        }
    }

    /// `expression.key`: a longer key path, or a key path from another expression.
    static func appending(_ key: String, to expression: FetchExpression) -> FetchExpression {
        switch expression {
        case .keyPath(let path): return .keyPath(path + "." + key)
        case .evaluatedObject: return .keyPath(key)
        case .member(let base, let path): return .member(base, path + "." + key)
        default: return .member(expression, key)
        }
    }

    private mutating func parsePrimary() throws(PredicateSyntaxError) -> FetchExpression {
        let token = current
        switch token.kind {
        case .integer(let magnitude):
            _ = advance()
            guard magnitude <= UInt64(Int64.max) else {
                throw error(at: token, "the integer \(token.text) is too large (the largest is \(Int64.max))")
            }
            return .constant(.integer(Int64(magnitude)))
        case .double(let value):
            _ = advance()
            return .constant(.double(value))
        case .string(let value):
            _ = advance()
            return .constant(.string(value))
        case .variable(let name):
            _ = advance()
            return .variable(name)
        case .specifier:
            _ = advance()
            return try argument(token)
        case .escapedIdentifier(let key):
            _ = advance()
            return .keyPath(key)
        case .collectionOperator(let name):
            _ = advance()
            return .keyPath(name)
        case .symbol("("):
            _ = advance()
            let expression = try parseExpression()
            try expect(")", "to close the \"(\"")
            return expression
        case .symbol("{"):
            _ = advance()
            var elements: [FetchExpression] = []
            if !match("}") {
                repeat { elements.append(try parseExpression()) } while match(",")
                try expect("}", "to close the collection")
            }
            return Self.aggregate(elements)
        case .identifier(let word):
            return try parseWord(word, token)
        case .end:
            throw error(at: token, "expected an expression, found the end of the format", expected: "an expression")
        case .symbol(let s):
            if s == ":=" {
                throw error(at: token, "assignment (:=) is not supported in predicates")
            }
            throw error(at: token, "expected an expression, found \"\(s)\"", expected: "an expression")
        }
    }

    /// `{a, b}`: a constant collection when every element is a constant.
    static func aggregate(_ elements: [FetchExpression]) -> FetchExpression {
        var values: [StoreValue] = []
        for element in elements {
            guard case .constant(let value) = element else { return .aggregate(elements) }
            values.append(value)
        }
        return .constant(.array(values))
    }

    private mutating func parseWord(_ word: String, _ token: PredicateToken) throws(PredicateSyntaxError) -> FetchExpression {
        let upper = word.uppercased()
        let isCall = isSymbol("(", peek(1))
        switch upper {
        case "TRUE", "YES": _ = advance(); return .constant(.bool(true))
        case "FALSE", "NO": _ = advance(); return .constant(.bool(false))
        case "NULL", "NIL": _ = advance(); return .constant(.null)
        case "SELF": _ = advance(); return .evaluatedObject
        case "SUBQUERY": return try parseSubquery()
        case "CAST":
            let arguments = try parseCallArguments(upper, count: 2...2)
            return Self.cast(arguments[0], arguments[1])
        case "TERNARY" where isCall:
            _ = advance()
            try expect("(", "after TERNARY")
            let condition = try parseOr()
            try expect(",", "after the condition of TERNARY")
            let then = try parseExpression()
            try expect(",", "after the second argument of TERNARY")
            let otherwise = try parseExpression()
            try expect(")", "to close TERNARY")
            return .conditional(condition, then, otherwise)
        case "FUNCTION" where isCall:
            let arguments = try parseCallArguments(upper, count: 2...Int.max)
            return .function("FUNCTION", arguments)
        case "ANYKEY":
            throw error(at: token, "ANYKEY is not supported (it needs dictionary values, which stores do not hold)")
        case "FETCH":
            throw error(at: token, "FETCH(…) expressions are not supported (nested fetch requests in predicates)")
        case "FIRST", "LAST", "SIZE":
            // Symbols only inside `[ ]`; elsewhere keys, as in GNUstep (`size == 2`).
            _ = advance()
            return .keyPath(word)
        case "UTI":
            throw error(at: token, "UTI-CONFORMS-TO and UTI-EQUALS are not supported (they need uniform type identifiers, which Linux lacks)")
        default:
            if Self.reservedWords.contains(upper) {
                throw error(at: token, "expected an expression, found the keyword \(upper) (write #\(word) to use it as a key)",
                            expected: "an expression")
            }
        }
        if isCall {
            let arguments = try parseCallArguments(word, count: 0...Int.max)
            let selector = word.contains(":") || arguments.isEmpty ? word : word + ":"
            return .function(selector, arguments)
        }
        _ = advance()
        return .keyPath(word)
    }

    /// `NAME(a, b, …)`, with the name as the current token.
    private mutating func parseCallArguments(_ name: String, count: ClosedRange<Int>) throws(PredicateSyntaxError) -> [FetchExpression] {
        let nameToken = advance()
        try expect("(", "after \(name)")
        var arguments: [FetchExpression] = []
        if !match(")") {
            repeat { arguments.append(try parseExpression()) } while match(",")
            try expect(")", "to close the arguments of \(name)")
        }
        guard count.contains(arguments.count) else {
            let wanted = count.upperBound == Int.max ? "at least \(count.lowerBound)" : "\(count.lowerBound)"
            throw error(at: nameToken, "\(name) takes \(wanted) arguments, not \(arguments.count)")
        }
        return arguments
    }

    private mutating func parseSubquery() throws(PredicateSyntaxError) -> FetchExpression {
        _ = advance()
        try expect("(", "after SUBQUERY")
        let collection = try parseExpression()
        try expect(",", "after the collection of SUBQUERY")
        guard case .variable(let variable) = current.kind else {
            throw error(at: current, "expected a variable such as $x as the second argument of SUBQUERY, found \(current.quoted)",
                        expected: "a variable")
        }
        _ = advance()
        try expect(",", "after the variable of SUBQUERY")
        let predicate = try parseOr()
        try expect(")", "to close SUBQUERY")
        return .subquery(collection: collection, variable: variable, predicate: predicate)
    }

    /// `CAST(value, "Type")`: a constant when the value is a constant Foundation can convert
    /// without context (so the printed form of dates, decimals, UUIDs, URLs and data parses
    /// back to the same constant); otherwise `castObject:toType:`.
    static func cast(_ value: FetchExpression, _ type: FetchExpression) -> FetchExpression {
        if case .constant(let constant) = value, case .constant(.string(let typeName)) = type {
            switch (typeName, constant) {
            case ("NSDate", .integer(let seconds)):
                return .constant(.date(Date(timeIntervalSinceReferenceDate: Double(seconds))))
            case ("NSDate", .double(let seconds)):
                return .constant(.date(Date(timeIntervalSinceReferenceDate: seconds)))
            case ("NSDecimalNumber", .string(let text)):
                if let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), decimal.description == text {
                    return .constant(.decimal(decimal))
                }
            case ("NSUUID", .string(let text)):
                if let uuid = UUID(uuidString: text), uuid.uuidString == text { return .constant(.uuid(uuid)) }
            case ("NSURL", .string(let text)):
                if let url = URL(string: text), url.absoluteString == text { return .constant(.url(url)) }
            case ("NSData", .string(let text)):
                if let data = Data(base64Encoded: text), data.base64EncodedString() == text { return .constant(.data(data)) }
            default:
                break
            }
        }
        return .function("castObject:toType:", [value, type])
    }

    // MARK: - Arguments

    /// The expression for a format specifier: its argument as a constant (or key path for
    /// `%K`), or an unbound argument when there are too few arguments.
    private mutating func argument(_ token: PredicateToken) throws(PredicateSyntaxError) -> FetchExpression {
        guard case .specifier(let conversion, let explicitPosition) = token.kind else {
            throw error(at: token, "expected a format specifier")
        }
        let index: Int
        if let explicitPosition {
            index = explicitPosition
        } else {
            index = sequentialIndex
            sequentialIndex += 1
        }
        argumentsUsed = max(argumentsUsed, index + 1)
        guard index < arguments.count else {
            return .unboundArgument(specifier: "%" + conversion, position: index)
        }
        let value = arguments[index]
        func mismatch(_ wanted: String) -> PredicateSyntaxError {
            error(at: token, "argument \(index + 1) for \(token.text) must be \(wanted), not \(PredicatePrinter.describe(value))",
                  expected: wanted)
        }
        switch conversion {
        case "K":
            guard case .string(let path) = value else { throw mismatch("a string naming a key path") }
            guard Self.isValidKeyPath(path) else {
                throw error(at: token, "argument \(index + 1) for %K, \"\(path)\", is not a key path (keys separated by dots)",
                            expected: "a key path")
            }
            return .keyPath(path)
        case "@":
            return .constant(value)
        case "s", "S", "c", "C":
            guard case .string = value else { throw mismatch("a string") }
            return .constant(value)
        case "f", "F", "lf", "lF", "Lf", "e", "E", "g", "G", "a", "A", "le", "lE", "lg", "lG", "la", "lA":
            switch value {
            case .double: return .constant(value)
            case .integer(let i): return .constant(.double(Double(i)))
            default: throw mismatch("a number")
            }
        default:
            // Integer conversions: d, i, u, x, o and their length modifiers.
            switch value {
            case .integer: return .constant(value)
            case .bool(let b): return .constant(.integer(b ? 1 : 0))
            case .double(let d) where d.rounded() == d && abs(d) < 9.2e18: return .constant(.integer(Int64(d)))
            default: throw mismatch("an integer")
            }
        }
    }

    /// Whether `path` is a dotted key path the printer can write back: identifiers or
    /// `@operators` separated by dots.
    static func isValidKeyPath(_ path: String) -> Bool {
        guard !path.isEmpty else { return false }
        for component in path.split(separator: ".", omittingEmptySubsequences: false) {
            var body = Substring(component)
            if body.first == "@" { body = body.dropFirst() }
            guard let first = body.first, PredicateLexer.isIdentifierStart(first),
                  body.allSatisfy(PredicateLexer.isIdentifierPart) else { return false }
        }
        return true
    }
}
