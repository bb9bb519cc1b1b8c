import Foundation

/// A stable JSON form of predicate trees, for tools (`persistctl predicate`) and logs.
///
/// Objects have their keys in a fixed order and no whitespace, so the same tree always gives
/// the same bytes. Predicates: `{"type":"true"}`, `{"type":"false"}`,
/// `{"type":"comparison","operator":"==","modifier":"any","options":"cd","left":…,"right":…}`
/// (`modifier` only when not direct, `options` only when not empty),
/// `{"type":"and"|"or","subpredicates":[…]}`, `{"type":"not","subpredicate":…}`.
/// Expressions: `constant`, `self`, `keyPath`, `member`, `variable`, `function`, `aggregate`,
/// `subquery`, `ternary`, `unboundArgument`; see `docs/predicates.md`.
public enum PredicateTreeJSON {
    /// The JSON of a predicate.
    public static func json(_ predicate: FetchPredicate) -> String {
        switch predicate {
        case .alwaysTrue: return object([("type", string("true"))])
        case .alwaysFalse: return object([("type", string("false"))])
        case .comparison(let c):
            var fields = [("type", string("comparison")), ("operator", string(PredicatePrinter.spelling(of: c.operator)))]
            if c.modifier != .direct { fields.append(("modifier", string(c.modifier.rawValue))) }
            let options = PredicatePrinter.spelling(of: c.options)
            if !options.isEmpty { fields.append(("options", string(String(options.dropFirst().dropLast())))) }
            fields.append(("left", json(c.left)))
            fields.append(("right", json(c.right)))
            return object(fields)
        case .compound(let c):
            if c.type == .not, c.subpredicates.count == 1 {
                return object([("type", string("not")), ("subpredicate", json(c.subpredicates[0]))])
            }
            return object([("type", string(c.type.rawValue)), ("subpredicates", array(c.subpredicates.map { json($0) }))])
        }
    }

    /// The JSON of an expression.
    public static func json(_ expression: FetchExpression) -> String {
        switch expression {
        case .constant(let value):
            return object([("type", string("constant"))] + constant(value))
        case .evaluatedObject:
            return object([("type", string("self"))])
        case .keyPath(let path):
            return object([("type", string("keyPath")), ("keyPath", string(path))])
        case .member(let base, let path):
            return object([("type", string("member")), ("base", json(base)), ("keyPath", string(path))])
        case .variable(let name):
            return object([("type", string("variable")), ("name", string(name))])
        case .function(let name, let arguments):
            return object([("type", string("function")), ("name", string(name)), ("arguments", array(arguments.map { json($0) }))])
        case .aggregate(let elements):
            return object([("type", string("aggregate")), ("elements", array(elements.map { json($0) }))])
        case .subquery(let collection, let variable, let predicate):
            return object([("type", string("subquery")), ("collection", json(collection)), ("variable", string(variable)),
                           ("predicate", json(predicate))])
        case .conditional(let condition, let then, let otherwise):
            return object([("type", string("ternary")), ("predicate", json(condition)), ("then", json(then)), ("else", json(otherwise))])
        case .unboundArgument(let specifier, let position):
            return object([("type", string("unboundArgument")), ("specifier", string(specifier)), ("position", String(position))])
        }
    }

    /// `"valueType"` and `"value"` of a constant.
    static func constant(_ value: StoreValue) -> [(String, String)] {
        switch value {
        case .null: return [("valueType", string("null")), ("value", "null")]
        case .integer(let v): return [("valueType", string("integer")), ("value", String(v))]
        case .double(let v):
            // JSON has no NaN or infinity: those are strings.
            let text = v.isFinite ? PredicatePrinter.double(v) : string("\(v)")
            return [("valueType", string("double")), ("value", text)]
        case .decimal(let v): return [("valueType", string("decimal")), ("value", string(v.description))]
        case .string(let v): return [("valueType", string("string")), ("value", string(v))]
        case .bool(let v): return [("valueType", string("bool")), ("value", v ? "true" : "false")]
        case .date(let v): return [("valueType", string("date")), ("value", PredicatePrinter.double(v.timeIntervalSinceReferenceDate))]
        case .data(let v): return [("valueType", string("data")), ("value", string(v.base64EncodedString()))]
        case .uuid(let v): return [("valueType", string("uuid")), ("value", string(v.uuidString))]
        case .url(let v): return [("valueType", string("url")), ("value", string(v.absoluteString))]
        case .object(let id): return [("valueType", string("object")), ("value", string(id.uriRepresentation().absoluteString))]
        case .array(let values):
            return [("valueType", string("array")), ("value", array(values.map { object(constant($0)) }))]
        }
    }

    static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    static func array(_ elements: [String]) -> String { "[" + elements.joined(separator: ",") + "]" }

    /// A JSON string literal.
    static func string(_ text: String) -> String { JSONStringLiteral.literal(text) }
}
