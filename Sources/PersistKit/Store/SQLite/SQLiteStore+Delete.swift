import Foundation

/// A save's deleted rows (docs/stores.md, "Deleting rows in runs"): in the order of their
/// entities' numbers and their keys, whole runs of ``SQLiteStore/deleteManyRows`` rows of one
/// entity in one `DELETE` each, the rest one at a time, each run's join-table memberships
/// with it.
extension SQLiteStore {
    /// The most rows one `DELETE` of a save removes (``WriteColumns/deleteManySQL``). Measured
    /// with 50,000 rows of ten integers deleted in key order through the C API: 18.6-20.5 ms at
    /// one row a statement, 11.5-14.9 ms at 32 (an `OR` of 32 key-and-version terms, which SQLite
    /// runs as one look-up of the integer primary key each); 16 and 64 rows within the noise
    /// of 32. Each row binds two parameters, so 32 rows stay within ``insertParameterBudget``.
    static let deleteManyRows = 32

    /// Where one row of a save's updated or deleted rows stands in the order they are written in.
    struct WriteOrderEntry {
        /// `Z_ENT` of the row's entity.
        var entityNumber: Int
        /// The row's primary key.
        var key: Int64
        /// The row's position in the request's list.
        var position: Int
    }

    /// The statements that delete the join-table memberships of one entity's rows: one per join
    /// table and side whose entity is the row's or one of its superentities'.
    struct JoinRowsDelete: Sendable {
        /// ``SQLiteWriteStatementKey/deleteJoinRows(joinTable:side:)``.
        var key: Int
        /// `DELETE FROM <join table> WHERE <column> = ?`.
        var sql: String
        /// ``SQLiteWriteStatementKey/deleteManyJoinRows(joinTable:side:)``.
        var manyKey: Int
        /// `DELETE FROM <join table> WHERE <column> IN (?, …)`, ``SQLiteStore/deleteManyRows`` keys.
        var manySQL: String
    }

    /// The join-table deletes of rows of `entity`, in the order of the schema's join tables,
    /// the source side before the destination side (both, for a relationship from an entity to
    /// itself).
    func joinRowsDeletes(of entity: EntityDescription) -> [JoinRowsDelete] {
        var deletes: [JoinRowsDelete] = []
        for (index, join) in schema.joinTables.enumerated() {
            let sides = [(join.relationship.entity, join.sourceColumn), (join.relationship.destinationEntity, join.destinationColumn)]
            for (side, (sideEntity, column)) in sides.enumerated() {
                guard let sideEntity, entity.isKind(of: sideEntity) else { continue }
                let start = "DELETE FROM \(SQLiteSchema.quote(join.name)) WHERE \(SQLiteSchema.quote(column))"
                deletes.append(JoinRowsDelete(
                    key: SQLiteWriteStatementKey.deleteJoinRows(joinTable: index, side: side), sql: start + " = ?",
                    manyKey: SQLiteWriteStatementKey.deleteManyJoinRows(joinTable: index, side: side),
                    manySQL: start + " IN (" + repeatElement("?", count: Self.deleteManyRows).joined(separator: ", ") + ")"))
            }
        }
        return deletes
    }

    /// The order to write `rows` in: by entity number, then by key. A B-tree changes rows in
    /// key order faster than in any other: the pages it touches are neighbours, mostly in
    /// cache. (The context lists its updated and deleted objects in a table's order, which is
    /// no order at all; 50,000 one-row `DELETE`s in a random order took 37 ms in SQLite,
    /// against 19 ms in key order.) Already ordered rows are not sorted. Throws for a row with a
    /// temporary ID or of an entity the store does not hold.
    func writeOrder(_ rows: UnsafeBufferPointer<RowSnapshot>) throws -> [WriteOrderEntry] {
        var entries: [WriteOrderEntry] = []
        entries.reserveCapacity(rows.count)
        var ordered = true
        // The entity of the last row and its number: rows come in runs of one entity, whose
        // plan is looked up once per run (per row, its entity and plan were retained and released).
        var lastEntity: ObjectIdentifier?
        var lastNumber = 0
        for position in rows.indices {
            if rows[position].isTemporaryID { throw temporaryRowError(rows[position]) }
            let entity = ObjectIdentifier(rows[position].entity)
            if entity != lastEntity {
                lastNumber = try writePlan(for: rows[position].entity).layout.number
                lastEntity = entity
            }
            let entry = WriteOrderEntry(entityNumber: lastNumber, key: rows[position].primaryKey, position: position)
            if let last = entries.last, (last.entityNumber, last.key) > (entry.entityNumber, entry.key) { ordered = false }
            entries.append(entry)
        }
        if !ordered { entries = Self.sortedForWriting(entries) }
        return entries
    }

