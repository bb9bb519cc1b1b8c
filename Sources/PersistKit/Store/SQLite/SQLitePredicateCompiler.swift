import Foundation

/// Compiles a ``FetchPredicate`` and sort descriptors into SQL over Core Data's layout:
/// a `WHERE` clause, `LEFT JOIN`s for key paths through to-one relationships, an `ORDER BY`,
/// and the arguments to bind. Constants are always bound parameters.
///
/// It is a visitor over the predicate tree: one method per node kind
/// (``compile(_:)-predicate``, `comparison`, `compound`, `operand`). Constructs not supported
/// yet (to-many key paths, `ANY`/`ALL`, subqueries, functions, `MATCHES`, `[d]`) throw a
/// ``PersistenceError`` naming the construct; the next issue adds them here.
///
/// The fetched table is aliased `t0`; each to-one hop gets the next alias (`t1`, `t2`, …),
/// shared by key paths with the same prefix.
struct SQLitePredicateCompiler {
    /// A compiled operand: SQL text and what kind of value it yields.
    enum Operand {
        /// An attribute column.
        case attribute(sql: String, type: AttributeType)
        /// A to-one relationship's foreign key column.
        case toOne(sql: String, relationship: RelationshipDescription)
        /// The row's own primary key (`SELF`).
        case primaryKey(sql: String, entity: EntityDescription)
        /// A constant, not yet bound (bound once the other side is known).
        case constant(StoreValue)

        var sql: String? {
            switch self {
            case .attribute(let sql, _), .toOne(let sql, _), .primaryKey(let sql, _): return sql
            case .constant: return nil
            }
        }
    }

    let schema: SQLiteSchema
    /// The entity fetched (aliased `t0`).
    let entity: EntityDescription
    /// The `LEFT JOIN` clauses needed, in order.
    private(set) var joins: [String] = []
    /// The arguments bound by the compiled SQL, in order of their `?`.
    private(set) var arguments: [StoreValue] = []
    private var aliasByPath: [String: (alias: String, entity: EntityDescription)] = [:]

    init(schema: SQLiteSchema, entity: EntityDescription) {
        self.schema = schema
        self.entity = entity
    }

    /// An error for a construct the compiler does not handle yet.
    static func unsupported(_ construct: String) -> PersistenceError {
        PersistenceError(.persistentStoreOperation, "the SQLite store does not support \(construct) in fetch requests yet")
    }

    // MARK: - Predicates

    /// The SQL condition for `predicate`.
    mutating func compile(_ predicate: FetchPredicate) throws -> String {
        switch predicate {
        case .alwaysTrue: return "1"
        case .alwaysFalse: return "0"
        case .compound(let compound): return try compile(compound)
        case .comparison(let comparison): return try compile(comparison)
        }
    }

    private mutating func compile(_ compound: CompoundPredicate) throws -> String {
        let parts = try compound.subpredicates.map { try compile($0) }
        switch compound.type {
        case .and: return parts.isEmpty ? "1" : "(" + parts.joined(separator: " AND ") + ")"
        case .or: return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
        case .not:
            guard parts.count == 1 else { throw Self.unsupported("NOT with \(parts.count) subpredicates") }
            return "NOT (\(parts[0]))"
        }
    }

    private mutating func compile(_ comparison: ComparisonPredicate) throws -> String {
        guard comparison.modifier == .direct else {
            throw Self.unsupported("\(comparison.modifier == .any ? "ANY" : "ALL") comparisons (to-many relationships)")
        }
        if comparison.options.contains(.diacriticInsensitive) {
            throw Self.unsupported("diacritic-insensitive ([d]) comparisons")
        }
        let caseInsensitive = comparison.options.contains(.caseInsensitive)
        var left = try operand(comparison.left)
        var right = try operand(comparison.right)
        var op = comparison.operator
        if case .constant = left {
            guard case .constant = right else {
                // Put the key path on the left: `5 < abv` is `abv > 5`.
                guard let flipped = Self.flipped(op) else {
                    throw Self.unsupported("\(op.rawValue) with a constant on the left")
                }
                swap(&left, &right)
                op = flipped
                return try compile(left: left, op, right: right, caseInsensitive: caseInsensitive)
            }
            throw Self.unsupported("comparisons of two constants")
        }
        return try compile(left: left, op, right: right, caseInsensitive: caseInsensitive)
    }

