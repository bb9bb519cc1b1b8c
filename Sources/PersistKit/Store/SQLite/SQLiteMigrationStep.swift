import Foundation

/// Runs one step of an inferred migration on an open connection, inside the caller's
/// transaction: the destination tables are built beside the old ones, filled, and then take
/// their place.
///
/// 1. Create every destination entity table and join table under a temporary name.
/// 2. Copy the rows of every mapped entity (`INSERT … SELECT`), keeping `Z_PK` and `Z_OPT`,
///    renumbering `Z_ENT`, renaming and converting columns, filling defaults.
/// 3. Copy every relationship's links, read from the source representation (foreign key
///    column, inverse foreign key, join table) and written in the destination one, in order.
/// 4. Drop the old entity and join tables (tables the model does not describe, such as
///    history or CloudKit tables, are left alone), rename the new ones, create the indexes.
/// 5. Rewrite `Z_PRIMARYKEY` for the destination entities, keeping each tree's `Z_MAX`.
struct SQLiteMigrationStep {
    let connection: SQLiteConnection
    let step: MigrationPlan.Step
    let configurationName: String?
    let path: String

    private static let suffix = "__PKMIGRATE"

    func run() throws {
        var numbers: [String: Int] = [:]
        var maxima: [String: Int64] = [:]
        try connection.prepare("SELECT \"Z_ENT\", \"Z_NAME\", \"Z_MAX\" FROM \"Z_PRIMARYKEY\"").forEachRow { row in
            numbers[row.string(1)] = Int(row.int64(0))
            maxima[row.string(1)] = row.int64(2)
        }
        let sourceEntities = step.source.entities(forConfiguration: configurationName)
        let source = SQLiteSchema(entities: sourceEntities, existingNumbers: numbers)
        let destination = SQLiteSchema(entities: step.destination.entities(forConfiguration: configurationName))
        let existing = Set(try connection.strings("SELECT name FROM sqlite_master WHERE type = 'table'"))
        for table in source.tables where !existing.contains(table.name) {
            throw PersistenceError(.migration, "the store has no table \(table.name) for entity \(table.root.name) of the source model \(step.sourceName)", path: path)
        }

        // 1. New tables under temporary names.
        for table in destination.tables {
            var temporary = table
            temporary.name += Self.suffix
            try connection.execute(destination.createTableSQL(temporary))
        }
        for join in destination.joinTables {
            var temporary = join
            temporary.name += Self.suffix
            try connection.execute(destination.createJoinTableSQL(temporary)[0])
        }

        // 2. Rows.
        for entity in step.destination.entities(forConfiguration: configurationName) {
            guard let sourceEntity = step.mapping.entitySources[entity.name],
                  let sourceLayout = source.layout(of: sourceEntity), let layout = destination.layout(of: entity) else { continue }
            try copyRows(of: entity, layout: layout, in: destination, from: sourceEntity, number: sourceLayout.number, in: source)
        }

        // 3. Links.
        var entityOf: [String: [Int64: Int]] = [:]
        for table in destination.tables {
            var map: [Int64: Int] = [:]
            try connection.prepare("SELECT \"Z_PK\", \"Z_ENT\" FROM \(SQLiteSchema.quote(table.name + Self.suffix))").forEachRow { row in
                map[row.int64(0)] = Int(row.int64(1))
            }
            entityOf[table.name] = map
        }
        for entity in step.destination.entities(forConfiguration: configurationName) {
            for case let relationship as RelationshipDescription in entity.computeAllProperties() where !relationship.isTransient {
                try copyLinks(entity, relationship, destination: destination, source: source, entityOf: entityOf)
            }
        }

        // 4. Swap tables, then indexes.
        for join in source.joinTables where existing.contains(join.name) {
            try connection.execute("DROP TABLE \(SQLiteSchema.quote(join.name))")
        }
        for table in source.tables {
            try connection.execute("DROP TABLE \(SQLiteSchema.quote(table.name))")
        }
        for name in destination.tables.map(\.name) + destination.joinTables.map(\.name) {
            try connection.execute("ALTER TABLE \(SQLiteSchema.quote(name + Self.suffix)) RENAME TO \(SQLiteSchema.ddl(name))")
        }
        for table in destination.tables {
            for sql in table.indexes { try connection.execute(sql) }
        }
        for join in destination.joinTables { try connection.execute(destination.createJoinTableSQL(join)[1]) }

        // 5. Z_PRIMARYKEY.
        try connection.execute("DELETE FROM \"Z_PRIMARYKEY\"")
        for (number, entity) in destination.entitiesByNumber.sorted(by: { $0.key < $1.key }) {
            guard let table = destination.table(of: entity) else { continue }
            let parent = entity.superentity.flatMap { destination.layout(of: $0)?.number } ?? 0
            var maximum = try connection.int64("SELECT MAX(\"Z_PK\") FROM \(SQLiteSchema.quote(table.name))") ?? 0
            if let sourceRoot = step.mapping.entitySources[table.root.name]?.rootEntity.name, let old = maxima[sourceRoot] {
                maximum = max(maximum, old)
            }
            try connection.execute("INSERT INTO \"Z_PRIMARYKEY\" (\"Z_ENT\", \"Z_NAME\", \"Z_SUPER\", \"Z_MAX\") VALUES (?, ?, ?, ?)",
                                   [.integer(Int64(number)), .string(entity.name), .integer(Int64(parent)), .integer(maximum)])
        }
    }

