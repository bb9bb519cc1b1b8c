import Foundation

/// Compiles a ``FetchPredicate`` and sort descriptors into SQL over Core Data's layout:
/// a `WHERE` clause, `LEFT JOIN`s for key paths through to-one relationships, an `ORDER BY`,
/// and the arguments to bind. Constants are always bound parameters.
///
/// The SQL means exactly what ``PredicateEvaluator`` computes in memory (`docs/predicates-sql.md`
/// lists every construct):
///
/// - Every comparison is two-valued where its truth matters: `NOT (abv = 5)` keeps rows whose
///   `abv` is `NULL`, as `NSPredicate` does. Under an even number of `NOT`s SQL's `NULL` already
///   acts as false, so plain `=`/`<` are emitted there (and can use indexes); under a `NOT` the
///   compiler emits `IS` and `COALESCE(…, 0)`.
/// - To-many key paths become correlated sub-selects: `ANY` is `EXISTS`, `ALL` is
///   `NOT EXISTS (… AND NOT …)`, `@count`/`@sum`/`@avg`/`@min`/`@max` scalar sub-selects,
///   `SUBQUERY` a sub-select with its variable bound to the sub-select's row.
/// - String operators and `[c]`/`[d]` call the functions of ``SQLiteFunctions``, which run the
///   evaluator's own Swift code.
///
/// Constructs with no SQL form throw a ``PersistenceError`` naming the construct.
///
/// The fetched table is aliased `t0`; every other table gets the next alias (`t1`, `t2`, …).
/// To-one hops from the fetched row are `LEFT JOIN`s of the main query (``joins``), shared by
/// key paths with the same prefix.
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
    /// The instant `now()` stands for; fixed for one compiler, as for one evaluator.
    var now = Date()
    /// The `LEFT JOIN` clauses the main query needs, in order.
    var joins: [String] { scopes[0].joins }
    /// The arguments bound by the compiled SQL, in order of their `?`.
    private(set) var arguments: [StoreValue] = []

    /// The main query (index 0) and each sub-select opened for a to-many key path.
    private var scopes: [Scope]
    /// Aliases of to-one joins, by `"<base alias>.<relationship>"`.
    private var joinAliases: [String: String] = [:]
    private var nextAlias = 1
    /// `SUBQUERY` variables in scope.
    private var variables: [String: Value] = [:]

    init(schema: SQLiteSchema, entity: EntityDescription) {
        self.schema = schema
        self.entity = entity
        self.scopes = [Scope(from: "", joins: [], conditions: [])]
    }

    /// An error for a construct the compiler does not handle.
    static func unsupported(_ construct: String) -> PersistenceError {
        PersistenceError(.persistentStoreOperation, "the SQLite store does not support \(construct) in fetch requests")
    }

    // MARK: - Predicates

    /// The SQL condition for `predicate`; its arguments are appended to ``arguments``.
    mutating func compile(_ predicate: FetchPredicate) throws -> String {
        let sql = try condition(predicate, negated: false)
        arguments += sql.arguments
        return sql.text
    }

    /// The condition for `predicate`, inside `negated` `NOT`s (an odd number), where `NULL`
    /// would not act as false and comparisons must be two-valued.
    private mutating func condition(_ predicate: FetchPredicate, negated: Bool) throws -> SQLFragment {
        switch predicate {
        case .alwaysTrue: return "1"
        case .alwaysFalse: return "0"
        case .comparison(let comparison): return try compile(comparison, negated: negated)
        case .compound(let compound):
            switch compound.type {
            case .and, .or:
                let parts = try compound.subpredicates.map { try condition($0, negated: negated) }
                if parts.isEmpty { return compound.type == .and ? "1" : "0" }
                return "(" + SQLFragment.join(parts, compound.type == .and ? " AND " : " OR ") + ")"
            case .not:
                guard compound.subpredicates.count == 1 else {
                    throw PersistenceError.predicate("NOT needs exactly one subpredicate, not \(compound.subpredicates.count)")
                }
                return "NOT (\(try condition(compound.subpredicates[0], negated: !negated)))"
            }
        }
    }

    private mutating func compile(_ comparison: ComparisonPredicate, negated: Bool) throws -> SQLFragment {
        let left = try value(of: comparison.left)
        let right = try value(of: comparison.right)
        let options = comparison.options
        switch comparison.modifier {
        case .direct:
            return try compare(left, comparison.operator, right, options, negated: negated)
        case .any, .all:
            return try quantified(any: comparison.modifier == .any, left, comparison.operator, right, options, negated: negated)
        }
    }

    /// `ANY left op right` / `ALL left op right`.
    private mutating func quantified(any: Bool, _ left: Value, _ op: ComparisonPredicate.Operator, _ right: Value,
                                     _ options: ComparisonPredicate.Options, negated: Bool) throws -> SQLFragment {
        switch left {
        case .collection(let collection):
            if any {
                let test = try compare(collection.element, op, right, options, negated: false)
                return exists(collection, test)
            }
            let test = try compare(collection.element, op, right, options, negated: true)
            return "NOT " + exists(collection, "NOT (\(test))")
        case .constant(let value):
            return try combine(any: any, PredicateFunctions.elements(of: value).map { try compare(.constant($0), op, right, options, negated: negated) })
        case .list(let values):
            return try combine(any: any, values.map { try compare($0, op, right, options, negated: negated) })
        case .scalar(let scalar):
            let test = try compare(left, op, right, options, negated: negated)
            return any ? "(\(scalar.sql) IS NOT NULL AND \(test))" : "(\(scalar.sql) IS NULL OR \(test))"
        }
    }

    private func combine(any: Bool, _ parts: [SQLFragment]) -> SQLFragment {
        if parts.isEmpty { return any ? "0" : "1" }
        return parts.count == 1 ? parts[0] : "(" + SQLFragment.join(parts, any ? " OR " : " AND ") + ")"
    }

    /// `left op right` without a modifier.
    private mutating func compare(_ left: Value, _ op: ComparisonPredicate.Operator, _ right: Value,
                                  _ options: ComparisonPredicate.Options, negated: Bool) throws -> SQLFragment {
        if case .constant(let a) = left, case .constant(let b) = right {
            return try PredicateComparison.compare(a, op, b, options: options) ? "1" : "0"
        }
        switch op {
        case .in:
            return try contains(right, left, options, negated: negated)
        case .contains:
            return try contains(left, right, options, negated: negated)
        case .between:
            let bounds: [Value]
            switch right {
            case .constant(.array(let values)) where values.count == 2: bounds = values.map { .constant($0) }
            case .list(let values) where values.count == 2: bounds = values
            default: throw PersistenceError.predicate("BETWEEN needs a collection of two bounds")
            }
            if case .collection = left { return "0" }
            let low = try compare(left, .greaterThanOrEqualTo, bounds[0], options, negated: negated)
            let high = try compare(left, .lessThanOrEqualTo, bounds[1], options, negated: negated)
            return "(\(low) AND \(high))"
        default:
            break
        }
        // A to-many collection compared directly: never equal to a value, never ordered.
        if case .collection(let collection) = left { return try compareCollection(collection, op, right) }
        if case .collection(let collection) = right { return try compareCollection(collection, op, left) }
        guard case .scalarOrConstant = left.shape, case .scalarOrConstant = right.shape else {
            throw Self.unsupported("a collection literal with key paths in \(op.rawValue)")
        }
        let (lk, rk) = (left.kind, right.kind)
        switch op {
        case .equalTo, .notEqualTo:
            let equal = try equality(left, right, options, negated: op == .equalTo ? negated : !negated)
            return op == .equalTo ? equal : "NOT (\(equal))"
        case .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            if left.isNullConstant || right.isNullConstant || !lk.isCompatible(with: rk) { return "0" }
            if case .object = lk { return "0" }
            if case .object = rk { return "0" }
            let symbol = [ComparisonPredicate.Operator.lessThan: "<", .lessThanOrEqualTo: "<=", .greaterThan: ">", .greaterThanOrEqualTo: ">="][op] ?? "="
            let test: SQLFragment = "\(try folded(left, options)) \(raw: symbol) \(try folded(right, options))"
            return negated ? "COALESCE(\(test), 0)" : test
        default:
            // BEGINSWITH, ENDSWITH, LIKE, MATCHES: both sides strings, or false.
            return try stringOperator(left, op, right, options)
        }
    }

    /// `left == right`, two-valued when `negated`; `nil == nil` holds.
    private mutating func equality(_ left: Value, _ right: Value, _ options: ComparisonPredicate.Options,
                                   negated: Bool) throws -> SQLFragment {
        if right.isNullConstant { return "\(try operand(left)) IS NULL" }
        if left.isNullConstant { return "\(try operand(right)) IS NULL" }
        guard left.kind.isCompatible(with: right.kind) else {
            // Values of different kinds are never equal; two nils are.
            if case .constant = left { return "0" }
            if case .constant = right { return "0" }
            return "(\(try operand(left)) IS NULL AND \(try operand(right)) IS NULL)"
        }
        let (a, b) = (try folded(left, options), try folded(right, options))
        let nullable = !(left.isConstant || right.isConstant)
        return "\(a) \(raw: nullable || negated ? "IS" : "=") \(b)"
    }

    /// A direct comparison with a to-many collection: `NSPredicate` compares the collection
    /// itself, which equals no single value and has no order. Through a `nil` to-one the
    /// collection is `nil` itself (`brewery.beers == nil`).
    private mutating func compareCollection(_ collection: Collection, _ op: ComparisonPredicate.Operator,
                                            _ other: Value) throws -> SQLFragment {
        switch (op, other) {
        case (_, .collection), (_, .constant(.array)), (_, .list):
            throw Self.unsupported("comparing a to-many key path with a collection (\(op.rawValue)); use ANY or ALL")
        case (.equalTo, _), (.notEqualTo, _):
            var equal: SQLFragment = "0"
            if let isNil = collection.isNil {
                if other.isNullConstant { equal = isNil } else if case .scalar(let s) = other { equal = "(\(isNil) AND \(s.sql) IS NULL)" }
            }
            return op == .equalTo ? equal : "NOT (\(equal))"
        default:
            return "0"
        }
    }

    /// Whether `collection` contains `element` (`CONTAINS`, and `IN` with the sides swapped):
    /// membership in a collection, or a substring of a string.
    private mutating func contains(_ collection: Value, _ element: Value, _ options: ComparisonPredicate.Options,
                                   negated: Bool) throws -> SQLFragment {
        switch collection {
        case .collection(let c):
            if case .collection = element { return "0" }
            return exists(c, try compare(c.element, .equalTo, element, options, negated: false))
        case .constant(.array(let values)):
            return try inList(element, values, options, negated: negated)
        case .list(let values):
            return try combine(any: true, values.map { try compare($0, .equalTo, element, options, negated: negated) })
        case .constant(.null):
            return "0"
        case .constant(.string):
            if case .collection = element { return "0" }
            return try stringOperator(collection, .contains, element, options)
        case .constant(let value):
            throw PersistenceError.predicate("IN and CONTAINS need a collection or a string, not \(value)")
        case .scalar(let s):
            guard s.kind.isCompatible(with: .string) else {
                throw Self.unsupported("IN and CONTAINS with \(s.sql.text), which is neither a to-many key path nor a string")
            }
            if case .collection = element { return "0" }
            return try stringOperator(collection, .contains, element, options)
        }
    }

    /// `element IN (values…)`, values of other kinds left out (they never equal it).
    private mutating func inList(_ element: Value, _ values: [StoreValue], _ options: ComparisonPredicate.Options,
                                 negated: Bool) throws -> SQLFragment {
        if case .collection = element { return "0" }
        if case .list = element { throw Self.unsupported("a collection literal with key paths on the left of IN") }
        let kind = element.kind
        let candidates = values.filter { !$0.isNull && kind.isCompatible(with: Kind(of: $0)) }
        var parts: [SQLFragment] = []
        if !candidates.isEmpty {
            let list = SQLFragment.join(try candidates.map { try folded(.constant($0), options) }, ", ")
            let test: SQLFragment = "\(try folded(element, options)) IN (\(list))"
            parts.append(negated ? "COALESCE(\(test), 0)" : test)
        }
        if values.contains(where: \.isNull) { parts.append("\(try operand(element)) IS NULL") }
        return combine(any: true, parts)
    }

    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES` through the functions of
    /// ``SQLiteFunctions`` (0 or 1, never `NULL`).
    private mutating func stringOperator(_ left: Value, _ op: ComparisonPredicate.Operator, _ right: Value,
                                         _ options: ComparisonPredicate.Options) throws -> SQLFragment {
        guard left.kind.isCompatible(with: .string), right.kind.isCompatible(with: .string),
              !left.isNullConstant, !right.isNullConstant else { return "0" }
        let (a, b) = (try operand(left), try operand(right))
        let flags = options.intersection([.caseInsensitive, .diacriticInsensitive]).rawValue
        switch op {
        case .like: return "NSCoreDataLike(\(a), \(b), \(raw: String(flags)))"
        case .matches: return "NSCoreDataMatches(\(a), \(b), \(raw: String(flags)))"
        default: return "NSCoreDataStringSearch(\(a), \(b), \(raw: String(SQLiteFunctions.searchOptions(op, options))), 0)"
        }
    }

    // MARK: - Operands

    /// The SQL of a scalar or constant value (a constant is bound; an object binds its key).
    private func operand(_ value: Value) throws -> SQLFragment {
        switch value {
        case .scalar(let s): return s.sql
        case .constant(let v):
            switch v {
            case .object(let id): return SQLFragment(sql: "?", [.integer(id.primaryKey)])
            case .array: throw Self.unsupported("a collection where a single value is expected")
            default: return SQLFragment(sql: "?", [v])
            }
        case .collection: throw Self.unsupported("a to-many key path where a single value is expected; use ANY, ALL or an aggregate")
        case .list: throw Self.unsupported("a collection literal where a single value is expected")
        }
    }

    /// The operand folded for `[c]`/`[d]` when it may be a string: constants in Swift, SQL with `persist_fold`.
    private func folded(_ value: Value, _ options: ComparisonPredicate.Options) throws -> SQLFragment {
        let flags = options.intersection([.caseInsensitive, .diacriticInsensitive])
        guard !flags.isEmpty, value.kind.isCompatible(with: .string) else { return try operand(value) }
        if case .constant(.string(let s)) = value { return SQLFragment(sql: "?", [.string(StoreValueComparison.fold(s, flags))]) }
        return "persist_fold(\(try operand(value)), \(raw: String(flags.rawValue)))"
    }

    // MARK: - Expressions

    /// The value of an expression, compiled.
    private mutating func value(of expression: FetchExpression) throws -> Value {
        switch expression {
        case .constant(let value):
            return .constant(value)
        case .aggregate(let elements):
            let values = try elements.map { try value(of: $0) }
            let constants = values.compactMap { value -> StoreValue? in if case .constant(let v) = value { return v } else { return nil } }
            return constants.count == values.count ? .constant(.array(constants)) : .list(values)
        case .evaluatedObject:
            return .scalar(Scalar(sql: "\"t0\".\"Z_PK\"", kind: .object(entity), row: Row(alias: "t0", entity: entity, scope: 0, mayBeNull: false)))
        case .keyPath(let path):
            if path.hasPrefix("$") {
                let parts = path.dropFirst().split(separator: ".", maxSplits: 1).map(String.init)
                let base = try variable(parts.first ?? "")
                return parts.count > 1 ? try self.path(parts[1], from: base) : base
            }
            return try self.path(path, from: value(of: .evaluatedObject))
        case .member(let base, let path):
            return try self.path(path, from: value(of: base))
        case .variable(let name):
            return try variable(name)
        case .function(let name, let arguments):
            return try function(name, arguments)
        case .subquery(let collection, let name, let predicate):
            guard case .collection(var c) = try value(of: collection) else {
                throw Self.unsupported("SUBQUERY over a value that is not a to-many key path")
            }
            let saved = variables[name]
            variables[name] = c.element
            defer { variables[name] = saved }
            let test = try condition(predicate, negated: false)
            scopes[c.scope].conditions.append(test)
            c.isNil = nil
            return .collection(c)
        case .conditional(let predicate, let then, let otherwise):
            let test = try condition(predicate, negated: false)
            let (a, b) = (try value(of: then), try value(of: otherwise))
            let kind: Kind = a.isNullConstant ? b.kind : (b.isNullConstant ? a.kind : (a.kind == b.kind ? a.kind : .unknown))
            return .scalar(Scalar(sql: "(CASE WHEN \(test) THEN \(try operand(a)) ELSE \(try operand(b)) END)", kind: kind))
        case .unboundArgument(let specifier, let position):
            throw PersistenceError.predicate("format argument \(position + 1) (\(specifier)) has no value")
        }
    }

    private func variable(_ name: String) throws -> Value {
        guard let value = variables[name] else {
            throw Self.unsupported("the variable $\(name), which no SUBQUERY binds")
        }
        return value
    }

    /// `FUNCTION`s, arithmetic and `CAST`; folded to a constant when every argument is one.
    private mutating func function(_ name: String, _ arguments: [FetchExpression]) throws -> Value {
        let values = try arguments.map { try value(of: $0) }
        let constants = values.compactMap { value -> StoreValue? in if case .constant(let v) = value { return v } else { return nil } }
        if constants.count == values.count {
            return .constant(try PredicateFunctions.apply(function: name, to: constants, now: now))
        }
        let aggregates = ["count:": "@count", "sum:": "@sum", "average:": "@avg", "min:": "@min", "max:": "@max"]
        if let op = aggregates[name], values.count == 1 {
            return try aggregate(op, over: values[0])
        }
        func argument(_ index: Int) throws -> Value {
            guard index < values.count else {
                throw PersistenceError.predicate("the function \(name) needs \(index + 1) arguments, not \(values.count)", key: name)
            }
            return values[index]
        }
        func numeric(_ value: Value) throws -> SQLFragment {
            guard value.kind.isCompatible(with: .number) || value.kind == .date else {
                throw Self.unsupported("the function \(name) of a value that is not a number")
            }
            return try operand(value)
        }
        switch name {
        case "add:to:", "from:subtract:", "multiply:by:":
            let (a, b) = (try argument(0), try argument(1))
            let symbol = name == "add:to:" ? "+" : (name == "from:subtract:" ? "-" : "*")
            let isDate = name != "multiply:by:" && (a.kind == .date || (name == "add:to:" && b.kind == .date))
            return .scalar(Scalar(sql: "(\(try numeric(a)) \(raw: symbol) \(try numeric(b)))", kind: isDate ? .date : .number))
        case "divide:by:":
            return .scalar(Scalar(sql: "(CAST(\(try numeric(argument(0))) AS REAL) / \(try numeric(argument(1))))", kind: .number))
        case "abs:":
            return .scalar(Scalar(sql: "abs(\(try numeric(argument(0))))", kind: .number))
        case "uppercase:", "lowercase:":
            let a = try argument(0)
            guard a.kind.isCompatible(with: .string) else { throw Self.unsupported("the function \(name) of a value that is not a string") }
            return .scalar(Scalar(sql: "\(raw: name == "uppercase:" ? "NSCoreDataToUpper" : "NSCoreDataToLower")(\(try operand(a)))", kind: .string))
        case "castObject:toType:":
            guard case .constant(.string(let type)) = try argument(1) else { throw PersistenceError.predicate("CAST needs a type name", key: name) }
            let a = try argument(0)
            switch type {
            case "NSDate" where a.kind.isCompatible(with: .number) || a.kind == .date:
                return .scalar(Scalar(sql: try operand(a), kind: .date))
            case "NSNumber" where a.kind.isCompatible(with: .number) || a.kind == .date:
                return .scalar(Scalar(sql: try operand(a), kind: .number))
            default:
                throw Self.unsupported("CAST of a key path to \(type)")
            }
        default:
            throw Self.unsupported("the function \(name) on key paths")
        }
    }

    // MARK: - Key paths

    /// The value at the dotted key path `path` from `base`: columns through to-one hops,
    /// collections through to-many hops, aggregates for `@count`, `@sum`, `@avg`, `@min`, `@max`.
    private mutating func path(_ path: String, from base: Value) throws -> Value {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var current = base
        for (position, component) in components.enumerated() {
            if component.isEmpty { throw PersistenceError.predicate("the key path \(path) has an empty component", key: path) }
            if component == "SELF" || component == "self" { continue }
            if component.hasPrefix("@") {
                var collected = current
                if position + 1 < components.count {
                    guard case .collection = current else { throw Self.unsupported("\(component) of a value that is not a to-many key path (\(path))") }
                    collected = try self.path(components[(position + 1)...].joined(separator: "."), from: current)
                }
                return try aggregate(component, over: collected)
            }
            current = try step(component, from: current, path: path)
        }
        return current
    }

    /// One key of a key path.
    private mutating func step(_ key: String, from current: Value, path: String) throws -> Value {
        switch current {
        case .scalar(let scalar):
            if case .object(let destination) = scalar.kind, destination != nil {
                let row = try self.row(of: scalar)
                return try property(key, of: row, inCollection: nil, path: path)
            }
            throw PersistenceError.predicate("the key \(key) cannot be read from \(path): a value that is not an object", key: key)
        case .collection(var collection):
            guard case .scalar(let element) = collection.element, case .object(let destination) = element.kind, destination != nil else {
                throw PersistenceError.predicate("the key \(key) cannot be read from \(path): its elements are not objects", key: key)
            }
            let row = try self.row(of: element)
            let next = try property(key, of: row, inCollection: collection.scope, path: path)
            if case .collection(let flattened) = next { return .collection(flattened) }
            collection.element = next
            return .collection(collection)
        case .constant(.null):
            return .constant(.null)
        default:
            throw Self.unsupported("key paths from \(current) (\(path))")
        }
    }

    /// The property `key` of the object in `row`. A to-many opens a sub-select, or, inside one
    /// (`inCollection`), joins into it (flattening, as key-value coding does).
    private mutating func property(_ key: String, of row: Row, inCollection: Int?, path: String) throws -> Value {
        guard let property = row.entity.propertiesByName[key] else {
            return try subentityAttribute(key, of: row, path: path)
        }
        if property.isTransient {
            throw PersistenceError(.persistentStoreOperation, "key path \(path): \(key) is transient and not in the store")
        }
        let base = "\(SQLiteSchema.quote(row.alias)).\"Z_PK\""
        if let relationship = property as? RelationshipDescription, relationship.isToMany {
            guard let destination = relationship.destinationEntity, let table = schema.table(of: destination) else {
                throw PersistenceError(.persistentStoreOperation, "key path \(path): no table for \(relationship.destinationEntityName)")
            }
            let d = newAlias()
            let tableSQL = "\(SQLiteSchema.quote(table.name)) AS \(SQLiteSchema.quote(d))"
            let element = Value.scalar(Scalar(sql: SQLFragment(sql: "\(SQLiteSchema.quote(d)).\"Z_PK\""), kind: .object(destination),
                                              row: Row(alias: d, entity: destination, scope: inCollection ?? scopes.count, mayBeNull: inCollection != nil)))
            var from: String
            var correlation: String
            if let join = schema.joinTable(of: relationship) {
                let canonical = join.relationship === relationship
                let (source, target) = canonical ? (join.sourceColumn, join.destinationColumn) : (join.destinationColumn, join.sourceColumn)
                let j = newAlias()
                from = "\(SQLiteSchema.quote(join.name)) AS \(SQLiteSchema.quote(j))"
                correlation = "\(SQLiteSchema.quote(j)).\(SQLiteSchema.quote(source)) = \(base)"
                let onTarget = "\(SQLiteSchema.quote(d)).\"Z_PK\" = \(SQLiteSchema.quote(j)).\(SQLiteSchema.quote(target))"
                if inCollection == nil {
                    from += " JOIN \(tableSQL) ON \(onTarget)"
                } else {
                    from = "LEFT JOIN \(from) ON \(correlation) LEFT JOIN \(tableSQL) ON \(onTarget)"
                }
            } else {
                guard let inverse = relationship.inverseRelationship, let (_, column) = schema.column(named: inverse.name, of: destination) else {
                    throw PersistenceError(.persistentStoreOperation, "key path \(path): no column holds the inverse of \(relationship.name)")
                }
                correlation = "\(SQLiteSchema.quote(d)).\(SQLiteSchema.quote(column.name)) = \(base)"
                from = inCollection == nil ? tableSQL : "LEFT JOIN \(tableSQL) ON \(correlation)"
            }
            if let scope = inCollection {
                // A to-many inside a collection: each element contributes its destinations, or
                // one nil if the element is nil; an element with no destinations contributes none.
                scopes[scope].joins.append(from)
                scopes[scope].conditions.append(SQLFragment(sql: "(\(base) IS NULL OR \(SQLiteSchema.quote(d)).\"Z_PK\" IS NOT NULL)"))
                return element
            }
            scopes.append(Scope(from: from, joins: [], conditions: [SQLFragment(sql: correlation)]))
            return .collection(Collection(scope: scopes.count - 1, element: element,
                                          isNil: row.mayBeNull ? SQLFragment(sql: "\(base) IS NULL") : nil))
        }
        guard let (_, column) = schema.column(named: key, of: row.entity) else {
            throw PersistenceError(.persistentStoreOperation, "key path \(path): no column for \(row.entity.name).\(key)")
        }
        let sql = SQLFragment(sql: "\(SQLiteSchema.quote(row.alias)).\(SQLiteSchema.quote(column.name))")
        if let attribute = property as? AttributeDescription {
            return .scalar(Scalar(sql: sql, kind: Kind(attribute.attributeType), attributeType: attribute.attributeType))
        }
        // Force cast: the property is a relationship, since it is not an attribute.
        let relationship = property as! RelationshipDescription
        return .scalar(Scalar(sql: sql, kind: .object(relationship.destinationEntity), foreignKey: (row, relationship)))
    }

    /// An attribute that sub-entities of the row's entity declare (`items.rating` where `Book`
    /// and `Film` each have a `rating`): the evaluator reads it from each object's own entity,
    /// so SQL picks each sub-entity's column by `Z_ENT`. Rows of other entities give `NULL`.
    private func subentityAttribute(_ key: String, of row: Row, path: String) throws -> Value {
        var columns: [(number: Int, column: String)] = []
        var type: AttributeType?
        for entity in row.entity.selfAndDescendants {
            guard let attribute = entity.propertiesByName[key] as? AttributeDescription, !attribute.isTransient,
                  let (_, column) = schema.column(named: key, of: entity), let number = schema.layout(of: entity)?.number else { continue }
            if let type, Kind(type) != Kind(attribute.attributeType) {
                throw Self.unsupported("key path \(path): sub-entities of \(row.entity.name) declare \(key) with different types")
            }
            type = attribute.attributeType
            columns.append((number, column.name))
        }
        guard let type, !columns.isEmpty else {
            throw PersistenceError(.persistentStoreOperation, "key path \(path): entity \(row.entity.name) has no property \(key)")
        }
        let alias = SQLiteSchema.quote(row.alias)
        if Set(columns.map(\.column)).count == 1 {
            return .scalar(Scalar(sql: SQLFragment(sql: "\(alias).\(SQLiteSchema.quote(columns[0].column))"), kind: Kind(type), attributeType: type))
        }
        // Entity numbers come from the schema, not from the request, so they are written inline.
        let cases = columns.map { "WHEN \($0.number) THEN \(alias).\(SQLiteSchema.quote($0.column))" }.joined(separator: " ")
        return .scalar(Scalar(sql: SQLFragment(sql: "(CASE \(alias).\"Z_ENT\" \(cases) END)"), kind: Kind(type), attributeType: type))
    }

    /// The row of an object value: its own alias, or a `LEFT JOIN` of a to-one's destination in
    /// the scope of the foreign key (shared by key paths with the same prefix).
    private mutating func row(of scalar: Scalar) throws -> Row {
        if let row = scalar.row { return row }
        guard let (base, relationship) = scalar.foreignKey, let destination = relationship.destinationEntity,
              let table = schema.table(of: destination) else {
            throw Self.unsupported("key paths from \(scalar.sql.text), which is not a relationship")
        }
        let key = "\(base.alias).\(relationship.name)"
        if let alias = joinAliases[key] { return Row(alias: alias, entity: destination, scope: base.scope, mayBeNull: true) }
        let alias = newAlias()
        joinAliases[key] = alias
        scopes[base.scope].joins.append("LEFT JOIN \(SQLiteSchema.quote(table.name)) AS \(SQLiteSchema.quote(alias)) ON \(SQLiteSchema.quote(alias)).\"Z_PK\" = \(scalar.sql.text)")
        return Row(alias: alias, entity: destination, scope: base.scope, mayBeNull: true)
    }

    private mutating func newAlias() -> String {
        defer { nextAlias += 1 }
        return "t\(nextAlias)"
    }

    /// `@count`, `@sum`, `@avg`, `@min`, `@max` of a collection, as a scalar sub-select.
    private mutating func aggregate(_ op: String, over value: Value) throws -> Value {
        switch value {
        case .constant(let v):
            return .constant(try PredicateFunctions.collectionOperator(op, on: v))
        case .collection(let collection):
            let element = try operand(collection.element)
            let kind = collection.element.kind
            let select: SQLFragment
            let resultKind: Kind
            switch op {
            case "@count":
                (select, resultKind) = ("COUNT(*)", .number)
            case "@sum", "@avg":
                guard kind.isCompatible(with: .number) else { throw Self.unsupported("\(op) of values that are not numbers") }
                (select, resultKind) = (op == "@sum" ? "COALESCE(SUM(\(element)), 0)" : "AVG(\(element))", .number)
            case "@min", "@max":
                if case .object = kind { throw Self.unsupported("\(op) of objects") }
                (select, resultKind) = ("\(raw: op == "@min" ? "MIN" : "MAX")(\(element))", kind)
            default:
                throw Self.unsupported("the collection operator \(op)")
            }
            return .scalar(Scalar(sql: "(" + subselect(collection, select: select, nil) + ")", kind: resultKind))
        default:
            throw Self.unsupported("\(op) of a value that is not a to-many key path")
        }
    }

    /// `EXISTS (SELECT 1 FROM … WHERE … AND test)`.
    private func exists(_ collection: Collection, _ test: SQLFragment) -> SQLFragment {
        "EXISTS (" + subselect(collection, select: "1", test) + ")"
    }

    private func subselect(_ collection: Collection, select: SQLFragment, _ test: SQLFragment?) -> SQLFragment {
        let scope = scopes[collection.scope]
        let from = ([scope.from] + scope.joins).joined(separator: " ")
        let conditions = scope.conditions + (test.map { [$0] } ?? [])
        return "SELECT \(select) FROM \(raw: from) WHERE " + SQLFragment.join(conditions, " AND ")
    }

    /// Resolves a key path such as `name`, `brewery`, `brewery.city.name` to a column,
    /// joining each to-one hop.
    mutating func resolve(_ path: String) throws -> Operand {
        guard !path.isEmpty else { throw PersistenceError(.persistentStoreOperation, "an empty key path") }
        switch try self.path(path, from: value(of: .evaluatedObject)) {
        case .scalar(let scalar):
            if let row = scalar.row { return .primaryKey(sql: scalar.sql.text, entity: row.entity) }
            if let (_, relationship) = scalar.foreignKey { return .toOne(sql: scalar.sql.text, relationship: relationship) }
            if let type = scalar.attributeType { return .attribute(sql: scalar.sql.text, type: type) }
            throw Self.unsupported("the key path \(path) here")
        case .constant(let value):
            return .constant(value)
        default:
            throw Self.unsupported("to-many key paths (\(path)) here")
        }
    }

    // MARK: - Sorting

    /// The `ORDER BY` terms for `descriptors` (without the keywords), or `""` for none. Ties
    /// are broken by primary key, as in memory; `nil` sorts first.
    mutating func orderBy(_ descriptors: [FetchSortDescriptor]) throws -> String {
        guard !descriptors.isEmpty else { return "" }
        let terms = try descriptors.map { descriptor in
            guard let column = try resolve(descriptor.key).sql else { throw Self.unsupported("sorting on \(descriptor.key)") }
            var term = column
            switch descriptor.comparison {
            case .compare: break
            case .caseInsensitiveCompare: term += " COLLATE \(SQLiteFunctions.caseInsensitiveCollation)"
            case .localizedStandardCompare: term += " COLLATE \(SQLiteFunctions.localizedStandardCollation)"
            }
            return term + (descriptor.ascending ? "" : " DESC")
        }
        return (terms + ["\"t0\".\"Z_PK\""]).joined(separator: ", ")
    }
}

// MARK: - Compiled values

extension SQLitePredicateCompiler {
    /// What kind of value an expression yields, for the checks `NSPredicate` makes at run time
    /// (a string never equals a number; only strings match `BEGINSWITH`).
    enum Kind: Equatable {
        case string, number, date, data, uuid, url
        case object(EntityDescription?)
        /// Not known at compile time (`NULL`, a `TERNARY` of mixed kinds).
        case unknown

        init(_ type: AttributeType) {
            switch type {
            case .integer16, .integer32, .integer64, .double, .float, .decimal, .boolean: self = .number
            case .string: self = .string
            case .date: self = .date
            case .binaryData, .transformable: self = .data
            case .uuid: self = .uuid
            case .uri: self = .url
            case .undefined, .objectID: self = .unknown
            }
        }

        init(of value: StoreValue) {
            switch value {
            case .integer, .double, .decimal, .bool: self = .number
            case .string: self = .string
            case .date: self = .date
            case .data: self = .data
            case .uuid: self = .uuid
            case .url: self = .url
            case .object(let id): self = .object(id.entity)
            case .null, .array: self = .unknown
            }
        }

        /// Whether values of the two kinds can ever be equal or ordered.
        func isCompatible(with other: Kind) -> Bool {
            switch (self, other) {
            case (.unknown, _), (_, .unknown): return true
            case (.object(let a), .object(let b)):
                guard let a, let b else { return true }
                return a.rootEntity === b.rootEntity
            default: return self == other
            }
        }

        static func == (lhs: Kind, rhs: Kind) -> Bool {
            switch (lhs, rhs) {
            case (.string, .string), (.number, .number), (.date, .date), (.data, .data), (.uuid, .uuid), (.url, .url), (.unknown, .unknown):
                return true
            case (.object(let a), .object(let b)): return a === b
            default: return false
            }
        }
    }

    /// A table row an expression refers to: its alias, entity, and the scope it belongs to.
    struct Row {
        var alias: String
        var entity: EntityDescription
        var scope: Int
        /// Whether the row comes from a `LEFT JOIN` and may be all `NULL`s.
        var mayBeNull: Bool
    }

    /// A single SQL value (possibly `NULL`).
    struct Scalar {
        var sql: SQLFragment
        var kind: Kind
        /// The row whose primary key `sql` is, for an object.
        var row: Row?
        /// The row and relationship whose foreign key `sql` is, for a to-one.
        var foreignKey: (Row, RelationshipDescription)?
        var attributeType: AttributeType?

        init(sql: SQLFragment, kind: Kind, row: Row? = nil, foreignKey: (Row, RelationshipDescription)? = nil, attributeType: AttributeType? = nil) {
            self.sql = sql
            self.kind = kind
            self.row = row
            self.foreignKey = foreignKey
            self.attributeType = attributeType
        }
    }

    /// The elements of a to-many key path: the rows of a sub-select's scope, one value each.
    struct Collection {
        /// The index of the sub-select's scope.
        var scope: Int
        /// The value of one element, valid inside the sub-select.
        var element: Value
        /// When the collection is `nil` rather than empty (reached through a `nil` to-one).
        var isNil: SQLFragment?
    }

    /// The main query or a sub-select: its first table, its joins and its `WHERE` conditions.
    struct Scope {
        var from: String
        var joins: [String]
        var conditions: [SQLFragment]
    }

    /// A compiled expression.
    indirect enum Value {
        case constant(StoreValue)
        case scalar(Scalar)
        case collection(Collection)
        /// A collection literal with key paths in it (`{low, high}`).
        case list([Value])

        enum Shape { case scalarOrConstant, other }

        var shape: Shape {
            switch self {
            case .constant(.array), .collection, .list: return .other
            case .constant, .scalar: return .scalarOrConstant
            }
        }

        var kind: Kind {
            switch self {
            case .constant(let v): return Kind(of: v)
            case .scalar(let s): return s.kind
            case .collection, .list: return .unknown
            }
        }

        var isConstant: Bool { if case .constant = self { return true } else { return false } }
        var isNullConstant: Bool { if case .constant(.null) = self { return true } else { return false } }
    }
}

/// SQL text with the arguments of its `?` placeholders, in order; built by interpolation so
/// that text and arguments stay together: `"\(a) IS \(b)"`.
struct SQLFragment: ExpressibleByStringInterpolation, CustomStringConvertible {
    var text: String
    var arguments: [StoreValue]

    init(sql text: String, _ arguments: [StoreValue] = []) {
        self.text = text
        self.arguments = arguments
    }

    init(stringLiteral value: String) { self.init(sql: value) }

    init(stringInterpolation: Interpolation) { self.init(sql: stringInterpolation.text, stringInterpolation.arguments) }

    var description: String { text }

    struct Interpolation: StringInterpolationProtocol {
        var text = ""
        var arguments: [StoreValue] = []
        init(literalCapacity: Int, interpolationCount: Int) {}
        mutating func appendLiteral(_ literal: String) { text += literal }
        mutating func appendInterpolation(_ fragment: SQLFragment) {
            text += fragment.text
            arguments += fragment.arguments
        }
        mutating func appendInterpolation(raw: String) { text += raw }
    }

    static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(sql: lhs.text + rhs.text, lhs.arguments + rhs.arguments)
    }

    static func join(_ parts: [SQLFragment], _ separator: String) -> SQLFragment {
        var result: SQLFragment = ""
        for (index, part) in parts.enumerated() {
            if index > 0 { result.text += separator }
            result = result + part
        }
        return result
    }
}