    /// The end of the run of entries of one entity that starts at `start` in `order`, a
    /// ``writeOrder(_:)``.
    static func entityRunEnd(_ order: [WriteOrderEntry], from start: Int) -> Int {
        var end = start + 1
        while end < order.count && order[end].entityNumber == order[start].entityNumber { end += 1 }
        return end
    }

    /// `entries` sorted by entity number, then key: by a radix sort when there are many and
    /// both fit one 64-bit number together (always, but for keys near 2^63), by comparisons
    /// otherwise. Sorting by comparisons took about 490 instructions an entry in a hash table's
    /// order (workload 9 under callgrind, 5,000 rows); the radix sort took the workload from
    /// 8,085 to 7,789 instructions an object.
    static func sortedForWriting(_ entries: [WriteOrderEntry]) -> [WriteOrderEntry] {
        if entries.count >= radixSortMinimum, let sorted = radixSorted(entries) { return sorted }
        return entries.sorted { ($0.entityNumber, $0.key) < ($1.entityNumber, $1.key) }
    }

    /// The fewest entries ``sortedForWriting(_:)`` sorts by radix: below, the counting arrays
    /// cost more than the comparisons.
    static let radixSortMinimum = 256

    /// `entries` sorted by entity number, then key, least significant digit first (11 bits a
    /// pass, stable), each entry's number made of its entity number above its key's bits; `nil`
    /// when that number would not fit 64 bits or a key or entity number is negative.
    static func radixSorted(_ entries: [WriteOrderEntry]) -> [WriteOrderEntry]? {
        var maxKey: Int64 = 0
        var maxEntity = 0
        for entry in entries {
            if entry.key < 0 || entry.entityNumber < 0 { return nil }
            maxKey = max(maxKey, entry.key)
            maxEntity = max(maxEntity, entry.entityNumber)
        }
        let keyBits = UInt64(Int64.bitWidth - maxKey.leadingZeroBitCount)
        let totalBits = Int(keyBits) + (Int.bitWidth - maxEntity.leadingZeroBitCount)
        guard totalBits <= 64 else { return nil }
        let digitBits: UInt64 = 11
        let mask: UInt64 = (1 << digitBits) - 1
        var source = entries
        var target = entries
        var counts = [Int](repeating: 0, count: 1 << digitBits)
        var shift: UInt64 = 0
        while shift < UInt64(totalBits) {
            source.withUnsafeBufferPointer { from in
                target.withUnsafeMutableBufferPointer { to in
                    counts.withUnsafeMutableBufferPointer { counts in
                        @inline(__always) func digit(_ entry: WriteOrderEntry) -> Int {
                            Int(((UInt64(entry.entityNumber) << keyBits | UInt64(entry.key)) >> shift) & mask)
                        }
                        for index in counts.indices { counts[index] = 0 }
                        for entry in from { counts[digit(entry)] += 1 }
                        // Each digit's first place in `to`.
                        var start = 0
                        for index in counts.indices {
                            let count = counts[index]
                            counts[index] = start
                            start += count
                        }
                        for entry in from {
                            let place = digit(entry)
                            to[counts[place]] = entry
                            counts[place] += 1
                        }
                    }
                }
            }
            swap(&source, &target)
            shift += digitBits
        }
        return source
    }

