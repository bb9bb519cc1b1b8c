import CSQLite
import Foundation

extension SQLiteStore {
    /// The select list of a table: `"t0"."Z_PK", "t0"."Z_ENT", "t0"."Z_OPT"`, then every column.
    func selectList(_ table: SQLiteSchema.Table, alias: String = "t0") -> String {
        let a = SQLiteSchema.quote(alias)
        return (["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name))
            .map { "\(a).\(SQLiteSchema.quote($0))" }.joined(separator: ", ")
    }

    /// The row the statement is on, selected with ``selectList(_:alias:)``, or `nil` if its
    /// `Z_ENT` names no entity of the store. The row carries its object's key, not an ID
    /// (``RowSnapshot/init(entity:store:primaryKey:version:values:)``), unless `knownID` names it.
    /// `knownID`, when the caller asked for one object, is reused as the row's ID if it names it.
    /// `knownDestination`, when the caller knows the object most rows point to (the source of a
    /// prefetched to-many relationship), is reused as a to-one slot's ID when it names the same
    /// row, rather than allocating an equal ID per row.
    ///
    /// `knownInverse`, given with `knownDestination`, is the to-one relationship whose slot
    /// names it (the inverse of the prefetched relationship): when its table has no entity
    /// column (its destination has no subentities), a key equal to `knownDestination`'s is that
    /// object, with no look at the relationship's destination entity (a reference loaded
    /// and released per row).
    ///
    /// The row's values are written into the next run of `slab` (see ``SlotSlab``): a caller
    /// reading many rows passes one slab for all of them.
    func decodeRow(_ statement: SQLiteStatement, into slab: SlotSlab, knownID: ManagedObjectID? = nil,
                   knownDestination: ManagedObjectID? = nil, knownInverse: RelationshipDescription? = nil) -> RowSnapshot? {
        guard let columns = rowColumns(statement) else { return nil }
        // Retained once here: the row keeps its entity.
        let entity = columns.entity.takeUnretainedValue()
        let primaryKey = statement.int64(0)
        let values = decodeValues(statement, columns.slots, columns.integerColumns, knownDestination, knownInverse, into: slab)
        if let knownID, knownID.entity === entity, knownID.primaryKey == primaryKey {
            return RowSnapshot(objectID: knownID, version: statement.int64(2), values: values)
        }
        // No ID per row: the row carries its key, and a context makes the object's ID
        // only when it is asked for.
        return RowSnapshot(entity: entity, store: storeToken, primaryKey: primaryKey, version: statement.int64(2), values: values)
    }

    /// The columns of the layout of the row the statement is on, found by its entity number
    /// (`Z_ENT`, column 1), or `nil` for a number the store has no entity for.
    ///
    /// Copied out of the layout in place, through the buffer: the view is pointers and an
    /// unretained entity, so no reference count is touched (copying the optional layout out
    /// would retain and release each of its fields per row).
    @inline(__always)
    private func rowColumns(_ statement: SQLiteStatement) -> SQLiteRowColumns.View? {
        let number = Int(statement.int64(1))
        return schema.layoutsByNumber.withUnsafeBufferPointer { layouts in
            number >= 0 && number < layouts.count ? layouts[number]?.rowColumns : nil
        }
    }

    /// The slot values of the row the statement is on, one per element of `slots`, in order,
    /// written into the next run of `slab`. `slots` and `integerColumns` are the layout's
    /// ``SQLiteSchema/EntityLayout/rowColumns``.
    ///
    /// The common case, a nonzero integer (one C call), is decoded inline; every other slot
    /// goes to ``decodeSlot(_:_:_:_:)``. The row is filled by one loop, so there is one copy of
    /// this code per decoder: with a copy per element of twelve array literals (78 in all) each
    /// function that decodes rows was 17 KB of code (80 KB with the whole slot decoder inlined),
    /// and a single-object read ran through more code than a 32 KB instruction cache holds
    /// (callgrind's cache simulation, workload 4: 256 instruction-cache misses a lookup, 322
    /// before that; raw SQLite, 13).
    @inline(__always)
    private func decodeValues(_ statement: SQLiteStatement, _ slots: UnsafeBufferPointer<SQLiteSchema.SlotColumn>,
                              _ integerColumns: UnsafeBufferPointer<Int32>,
                              _ knownDestination: ManagedObjectID?, _ knownInverse: RelationshipDescription?,
                              into slab: SlotSlab) -> SlotValues {
        slab.row(count: slots.count) { base in
            var holdsReferences = false
            for index in 0..<slots.count {
                let column = integerColumns[index]
                if column >= 0 {
                    // sqlite3_column_int64 gives 0 for NULL: only a 0 needs the type check.
                    let value = statement.int64(column)
                    if value != 0 {
                        (base + index).initialize(to: .integer(value))
                        continue
                    }
                }
                let value = decodeSlot(statement, slots[index], knownDestination, knownInverse)
                if !value.holdsNoReference { holdsReferences = true }
                (base + index).initialize(to: value)
            }
            return holdsReferences
        }
    }

    /// The value of one slot of the row the statement is on (see ``decodeRow(_:into:knownID:knownDestination:knownInverse:)``).
    /// Not inlined: see ``decodeValues(_:_:_:_:_:into:)``.
    @inline(never)
    private func decodeSlot(_ statement: SQLiteStatement, _ slot: SQLiteSchema.SlotColumn,
                            _ knownDestination: ManagedObjectID?, _ knownInverse: RelationshipDescription?) -> StoreValue {
        // A slot column holds no reference (see UnretainedRelationship): copying it retains nothing.
        switch slot {
        case .none:
            return .null
        case .attribute(let index, let type):
            // A nonzero integer never gets here (decodeValues reads it inline).
            return decodeAttribute(statement, Int32(index + 3), type)
        case .toOne(let index, let entityIndex, let relationship):
            let column = Int32(index + 3)
            let key = statement.int64(column)
            if key == 0 && statement.isNull(column) { return .null }
            if entityIndex == nil, let knownDestination, knownDestination.primaryKey == key, relationship.isIdentical(to: knownInverse) {
                return .object(knownDestination)
            }
            var destination = relationship.destinationEntity
            if let entityIndex, !statement.isNull(Int32(entityIndex + 3)) {
                destination = schema.entitiesByNumber[Int(statement.int64(Int32(entityIndex + 3)))] ?? destination
            }
            guard let destination else { return .null }
            if let knownDestination, knownDestination.primaryKey == key, knownDestination.entity === destination, holds(knownDestination) {
                return .object(knownDestination)
            }
            return .object(ManagedObjectID(entity: destination, store: storeToken, primaryKey: key))
        }
    }

    /// One attribute value, as Core Data stores each type.
    func decodeAttribute(_ statement: SQLiteStatement, _ column: Int32, _ type: AttributeType) -> StoreValue {
        if type.isInteger {
            // One C call for the common case: sqlite3_column_int64 gives 0 for NULL, so only a 0
            // needs the type check that tells the two apart.
            let value = statement.int64(column)
            if value == 0 && statement.isNull(column) { return .null }
            return .integer(value)
        }
        if statement.isNull(column) { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            return .integer(statement.int64(column))
        case .boolean:
            return .bool(statement.int64(column) != 0)
        case .double, .float:
            return .double(statement.double(column))
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: statement.double(column)))
        case .decimal:
            switch statement.columnType(column) {
            case SQLiteStatement.integerType: return .decimal(Decimal(statement.int64(column)))
            case SQLiteStatement.floatType: return .decimal(Decimal(string: String(statement.double(column))) ?? Decimal(statement.double(column)))
            default: return Decimal(string: statement.string(column), locale: Locale(identifier: "en_US_POSIX")).map(StoreValue.decimal) ?? .null
            }
        case .string:
            return .string(statement.string(column))
        case .uri:
            return URL(string: statement.string(column)).map(StoreValue.url) ?? .null
        case .uuid:
            if statement.columnType(column) == SQLiteStatement.blobType {
                let bytes = statement.data(column)
                guard bytes.count == 16 else { return .null }
                let b = [UInt8](bytes)
                return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
            }
            return UUID(uuidString: statement.string(column)).map(StoreValue.uuid) ?? .null
        case .binaryData, .transformable:
            return .data(statement.data(column))
        case .undefined, .objectID:
            return .null
        }
    }

