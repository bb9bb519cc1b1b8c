import Foundation
import PersistKit

/// Predicates in (roughly) Apple's format syntax, for failure messages: unlike the format
/// printer, it writes object constants (`Person#3`) and escapes non-ASCII characters.
public enum PredicateDescription {
    /// A predicate in (roughly) Apple's format syntax, for failure messages.
    public static func describe(_ predicate: FetchPredicate) -> String {
        switch predicate {
        case .alwaysTrue: return "TRUEPREDICATE"
        case .alwaysFalse: return "FALSEPREDICATE"
        case .compound(let c):
            if c.type == .not { return "NOT (\(c.subpredicates.map(describe).joined()))" }
            return "(" + c.subpredicates.map(describe).joined(separator: c.type == .and ? " AND " : " OR ") + ")"
        case .comparison(let c):
            let modifier = c.modifier == .direct ? "" : (c.modifier == .any ? "ANY " : "ALL ")
            var options = ""
            if c.options.contains(.caseInsensitive) { options += "c" }
            if c.options.contains(.diacriticInsensitive) { options += "d" }
            return "\(modifier)\(describe(c.left)) \(c.operator.rawValue)\(options.isEmpty ? "" : "[\(options)]") \(describe(c.right))"
        }
    }

    /// An expression, as a predicate's description writes it.
    public static func describe(_ expression: FetchExpression) -> String {
        switch expression {
        case .constant(let value): return describe(value)
        case .evaluatedObject: return "SELF"
        case .keyPath(let path): return path
        case .member(let base, let key): return "\(describe(base)).\(key)"
        case .variable(let name): return "$" + name
        case .function(let name, let arguments): return "FUNCTION(\(name), \(arguments.map(describe).joined(separator: ", ")))"
        case .aggregate(let elements): return "{" + elements.map(describe).joined(separator: ", ") + "}"
        case .subquery(let collection, let variable, let predicate): return "SUBQUERY(\(describe(collection)), $\(variable), \(describe(predicate)))"
        case .conditional(let p, let a, let b): return "TERNARY(\(describe(p)), \(describe(a)), \(describe(b)))"
        case .unboundArgument(let specifier, _): return specifier
        }
    }

    /// A constant, as a predicate's description writes it.
    public static func describe(_ value: StoreValue) -> String {
        switch value {
        case .null: return "nil"
        case .string(let s): return "\"" + s.unicodeScalars.map { $0.isASCII ? String($0) : String(format: "\\u{%X}", $0.value) }.joined() + "\""
        case .object(let id): return "\(id.entity.name)#\(id.primaryKey)"
        case .date(let d): return "date(\(d.timeIntervalSinceReferenceDate))"
        case .array(let values): return "{" + values.map(describe).joined(separator: ", ") + "}"
        default: return "\(value.anyValue ?? "?")"
        }
    }
}