    // MARK: - Rows

    private func copyRows(of entity: EntityDescription, layout: SQLiteSchema.EntityLayout, in destination: SQLiteSchema,
                          from sourceEntity: EntityDescription, number sourceNumber: Int, in source: SQLiteSchema) throws {
        guard let table = destination.table(of: entity), let sourceTable = source.table(of: sourceEntity) else { return }
        let map = step.mapping.propertySources[entity.name] ?? [:]
        var columns = ["\"Z_PK\"", "\"Z_ENT\"", "\"Z_OPT\""]
        var expressions = ["\"Z_PK\"", "\(layout.number)", "\"Z_OPT\""]
        var arguments: [StoreValue] = []
        for column in table.columns {
            guard case .attribute(let attribute) = column.kind, let owner = attribute.entity, entity.isKind(of: owner) else { continue }
            let defaultValue = attribute.defaultValue.flatMap { $0.isNull ? nil : $0 }
            var expression: String?
            if let old = map[attribute.name] as? AttributeDescription, let sourceColumn = source.column(named: old.name, of: sourceEntity) {
                let quoted = SQLiteSchema.quote(sourceColumn.column.name)
                if let defaultValue, old.isOptional && !attribute.isOptional {
                    expression = "COALESCE(\(quoted), ?)"
                    arguments.append(defaultValue)
                } else {
                    expression = quoted
                }
            } else if let defaultValue {
                expression = "?"
                arguments.append(defaultValue)
            }
            guard let expression else { continue }
            columns.append(SQLiteSchema.quote(column.name))
            expressions.append(expression)
        }
        let sql = "INSERT INTO \(SQLiteSchema.quote(table.name + Self.suffix)) (\(columns.joined(separator: ", "))) "
            + "SELECT \(expressions.joined(separator: ", ")) FROM \(SQLiteSchema.quote(sourceTable.name)) WHERE \"Z_ENT\" = \(sourceNumber)"
        try connection.execute(sql, arguments)
    }

    // MARK: - Links

    /// The links of `relationship` on objects of exactly `entity` in the source store: each
    /// owner's destinations, in order for ordered relationships. Read from the source of the
    /// relationship, or else from the source of its inverse, reversed.
    private func sourceLinks(_ entity: EntityDescription, _ relationship: RelationshipDescription,
                             source: SQLiteSchema) throws -> [(owner: Int64, destinations: [Int64])] {
        guard let sourceEntity = step.mapping.entitySources[entity.name], let ownerNumber = source.layout(of: sourceEntity)?.number else { return [] }
        if let old = step.mapping.propertySources[entity.name]?[relationship.name] as? RelationshipDescription {
            return try links(of: old, ownerEntityNumber: ownerNumber, ownerEntity: sourceEntity, source: source)
        }
        // No source for this side: use the inverse's source, reversed.
        guard let inverse = relationship.inverseRelationship, let inverseEntity = relationship.destinationEntity else { return [] }
        var owners: [Int64: [Int64]] = [:]
        var order: [Int64] = []
        for candidate in inverseEntity.selfAndDescendants {
            guard let candidateSource = step.mapping.entitySources[candidate.name],
                  let old = step.mapping.propertySources[candidate.name]?[inverse.name] as? RelationshipDescription,
                  let number = source.layout(of: candidateSource)?.number else { continue }
            for (destinationOwner, destinations) in try links(of: old, ownerEntityNumber: number, ownerEntity: candidateSource, source: source) {
                for owner in destinations {
                    if owners[owner] == nil { order.append(owner) }
                    owners[owner, default: []].append(destinationOwner)
                }
            }
        }
        // Keep only owners that are objects of `entity` in the source.
        guard let table = source.table(of: sourceEntity) else { return [] }
        let ownersOfEntity = Set(try connection.prepare("SELECT \"Z_PK\" FROM \(SQLiteSchema.quote(table.name)) WHERE \"Z_ENT\" = \(ownerNumber)")
            .collectInt64())
        return order.filter(ownersOfEntity.contains).map { ($0, owners[$0] ?? []) }
    }

