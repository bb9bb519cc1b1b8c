import Foundation

/// Writes ``FetchPredicate`` and ``FetchExpression`` trees in the canonical format syntax that
/// ``PredicateParser`` reads back to the same tree.
///
/// The form follows Foundation's `predicateFormat` where it can be told apart
/// (`name BEGINSWITH[cd] "x"`, `ANY beers.abv > 8`, `(a == 1 AND b == 2) AND c == 3`), with the
/// differences documented in `docs/predicates.md`: Booleans print as `TRUE`/`FALSE`, doubles
/// always with a decimal point or exponent, and constants without a literal form as `CAST`.
struct PredicatePrinter {
    /// Sequential unbound arguments printed so far: an unbound argument whose position is not
    /// the next sequential one prints as `%n$@`, so parsing gives back the same position.
    private var sequential = 0

    init() {}

    // MARK: - Predicates

    mutating func predicate(_ predicate: FetchPredicate) -> String {
        switch predicate {
        case .alwaysTrue: return "TRUEPREDICATE"
        case .alwaysFalse: return "FALSEPREDICATE"
        case .comparison(let comparison): return self.comparison(comparison)
        case .compound(let compound): return self.compound(compound)
        }
    }

    private mutating func comparison(_ comparison: ComparisonPredicate) -> String {
        var text = ""
        switch comparison.modifier {
        case .direct: break
        case .any: text += "ANY "
        case .all: text += "ALL "
        }
        text += expression(comparison.left)
        text += " " + Self.spelling(of: comparison.operator) + Self.spelling(of: comparison.options) + " "
        text += expression(comparison.right)
        return text
    }

    /// Foundation's spelling of an operator.
    static func spelling(of op: ComparisonPredicate.Operator) -> String {
        switch op {
        case .lessThan: return "<"
        case .lessThanOrEqualTo: return "<="
        case .greaterThan: return ">"
        case .greaterThanOrEqualTo: return ">="
        case .equalTo: return "=="
        case .notEqualTo: return "!="
        case .matches: return "MATCHES"
        case .like: return "LIKE"
        case .beginsWith: return "BEGINSWITH"
        case .endsWith: return "ENDSWITH"
        case .in: return "IN"
        case .contains: return "CONTAINS"
        case .between: return "BETWEEN"
        }
    }

    /// `[cd]` and friends, or `""`.
    static func spelling(of options: ComparisonPredicate.Options) -> String {
        var letters = ""
        if options.contains(.caseInsensitive) { letters += "c" }
        if options.contains(.diacriticInsensitive) { letters += "d" }
        if options.contains(.normalized) { letters += "n" }
        if options.contains(.localeSensitive) { letters += "l" }
        return letters.isEmpty ? "" : "[" + letters + "]"
    }

    private mutating func compound(_ compound: CompoundPredicate) -> String {
        switch compound.type {
        case .not:
            let inner = compound.subpredicates.count == 1 ? compound.subpredicates[0] : .compound(CompoundPredicate(type: .and, subpredicates: compound.subpredicates))
            if case .compound(let child) = inner, child.type != .not, child.subpredicates.count > 1 {
                return "NOT (" + predicate(inner) + ")"
            }
            return "NOT " + predicate(inner)
        case .and, .or:
            if compound.subpredicates.isEmpty { return compound.type == .and ? "TRUEPREDICATE" : "FALSEPREDICATE" }
            if compound.subpredicates.count == 1 { return predicate(compound.subpredicates[0]) }
            var parts: [String] = []
            for sub in compound.subpredicates {
                if case .compound = sub { parts.append("(" + predicate(sub) + ")") } else { parts.append(predicate(sub)) }
            }
            return parts.joined(separator: compound.type == .and ? " AND " : " OR ")
        }
    }

    // MARK: - Expressions

    /// Binding strength of printed expressions: an operand printed where a stronger one is
    /// needed gets parentheses.
    enum Level: Int, Comparable {
        case bitOr = 1, bitXor, bitAnd, additive, multiplicative, unary, power, postfix
        static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
    }

    static let infix: [String: (symbol: String, level: Level)] = [
        "add:to:": ("+", .additive), "from:subtract:": ("-", .additive),
        "multiply:by:": ("*", .multiplicative), "divide:by:": ("/", .multiplicative),
        "bitwiseAnd:with:": ("&", .bitAnd), "bitwiseOr:with:": ("|", .bitOr), "bitwiseXor:with:": ("^", .bitXor),
    ]