    /// `SELECT … FROM table AS t0 [joins] WHERE …` pieces for a request.
    func compileFetch(_ request: StoreFetchRequest) throws
        -> (table: SQLiteSchema.Table, from: String, where: String, orderBy: String, arguments: [StoreValue]) {
        let layout = try layout(of: request.entity)
        let table = schema.tables[layout.tableIndex]
        var compiler = SQLitePredicateCompiler(schema: schema, entity: request.entity)
        var conditions: [String] = []
        var arguments: [StoreValue] = []
        let numbers = request.includesSubentities ? layout.selfAndDescendantNumbers : [layout.number]
        let tableNumbers = schema.entities.values.filter { $0.tableIndex == layout.tableIndex }.count
        if numbers.count != tableNumbers {
            conditions.append(numbers.count == 1 ? "\"t0\".\"Z_ENT\" = ?" : "\"t0\".\"Z_ENT\" IN (\(numbers.map { _ in "?" }.joined(separator: ", ")))")
            arguments += numbers.map { .integer(Int64($0)) }
        }
        if let predicate = request.predicate {
            let condition = try compiler.compile(predicate)
            if condition != "1" { conditions.append(condition) }
        }
        let orderBy = try compiler.orderBy(request.sortDescriptors)
        arguments += compiler.arguments
        let from = (["\(SQLiteSchema.quote(table.name)) AS \"t0\""] + compiler.joins).joined(separator: " ")
        return (table, from, conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), orderBy.isEmpty ? "" : " ORDER BY " + orderBy, arguments)
    }

    func limitClause(_ request: StoreFetchRequest, _ arguments: inout [StoreValue]) -> String {
        guard request.fetchLimit > 0 || request.fetchOffset > 0 else { return "" }
        arguments.append(.integer(request.fetchLimit > 0 ? Int64(request.fetchLimit) : -1))
        if request.fetchOffset > 0 {
            arguments.append(.integer(Int64(request.fetchOffset)))
            return " LIMIT ? OFFSET ?"
        }
        return " LIMIT ?"
    }

    /// The rows that match `request`, in its order, within its limit and offset.
    public func fetch(_ request: StoreFetchRequest) throws -> [RowSnapshot] {
        var (table, from, whereClause, orderBy, arguments) = try compileFetch(request)
        let limit = limitClause(request, &arguments)
        let sql = "SELECT \(selectList(table)) FROM \(from)\(whereClause)\(orderBy)\(limit)"
        return try withQueryConnection("fetching \(request.entity.name) failed") { connection in
            var rows: [RowSnapshot] = []
            let slab = SlotSlab()
            try connection.cachedStatement(sql).forEachRow(arguments) { statement in
                if let row = decodeRow(statement, into: slab) { rows.append(consume row) }
            }
            return rows
        }
    }

    /// The rows that match `request`, handed to `body` as each is read (see
    /// ``PersistentStore/fetch(_:each:)``).
    ///
    /// One statement, so one snapshot of the store, read under the store's lock like
    /// ``fetch(_:)``; a store found locked is waited for before the first row, and a read
    /// interrupted by ``StoreOptions/queryTimeout`` fails with
    /// ``PersistenceError/Code/queryTimeout`` after the rows already handed over.
    public func fetch(_ request: StoreFetchRequest, each body: (_ row: consuming RowSnapshot) throws -> Void) throws {
        let store = storeToken
        try fetch(request, eachRowParts: { key, entity, _, version, values in
            try body(RowSnapshot(entity: entity, store: store, primaryKey: key.primaryKey, version: version, values: values))
        })
    }

    /// The rows that match `request`, handed to `body` in parts as each is read (see
    /// ``PersistentStore/fetch(_:eachRowParts:)``), read as ``fetch(_:each:)`` reads them.
    public func fetch(_ request: StoreFetchRequest, eachRowParts body: RowPartsHandler) throws {
        try fetch(request, counting: false, expect: { _ in }, eachRowParts: body)
    }

    /// The rows ``fetch(_:eachRowParts:)`` gives, with `expect` told how many there are once
    /// ``rowsBeforeCounting`` rows were handed over (see
    /// ``PersistentStore/fetch(_:expect:eachRowParts:)``).
    ///
    /// Only a fetch without a predicate is counted, with `SELECT COUNT(*)` over the same tables
    /// and entity condition in the same read transaction: SQLite counts a table's rows by
    /// walking its pages, a small part of reading them, where counting a fetch with a predicate
    /// would evaluate the predicate twice. A fetch of fewer rows asks nothing.
    public func fetch(_ request: StoreFetchRequest, expect: (_ rowCount: Int) -> Void, eachRowParts body: RowPartsHandler) throws {
        try fetch(request, counting: request.predicate == nil, expect: expect, eachRowParts: body)
    }

    /// The rows a fetch has handed over before a fetch without a predicate is counted for
    /// `expect`: a fetch of fewer rows makes no room worth a second statement.
    static let rowsBeforeCounting = 1_024

    /// ``fetch(_:expect:eachRowParts:)``, telling `expect` only with `counting`.
    private func fetch(_ request: StoreFetchRequest, counting: Bool, expect: (_ rowCount: Int) -> Void,
                       eachRowParts body: RowPartsHandler) throws {
        let storeBits = storeToken.bits
        try readRows(request, counting: counting, expect: expect) { statement, slab, handedOver in
            try handOverRow(statement, into: slab, storeBits: storeBits, handedOver: &handedOver) { key, entity, version, values in
                try body(key, entity, nil, version, &values)
            }
        }
    }

    /// Decodes the row the statement is on and hands it to `body` in parts (its key, entity,
    /// version and values; see ``PersistentStore/fetch(_:eachRowParts:)``), setting
    /// `handedOver` first. A row of an entity the store does not know, or not of `kind` when
    /// given, is skipped. `knownDestination` and `knownInverse` are as for
    /// ``decodeRow(_:into:knownID:knownDestination:knownInverse:)``.
    ///
    /// The entity is lent from the row's layout (``SQLiteRowColumns/View/entity``) and the
    /// values are `inout` (taken by a callee that keeps them): a row read and handed over this
    /// way costs one atomic reference count, its values' share of the slab, where a
    /// ``RowSnapshot`` made, handed over and destroyed costs five (workload 2, callgrind).
    @inline(__always)
    func handOverRow(_ statement: SQLiteStatement, into slab: SlotSlab, storeBits: UInt, kind: EntityDescription? = nil,
                     knownDestination: ManagedObjectID? = nil, knownInverse: RelationshipDescription? = nil, handedOver: inout Bool,
                     _ body: (_ key: ObjectKey, _ entity: EntityDescription, _ version: Int64, _ values: inout SlotValues) throws -> Void) rethrows {
        guard let columns = rowColumns(statement) else { return }
        try columns.entity._withUnsafeGuaranteedRef { entity in
            if let kind, !entity.isKind(of: kind) { return }
            let primaryKey = statement.int64(0)
            var values = decodeValues(statement, columns.slots, columns.integerColumns, knownDestination, knownInverse, into: slab)
            handedOver = true
            try body(ObjectKey(entityIdentity: ObjectIdentifier(entity), primaryKey: primaryKey, storeBits: storeBits),
                     entity, statement.int64(2), &values)
        }
    }

    /// Runs `request`'s statement and calls `handOver` on each row, with the slab its values go
    /// into and the flag it sets once it has handed a row over (see ``fetch(_:each:)``).
    /// With `counting`, `expect` is told the number of rows the fetch hands over once
    /// ``rowsBeforeCounting`` rows were (see ``expectedRowCount(_:from:where:arguments:on:)``).
    @inline(__always)
    private func readRows(_ request: StoreFetchRequest, counting: Bool = false, expect: (_ rowCount: Int) -> Void = { _ in },
                          _ handOver: (_ statement: SQLiteStatement, _ slab: SlotSlab, _ handedOver: inout Bool) throws -> Void) throws {
        var (table, from, whereClause, orderBy, arguments) = try compileFetch(request)
        let whereArguments = arguments
        let limit = limitClause(request, &arguments)
        let sql = "SELECT \(selectList(table)) FROM \(from)\(whereClause)\(orderBy)\(limit)"
        let what = "fetching \(request.entity.name) failed"
        try withReadSnapshot(what, oneStatement: true) { connection, handedOver in
            let statement = try connection.cachedStatement(sql)
            func read() throws {
                let slab = SlotSlab()
                // Counts down to the row after which `expect` is told: 0 from then on, -1 without counting.
                var rowsBeforeCounting = counting ? Self.rowsBeforeCounting : -1
                try statement.forEachRow(arguments) { statement in
                    try handOver(statement, slab, &handedOver)
                    if rowsBeforeCounting > 0 {
                        rowsBeforeCounting -= 1
                        if rowsBeforeCounting == 0,
                           let count = expectedRowCount(request, from: from, where: whereClause, arguments: whereArguments, on: connection) {
                            expect(count)
                        }
                    }
                }
            }
            guard let queryLimit = connection.queryLimit else { return try read() }
            do {
                try queryLimit.run(read)
            } catch let error as SQLiteError where error.extendedResultCode & 0xFF == SQLITE_INTERRUPT {
                throw PersistenceError(.queryTimeout, "\(what): the query ran longer than \(queryLimit.timeout) s (queryTimeout) and was interrupted",
                                       path: url?.path, underlying: error.description)
            }
        }
    }

    /// The number of rows a fetch of `request` hands over, counted with its `FROM` and `WHERE`
    /// clauses on `connection` beside the fetch's statement, which is still stepping (so in the
    /// read transaction it holds open: the same snapshot), then cut by its offset and limit;
    /// `nil` if counting failed (the count is only a hint, and the fetch's own statement
    /// reports any error of the connection, an interrupt included).
    private func expectedRowCount(_ request: StoreFetchRequest, from: String, where whereClause: String,
                                  arguments: [StoreValue], on connection: SQLiteConnection) -> Int? {
        // Prepared for the call, not cached: it runs once per large fetch, and a cached
        // statement could take the cache place of the fetch's own, which is stepping.
        guard let statement = try? connection.prepare("SELECT COUNT(*) FROM \(from)\(whereClause)"),
              (try? statement.bind(arguments)) != nil, (try? statement.step()) == true else { return nil }
        var count = max(0, Int(statement.int64(0)) - request.fetchOffset)
        if request.fetchLimit > 0 { count = min(count, request.fetchLimit) }
        return count
    }

    /// The number of rows that match `request`, within its limit and offset.
    public func count(_ request: StoreFetchRequest) throws -> Int {
        var (_, from, whereClause, _, arguments) = try compileFetch(request)
        let limit = limitClause(request, &arguments)
        let sql = limit.isEmpty
            ? "SELECT COUNT(*) FROM \(from)\(whereClause)"
            : "SELECT COUNT(*) FROM (SELECT \"t0\".\"Z_PK\" FROM \(from)\(whereClause)\(limit))"
        return try withQueryConnection("counting \(request.entity.name) failed") { connection in
            Int(try connection.int64(sql, arguments) ?? 0)
        }
    }

    /// The rows of the given objects, read in batches of up to 512 keys per table.
    ///
    /// Every statement comes from the connection's cache without building its SQL: one object
    /// is read with `WHERE Z_PK = ?`, several with `WHERE Z_PK IN (?, …)` whose number of
    /// parameters is rounded up to a power of two (the last key repeated), so a handful of
    /// statements per table serve every batch size.
    public func rows(for objectIDs: [ManagedObjectID]) throws -> [RowSnapshot] {
        if objectIDs.count == 1 { return try row(for: objectIDs[0]).map { [$0] } ?? [] }
        var wanted: [Int: [Int64: EntityDescription]] = [:]
        for id in objectIDs where holds(id) {
            guard let layout = schema.layout(of: id.entity) else { continue }
            wanted[layout.tableIndex, default: [:]][id.primaryKey] = id.entity
        }
        return try withLeasedReadConnection("reading rows failed") { connection in
            var rows: [RowSnapshot] = []
            var arguments: [StoreValue] = []
            let slab = SlotSlab()
            for (tableIndex, keys) in wanted.sorted(by: { $0.key < $1.key }) {
                let all = keys.keys.sorted()
                for start in stride(from: 0, to: all.count, by: Self.maximumKeysPerRead) {
                    let batch = all[start..<min(start + Self.maximumKeysPerRead, all.count)]
                    let statement = try rowStatement(tableIndex, keyCount: batch.count, on: connection)
                    let parameters = statement.parameterCount
                    arguments.removeAll(keepingCapacity: true)
                    for key in batch { arguments.append(.integer(key)) }
                    // Repeated keys pad the list to the statement's size; they match no other row.
                    while arguments.count < parameters { arguments.append(.integer(batch[batch.endIndex - 1])) }
                    try statement.forEachRow(arguments) { statement in
                        guard let row = decodeRow(statement, into: slab), let asked = keys[row.primaryKey],
                              row.entity.isKind(of: asked) else { return }
                        rows.append(consume row)
                    }
                }
            }
            return rows
        }
    }

    /// The most keys one `IN (…)` read binds.
    static var maximumKeysPerRead: Int { 512 }

    /// The row of one object, or `nil` if the store has none of it (or of a subentity of it).
    ///
    /// The path of a fault firing and of `existingObject(with:)`: no arrays, the entity's
    /// `WHERE Z_PK = ?` statement found in the connection's short per-entity list (no hashing,
    /// no SQL text), its key rebound in place and its bindings left as they are afterwards.
    ///
    /// The row carries the object's key, not `id` (``RowSnapshot/init(entity:store:primaryKey:version:values:)``):
    /// the caller has the ID, and a row holding it would retain and release it per read.
    public func row(for id: ManagedObjectID) throws -> RowSnapshot? {
        guard holds(id) else { return nil }
        return try withLeasedReadConnection("reading rows failed") { connection -> RowSnapshot? in
            guard let statement = try singleRowStatement(for: id.entity, on: connection) else { return nil }
            // Left ready for binding by the last read's reset (below), or fresh.
            try statement.bindInteger(id.primaryKey, at: 1)
            defer { statement.resetKeepingBindings() }
            guard try statement.step(), let row = decodeRow(statement, into: connection.rowSlab), row.entity.isKind(of: id.entity) else {
                return nil
            }
            return row
        }
    }

    /// The statement that reads one row of `entity`'s table by key, or `nil` if the store does
    /// not hold the entity. Kept per entity on the connection after its first use.
    private func singleRowStatement(for entity: EntityDescription, on connection: SQLiteConnection) throws(SQLiteError) -> SQLiteStatement? {
        if let statement = connection.singleRowStatement(for: entity) { return statement }
        guard let layout = schema.layout(of: entity) else { return nil }
        let table = schema.tables[layout.tableIndex]
        let sql = "SELECT \(selectList(table)) FROM \(SQLiteSchema.quote(table.name)) AS \"t0\" WHERE \"t0\".\"Z_PK\" = ?"
        let statement = try connection.prepare(sql)
        connection.keepSingleRowStatement(statement, for: entity)
        return statement
    }

    /// The cached statement that reads the rows of `keyCount` keys (rounded up to a power of
    /// two) from table `tableIndex`.
    private func rowStatement(_ tableIndex: Int, keyCount: Int, on connection: SQLiteConnection) throws(SQLiteError) -> SQLiteStatement {
        var size = 1
        while size < keyCount { size <<= 1 }
        // One key per (table, size): sizes are powers of two up to maximumKeysPerRead.
        return try connection.cachedStatement(key: Self.rowStatementKeyBase + tableIndex * 1024 + size) {
            let table = schema.tables[tableIndex]
            let condition = size == 1 ? "= ?" : "IN (" + Array(repeating: "?", count: size).joined(separator: ", ") + ")"
            return "SELECT \(selectList(table)) FROM \(SQLiteSchema.quote(table.name)) AS \"t0\" WHERE \"t0\".\"Z_PK\" \(condition)"
        }
    }

    /// Where the keys of ``rowStatement(_:keyCount:on:)`` start in the connection's keyed cache.
    private static var rowStatementKeyBase: Int { 1 << 40 }

    /// The destinations of a to-many relationship: through the inverse foreign key (ordered by
    /// its `Z_FOK_` column if ordered), or through the join table.
    public func destinations(of objectID: ManagedObjectID, relationship: RelationshipDescription) throws -> [ManagedObjectID] {
        guard relationship.isToMany, let destination = relationship.destinationEntity else {
            throw PersistenceError(.persistentStoreOperation, "\(relationship.name) is not a to-many relationship")
        }
        guard let destinationTable = schema.table(of: destination) else {
            throw PersistenceError(.persistentStoreOperation, "the store does not hold entity \(destination.name)", path: url?.path)
        }
        let sql: String
        if let join = schema.joinTable(of: relationship) {
            let canonical = join.relationship === relationship
            let from = canonical ? join.sourceColumn : join.destinationColumn
            let to = canonical ? join.destinationColumn : join.sourceColumn
            let order = (canonical ? join.destinationOrderColumn : join.sourceOrderColumn) ?? to
            sql = "SELECT \"j\".\(SQLiteSchema.quote(to)), \"d\".\"Z_ENT\" FROM \(SQLiteSchema.quote(join.name)) AS \"j\" JOIN \(SQLiteSchema.quote(destinationTable.name)) AS \"d\" ON \"d\".\"Z_PK\" = \"j\".\(SQLiteSchema.quote(to)) WHERE \"j\".\(SQLiteSchema.quote(from)) = ? ORDER BY \"j\".\(SQLiteSchema.quote(order)), \"j\".\(SQLiteSchema.quote(to))"
        } else {
            guard let inverse = relationship.inverseRelationship,
                  let (_, column) = schema.column(named: inverse.name, of: destination) else {
                throw PersistenceError(.persistentStoreOperation, "no column holds the inverse of \(relationship.name)", path: url?.path)
            }
            let order = relationship.isOrdered ? schema.orderColumn(ofOrdered: relationship).map { SQLiteSchema.quote($0) + ", " } ?? "" : ""
            sql = "SELECT \"Z_PK\", \"Z_ENT\" FROM \(SQLiteSchema.quote(destinationTable.name)) WHERE \(SQLiteSchema.quote(column.name)) = ? ORDER BY \(order)\"Z_PK\""
        }
        return try withConnection(.sqlite, "reading \(relationship.name) failed") { connection in
            var ids: [ManagedObjectID] = []
            try connection.cachedStatement(sql).forEachRow([.integer(objectID.primaryKey)]) { statement in
                guard let entity = schema.entitiesByNumber[Int(statement.int64(1))] else { return }
                ids.append(ManagedObjectID(entity: entity, store: storeToken, primaryKey: statement.int64(0)))
            }
            return ids
        }
    }

    /// Reserves `count` primary keys from the `Z_MAX` of the entity's ROOT row in
    /// `Z_PRIMARYKEY` (one sequence per table), in its own short transaction.
    public func allocatePrimaryKeys(for entity: EntityDescription, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        guard !isReadOnly else { throw readOnlyError("allocate primary keys") }
        let layout = try layout(of: entity)
        let sequence = keySequence(of: layout)
        // A write of the group commit: allocations share a transaction with other saves.
        let first: Int64 = try inGroupCommit("allocating primary keys for \(entity.name) failed") { connection in
            try reserveKeys(Int64(count), sequence: sequence, connection)
        }
        return Array(first..<(first + Int64(count)))
    }
}
