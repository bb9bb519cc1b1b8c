import Foundation

extension SQLiteStore {
    /// The columns a row of `layout`'s entity writes, with where each value comes from.
    enum WriteValue: Sendable {
        case slot(Int)
        case slotEntity(Int)
    }

    struct WriteColumns: Sendable {
        var names: [String]
        var values: [WriteValue]
        /// `INSERT INTO … (Z_PK, Z_ENT, Z_OPT, …) VALUES (?, …)`, built once per entity.
        var insertSQL = ""
        /// `UPDATE … SET … , Z_OPT = Z_OPT + 1 WHERE Z_PK = ? AND Z_OPT = ?`, built once per entity.
        var updateSQL = ""
    }

    private func writeColumns(_ layout: SQLiteSchema.EntityLayout) -> WriteColumns {
        let table = schema.tables[layout.tableIndex]
        var columns = WriteColumns(names: [], values: [])
        for (slot, mapping) in layout.slotColumns.enumerated() {
            switch mapping {
            case .none: continue
            case .attribute(let index, _):
                columns.names.append(table.columns[index].name)
                columns.values.append(.slot(slot))
            case .toOne(let index, let entityIndex, _):
                columns.names.append(table.columns[index].name)
                columns.values.append(.slot(slot))
                if let entityIndex {
                    columns.names.append(table.columns[entityIndex].name)
                    columns.values.append(.slotEntity(slot))
                }
            }
        }
        let quotedTable = SQLiteSchema.quote(table.name)
        let insertNames = ["Z_PK", "Z_ENT", "Z_OPT"] + columns.names
        columns.insertSQL = "INSERT INTO \(quotedTable) (\(insertNames.map(SQLiteSchema.quote).joined(separator: ", "))) VALUES (\(insertNames.map { _ in "?" }.joined(separator: ", ")))"
        let sets = (columns.names.map { "\(SQLiteSchema.quote($0)) = ?" } + ["\"Z_OPT\" = \"Z_OPT\" + 1"]).joined(separator: ", ")
        columns.updateSQL = "UPDATE \(quotedTable) SET \(sets) WHERE \"Z_PK\" = ? AND \"Z_OPT\" = ?"
        return columns
    }

    private func arguments(_ row: RowSnapshot, _ columns: WriteColumns) throws -> [StoreValue] {
        try columns.values.map { source in
            switch source {
            case .slot(let slot):
                guard slot < row.values.count else {
                    throw PersistenceError(.persistentStoreSave, "the row has \(row.values.count) values, fewer than the entity's slots", objectID: row.objectID)
                }
                let value = row.values[slot]
                if case .object(let id) = value, id.isTemporaryID {
                    throw PersistenceError(.persistentStoreSave, "a relationship points to an object with a temporary ID \(id)", objectID: row.objectID)
                }
                return value
            case .slotEntity(let slot):
                guard slot < row.values.count, case .object(let id) = row.values[slot] else { return .null }
                return schema.layout(of: id.entity).map { .integer(Int64($0.number)) } ?? .null
            }
        }
    }

    /// Writes `changes` in one `BEGIN IMMEDIATE` transaction; on any error it rolls back, so a
    /// failed save changes nothing on disk.
    ///
    /// Deletes first (with their join-table rows), then inserts (version 1), then updates
    /// (`Z_OPT = Z_OPT + 1 WHERE Z_OPT = <version read>`: no row changed is a conflict,
    /// thrown as `managedObjectMerge`), then to-many changes: join-table rows from the
    /// canonical side, `Z_FOK_` orders for ordered relationships. One-to-many membership is in
    /// the destination rows' foreign keys, so those changes are ignored.
    public func save(_ changes: StoreSaveRequest) throws {
        guard !changes.isEmpty else { return }
        guard !isReadOnly else { throw readOnlyError("save") }
        // Noted only once committed: a rolled-back number may be reused by another process.
        var historyNumber: Int64?
        // One write of a group commit: the group's transaction holds it, with other saves.
        try inGroupCommit("saving to the store failed") { connection in
            historyNumber = nil
            // Built once per entity for the store's life (the schema does not change).
            func columns(_ layout: SQLiteSchema.EntityLayout) -> WriteColumns {
                if let known = writeColumnsCache.withLock({ $0[layout.number] }) { return known }
                let computed = writeColumns(layout)
                writeColumnsCache.withLock { $0[layout.number] = computed }
                return computed
            }

            for row in changes.deleted { try delete(row, connection) }

            var maxKeyByRoot: [Int: Int64] = [:]
            for row in changes.inserted {
                let layout = try checkedLayout(row)
                let write = columns(layout)
                let table = schema.tables[layout.tableIndex]
                try connection.cachedStatement(write.insertSQL).execute(
                    [.integer(row.objectID.primaryKey), .integer(Int64(layout.number)), .integer(1)] + arguments(row, write))
                let root = schema.layout(of: table.root)?.number ?? layout.number
                maxKeyByRoot[root] = max(maxKeyByRoot[root] ?? 0, row.objectID.primaryKey)
            }

            for row in changes.updated {
                let layout = try checkedLayout(row)
                let write = columns(layout)
                let table = schema.tables[layout.tableIndex]
                try connection.cachedStatement(write.updateSQL).execute(try arguments(row, write) + [.integer(row.objectID.primaryKey), .integer(row.version)])
                if connection.changes == 0 { throw conflict(row, connection, table) }
            }

            try applyToManyChanges(changes.toManyChanges, connection)
            try checkUniqueness(of: changes.inserted + changes.updated, connection)

            // Keep Z_MAX at or above every key written, in case keys came from elsewhere.
            for (root, key) in maxKeyByRoot.sorted(by: { $0.key < $1.key }) {
                try connection.execute("UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = ? WHERE \"Z_ENT\" = ? AND \"Z_MAX\" < ?",
                                       [.integer(key), .integer(Int64(root)), .integer(key)])
            }
            if isHistoryTracked { historyNumber = try recordHistory(changes, connection) }
        }
        if let historyNumber { noteOwnTransaction(historyNumber) }
    }

