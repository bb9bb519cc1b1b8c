import Foundation

extension SQLiteStore {
    /// Runs a batch request in one `BEGIN IMMEDIATE` transaction with bound parameters.
    ///
    /// - Insert: reserves the primary keys from `Z_PRIMARYKEY` and inserts each row with
    ///   `Z_OPT` 1.
    /// - Update: reads the matching IDs, then `UPDATE table AS t0 SET col = <expr>, …,
    ///   Z_OPT = Z_OPT + 1 WHERE Z_PK IN (<the fetch's SELECT>)`; the `WHERE` is the
    ///   predicate compiler's.
    /// - Delete: reads the matching IDs, deletes their rows and join-table rows, and clears
    ///   (with `Z_OPT + 1`) every to-one foreign key that pointed at them.
    public func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult {
        guard !isReadOnly else { throw readOnlyError("run a batch request") }
        switch request {
        case .insert(let entity, let rows):
            return try batchInsert(entity, rows)
        case .update(let fetch, let assignments):
            return try batchUpdate(fetch, assignments)
        case .delete(let fetch):
            var compiler = SQLitePredicateCompiler(schema: schema, entity: fetch.entity)
            let (table, whereSQL, arguments) = try whereClause(fetch, &compiler)
            let select = "SELECT \"t0\".\"Z_PK\", \"t0\".\"Z_ENT\" FROM \(fromClause(table, compiler))\(whereSQL)"
            return try withWriteConnection(.sqlite, "batch deleting \(fetch.entity.name) failed") { connection in
                try recordingBatch(.delete, connection) {
                    try batchDelete(try selectIDs(select, arguments, connection), table: table, connection)
                }
            }
        case .deleteObjects(let ids):
            let mine = ids.filter(holds)
            guard let first = mine.first else { return StoreBatchResult(count: 0, objectIDs: []) }
            let table = schema.tables[try layout(of: first.entity).tableIndex]
            return try withWriteConnection(.sqlite, "batch deleting \(first.entity.name) failed") { connection in
                try recordingBatch(.delete, connection) {
                    // Only objects that exist, with their stored entity.
                    var existing: [ManagedObjectID] = []
                    for chunk in Self.chunks(mine.map(\.primaryKey)) {
                        existing += try selectIDs("SELECT \"Z_PK\", \"Z_ENT\" FROM \(SQLiteSchema.quote(table.name)) WHERE \"Z_PK\" IN (\(Self.placeholders(chunk.count)))",
                                                  chunk.map { .integer($0) }, connection)
                    }
                    return try batchDelete(existing, table: table, connection)
                }
            }
        }
    }

    private static func chunks(_ keys: [Int64]) -> [[Int64]] {
        stride(from: 0, to: keys.count, by: 500).map { Array(keys[$0..<min($0 + 500, keys.count)]) }
    }