    /// The links of source relationship `old` for owners of entity number `ownerEntityNumber`.
    private func links(of old: RelationshipDescription, ownerEntityNumber: Int, ownerEntity: EntityDescription,
                       source: SQLiteSchema) throws -> [(owner: Int64, destinations: [Int64])] {
        guard let ownerTable = source.table(of: ownerEntity) else { return [] }
        let owners = "SELECT \"Z_PK\" FROM \(SQLiteSchema.quote(ownerTable.name)) WHERE \"Z_ENT\" = \(ownerEntityNumber)"
        var sql: String
        if !old.isToMany {
            guard let column = source.column(named: old.name, of: ownerEntity) else { return [] }
            sql = "SELECT \"Z_PK\", \(SQLiteSchema.quote(column.column.name)) FROM \(SQLiteSchema.quote(ownerTable.name)) "
                + "WHERE \"Z_ENT\" = \(ownerEntityNumber) AND \(SQLiteSchema.quote(column.column.name)) IS NOT NULL ORDER BY \"Z_PK\""
        } else if let join = source.joinTable(of: old) {
            let canonical = join.relationship === old
            let ownerColumn = canonical ? join.sourceColumn : join.destinationColumn
            let destinationColumn = canonical ? join.destinationColumn : join.sourceColumn
            let orderColumn = canonical ? join.destinationOrderColumn : join.sourceOrderColumn
            let orderBy = [orderColumn, destinationColumn].compactMap { $0 }.map(SQLiteSchema.quote).joined(separator: ", ")
            sql = "SELECT \(SQLiteSchema.quote(ownerColumn)), \(SQLiteSchema.quote(destinationColumn)) FROM \(SQLiteSchema.quote(join.name)) "
                + "WHERE \(SQLiteSchema.quote(ownerColumn)) IN (\(owners)) ORDER BY \(SQLiteSchema.quote(ownerColumn)), \(orderBy)"
        } else if let inverse = old.inverseRelationship, let destinationEntity = old.destinationEntity,
                  let destinationTable = source.table(of: destinationEntity),
                  let column = source.column(named: inverse.name, of: destinationEntity) {
            let fk = SQLiteSchema.quote(column.column.name)
            var orderBy = "\"Z_PK\""
            if old.isOrdered, let order = source.orderColumn(ofOrdered: old) { orderBy = "\(SQLiteSchema.quote(order)), \"Z_PK\"" }
            sql = "SELECT \(fk), \"Z_PK\" FROM \(SQLiteSchema.quote(destinationTable.name)) WHERE \(fk) IN (\(owners)) ORDER BY \(fk), \(orderBy)"
        } else {
            return []
        }
        var result: [(owner: Int64, destinations: [Int64])] = []
        try connection.prepare(sql).forEachRow { row in
            let owner = row.int64(0), destination = row.int64(1)
            if let last = result.last, last.owner == owner {
                result[result.count - 1].destinations.append(destination)
            } else {
                result.append((owner, [destination]))
            }
        }
        return result
    }

