import Foundation

/// SQL for the expressions of dictionary fetches and batch updates — aggregates, arithmetic,
/// key paths, constants — and for `HAVING` predicates over them.
///
/// Key paths are resolved by a ``SQLitePredicateCompiler`` (which adds the `LEFT JOIN`s of
/// to-one hops); constants are bound parameters, appended to `arguments` in the order of their `?`.
struct SQLiteExpressionSQL {
    var compiler: SQLitePredicateCompiler
    /// The arguments bound by the SQL produced so far, in order.
    var arguments: [StoreValue] = []

    /// What an expression's SQL yields, for decoding.
    enum Kind {
        case attribute(AttributeType)
        case toOne(RelationshipDescription)
        case primaryKey(EntityDescription)
        case computed
    }

    static func unsupported(_ what: String) -> PersistenceError {
        PersistenceError(.persistentStoreOperation, "the SQLite store does not support \(what) in dictionary fetches or batch updates")
    }

    /// The SQL of `expression`.
    mutating func sql(_ expression: FetchExpression) throws -> (sql: String, kind: Kind) {
        switch expression {
        case .constant(let value):
            if case .array = value { throw Self.unsupported("collections") }
            arguments.append(value)
            return ("?", .computed)
        case .evaluatedObject:
            return ("\"t0\".\"Z_PK\"", .primaryKey(compiler.entity))
        case .keyPath(let path):
            switch try compiler.resolve(path) {
            case .attribute(let sql, let type): return (sql, .attribute(type))
            case .toOne(let sql, let relationship): return (sql, .toOne(relationship))
            case .primaryKey(let sql, let entity): return (sql, .primaryKey(entity))
            case .constant: throw Self.unsupported("the key path \(path)")
            }
        case .function(let name, let arguments):
            if ExpressionDescription.aggregateFunctions.contains(name) {
                guard arguments.count == 1 else { throw Self.unsupported("\(name) with \(arguments.count) arguments") }
                let argument = arguments[0]
                if name == "count:", argument == .evaluatedObject || argument == .keyPath("self") || argument == .keyPath("SELF") {
                    return ("COUNT(*)", .computed)
                }
                let inner = try sql(argument).sql
                let function = ["count:": "COUNT", "sum:": "SUM", "average:": "AVG", "min:": "MIN", "max:": "MAX"][name] ?? "COUNT"
                return ("\(function)(\(inner))", .computed)
            }
            let operators = ["add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/"]
            guard let op = operators[name], arguments.count == 2 else { throw Self.unsupported("the function \(name)") }
            let left = try sql(arguments[0]).sql
            let right = try sql(arguments[1]).sql
            // NSExpression divides as floating point even for integers; SQL would truncate.
            return (op == "/" ? "(CAST(\(left) AS REAL) / \(right))" : "(\(left) \(op) \(right))", .computed)
        case .member, .variable, .aggregate, .subquery, .conditional, .unboundArgument:
            throw Self.unsupported("the expression \(expression)")
        }
    }

    /// The SQL condition of a `HAVING` predicate whose key paths were already replaced by the
    /// expressions they name.
    mutating func condition(_ predicate: FetchPredicate) throws -> String {
        switch predicate {
        case .alwaysTrue: return "1"
        case .alwaysFalse: return "0"
        case .compound(let compound):
            let parts = try compound.subpredicates.map { try condition($0) }
            switch compound.type {
            case .and: return parts.isEmpty ? "1" : "(" + parts.joined(separator: " AND ") + ")"
            case .or: return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
            case .not:
                guard parts.count == 1 else { throw Self.unsupported("NOT with \(parts.count) subpredicates") }
                return "NOT (\(parts[0]))"
            }
        case .comparison(let comparison):
            guard comparison.modifier == .direct, comparison.options.isEmpty else {
                throw Self.unsupported("ANY, ALL or [cd] in HAVING")
            }
            let left = try sql(comparison.left).sql
            if case .constant(let value) = comparison.right {
                switch (comparison.operator, value) {
                case (.equalTo, .null): return "\(left) IS NULL"
                case (.notEqualTo, .null): return "\(left) IS NOT NULL"
                case (.in, .array(let values)):
                    arguments += values
                    return "\(left) IN (\(values.map { _ in "?" }.joined(separator: ", ")))"
                case (.between, .array(let bounds)) where bounds.count == 2:
                    arguments += bounds
                    return "\(left) BETWEEN ? AND ?"
                default: break
                }
            }
            let right = try sql(comparison.right).sql
            switch comparison.operator {
            case .equalTo: return "\(left) = \(right)"
            case .notEqualTo: return "\(left) IS NOT \(right)"
            case .lessThan: return "\(left) < \(right)"
            case .lessThanOrEqualTo: return "\(left) <= \(right)"
            case .greaterThan: return "\(left) > \(right)"
            case .greaterThanOrEqualTo: return "\(left) >= \(right)"
            default: throw Self.unsupported("\(comparison.operator.rawValue) in HAVING")
            }
        }
    }
}
