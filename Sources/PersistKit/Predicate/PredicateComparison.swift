import Foundation

/// The operators of ``ComparisonPredicate`` applied to two values, as `NSComparisonPredicate`
/// applies them.
///
/// - `==` holds for `nil == nil`; `!=` is its negation. `<`, `<=`, `>`, `>=` are false when
///   either side is `nil` or the values are of kinds that do not compare.
/// - Numbers compare by value across integer, double and decimal.
/// - String operators honour `[c]` (case) and `[d]` (diacritics), folding as `NSString` does.
/// - `LIKE` takes `*` (any run) and `?` (one character); `MATCHES` is an ICU regular
///   expression that must match the whole string.
/// - `IN` looks for the left value in a right collection, or the left string in a right string;
///   `CONTAINS` is the same with the sides swapped. `BETWEEN` takes a two-element collection,
///   bounds included.
/// - `ANY` holds when some element of a left collection satisfies the comparison, `ALL` when
///   every element does (so it holds for an empty collection).
public enum PredicateComparison {
    /// Applies `op` to `left` and `right` with `modifier` and `options`.
    public static func compare(_ left: StoreValue, _ op: ComparisonPredicate.Operator, _ right: StoreValue,
                               modifier: ComparisonPredicate.Modifier = .direct,
                               options: ComparisonPredicate.Options = []) throws -> Bool {
        switch modifier {
        case .direct:
            return try compare(left, op, right, options: options)
        case .any:
            for element in PredicateFunctions.elements(of: left) where try compare(element, op, right, options: options) {
                return true
            }
            return false
        case .all:
            for element in PredicateFunctions.elements(of: left) where try !compare(element, op, right, options: options) {
                return false
            }
            return true
        }
    }

    static func compare(_ left: StoreValue, _ op: ComparisonPredicate.Operator, _ right: StoreValue,
                        options: ComparisonPredicate.Options) throws -> Bool {
        switch op {
        case .equalTo:
            return isEqual(left, right, options: options)
        case .notEqualTo:
            return !isEqual(left, right, options: options)
        case .lessThan:
            return order(left, right, options: options) == .orderedAscending
        case .lessThanOrEqualTo:
            return order(left, right, options: options).map { $0 != .orderedDescending } ?? false
        case .greaterThan:
            return order(left, right, options: options) == .orderedDescending
        case .greaterThanOrEqualTo:
            return order(left, right, options: options).map { $0 != .orderedAscending } ?? false
        case .beginsWith, .endsWith:
            guard case .string(let string) = left, case .string(let affix) = right else { return false }
            let (s, a) = (StoreValueComparison.fold(string, options), StoreValueComparison.fold(affix, options))
            // As NSString's range(of:options: .anchored): an empty affix is never found.
            if a.isEmpty { return false }
            return op == .beginsWith ? s.hasPrefix(a) : s.hasSuffix(a)
        case .like:
            guard case .string(let string) = left, case .string(let pattern) = right else { return false }
            return likeMatches(StoreValueComparison.fold(string, options), pattern: StoreValueComparison.fold(pattern, options))
        case .matches:
            guard case .string(let string) = left, case .string(let pattern) = right else { return false }
            return try matches(string, regex: pattern, options: options)
        case .in:
            return try contains(right, left, options: options)
        case .contains:
            return try contains(left, right, options: options)
        case .between:
            guard case .array(let bounds) = right, bounds.count == 2 else {
                throw PersistenceError.predicate("BETWEEN needs a collection of two bounds, not \(right)")
            }
            guard let low = order(left, bounds[0], options: options), let high = order(left, bounds[1], options: options) else {
                return false
            }
            return low != .orderedAscending && high != .orderedDescending
        }
    }

    /// `==` with `nil == nil`, numbers across types and string options.
    ///
    /// Strings compare by Unicode scalars, as `-[NSString isEqual:]` ("a literal Unicode-based
    /// comparison") and SQLite's `=` do; Swift's `==` would also equate canonically equivalent
    /// strings (precomposed `é` and `e` + U+0301). With `[c]` or `[d]` the folded forms are
    /// canonically decomposed (see ``StoreValueComparison/fold(_:_:)``), so canonically
    /// equivalent strings are equal, as with `compare:options:`.
    static func isEqual(_ left: StoreValue, _ right: StoreValue, options: ComparisonPredicate.Options) -> Bool {
        if case .string(let a) = left, case .string(let b) = right {
            return StoreValueComparison.fold(a, options).unicodeScalars.elementsEqual(StoreValueComparison.fold(b, options).unicodeScalars)
        }
        return StoreValueComparison.isEqual(left, right)
    }

    /// The order of two values for `<`-like operators, or `nil` when they do not compare.
    static func order(_ left: StoreValue, _ right: StoreValue, options: ComparisonPredicate.Options) -> ComparisonResult? {
        switch (left, right) {
        case (.null, _), (_, .null):
            return nil
        case (.string(let a), .string(let b)):
            return StoreValueComparison.compareCodePoints(StoreValueComparison.fold(a, options), StoreValueComparison.fold(b, options))
        case (.date, .date), (.data, .data), (.uuid, .uuid), (.url, .url):
            return StoreValueComparison.compare(left, right)
        default:
            if case .double(let d) = left, d.isNaN { return nil }
            if case .double(let d) = right, d.isNaN { return nil }
            return StoreValueComparison.compareNumbers(left, right)
        }
    }