    /// Deletes `rows` in `order` (``writeOrder(_:)`` of `rows`), each only at the version it was
    /// read at; throws an optimistic-locking conflict when another save changed or deleted one.
    /// Each row's memberships in join tables go with it.
    func deleteRows(_ rows: [RowSnapshot], in order: [WriteOrderEntry], _ connection: SQLiteConnection) throws {
        if rows.isEmpty { return }
        try rows.withUnsafeBufferPointer { rows in
            var position = 0
            while position < order.count {
                let number = order[position].entityNumber
                let end = Self.entityRunEnd(order, from: position)
                let plan = try writePlan(for: rows[order[position].position].entity)
                // Read out of the plan once per run (see insertRows).
                let columns = plan.columns
                let many = Self.deleteManyRows
                if end - position >= many {
                    // Every parameter is bound before each step: the last save's are not cleared.
                    let statement = try connection.cachedStatement(key: SQLiteWriteStatementKey.deleteMany(entityNumber: number),
                                                                   keepingBindings: true) { columns.deleteManySQL }
                    repeat {
                        let run = order[position..<(position + many)]
                        // The first key through `bind`, which readies the statement after its last step.
                        try statement.bind(.integer(order[position].key), at: 1)
                        try statement.bindInteger(rows[order[position].position].version, at: 2)
                        var index: Int32 = 3
                        for entry in run.dropFirst() {
                            try statement.bindInteger(entry.key, at: index)
                            try statement.bindInteger(rows[entry.position].version, at: index + 1)
                            index += 2
                        }
                        while try statement.step() {}
                        statement.resetKeepingBindings()
                        let deleted = connection.changes
                        if deleted != many { throw deleteRunConflict(rows, run, deleted: deleted, plan, connection) }
                        try deleteJoinRows(of: run, columns.joinRowsDeletes, connection)
                        position += many
                    } while end - position >= many
                }
                guard position < end else { continue }
                // The rest one at a time.
                let statement = try connection.cachedStatement(key: SQLiteWriteStatementKey.delete(entityNumber: number),
                                                               keepingBindings: true) { columns.deleteSQL }
                repeat {
                    let entry = order[position]
                    try statement.bind(.integer(entry.key), at: 1)
                    try statement.bindInteger(rows[entry.position].version, at: 2)
                    while try statement.step() {}
                    statement.resetKeepingBindings()
                    if connection.changes == 0 {
                        throw conflict(rows[entry.position], connection, schema.tables[plan.layout.tableIndex])
                    }
                    try deleteJoinRows(of: order[position..<(position + 1)], columns.joinRowsDeletes, connection)
                    position += 1
                } while position < end
            }
        }
    }

    /// Deletes the join-table memberships of the rows of `entries` (one, or
    /// ``deleteManyRows``, of one entity) through `deletes`, that entity's statements.
    private func deleteJoinRows(of entries: ArraySlice<WriteOrderEntry>, _ deletes: [JoinRowsDelete],
                                _ connection: SQLiteConnection) throws {
        for delete in deletes {
            let one = entries.count == 1
            let statement = try connection.cachedStatement(key: one ? delete.key : delete.manyKey, keepingBindings: true) {
                one ? delete.sql : delete.manySQL
            }
            var index: Int32 = 1
            for entry in entries {
                // The first through `bind`, which readies the statement after its last step.
                if index == 1 { try statement.bind(.integer(entry.key), at: 1) } else { try statement.bindInteger(entry.key, at: index) }
                index += 1
            }
            while try statement.step() {}
            statement.resetKeepingBindings()
        }
    }

    /// The conflict of a `DELETE` of several rows that removed `deleted` of them, not all: the
    /// first row of the run still in the table (at a version another save gave it), or, when
    /// none is left, the run as a whole (the rows another save deleted cannot be told from
    /// those this statement deleted). The context reads every row again to resolve the
    /// conflict, so it sees which.
    private func deleteRunConflict(_ rows: UnsafeBufferPointer<RowSnapshot>, _ run: ArraySlice<WriteOrderEntry>, deleted: Int,
                                   _ plan: EntityWritePlan, _ connection: SQLiteConnection) -> PersistenceError {
        let table = schema.tables[plan.layout.tableIndex]
        let sql = "SELECT \"Z_OPT\" FROM \(SQLiteSchema.quote(table.name)) WHERE \"Z_PK\" = ?"
        for entry in run where (try? connection.int64(sql, [.integer(entry.key)])) != nil {
            return conflict(rows[entry.position], connection, table)
        }
        let keys = run.map { String($0.key) }.joined(separator: ", ")
        return PersistenceError(.managedObjectMerge,
                                "optimistic locking failure: \(run.count - deleted) of the \(run.count) \(plan.entity.name) rows deleted together"
                                + " (keys \(keys)) had been deleted by another save")
    }
}
