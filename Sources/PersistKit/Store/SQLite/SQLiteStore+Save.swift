import Foundation

extension SQLiteStore: InTransactionKeyAssigning {
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
        /// How many rows ``insertManySQL`` inserts at once; 1 when the entity has too many
        /// columns for several rows to fit in ``insertParameterBudget`` (then there is none).
        var insertManyRows = 1
        /// `INSERT INTO … (Z_PK, Z_ENT, Z_OPT, …) VALUES (?, <entity>, 1, ?, …), (…), …`:
        /// ``insertManyRows`` rows in one statement, the key and the columns bound, the entity
        /// number and the first version written as literals (they are the same for every row).
        var insertManySQL = ""
        /// `UPDATE … SET … , Z_OPT = Z_OPT + 1 WHERE Z_PK = ? AND Z_OPT = ?`, built once per entity.
        var updateSQL = ""
        /// `DELETE FROM … WHERE Z_PK = ? AND Z_OPT = ?`.
        var deleteSQL = ""
        /// `DELETE FROM … WHERE (Z_PK = ? AND Z_OPT = ?) OR (…) …`: ``SQLiteStore/deleteManyRows``
        /// rows in one statement.
        var deleteManySQL = ""
        /// The statements that delete the entity's rows' join-table memberships.
        var joinRowsDeletes: [JoinRowsDelete] = []
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
        let quotedNames = insertNames.map(SQLiteSchema.quote).joined(separator: ", ")
        columns.insertSQL = "INSERT INTO \(quotedTable) (\(quotedNames)) VALUES (\(insertNames.map { _ in "?" }.joined(separator: ", ")))"
        // The key and each column are parameters; the entity number and version are not.
        let manyRows = min(Self.insertManyMaximumRows, Self.insertParameterBudget / (1 + columns.names.count))
        if manyRows > 1 {
            let row = "(" + (["?", String(layout.number), "1"] + columns.names.map { _ in "?" }).joined(separator: ", ") + ")"
            columns.insertManyRows = manyRows
            columns.insertManySQL = "INSERT INTO \(quotedTable) (\(quotedNames)) VALUES " + repeatElement(row, count: manyRows).joined(separator: ", ")
        }
        let sets = (columns.names.map { "\(SQLiteSchema.quote($0)) = ?" } + ["\"Z_OPT\" = \"Z_OPT\" + 1"]).joined(separator: ", ")
        columns.updateSQL = "UPDATE \(quotedTable) SET \(sets) WHERE \"Z_PK\" = ? AND \"Z_OPT\" = ?"
        let deleteTerm = "\"Z_PK\" = ? AND \"Z_OPT\" = ?"
        columns.deleteSQL = "DELETE FROM \(quotedTable) WHERE \(deleteTerm)"
        columns.deleteManySQL = "DELETE FROM \(quotedTable) WHERE " + repeatElement("(\(deleteTerm))", count: Self.deleteManyRows).joined(separator: " OR ")
        columns.joinRowsDeletes = joinRowsDeletes(of: layout.entity)
        return columns
    }

    /// The most rows one `INSERT` of a save writes (``WriteColumns/insertManySQL``). Measured
    /// with 50,000 rows of ten integers (docs/stores.md, "Inserting rows in runs"): one row a
    /// statement took about 25 % longer in SQLite than 25 to 50, most of it the step, reset and
    /// halt each statement costs; 32 and 64 rows are within each other's noise, and 64 rows'
    /// prepared statement takes twice the memory.
    static let insertManyMaximumRows = 32

    /// The most parameters one `INSERT` of several rows binds. A prepared statement takes about
    /// 90 bytes a parameter (`SQLITE_STMTSTATUS_MEMUSED`), and each entity saved in runs keeps
    /// one per connection: 500 keeps each under about 45 KiB, and below SQLite's limit on a
    /// statement's parameters (999 before version 3.32) whatever the library was built with.
    static let insertParameterBudget = 500

    /// What writing rows of one entity needs, worked out once per entity for the store's life
    /// (the schema does not change): looking up the layout (by entity name), the key sequence
    /// (by the root's name) and the columns at every save cost more than binding the row.
    final class EntityWritePlan: Sendable {
        /// The entity the plan was made for; kept, so the identity the cache is keyed by
        /// cannot be reused by another entity.
        let entity: EntityDescription
        let layout: SQLiteSchema.EntityLayout
        /// See ``SQLiteStore/keySequence(of:)``.
        let keySequence: Int
        let columns: WriteColumns

        init(entity: EntityDescription, layout: SQLiteSchema.EntityLayout, keySequence: Int, columns: WriteColumns) {
            self.entity = entity
            self.layout = layout
            self.keySequence = keySequence
            self.columns = columns
        }
    }

    /// The write plan of `entity`, made on first use; throws when the store does not hold the
    /// entity (as ``layout(of:)``).
    func writePlan(for entity: EntityDescription) throws -> EntityWritePlan {
        // The plan found last, unretained: plans are never removed from `writePlans`, which
        // holds each for the store's life. One atomic load and a comparison instead of the
        // lock and a dictionary lookup, on the path of every save.
        let lastBits = lastWritePlan.load(ordering: .acquiring)
        if lastBits != 0 {
            // Force-unwrap: the bits are the nonzero address of a plan `writePlans` holds.
            let last = Unmanaged<EntityWritePlan>.fromOpaque(UnsafeRawPointer(bitPattern: lastBits)!).takeUnretainedValue()
            if last.entity === entity { return last }
        }
        let key = ObjectIdentifier(entity)
        let plan: EntityWritePlan
        if let known = writePlans.withLock({ $0[key] }) {
            plan = known
        } else {
            let layout = try layout(of: entity)
            let made = EntityWritePlan(entity: entity, layout: layout, keySequence: keySequence(of: layout), columns: writeColumns(layout))
            plan = writePlans.withLock { plans in
                let kept = plans[key] ?? made
                plans[key] = kept
                return kept
            }
        }
        lastWritePlan.store(UInt(bitPattern: Unmanaged.passUnretained(plan).toOpaque()), ordering: .releasing)
        return plan
    }

    /// Binds `row`'s column values to `statement`'s parameters from `firstIndex` on, as
    /// `columns` lays them out; returns the next parameter index.
    ///
    /// The statement must be ready for binding (a parameter bound through
    /// ``SQLiteStatement/bind(_:at:)`` first, which resets a stepped statement): integers are
    /// bound straight from the values, without a call through the general `bind`.
    /// `boundCopies` is set when a value that holds a reference (text, a blob) was bound: SQLite
    /// keeps its own copy until the bindings are cleared.
    ///
    /// The row is read through a pointer, in place: handed over as a value, it was copied out
    /// of the request's array first (too large for registers: two retains and two releases).
    private func bindColumns(_ row: UnsafePointer<RowSnapshot>, _ columns: WriteColumns, to statement: SQLiteStatement,
                             from firstIndex: Int32, boundCopies: inout Bool) throws -> Int32 {
        var index = firstIndex
        // Through the buffers: no retain, release or bounds check of the arrays per column.
        try columns.values.withUnsafeBufferPointer { sources in
            // In place, through the row's address: `row.pointee.values` would copy the values
            // and retain their storage for each row. Force-unwrap: `values` is a stored
            // property of the row, so it has an address.
            try SlotValues.withUnsafeBufferPointer(at: row.pointer(to: \.values)!) { values in
                for source in sources {
                    switch source {
                    case .slot(let slot):
                        guard slot < values.count else {
                            throw PersistenceError(.persistentStoreSave, "the row has \(values.count) values, fewer than the entity's slots", objectID: row.pointee.objectID)
                        }
                        switch values[slot] {
                        case .integer(let integer):
                            try statement.bindInteger(integer, at: index)
                        case .object(let id) where id.isTemporaryID:
                            throw PersistenceError(.persistentStoreSave, "a relationship points to an object with a temporary ID \(id)", objectID: row.pointee.objectID)
                        default:
                            if !values[slot].holdsNoReference { boundCopies = true }
                            try statement.bind(values[slot], at: index)
                        }
                    case .slotEntity(let slot):
                        if slot < values.count, case .object(let id) = values[slot] {
                            try statement.bind(schema.layout(of: id.entity).map { .integer(Int64($0.number)) } ?? .null, at: index)
                        } else {
                            try statement.bind(.null, at: index)
                        }
                    }
                    index += 1
                }
            }
        }
        return index
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
        _ = try write(changes, assigningKeys: false)
    }

    /// ``save(_:)`` for rows that may carry temporary IDs: their primary keys are allocated
    /// from `Z_PRIMARYKEY` inside the same transaction (see ``InTransactionKeyAssigning``).
    func saveAssigningKeys(_ changes: StoreSaveRequest) throws -> AssignedKeys {
        try write(changes, assigningKeys: true)
    }

    private func write(_ request: StoreSaveRequest, assigningKeys: Bool) throws -> AssignedKeys {
        guard !request.isEmpty else { return .none }
        guard !isReadOnly else { throw readOnlyError("save") }
        // Noted only once committed: a rolled-back number may be reused by another process.
        var historyNumber: Int64?
        // One write of a group commit: the group's transaction holds it, with other saves.
        let assignedKeys = try inGroupCommit(Self.saveFailure) { connection -> AssignedKeys in
            historyNumber = nil
            return try writeRows(request, assigningKeys: assigningKeys, connection, historyNumber: &historyNumber)
        }
        if let historyNumber { noteOwnTransaction(historyNumber) }
        return assignedKeys
    }

    /// What a failed save says failed.
    private static let saveFailure = "saving to the store failed"

    /// ``saveAssigningKeys(_:)`` without waiting: the write is queued for the group commit and
    /// this returns at once; `completion` gets the new objects' IDs (as `saveAssigningKeys`
    /// returns them) once the transaction committed, or the error, on the group commit's
    /// committer thread, or at once on this thread when nothing is to be written or the store
    /// is read-only, or, with `leadingIfIdle`, when this thread ran the transaction itself
    /// because nothing else was going on in the group commit (``inGroupCommitQueued(_:leadingIfIdle:_:completingOn:completion:)``).
    /// `completingOn`: where the committer thread has `completion` run instead.
    func saveAssigningKeysQueued(_ request: consuming StoreSaveRequest, leadingIfIdle: Bool = false,
                                 completingOn: CompletionExecutor? = nil,
                                 completion: @escaping (Result<AssignedKeys, any Error>) -> Void) {
        guard !request.isEmpty else { return completion(.success(.none)) }
        guard !isReadOnly else { return completion(.failure(readOnlyError("save"))) }
        // Each closure captures the one write object, which is then its context: capturing the
        // store, the request and the completion besides made each closure a context of its own.
        let write = QueuedWrite(store: self, request: request, completion: completion)
        inGroupCommitQueued(Self.saveFailure, leadingIfIdle: leadingIfIdle, { [write] connection in
            try write.run(on: connection)
        }, completingOn: completingOn, completion: { [write] failure in
            write.complete(failure)
        })
    }

    /// A queued save's write and what its statements produced, for its completion: the
    /// statements' results are set by the thread that leads its group, and read by the thread
    /// its completion runs on after the group ended (the commit queue's lock orders the two).
    private final class QueuedWrite {
        let store: SQLiteStore
        let request: StoreSaveRequest
        let completion: (Result<AssignedKeys, any Error>) -> Void
        var historyNumber: Int64?
        var assignedKeys = AssignedKeys.none

        init(store: SQLiteStore, request: consuming StoreSaveRequest, completion: @escaping (Result<AssignedKeys, any Error>) -> Void) {
            self.store = store
            self.request = request
            self.completion = completion
        }

        /// The save's statements, in the group's transaction.
        func run(on connection: SQLiteConnection) throws {
            historyNumber = nil
            assignedKeys = try store.writeRows(request, assigningKeys: true, connection, historyNumber: &historyNumber)
        }

        /// Once the group ended: `failure`, or the keys the statements assigned.
        func complete(_ failure: (any Error)?) {
            if let failure { return completion(.failure(failure)) }
            if let historyNumber { store.noteOwnTransaction(historyNumber) }
            completion(.success(assignedKeys))
        }
    }

    /// The statements of a save, run on `connection` inside the group's transaction: deletes,
    /// inserts (with keys assigned here when `assigningKeys`), updates, to-many changes,
    /// uniqueness checks, `Z_MAX` and history (its transaction number in `historyNumber`).
    /// Returns the keys assigned, as ``saveAssigningKeys(_:)`` does.
    fileprivate func writeRows(_ request: StoreSaveRequest, assigningKeys: Bool, _ connection: SQLiteConnection,
                               historyNumber: inout Int64?) throws -> AssignedKeys {
        // Keys for new objects, allocated in this transaction: rolled back with it.
        let (assigned, keyPlan) = assigningKeys ? try assignKeys(to: request.inserted, connection) : (AssignedKeys.none, nil)
        // Looked up once: the remapping below and the uniqueness checks both need them.
        let constrained = (inserted: Self.anyConstrained(request.inserted), updated: Self.anyConstrained(request.updated))
        // The request with permanent IDs everywhere, when anything besides the inserted rows'
        // own keys needs them; otherwise (the common case: no references to new objects, no
        // uniqueness checks, no to-many changes) the rows keep their temporary IDs and each
        // inserted row's key is read from `keys`, by position, with no copy of the request
        // (history too takes the inserted rows' IDs from `keys`).
        if !assigned.isEmpty && needsRemappedRequest(request, constrained: constrained.inserted || constrained.updated) {
            try writeRows(of: request.remapped(assigned.objectIDs(of: request.inserted)), keys: .none, assigned: assigned,
                          keyPlan: keyPlan, constrained: constrained, connection, historyNumber: &historyNumber)
        } else {
            // Passed on as it is: not copied (and its arrays retained) into a local first.
            try writeRows(of: request, keys: assigned, assigned: assigned,
                          keyPlan: keyPlan, constrained: constrained, connection, historyNumber: &historyNumber)
        }
        return assigned
    }

    /// The statements of ``writeRows(_:assigningKeys:_:historyNumber:)`` once keys are assigned:
    /// `changes` are the rows to write, `keys` the keys of its inserted rows that still carry
    /// temporary IDs (by position), `assigned` every key the transaction handed out (already
    /// within `Z_MAX`), `keyPlan` the write plan the keys were taken with, `constrained`
    /// whether inserted or updated rows have uniqueness constraints to check.
    private func writeRows(of changes: StoreSaveRequest, keys: AssignedKeys, assigned: AssignedKeys, keyPlan: EntityWritePlan?,
                           constrained: (inserted: Bool, updated: Bool), _ connection: SQLiteConnection,
                           historyNumber: inout Int64?) throws {
        // The deleted rows' order, for their DELETEs and their history.
        let deleteOrder = try changes.deleted.withUnsafeBufferPointer { try writeOrder($0) }
        try deleteRows(changes.deleted, in: deleteOrder, connection)

        var maxKeyByRoot: [Int: Int64] = [:]
        try changes.inserted.withUnsafeBufferPointer { rows in
            try insertRows(rows, keys: keys, assigned: assigned, keyPlan: keyPlan, connection, maxKeyByRoot: &maxKeyByRoot)
        }

        // The updated rows' order (see writeOrder(_:)), for their UPDATEs and their history.
        let updateOrder = try changes.updated.withUnsafeBufferPointer { try writeOrder($0) }
        // Each row read in place, the plan and statement of each run of one entity's rows
        // looked up once (reading the plan's columns per row copied them: their arrays and
        // strings retained and released).
        try changes.updated.withUnsafeBufferPointer { rows in
            let order = updateOrder
            var position = 0
            while position < order.count {
                let number = order[position].entityNumber
                let end = Self.entityRunEnd(order, from: position)
                // Force-unwrap: `writeOrder` gave positions, so the buffer is not empty.
                let base = rows.baseAddress!
                let plan = try writePlan(for: base[order[position].position].entity)
                let write = plan.columns
                // Every parameter is bound before each step: the last save's are not cleared.
                let statement = try connection.cachedStatement(key: SQLiteWriteStatementKey.update(entityNumber: number),
                                                               keepingBindings: true) { write.updateSQL }
                let next = Int32(write.values.count) + 1
                // Whether the run bound text or blobs, whose copies the bindings keep until
                // cleared (when the run ends).
                var boundCopies = false
                for entry in order[position..<end] {
                    let row = base + entry.position
                    // The key and version first, through `bind`, which readies the statement
                    // (see bindColumns(_:_:to:from:boundCopies:)).
                    try statement.bind(.integer(entry.key), at: next)
                    try statement.bindInteger(row.pointee.version, at: next + 1)
                    _ = try bindColumns(row, write, to: statement, from: 1, boundCopies: &boundCopies)
                    while try statement.step() {}
                    statement.resetKeepingBindings()
                    if connection.changes == 0 {
                        statement.reset()
                        throw conflict(row.pointee, connection, schema.tables[plan.layout.tableIndex])
                    }
                }
                if boundCopies { statement.reset() }
                position = end
            }
        }

        try applyToManyChanges(changes.toManyChanges, connection)
        // Each row is checked on its own: the two lists need not be joined into a copy, and
        // rows of entities without uniqueness constraints need no check at all.
        if constrained.inserted { try checkUniqueness(of: changes.inserted, connection) }
        if constrained.updated { try checkUniqueness(of: changes.updated, connection) }

        // Keep Z_MAX at or above every key written, in case keys came from elsewhere.
        for (root, key) in maxKeyByRoot.isEmpty ? [] : maxKeyByRoot.sorted(by: { $0.key < $1.key }) {
            try connection.execute("UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = ? WHERE \"Z_ENT\" = ? AND \"Z_MAX\" < ?",
                                   [.integer(key), .integer(Int64(root)), .integer(key)])
        }
        if isHistoryTracked { historyNumber = try recordHistory(changes, connection, insertedKeys: keys, updateOrder: updateOrder,
                                                                deleteOrder: deleteOrder) }
    }

    /// Inserts `rows` (version 1) under the keys `keys` gives them by position, or their own:
    /// whole runs of ``WriteColumns/insertManyRows`` rows of one entity in one statement each,
    /// the rest one at a time (docs/stores.md, "Inserting rows in runs"). `assigned`: the keys
    /// allocated in this transaction (within `Z_MAX` already); every other key raises
    /// `maxKeyByRoot` for its key sequence. `keyPlan`: the write plan the keys were taken with.
    func insertRows(_ rows: UnsafeBufferPointer<RowSnapshot>, keys: AssignedKeys, assigned: AssignedKeys, keyPlan: EntityWritePlan?,
                    _ connection: SQLiteConnection, maxKeyByRoot: inout [Int: Int64]) throws {
        // Rows of one entity come together: its write plan and prepared INSERTs are looked up
        // once per run of rows, and each row's values are bound in place. Each row is read in
        // place through the buffer, never bound to a local: a row is too large to pass in
        // registers, and `let row = rows[position]` copied it (two atomic retains and two
        // releases a row), as reading the run's plan and statement from optionals retained
        // and released both per row.
        var position = 0
        while position < rows.count {
            let entity = rows[position].entity
            // The run of rows of this entity: [position, end).
            var end = position + 1
            while end < rows.count && rows[end].entity === entity { end += 1 }
            // The plan the keys were taken with, if it is this entity's: not looked up again.
            let plan = try keyPlan.flatMap { $0.entity === entity ? $0 : nil } ?? writePlan(for: entity)
            // Read out of the plan once per run: reading it per row copied it (two arrays
            // and two strings retained and released a row).
            let columns = plan.columns
            // The largest key of the run that `assigned` did not allocate (those are within Z_MAX).
            var runMaxKey: Int64?
            defer { if let runMaxKey { maxKeyByRoot[plan.keySequence] = max(maxKeyByRoot[plan.keySequence] ?? 0, runMaxKey) } }
            // Whether the run bound text or blobs, which the statements' bindings keep
            // copies of (cleared when the run ends); integers are left bound: every row
            // binds every column.
            var boundCopies = false
            // Whole runs of `insertManyRows` rows, one statement each.
            let many = columns.insertManyRows
            if many > 1 && end - position >= many {
                // Every parameter is bound below before each step: the last save's values
                // are not cleared first.
                let statement = try connection.cachedStatement(key: SQLiteWriteStatementKey.insertMany(entityNumber: plan.layout.number),
                                                               keepingBindings: true) { columns.insertManySQL }
                repeat {
                    // The first key through `bind`, which readies the statement after its
                    // last step; the rest of the statement's parameters after it.
                    try statement.bind(.integer(insertKey(rows, position, keys, assigned, &runMaxKey)), at: 1)
                    var index: Int32 = 2
                    for row in position..<(position + many) {
                        if row > position {
                            try statement.bindInteger(insertKey(rows, row, keys, assigned, &runMaxKey), at: index)
                            index += 1
                        }
                        // Force-unwrap: `row` is below `rows.count`, so the buffer is not empty.
                        index = try bindColumns(rows.baseAddress! + row, columns, to: statement, from: index, boundCopies: &boundCopies)
                    }
                    while try statement.step() {}
                    statement.resetKeepingBindings()
                    position += many
                } while end - position >= many
                if boundCopies { statement.reset() }
                boundCopies = false
            }
            guard position < end else { continue }
            // The rest one at a time.
            let statement = try connection.cachedStatement(key: SQLiteWriteStatementKey.insert(entityNumber: plan.layout.number),
                                                           keepingBindings: true) {
                columns.insertSQL
            }
            // The entity number and the version are the same for every row of the run:
            // bound once, kept by resetting without clearing the bindings after each row.
            try statement.bind(.integer(Int64(plan.layout.number)), at: 2)
            try statement.bind(.integer(1), at: 3)
            repeat {
                try statement.bind(.integer(insertKey(rows, position, keys, assigned, &runMaxKey)), at: 1)
                // Force-unwrap: `position` is below `rows.count`, so the buffer is not empty.
                _ = try bindColumns(rows.baseAddress! + position, columns, to: statement, from: 4, boundCopies: &boundCopies)
                while try statement.step() {}
                // Every other parameter is bound again for the next row.
                statement.resetKeepingBindings()
                position += 1
            } while position < end
            // Each row's statement was reset (keeping its bindings) after its step.
            if boundCopies { statement.reset() }
        }
    }

    /// The primary key to insert the row at `position` of `rows` under: the one `keys` assigned
    /// it, or its own; `maxKey` is raised to its own when `assigned` did not allocate it (so
    /// Z_MAX may be below it). Throws for a row that still has a temporary ID.
    @inline(__always)
    private func insertKey(_ rows: UnsafeBufferPointer<RowSnapshot>, _ position: Int, _ keys: AssignedKeys, _ assigned: AssignedKeys,
                           _ maxKey: inout Int64?) throws -> Int64 {
        if let assignedKey = keys.primaryKey(at: position) { return assignedKey }
        if rows[position].isTemporaryID { throw temporaryRowError(rows[position]) }
        let key = rows[position].primaryKey
        if assigned.primaryKey(at: position) == nil { maxKey = max(maxKey ?? key, key) }
        return key
    }

    /// Whether writing `request` needs it with permanent IDs in place of the temporary ones
    /// beyond the inserted rows' own keys: for to-many changes, uniqueness checks (which
    /// compare IDs), or a to-one value pointing at a new object. (History needs no more than
    /// the inserted rows' keys when no to-many relationship changed: updated and deleted rows
    /// have permanent IDs.)
    private func needsRemappedRequest(_ request: StoreSaveRequest, constrained: Bool) -> Bool {
        if !request.toManyChanges.isEmpty { return true }
        if constrained { return true }
        return Self.anyTemporaryReference(request.inserted) || Self.anyTemporaryReference(request.updated)
    }

    /// Whether a value of any of `rows` is a temporary object ID (rows of entities without
    /// relationships are not looked at; entities are looked up once per run of rows).
    private static func anyTemporaryReference(_ rows: [RowSnapshot]) -> Bool {
        var lastEntity: EntityDescription?
        var hasRelationships = false
        // By index: a row copied out of the array per iteration retains and releases its parts.
        for index in rows.indices {
            if rows[index].entity !== lastEntity {
                lastEntity = rows[index].entity
                hasRelationships = lastEntity.map { EntityRules.of($0).hasToOne } ?? false
            }
            guard hasRelationships else { continue }
            for value in rows[index].values {
                if case .object(let id) = value, id.isTemporaryID { return true }
            }
        }
        return false
    }

    /// Whether any of `rows` is of an entity with uniqueness constraints (its own or inherited),
    /// looked up once per run of rows of one entity.
    private static func anyConstrained(_ rows: [RowSnapshot]) -> Bool {
        var lastEntity: EntityDescription?
        // By index, as in anyTemporaryReference(_:).
        for index in rows.indices where rows[index].entity !== lastEntity {
            let entity = rows[index].entity
            lastEntity = entity
            if !EntityRules.of(entity).uniquenessConstraints.isEmpty { return true }
        }
        return false
    }

    /// Allocates a primary key for every row of `rows` with a temporary ID, from its entity
    /// root's key sequence (one per table, as ``allocatePrimaryKeys(for:count:)`` has; see
    /// ``takeKeys(_:sequence:_:)``), inside the caller's transaction; returns the keys by
    /// position (none for rows that had a permanent ID already), ``AssignedKeys/none`` when no
    /// row had a temporary ID. Keys are handed out in row order: when every row is new and of
    /// one entity they are one consecutive run, with no ID made.
    ///
    /// Also returns, when every row is new and of one entity, that entity's write plan (looked
    /// up for its key sequence).
    private func assignKeys(to rows: [RowSnapshot], _ connection: SQLiteConnection) throws -> (AssignedKeys, EntityWritePlan?) {
        // The common case: every row new and of one entity (a single insert, or a batch of one
        // kind). One key sequence, no per-root tables.
        // The first row's fields are read in place: `rows.first` copied the whole row.
        if !rows.isEmpty, rows[0].isTemporaryID, case let entity = rows[0].entity,
           rows.allSatisfy({ $0.entity === entity && $0.isTemporaryID }) {
            let plan = try writePlan(for: entity)
            let firstKey = try takeKeys(Int64(rows.count), sequence: plan.keySequence, connection)
            return (AssignedKeys(consecutiveFrom: firstKey, count: rows.count, store: storeToken), plan)
        }
        var roots: [Int] = []
        roots.reserveCapacity(rows.count)
        var countByRoot: [Int: Int64] = [:]
        var lastEntity: EntityDescription?
        var lastRoot = 0
        // Counted per run of rows of one entity, added to the dictionary when the run ends.
        var runCount: Int64 = 0
        for row in rows {
            guard row.isTemporaryID else { roots.append(-1); continue }
            if row.entity !== lastEntity {
                if runCount > 0 { countByRoot[lastRoot, default: 0] += runCount }
                runCount = 0
                lastEntity = row.entity
                lastRoot = try writePlan(for: row.entity).keySequence
            }
            roots.append(lastRoot)
            runCount += 1
        }
        if runCount > 0 { countByRoot[lastRoot, default: 0] += runCount }
        guard !countByRoot.isEmpty else { return (.none, nil) }
        var nextKeyByRoot: [Int: Int64] = [:]
        for (root, count) in countByRoot.sorted(by: { $0.key < $1.key }) {
            nextKeyByRoot[root] = try takeKeys(count, sequence: root, connection)
        }
        var assigned: [Int64?] = []
        assigned.reserveCapacity(rows.count)
        // The next key of the run's root is kept out of the dictionary while the run lasts.
        var runRoot = -1
        var runKey: Int64 = 0
        for root in roots {
            guard root >= 0 else { assigned.append(nil); continue }
            if root != runRoot {
                if runRoot >= 0 { nextKeyByRoot[runRoot] = runKey }
                runRoot = root
                runKey = nextKeyByRoot[root] ?? 0
            }
            assigned.append(runKey)
            runKey += 1
        }
        return (AssignedKeys(keys: assigned, store: storeToken), nil)
    }

    /// The error of writing `row`, which has a temporary ID.
    func temporaryRowError(_ row: RowSnapshot) -> PersistenceError {
        PersistenceError(.persistentStoreSave, "an object with a temporary ID cannot be written", objectID: row.objectID)
    }

    /// The optimistic-locking conflict of `row`, which a write found at another version or gone.
    func conflict(_ row: RowSnapshot, _ connection: SQLiteConnection, _ table: SQLiteSchema.Table) -> PersistenceError {
        let current = try? connection.int64("SELECT \"Z_OPT\" FROM \(SQLiteSchema.quote(table.name)) WHERE \"Z_PK\" = ?", [.integer(row.primaryKey)])
        let what = current.map { "was changed by another save (version \($0), read at version \(row.version))" }
            ?? "was deleted by another save"
        return PersistenceError(.managedObjectMerge, "optimistic locking failure: \(row.objectID) \(what)", objectID: row.objectID)
    }

    /// Join-table membership from the canonical side, then the orders of ordered relationships.
    private func applyToManyChanges(_ changes: [StoreSaveRequest.ToManyChange], _ connection: SQLiteConnection) throws {
        for change in changes {
            guard let index = schema.joinTableIndexByRelationship[ObjectIdentifier(change.relationship)],
                  schema.joinTables[index].relationship === change.relationship else { continue }
            // Each membership through the join table's prepared statement, found by its key
            // (its SQL made only the first time).
            let join = schema.joinTables[index]
            func columns() -> (table: String, source: String, destination: String) {
                (SQLiteSchema.quote(join.name), SQLiteSchema.quote(join.sourceColumn), SQLiteSchema.quote(join.destinationColumn))
            }
            try runMembershipStatement(key: SQLiteWriteStatementKey.deleteMembership(joinTable: index), for: change, change.removed, connection) {
                let (table, source, destination) = columns()
                return "DELETE FROM \(table) WHERE \(source) = ? AND \(destination) = ?"
            }
            try runMembershipStatement(key: SQLiteWriteStatementKey.insertMembership(joinTable: index), for: change, change.added,
                                       checkingPermanent: true, connection) {
                let (table, source, destination) = columns()
                return "INSERT OR IGNORE INTO \(table) (\(source), \(destination)) VALUES (?, ?)"
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

    /// Runs the join-table statement under `key` (`sql` makes its text the first time) once for
    /// each of `destinations`, `change`'s source key bound once as the first parameter and each
    /// destination's as the second; with `checkingPermanent`, a destination with a temporary ID
    /// throws.
    private func runMembershipStatement(key: Int, for change: StoreSaveRequest.ToManyChange, _ destinations: [ManagedObjectID],
                                        checkingPermanent: Bool = false, _ connection: SQLiteConnection,
                                        _ sql: () -> String) throws {
        if destinations.isEmpty { return }
        let statement = try connection.cachedStatement(key: key, keepingBindings: true, sql)
        // Through `bind`, which readies the statement after its last step.
        try statement.bind(.integer(change.source.primaryKey), at: 1)
        for destination in destinations {
            if checkingPermanent { try checkPermanent(destination, change) }
            try statement.bindInteger(destination.primaryKey, at: 2)
            while try statement.step() {}
            statement.resetKeepingBindings()
        }
    }

    private func checkPermanent(_ id: ManagedObjectID, _ change: StoreSaveRequest.ToManyChange) throws {
        if id.isTemporaryID {
            throw PersistenceError(.persistentStoreSave, "\(change.relationship.name) holds an object with a temporary ID \(id)",
                                   objectID: change.source, key: change.relationship.name)
        }
    }
}