    /// Whether `collection` (a collection, or a string holding a substring) contains `element`.
    static func contains(_ collection: StoreValue, _ element: StoreValue, options: ComparisonPredicate.Options) throws -> Bool {
        switch collection {
        case .array(let elements):
            return elements.contains { isEqual($0, element, options: options) }
        case .string(let string):
            guard case .string(let part) = element else { return false }
            let folded = StoreValueComparison.fold(part, options)
            return folded.isEmpty ? false : StoreValueComparison.fold(string, options).contains(folded)
        case .null:
            return false
        default:
            throw PersistenceError.predicate("IN and CONTAINS need a collection or a string, not \(collection)")
        }
    }

    /// Whether the whole of `string` matches the ICU regular expression `pattern`.
    ///
    /// `shouldStop`, when given, is asked every few thousand steps of the regular-expression
    /// engine (`NSRegularExpression`'s `reportProgress`); when it answers true the match is
    /// abandoned and ``PersistenceError/Code/queryTimeout`` thrown. That is how a store's query
    /// time limit reaches a backtracking pattern that runs long on one string, where SQLite's
    /// own progress handler, called between its instructions, cannot.
    static func matches(_ string: String, regex pattern: String, options: ComparisonPredicate.Options,
                        shouldStop: (() -> Bool)? = nil) throws -> Bool {
        var regexOptions: NSRegularExpression.Options = [.dotMatchesLineSeparators]
        if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
        let subject = options.contains(.diacriticInsensitive) ? StoreValueComparison.fold(string, [.diacriticInsensitive]) : string
        let source = "^(?:" + (options.contains(.diacriticInsensitive)
            ? StoreValueComparison.fold(pattern, [.diacriticInsensitive]) : pattern) + ")$"
        let expression = try regularExpression(source, options: regexOptions, pattern: pattern)
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        guard let shouldStop else { return expression.firstMatch(in: subject, options: [.anchored], range: range) != nil }
        var found = false
        var stopped = false
        expression.enumerateMatches(in: subject, options: [.anchored, .reportProgress], range: range) { result, _, stop in
            if result != nil {
                found = true
                stop.pointee = true
            } else if shouldStop() {
                stopped = true
                stop.pointee = true
            }
        }
        if stopped {
            throw PersistenceError(.queryTimeout, "MATCHES \(pattern) was stopped: it ran past the query time limit")
        }
        return found
    }

    /// Compiled regular expressions by source and options, so a fetch compiles each pattern once.
    /// Bounded: cleared when it reaches 256 entries.
    private static let regexCache = Locked<[String: NSRegularExpression]>([:])

    private static func regularExpression(_ source: String, options: NSRegularExpression.Options,
                                          pattern: String) throws -> NSRegularExpression {
        let key = "\(options.rawValue):\(source)"
        if let cached = regexCache.withLock({ $0[key] }) { return cached }
        let expression: NSRegularExpression
        do {
            expression = try NSRegularExpression(pattern: source, options: options)
        } catch {
            throw PersistenceError.predicate("the regular expression \(pattern) does not compile", key: pattern)
        }
        regexCache.withLock { cache in
            if cache.count >= 256 { cache.removeAll() }
            cache[key] = expression
        }
        return expression
    }

    /// Whether the whole of `string` matches the `LIKE` pattern: `*` any run, `?` one
    /// character, `\` makes the next character literal.
    ///
    /// The classic wildcard matcher that backtracks only to the last `*`: O(n·m) at worst,
    /// where a regular expression such as `.*a.*a.*a…b` backtracks exponentially (a client's
    /// `LIKE "*a*a*a*a*a*a*a*b"` over a long string would hold the store for minutes, beyond
    /// the reach of the query time limit, which is checked between SQLite instructions).
    static func likeMatches(_ string: String, pattern: String) -> Bool {
        enum Token { case anyRun, one, literal(Character) }
        var tokens: [Token] = []
        var escaped = false
        for character in pattern {
            if escaped {
                tokens.append(.literal(character))
                escaped = false
                continue
            }
            switch character {
            case "\\": escaped = true
            case "*": if case .anyRun? = tokens.last {} else { tokens.append(.anyRun) }
            case "?": tokens.append(.one)
            default: tokens.append(.literal(character))
            }
        }
        if escaped { tokens.append(.literal("\\")) }
        let characters = Array(string)
        var index = 0, position = 0
        var star: Int?, resume = 0
        while index < characters.count {
            if position < tokens.count {
                switch tokens[position] {
                case .anyRun:
                    star = position
                    resume = index
                    position += 1
                    continue
                case .one:
                    index += 1
                    position += 1
                    continue
                case .literal(let literal) where literal == characters[index]:
                    index += 1
                    position += 1
                    continue
                default:
                    break
                }
            }
            guard let star else { return false }
            position = star + 1
            resume += 1
            index = resume
        }
        while position < tokens.count, case .anyRun = tokens[position] { position += 1 }
        return position == tokens.count
    }

    /// The ICU regular expression for a `LIKE` pattern: `*` any run, `?` one character,
    /// `\*` and `\?` themselves.
    static func likeRegex(_ pattern: String) -> String {
        var regex = ""
        var escaped = false
        for character in pattern {
            if escaped {
                regex += NSRegularExpression.escapedPattern(for: String(character))
                escaped = false
                continue
            }
            switch character {
            case "\\": escaped = true
            case "*": regex += ".*"
            case "?": regex += "."
            default: regex += NSRegularExpression.escapedPattern(for: String(character))
            }
        }
        if escaped { regex += "\\\\" }
        return regex
    }
}