    private static func flipped(_ op: ComparisonPredicate.Operator) -> ComparisonPredicate.Operator? {
        switch op {
        case .equalTo, .notEqualTo: return op
        case .lessThan: return .greaterThan
        case .lessThanOrEqualTo: return .greaterThanOrEqualTo
        case .greaterThan: return .lessThan
        case .greaterThanOrEqualTo: return .lessThanOrEqualTo
        default: return nil
        }
    }

    private mutating func compile(left: Operand, _ op: ComparisonPredicate.Operator, right: Operand,
                                  caseInsensitive: Bool) throws -> String {
        // Key path against key path.
        guard case .constant(let value) = right else {
            guard let lhs = left.sql, let rhs = right.sql else { throw Self.unsupported("this comparison") }
            let collate = caseInsensitive ? " COLLATE NOCASE" : ""
            switch op {
            case .equalTo: return "\(lhs) = \(rhs)\(collate)"
            case .notEqualTo: return "\(lhs) IS NOT \(rhs)\(collate)"
            case .lessThan: return "\(lhs) < \(rhs)\(collate)"
            case .lessThanOrEqualTo: return "\(lhs) <= \(rhs)\(collate)"
            case .greaterThan: return "\(lhs) > \(rhs)\(collate)"
            case .greaterThanOrEqualTo: return "\(lhs) >= \(rhs)\(collate)"
            default: throw Self.unsupported("\(op.rawValue) between two key paths")
            }
        }
        guard let column = left.sql else { throw Self.unsupported("this comparison") }

        switch left {
        case .toOne(_, let relationship):
            return try compileObjectComparison(column, op, value, destination: relationship.destinationEntity)
        case .primaryKey(_, let entity):
            return try compileObjectComparison(column, op, value, destination: entity)
        default: break
        }

        let collate = caseInsensitive ? " COLLATE NOCASE" : ""
        switch op {
        case .equalTo:
            if value.isNull { return "\(column) IS NULL" }
            return "\(column) = \(bind(value))\(collate)"
        case .notEqualTo:
            // NSPredicate's `nil != 5` is true, so NULL columns match: IS NOT, not <>.
            if value.isNull { return "\(column) IS NOT NULL" }
            return "\(column) IS NOT \(bind(value))\(collate)"
        case .lessThan: return "\(column) < \(bind(value))\(collate)"
        case .lessThanOrEqualTo: return "\(column) <= \(bind(value))\(collate)"
        case .greaterThan: return "\(column) > \(bind(value))\(collate)"
        case .greaterThanOrEqualTo: return "\(column) >= \(bind(value))\(collate)"
        case .in:
            guard case .array(let values) = value else { throw Self.unsupported("IN with a right side that is not a collection") }
            return inList(column, values, collate: collate)
        case .between:
            guard case .array(let bounds) = value, bounds.count == 2 else {
                throw PersistenceError(.persistentStoreOperation, "BETWEEN needs a collection of two bounds")
            }
            return "\(column) BETWEEN \(bind(bounds[0])) AND \(bind(bounds[1]))\(collate)"
        case .beginsWith, .endsWith, .contains, .like:
            guard case .string(let text) = value else {
                if value.isNull { return "0" }
                throw Self.unsupported("\(op.rawValue) with a constant that is not a string")
            }
            return stringMatch(column, op, text, caseInsensitive: caseInsensitive)
        case .matches:
            throw Self.unsupported("MATCHES (regular expressions)")
        }
    }