    private func checkedLayout(_ row: RowSnapshot) throws -> SQLiteSchema.EntityLayout {
        guard !row.objectID.isTemporaryID else {
            throw PersistenceError(.persistentStoreSave, "an object with a temporary ID cannot be written", objectID: row.objectID)
        }
        return try layout(of: row.objectID.entity)
    }

    private func conflict(_ row: RowSnapshot, _ connection: SQLiteConnection, _ table: SQLiteSchema.Table) -> PersistenceError {
        let current = try? connection.int64("SELECT \"Z_OPT\" FROM \(SQLiteSchema.quote(table.name)) WHERE \"Z_PK\" = ?", [.integer(row.objectID.primaryKey)])
        let what = current.map { "was changed by another save (version \($0), read at version \(row.version))" }
            ?? "was deleted by another save"
        return PersistenceError(.managedObjectMerge, "optimistic locking failure: \(row.objectID) \(what)", objectID: row.objectID)
    }

    private func delete(_ row: RowSnapshot, _ connection: SQLiteConnection) throws {
        let layout = try checkedLayout(row)
        let table = schema.tables[layout.tableIndex]
        try connection.execute("DELETE FROM \(SQLiteSchema.quote(table.name)) WHERE \"Z_PK\" = ? AND \"Z_OPT\" = ?",
                               [.integer(row.objectID.primaryKey), .integer(row.version)])
        if connection.changes == 0 { throw conflict(row, connection, table) }
        let key: [StoreValue] = [.integer(row.objectID.primaryKey)]
        for join in schema.joinTables {
            if let source = join.relationship.entity, layout.entity.isKind(of: source) {
                try connection.execute("DELETE FROM \(SQLiteSchema.quote(join.name)) WHERE \(SQLiteSchema.quote(join.sourceColumn)) = ?", key)
            }
            if let destination = join.relationship.destinationEntity, layout.entity.isKind(of: destination) {
                try connection.execute("DELETE FROM \(SQLiteSchema.quote(join.name)) WHERE \(SQLiteSchema.quote(join.destinationColumn)) = ?", key)
            }
        }
    }

    /// Join-table membership from the canonical side, then the orders of ordered relationships.
    private func applyToManyChanges(_ changes: [StoreSaveRequest.ToManyChange], _ connection: SQLiteConnection) throws {
        for change in changes {
            guard let join = schema.joinTable(of: change.relationship), join.relationship === change.relationship else { continue }
            let table = SQLiteSchema.quote(join.name)
            let source = SQLiteSchema.quote(join.sourceColumn)
            let destination = SQLiteSchema.quote(join.destinationColumn)
            for removed in change.removed {
                try connection.execute("DELETE FROM \(table) WHERE \(source) = ? AND \(destination) = ?",
                                       [.integer(change.source.primaryKey), .integer(removed.primaryKey)])
            }
            for added in change.added {
                try checkPermanent(added, change)
                try connection.execute("INSERT OR IGNORE INTO \(table) (\(source), \(destination)) VALUES (?, ?)",
                                       [.integer(change.source.primaryKey), .integer(added.primaryKey)])
            }
        }
        for change in changes where change.relationship.isOrdered {
            guard let order = change.order else { continue }
            if let join = schema.joinTable(of: change.relationship) {
                let canonical = join.relationship === change.relationship
                guard let orderColumn = canonical ? join.destinationOrderColumn : join.sourceOrderColumn else { continue }
                let mine = SQLiteSchema.quote(canonical ? join.sourceColumn : join.destinationColumn)
                let theirs = SQLiteSchema.quote(canonical ? join.destinationColumn : join.sourceColumn)
                let sql = "UPDATE \(SQLiteSchema.quote(join.name)) SET \(SQLiteSchema.quote(orderColumn)) = ? WHERE \(mine) = ? AND \(theirs) = ?"
                for (position, member) in order.enumerated() {
                    try connection.execute(sql, [.integer(Int64(position + 1)), .integer(change.source.primaryKey), .integer(member.primaryKey)])
                }
            } else if let destination = change.relationship.destinationEntity, let table = schema.table(of: destination),
                      let orderColumn = schema.orderColumn(ofOrdered: change.relationship) {
                let sql = "UPDATE \(SQLiteSchema.quote(table.name)) SET \(SQLiteSchema.quote(orderColumn)) = ? WHERE \"Z_PK\" = ?"
                for (position, member) in order.enumerated() {
                    try checkPermanent(member, change)
                    try connection.execute(sql, [.integer(Int64(position + 1)), .integer(member.primaryKey)])
                }
            }
        }
    }

    private func checkPermanent(_ id: ManagedObjectID, _ change: StoreSaveRequest.ToManyChange) throws {
        if id.isTemporaryID {
            throw PersistenceError(.persistentStoreSave, "\(change.relationship.name) holds an object with a temporary ID \(id)",
                                   objectID: change.source, key: change.relationship.name)
        }
    }
}