    mutating func expression(_ expression: FetchExpression) -> String {
        self.expression(expression, atLeast: .bitOr)
    }

    private mutating func expression(_ expression: FetchExpression, atLeast needed: Level) -> String {
        let (text, level) = printed(expression)
        return level < needed ? "(" + text + ")" : text
    }

    private mutating func printed(_ expression: FetchExpression) -> (String, Level) {
        switch expression {
        case .constant(let value):
            return (Self.constant(value), Self.isNegative(value) ? .unary : .postfix)
        case .evaluatedObject:
            return ("SELF", .postfix)
        case .keyPath(let path):
            return (Self.keyPath(path), .postfix)
        case .member(let base, let path):
            var text = self.expression(base, atLeast: .postfix)
            // `1.#SELF` would read as the number `1.` (found by the FuzzPredicateParser fuzz target).
            if case .constant(let value) = base, case .integer = value { text = "(" + text + ")" }
            if case .constant(let value) = base, case .double = value { text = "(" + text + ")" }
            if case .constant(let value) = base, case .decimal = value { text = "(" + text + ")" }
            return (text + "." + Self.keyPath(path, escapeFirst: false), .postfix)
        case .variable(let name):
            return ("$" + name, .postfix)
        case .aggregate(let elements):
            var parts: [String] = []
            for element in elements { parts.append(self.expression(element)) }
            return ("{" + parts.joined(separator: ", ") + "}", .postfix)
        case .subquery(let collection, let variable, let predicate):
            let c = self.expression(collection)
            let p = self.predicate(predicate)
            return ("SUBQUERY(\(c), $\(variable), \(p))", .postfix)
        case .conditional(let condition, let then, let otherwise):
            let p = predicate(condition)
            let a = self.expression(then)
            let b = self.expression(otherwise)
            return ("TERNARY(\(p), \(a), \(b))", .postfix)
        case .unboundArgument(let specifier, let position):
            if position == sequential {
                sequential += 1
                return (specifier, .postfix)
            }
            return ("%\(position + 1)$" + specifier.dropFirst(), .postfix)
        case .function(let name, let arguments):
            return function(name, arguments)
        }
    }

    private mutating func function(_ name: String, _ arguments: [FetchExpression]) -> (String, Level) {
        if arguments.count == 2, let (symbol, level) = Self.infix[name] {
            let left = expression(arguments[0], atLeast: level)
            let right = expression(arguments[1], atLeast: Level(rawValue: level.rawValue + 1) ?? .postfix)
            return ("\(left) \(symbol) \(right)", level)
        }
        switch (name, arguments.count) {
        case ("raise:toPower:", 2):
            let base = expression(arguments[0], atLeast: .postfix)
            return ("\(base) ** \(expression(arguments[1], atLeast: .unary))", .power)
        case ("objectFrom:withIndex:", 2):
            let base = expression(arguments[0], atLeast: .postfix)
            if case .function(let symbol, let none) = arguments[1], none.isEmpty, PredicateParser.indexSymbols.contains(symbol) {
                return ("\(base)[\(symbol)]", .postfix)
            }
            return ("\(base)[\(expression(arguments[1]))]", .postfix)
        case ("valueForKeyPath:", 2):
            let base = expression(arguments[0], atLeast: .postfix)
            if case .unboundArgument(specifier: "%K", _) = arguments[1] {
                return ("\(base).\(expression(arguments[1]))", .postfix)
            }
        case ("castObject:toType:", 2):
            return ("CAST(\(expression(arguments[0])), \(expression(arguments[1])))", .postfix)
        default:
            break
        }
        var parts: [String] = []
        for argument in arguments { parts.append(expression(argument)) }
        let callee: String
        if name == "FUNCTION" || name.contains(":") && (name.firstIndex(of: ":") != name.index(before: name.endIndex) || arguments.isEmpty) {
            callee = name
        } else if name.hasSuffix(":"), !Self.isKeyword(String(name.dropLast())) {
            callee = String(name.dropLast())
        } else {
            callee = name
        }
        return ("\(callee)(\(parts.joined(separator: ", ")))", .postfix)
    }