    /// Writes the links of destination `relationship` for objects of exactly `entity`.
    private func copyLinks(_ entity: EntityDescription, _ relationship: RelationshipDescription, destination: SQLiteSchema,
                           source: SQLiteSchema, entityOf: [String: [Int64: Int]]) throws {
        guard let table = destination.table(of: entity), let target = relationship.destinationEntity,
              let targetTable = destination.table(of: target) else { return }
        let existing = entityOf[targetTable.name] ?? [:]
        let allowed = Set(destination.layout(of: target)?.selfAndDescendantNumbers ?? [])
        let ownersHere = entityOf[table.name] ?? [:]
        let ownerNumber = destination.layout(of: entity)?.number
        let links = try sourceLinks(entity, relationship, source: source).compactMap { link -> (Int64, [Int64])? in
            guard ownersHere[link.owner] == ownerNumber else { return nil }
            let kept = link.destinations.filter { existing[$0].map(allowed.contains) ?? false }
            return kept.isEmpty ? nil : (link.owner, kept)
        }
        guard !links.isEmpty else { return }
        let newTable = SQLiteSchema.quote(table.name + Self.suffix)
        if !relationship.isToMany {
            guard let column = destination.column(named: relationship.name, of: entity) else { return }
            let entityColumn = table.columns.first { if case .foreignEntity(let r) = $0.kind { return r === relationship }; return false }?.name
            var sql = "UPDATE \(newTable) SET \(SQLiteSchema.quote(column.column.name)) = ?"
            if let entityColumn { sql += ", \(SQLiteSchema.quote(entityColumn)) = ?" }
            sql += " WHERE \"Z_PK\" = ?"
            let statement = try connection.prepare(sql)
            for (owner, destinations) in links {
                let first = destinations[0]
                var values: [StoreValue] = [.integer(first)]
                if entityColumn != nil { values.append(.integer(Int64(existing[first] ?? 0))) }
                values.append(.integer(owner))
                try statement.execute(values)
            }
        } else if let join = destination.joinTable(of: relationship) {
            let canonical = join.relationship === relationship
            let ownerColumn = canonical ? join.sourceColumn : join.destinationColumn
            let destinationColumn = canonical ? join.destinationColumn : join.sourceColumn
            let orderColumn = canonical ? join.destinationOrderColumn : join.sourceOrderColumn
            let name = SQLiteSchema.quote(join.name + Self.suffix)
            let insert = try connection.prepare("INSERT OR IGNORE INTO \(name) (\(SQLiteSchema.quote(ownerColumn)), \(SQLiteSchema.quote(destinationColumn))) VALUES (?, ?)")
            let order = try orderColumn.map {
                try connection.prepare("UPDATE \(name) SET \(SQLiteSchema.quote($0)) = ? WHERE \(SQLiteSchema.quote(ownerColumn)) = ? AND \(SQLiteSchema.quote(destinationColumn)) = ?")
            }
            for (owner, destinations) in links {
                for (position, destinationKey) in destinations.enumerated() {
                    try insert.execute([.integer(owner), .integer(destinationKey)])
                    try order?.execute([.integer(Int64(position + 1)), .integer(owner), .integer(destinationKey)])
                }
            }
        } else if let inverse = relationship.inverseRelationship, let column = destination.column(named: inverse.name, of: target) {
            let targetName = SQLiteSchema.quote(targetTable.name + Self.suffix)
            let entityColumn = targetTable.columns.first { if case .foreignEntity(let r) = $0.kind { return r === inverse }; return false }?.name
            let orderColumn = relationship.isOrdered ? destination.orderColumn(ofOrdered: relationship) : nil
            var sql = "UPDATE \(targetName) SET \(SQLiteSchema.quote(column.column.name)) = ?"
            if let entityColumn { sql += ", \(SQLiteSchema.quote(entityColumn)) = ?" }
            if let orderColumn { sql += ", \(SQLiteSchema.quote(orderColumn)) = ?" }
            sql += " WHERE \"Z_PK\" = ?"
            let statement = try connection.prepare(sql)
            for (owner, destinations) in links {
                for (position, destinationKey) in destinations.enumerated() {
                    var values: [StoreValue] = [.integer(owner)]
                    if entityColumn != nil, let number = ownerNumber { values.append(.integer(Int64(number))) }
                    if orderColumn != nil { values.append(.integer(Int64(position + 1))) }
                    values.append(.integer(destinationKey))
                    try statement.execute(values)
                }
            }
        }
    }
}

extension SQLiteStatement {
    /// The first column of every row, as integers.
    func collectInt64() throws -> [Int64] {
        var result: [Int64] = []
        while try step() { result.append(int64(0)) }
        return result
    }
}