    private static func placeholders(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    private func selectIDs(_ sql: String, _ arguments: [StoreValue], _ connection: SQLiteConnection) throws -> [ManagedObjectID] {
        var ids: [ManagedObjectID] = []
        try connection.prepare(sql).forEachRow(arguments) { statement in
            guard let entity = schema.entitiesByNumber[Int(statement.int64(1))] else { return }
            ids.append(ManagedObjectID(entity: entity, store: storeToken, primaryKey: statement.int64(0)))
        }
        return ids
    }

    /// Inserts `rows` (each the values of `entity`'s slots, in order; missing ones null) as new
    /// objects under keys reserved for them, as a save inserts its rows: in runs of several
    /// rows a statement (``insertRows(_:keys:assigned:keyPlan:_:maxKeyByRoot:)``).
    private func batchInsert(_ entity: EntityDescription, _ rows: [[StoreValue]]) throws -> StoreBatchResult {
        guard !rows.isEmpty else { return StoreBatchResult(count: 0, objectIDs: []) }
        let plan = try writePlan(for: entity)
        let count = rows.count
        let slotCount = entity.slots.count
        return try withWriteConnection(.sqlite, "batch inserting \(entity.name) failed") { connection in
            try recordingBatch(.insert, connection) {
                let first = try reserveKeys(Int64(count), sequence: plan.keySequence, connection)
                // Allocated in this transaction, as a save's keys are: within Z_MAX already.
                let keys = AssignedKeys(consecutiveFrom: first, count: count, store: storeToken)
                let ids = (0..<Int64(count)).map { ManagedObjectID(entity: entity, store: storeToken, primaryKey: first + $0) }
                let snapshots = zip(ids, rows).map { id, values in
                    RowSnapshot(objectID: id, version: 1, values: values.count >= slotCount
                                ? values : values + Array(repeating: .null, count: slotCount - values.count))
                }
                // Stays empty: every key is an allocated one.
                var maxKeyByRoot: [Int: Int64] = [:]
                try snapshots.withUnsafeBufferPointer { rows in
                    try insertRows(rows, keys: keys, assigned: keys, keyPlan: plan, connection, maxKeyByRoot: &maxKeyByRoot)
                }
                return StoreBatchResult(count: count, objectIDs: ids)
            }
        }
    }

    private func batchUpdate(_ fetch: StoreFetchRequest, _ assignments: [StoreBatchAssignment]) throws -> StoreBatchResult {
        var compiler = SQLitePredicateCompiler(schema: schema, entity: fetch.entity)
        let (table, whereSQL, whereArguments) = try whereClause(fetch, &compiler)
        let select = "SELECT \"t0\".\"Z_PK\", \"t0\".\"Z_ENT\" FROM \(fromClause(table, compiler))\(whereSQL)"

        // SET expressions may read the row's own attributes only: an UPDATE cannot join.
        var values = SQLiteExpressionSQL(compiler: SQLitePredicateCompiler(schema: schema, entity: fetch.entity))
        var sets: [String] = []
        for assignment in assignments {
            guard let (_, column) = schema.column(named: assignment.attribute.name, of: fetch.entity) else {
                throw PersistenceError(.persistentStoreOperation, "no column holds \(fetch.entity.name).\(assignment.attribute.name)",
                                       key: assignment.attribute.name, path: url?.path)
            }
            var expression = assignment.value
            if case .constant(let constant) = expression {
                expression = .constant(try Self.batchValue(constant, for: assignment.attribute, objectID: nil))
            }
            let (sql, _) = try values.sql(expression)
            sets.append("\(SQLiteSchema.quote(column.name)) = \(sql)")
        }
        if !values.compiler.joins.isEmpty {
            throw SQLiteExpressionSQL.unsupported("key paths through relationships in propertiesToUpdate")
        }
        sets.append("\"Z_OPT\" = \"Z_OPT\" + 1")
        let keys = "SELECT \"t0\".\"Z_PK\" FROM \(fromClause(table, compiler))\(whereSQL)"
        let update = "UPDATE \(SQLiteSchema.quote(table.name)) AS \"t0\" SET \(sets.joined(separator: ", ")) WHERE \"t0\".\"Z_PK\" IN (\(keys))"
        let setArguments = values.arguments
        return try withWriteConnection(.sqlite, "batch updating \(fetch.entity.name) failed") { connection in
            try recordingBatch(.update(assignments.map(\.attribute.name)), connection) {
                let ids = try selectIDs(select, whereArguments, connection)
                try connection.execute(update, setArguments + whereArguments)
                return StoreBatchResult(count: ids.count, objectIDs: ids)
            }
        }
    }

    /// Deletes `ids` (all in `table`), their join-table rows, and clears the foreign keys that
    /// pointed at them; runs inside the caller's transaction.
    private func batchDelete(_ ids: [ManagedObjectID], table: SQLiteSchema.Table, _ connection: SQLiteConnection) throws -> StoreBatchResult {
        var nullified: [ManagedObjectID] = []
        var nullifiedSeen: Set<ManagedObjectID> = []
        let deleted = Set(ids)
        for chunk in Self.chunks(ids.map(\.primaryKey)) {
            let keys: [StoreValue] = chunk.map { .integer($0) }
            let list = Self.placeholders(chunk.count)
            try connection.execute("DELETE FROM \(SQLiteSchema.quote(table.name)) WHERE \"Z_PK\" IN (\(list))", keys)
            for join in schema.joinTables {
                if let source = join.relationship.entity, schema.table(of: source)?.name == table.name {
                    try connection.execute("DELETE FROM \(SQLiteSchema.quote(join.name)) WHERE \(SQLiteSchema.quote(join.sourceColumn)) IN (\(list))", keys)
                }
                if let destination = join.relationship.destinationEntity, schema.table(of: destination)?.name == table.name {
                    try connection.execute("DELETE FROM \(SQLiteSchema.quote(join.name)) WHERE \(SQLiteSchema.quote(join.destinationColumn)) IN (\(list))", keys)
                }
            }
            for other in schema.tables {
                for column in other.columns {
                    guard case .foreignKey(let relationship) = column.kind, let destination = relationship.destinationEntity,
                          schema.table(of: destination)?.name == table.name else { continue }
                    let fk = SQLiteSchema.quote(column.name)
                    for id in try selectIDs("SELECT \"Z_PK\", \"Z_ENT\" FROM \(SQLiteSchema.quote(other.name)) WHERE \(fk) IN (\(list))", keys, connection)
                    where !deleted.contains(id) && nullifiedSeen.insert(id).inserted {
                        nullified.append(id)
                    }
                    var sets = ["\(fk) = NULL"]
                    if let entityColumn = other.columns.first(where: {
                        if case .foreignEntity(let r) = $0.kind { return r === relationship }
                        return false
                    }) {
                        sets.append("\(SQLiteSchema.quote(entityColumn.name)) = NULL")
                    }
                    sets.append("\"Z_OPT\" = \"Z_OPT\" + 1")
                    try connection.execute("UPDATE \(SQLiteSchema.quote(other.name)) SET \(sets.joined(separator: ", ")) WHERE \(fk) IN (\(list))", keys)
                }
            }
        }
        return StoreBatchResult(count: ids.count, objectIDs: ids, nullifiedObjectIDs: nullified)
    }
}
