import Foundation

/// Key paths: columns through to-one joins, sub-selects through to-many relationships, and
/// the collection operators over them.
extension SQLitePredicateCompiler {
    /// The value at the dotted key path `path` from `base`: columns through to-one hops,
    /// collections through to-many hops, aggregates for `@count`, `@sum`, `@avg`, `@min`, `@max`.
    mutating func path(_ path: String, from base: Value) throws -> Value {
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
    mutating func step(_ key: String, from current: Value, path: String) throws -> Value {
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
    mutating func property(_ key: String, of row: Row, inCollection: Int?, path: String) throws -> Value {
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
    func subentityAttribute(_ key: String, of row: Row, path: String) throws -> Value {
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
    mutating func row(of scalar: Scalar) throws -> Row {
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

    mutating func newAlias() -> String {
        defer { nextAlias += 1 }
        return "t\(nextAlias)"
    }

    /// `@count`, `@sum`, `@avg`, `@min`, `@max` of a collection, as a scalar sub-select.
    mutating func aggregate(_ op: String, over value: Value) throws -> Value {
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
    func exists(_ collection: Collection, _ test: SQLFragment) -> SQLFragment {
        "EXISTS (" + subselect(collection, select: "1", test) + ")"
    }

    func subselect(_ collection: Collection, select: SQLFragment, _ test: SQLFragment?) -> SQLFragment {
        let scope = scopes[collection.scope]
        let from = ([scope.from] + scope.joins).joined(separator: " ")
        let conditions = scope.conditions + (test.map { [$0] } ?? [])
        return "SELECT \(select) FROM \(raw: from) WHERE " + SQLFragment.join(conditions, " AND ")
    }
}