    /// Whether `name` followed by `(` would read as a keyword rather than a function call
    /// (`FUNCTION(5)`, `CAST(x)`): the one-argument function `FUNCTION:` is then printed with its
    /// colon (found by the FuzzPredicateParser fuzz target: `FUNCTION:(5)` printed as
    /// `FUNCTION(5)`, which does not parse).
    static func isKeyword(_ name: String) -> Bool {
        let upper = name.uppercased()
        return PredicateParser.reservedWords.contains(upper) || upper == "TERNARY" || upper == "FUNCTION"
    }

    // MARK: - Constants and key paths

    static func isNegative(_ value: StoreValue) -> Bool {
        switch value {
        case .integer(let v): return v < 0
        case .double(let v): return v.sign == .minus && !v.isNaN
        default: return false
        }
    }

    /// A key path, each reserved word escaped with `#`.
    static func keyPath(_ path: String, escapeFirst: Bool = true) -> String {
        path.split(separator: ".", omittingEmptySubsequences: false).map { component in
            let upper = component.uppercased()
            return PredicateParser.reservedWords.contains(upper) ? "#" + component : String(component)
        }.joined(separator: ".")
    }

    /// A constant in format syntax.
    static func constant(_ value: StoreValue) -> String {
        switch value {
        case .null: return "nil"
        case .integer(let v): return String(v)
        case .double(let v): return double(v)
        case .bool(let v): return v ? "TRUE" : "FALSE"
        case .string(let v): return quoted(v)
        case .decimal(let v): return "CAST(\(quoted(v.description)), \"NSDecimalNumber\")"
        case .date(let v): return "CAST(\(double(v.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let v): return "CAST(\(quoted(v.base64EncodedString())), \"NSData\")"
        case .uuid(let v): return "CAST(\(quoted(v.uuidString)), \"NSUUID\")"
        case .url(let v): return "CAST(\(quoted(v.absoluteString)), \"NSURL\")"
        case .object(let id): return "CAST(\(quoted(id.uriRepresentation().absoluteString)), \"NSManagedObjectID\")"
        case .array(let values): return "{" + values.map(constant).joined(separator: ", ") + "}"
        }
    }

    /// A double that parses back as a double: always with a `.` or an exponent.
    static func double(_ value: Double) -> String {
        if value.isNaN { return "CAST(\"nan\", \"NSNumber\")" }
        if value.isInfinite { return value < 0 ? "-1e999" : "1e999" }
        let text = "\(value)"
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }

    /// A double-quoted string with `\"`, `\\`, `\n`, `\t`, `\r` and `\uXXXX` escapes, and `\u{…}`
    /// for a scalar that would join an ASCII neighbour (``joinsASCIINeighbour(_:)``); a run of
    /// two or more `%` is doubled (the parser reads `%%` as one `%`).
    static func quoted(_ string: String) -> String {
        var result = "\""
        var percents = 0
        func flush() {
            if percents > 0 { result += String(repeating: "%", count: percents == 1 ? 1 : percents * 2) }
            percents = 0
        }
        for scalar in string.unicodeScalars {
            if scalar == "%" { percents += 1; continue }
            flush()
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16, uppercase: true)
                } else if !scalar.isASCII && joinsASCIINeighbour(scalar) {
                    result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        flush()
        return result + "\""
    }

    /// Whether `scalar` forms one character with an ASCII character next to it: a combining
    /// mark, U+200D or an emoji modifier after it, a prepended concatenation mark (U+0600…) before
    /// it. Written raw next to the quote or an escape, it would hide that character from the
    /// lexer, which reads characters (found by the FuzzPredicateParser fuzz target:
    /// `"\u0F7A"` printed raw did not parse back), so ``quoted(_:)`` escapes it.
    static func joinsASCIINeighbour(_ scalar: Unicode.Scalar) -> Bool {
        var after = "a"
        after.unicodeScalars.append(scalar)
        var before = ""
        before.unicodeScalars.append(scalar)
        before += "a"
        return after.count == 1 || before.count == 1
    }

    /// A value for an error message.
    static func describe(_ value: StoreValue) -> String {
        switch value {
        case .null: return "nil"
        case .object(let id): return "the object \(id.uriRepresentation().absoluteString)"
        default: return constant(value)
        }
    }
}