    private mutating func inList(_ column: String, _ values: [StoreValue], collate: String) -> String {
        let nonNull = values.filter { !$0.isNull }
        var parts: [String] = []
        if !nonNull.isEmpty {
            parts.append("\(column)\(collate) IN (\(nonNull.map { bind($0) }.joined(separator: ", ")))")
        }
        if nonNull.count != values.count { parts.append("\(column) IS NULL") }
        if parts.isEmpty { return "0" }
        return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " OR ") + ")"
    }

    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`. Case-sensitive matching uses `GLOB`
    /// (SQLite's `LIKE` ignores ASCII case); `[c]` uses `LIKE … ESCAPE '\'`, which folds
    /// ASCII letters only until a Unicode folding function is registered.
    private mutating func stringMatch(_ column: String, _ op: ComparisonPredicate.Operator, _ text: String,
                                      caseInsensitive: Bool) -> String {
        func escape(_ character: Character) -> String {
            caseInsensitive ? Self.likeEscaped(character) : Self.globEscaped(character)
        }
        let any = caseInsensitive ? "%" : "*"
        let one = caseInsensitive ? "_" : "?"
        var pattern = ""
        switch op {
        case .like:
            // NSPredicate LIKE: `*` any run, `?` one character, `\` escapes the next character.
            var escaping = false
            for character in text {
                if escaping { pattern += escape(character); escaping = false; continue }
                switch character {
                case "\\": escaping = true
                case "*": pattern += any
                case "?": pattern += one
                default: pattern += escape(character)
                }
            }
            if escaping { pattern += escape("\\") }
        default:
            let literal = text.map { escape($0) }.joined()
            switch op {
            case .beginsWith: pattern = literal + any
            case .endsWith: pattern = any + literal
            default: pattern = any + literal + any
            }
        }
        let placeholder = bind(.string(pattern))
        return caseInsensitive ? "\(column) LIKE \(placeholder) ESCAPE '\\'" : "\(column) GLOB \(placeholder)"
    }

    static func globEscaped(_ character: Character) -> String {
        switch character {
        case "*": return "[*]"
        case "?": return "[?]"
        case "[": return "[[]"
        default: return String(character)
        }
    }

    static func likeEscaped(_ character: Character) -> String {
        switch character {
        case "%", "_", "\\": return "\\" + String(character)
        default: return String(character)
        }
    }

    /// `relationship == object`, `relationship IN {objects}`, `relationship == nil`.
    private mutating func compileObjectComparison(_ column: String, _ op: ComparisonPredicate.Operator, _ value: StoreValue,
                                                  destination: EntityDescription?) throws -> String {
        func key(_ value: StoreValue) throws -> StoreValue? {
            switch value {
            case .null: return .null
            case .object(let id):
                // An object of another table can never be the destination.
                if let destination, id.entity.rootEntity !== destination.rootEntity { return nil }
                return .integer(id.primaryKey)
            case .integer: return value
            default:
                throw PersistenceError(.persistentStoreOperation, "a relationship can only be compared with an object or nil, not \(value)")
            }
        }
        switch op {
        case .equalTo, .notEqualTo:
            let equal = op == .equalTo
            guard let k = try key(value) else { return equal ? "0" : "1" }
            if k.isNull { return "\(column) \(equal ? "IS NULL" : "IS NOT NULL")" }
            return "\(column) \(equal ? "=" : "IS NOT") \(bind(k))"
        case .in:
            guard case .array(let values) = value else { throw Self.unsupported("IN with a right side that is not a collection") }
            return inList(column, try values.compactMap { try key($0) }, collate: "")
        default:
            throw Self.unsupported("\(op.rawValue) on a relationship")
        }
    }

    private mutating func bind(_ value: StoreValue) -> String {
        arguments.append(value)
        return "?"
    }

    // MARK: - Expressions

    private mutating func operand(_ expression: FetchExpression) throws -> Operand {
        switch expression {
        case .constant(let value): return .constant(value)
        case .aggregate(let elements):
            return .constant(.array(try elements.map { element -> StoreValue in
                guard case .constant(let value) = element else { throw Self.unsupported("collections of non-constant expressions") }
                return value
            }))
        case .evaluatedObject: return .primaryKey(sql: "\"t0\".\"Z_PK\"", entity: entity)
        case .keyPath(let path): return try resolve(path)
        case .member: throw Self.unsupported("key paths from expressions")
        case .variable(let name): throw Self.unsupported("variables ($\(name))")
        case .function(let name, _): throw Self.unsupported("functions (\(name))")
        case .subquery: throw Self.unsupported("SUBQUERY")
        case .conditional: throw Self.unsupported("TERNARY")
        case .unboundArgument(let specifier, let position):
            throw PersistenceError(.persistentStoreOperation, "format argument \(position + 1) (\(specifier)) has no value")
        }
    }

    /// Resolves a key path such as `name`, `brewery`, `brewery.city.name` to a column,
    /// joining each to-one hop.
    mutating func resolve(_ path: String) throws -> Operand {
        let components = path.split(separator: ".").map(String.init)
        guard !components.isEmpty else { throw PersistenceError(.persistentStoreOperation, "an empty key path") }
        var alias = "t0"
        var current = entity
        var prefix = ""
        for (position, component) in components.enumerated() {
            let isLast = position == components.count - 1
            if component == "self" || component == "SELF" {
                if isLast { return .primaryKey(sql: "\(SQLiteSchema.quote(alias)).\"Z_PK\"", entity: current) }
                continue
            }
            guard let property = current.propertiesByName[component] else {
                throw PersistenceError(.persistentStoreOperation, "key path \(path): entity \(current.name) has no property \(component)")
            }
            if property.isTransient {
                throw PersistenceError(.persistentStoreOperation, "key path \(path): \(component) is transient and not in the store")
            }
            if let relationship = property as? RelationshipDescription, relationship.isToMany {
                throw Self.unsupported("to-many key paths (\(path))")
            }
            guard let (_, column) = schema.column(named: component, of: current) else {
                throw PersistenceError(.persistentStoreOperation, "key path \(path): no column for \(current.name).\(component)")
            }
            let sql = "\(SQLiteSchema.quote(alias)).\(SQLiteSchema.quote(column.name))"
            if let attribute = property as? AttributeDescription {
                guard isLast else { throw PersistenceError(.persistentStoreOperation, "key path \(path): \(component) is an attribute") }
                return .attribute(sql: sql, type: attribute.attributeType)
            }
            // Force cast: the property is a relationship, since it is not an attribute.
            let relationship = property as! RelationshipDescription
            if isLast { return .toOne(sql: sql, relationship: relationship) }
            guard let destination = relationship.destinationEntity, let table = schema.table(of: destination) else {
                throw PersistenceError(.persistentStoreOperation, "key path \(path): no table for \(relationship.destinationEntityName)")
            }
            prefix += (prefix.isEmpty ? "" : ".") + component
            if let known = aliasByPath[prefix] {
                alias = known.alias
            } else {
                let next = "t\(aliasByPath.count + 1)"
                joins.append("LEFT JOIN \(SQLiteSchema.quote(table.name)) AS \(SQLiteSchema.quote(next)) ON \(SQLiteSchema.quote(next)).\"Z_PK\" = \(sql)")
                aliasByPath[prefix] = (next, destination)
                alias = next
            }
            current = destination
        }
        return .primaryKey(sql: "\(SQLiteSchema.quote(alias)).\"Z_PK\"", entity: current)
    }

    // MARK: - Sorting

    /// The `ORDER BY` terms for `descriptors` (without the keywords), or `""` for none.
    mutating func orderBy(_ descriptors: [FetchSortDescriptor]) throws -> String {
        try descriptors.map { descriptor in
            guard let column = try resolve(descriptor.key).sql else { throw Self.unsupported("sorting on \(descriptor.key)") }
            var term = column
            switch descriptor.comparison {
            case .compare: break
            case .caseInsensitiveCompare: term += " COLLATE NOCASE"
            case .localizedStandardCompare: throw Self.unsupported("localizedStandardCompare sorting")
            }
            return term + (descriptor.ascending ? "" : " DESC")
        }.joined(separator: ", ")
    }
}
