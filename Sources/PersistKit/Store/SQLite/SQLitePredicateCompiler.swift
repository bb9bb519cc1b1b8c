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

    // The compiler's state, shared by its extensions (`+KeyPaths`); not for other callers.
    /// The main query (index 0) and each sub-select opened for a to-many key path.
    var scopes: [Scope]
    /// Aliases of to-one joins, by `"<base alias>.<relationship>"`.
    var joinAliases: [String: String] = [:]
    /// The number of the next table alias (`t<n>`).
    var nextAlias = 1
    /// `SUBQUERY` variables in scope.
    var variables: [String: Value] = [:]

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
    mutating func condition(_ predicate: FetchPredicate, negated: Bool) throws -> SQLFragment {
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

    mutating func compile(_ comparison: ComparisonPredicate, negated: Bool) throws -> SQLFragment {
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
    mutating func quantified(any: Bool, _ left: Value, _ op: ComparisonPredicate.Operator, _ right: Value,
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

    func combine(any: Bool, _ parts: [SQLFragment]) -> SQLFragment {
        if parts.isEmpty { return any ? "0" : "1" }
        return parts.count == 1 ? parts[0] : "(" + SQLFragment.join(parts, any ? " OR " : " AND ") + ")"
    }

    /// `left op right` without a modifier.
    mutating func compare(_ left: Value, _ op: ComparisonPredicate.Operator, _ right: Value,
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
    mutating func equality(_ left: Value, _ right: Value, _ options: ComparisonPredicate.Options,
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
        let equal: SQLFragment = "\(a) \(raw: nullable || negated ? "IS" : "=") \(b)"
        // An object ID names an entity too: the same key with another entity is another object.
        switch (left, right) {
        case (.scalar(let s), .constant(.object(let id))), (.constant(.object(let id)), .scalar(let s)):
            guard let entity = try entityTest(s, id) else { return equal }
            return entity.text == "0" ? "0" : "(\(equal) AND \(entity))"
        default:
            return equal
        }
    }

    /// The condition that the object `scalar` is of `id`'s entity exactly, `"0"` if it cannot
    /// be, or `nil` when its key alone decides (the entity has no sub-entities).
    func entityTest(_ scalar: Scalar, _ id: ManagedObjectID) throws -> SQLFragment? {
        guard let number = schema.layout(of: id.entity)?.number else { return "0" }
        if let row = scalar.row {
            guard id.entity.isKind(of: row.entity) else { return "0" }
            if id.entity === row.entity && row.entity.subentities.isEmpty { return nil }
            return SQLFragment(sql: "\(SQLiteSchema.quote(row.alias)).\"Z_ENT\" IS \(number)")
        }
        guard let (base, relationship) = scalar.foreignKey, let destination = relationship.destinationEntity else { return nil }
        guard id.entity.isKind(of: destination) else { return "0" }
        if destination.subentities.isEmpty { return nil }
        guard let table = schema.table(of: base.entity), let column = table.columns.first(where: {
            if case .foreignEntity(let r) = $0.kind { return r === relationship } else { return false }
        }), let declared = schema.layout(of: destination)?.number else {
            return id.entity === destination ? nil : "0"
        }
        // As the store reads it back: the entity column, or the declared destination when NULL.
        return SQLFragment(sql: "COALESCE(\(SQLiteSchema.quote(base.alias)).\(SQLiteSchema.quote(column.name)), \(declared)) IS \(number)")
    }

    /// A direct comparison with a to-many collection: `NSPredicate` compares the collection
    /// itself, which equals no single value and has no order. Through a `nil` to-one the
    /// collection is `nil` itself (`brewery.beers == nil`).
    mutating func compareCollection(_ collection: Collection, _ op: ComparisonPredicate.Operator,
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
    mutating func contains(_ collection: Value, _ element: Value, _ options: ComparisonPredicate.Options,
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
    mutating func inList(_ element: Value, _ values: [StoreValue], _ options: ComparisonPredicate.Options,
                                 negated: Bool) throws -> SQLFragment {
        if case .collection = element { return "0" }
        if case .list = element { throw Self.unsupported("a collection literal with key paths on the left of IN") }
        let kind = element.kind
        let candidates = values.filter { !$0.isNull && kind.isCompatible(with: Kind(of: $0)) }
        var parts: [SQLFragment] = []
        if case .object = kind, case .scalar = element {
            // Objects compare by key and entity, one by one.
            parts = try candidates.map { try equality(element, .constant($0), [], negated: negated) }
        } else if !candidates.isEmpty {
            let list = SQLFragment.join(try candidates.map { try folded(.constant($0), options) }, ", ")
            let test: SQLFragment = "\(try folded(element, options)) IN (\(list))"
            parts.append(negated ? "COALESCE(\(test), 0)" : test)
        }
        if values.contains(where: \.isNull) { parts.append("\(try operand(element)) IS NULL") }
        return combine(any: true, parts)
    }

    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES` through the functions of
    /// ``SQLiteFunctions`` (0 or 1, never `NULL`).
    mutating func stringOperator(_ left: Value, _ op: ComparisonPredicate.Operator, _ right: Value,
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
    func operand(_ value: Value) throws -> SQLFragment {
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
    func folded(_ value: Value, _ options: ComparisonPredicate.Options) throws -> SQLFragment {
        let flags = options.intersection([.caseInsensitive, .diacriticInsensitive])
        guard !flags.isEmpty, value.kind.isCompatible(with: .string) else { return try operand(value) }
        if case .constant(.string(let s)) = value { return SQLFragment(sql: "?", [.string(StoreValueComparison.fold(s, flags))]) }
        return "persist_fold(\(try operand(value)), \(raw: String(flags.rawValue)))"
    }

    // MARK: - Expressions

    /// The value of an expression, compiled.
    mutating func value(of expression: FetchExpression) throws -> Value {
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

    func variable(_ name: String) throws -> Value {
        guard let value = variables[name] else {
            throw Self.unsupported("the variable $\(name), which no SUBQUERY binds")
        }
        return value
    }

    /// `FUNCTION`s, arithmetic and `CAST`; folded to a constant when every argument is one.
    mutating func function(_ name: String, _ arguments: [FetchExpression]) throws -> Value {
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
