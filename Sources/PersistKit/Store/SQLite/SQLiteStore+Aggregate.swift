import Foundation

extension SQLiteStore {
    /// The `WHERE` conditions of a request (entity restriction, then predicate) compiled with
    /// `compiler`, and their arguments; the same SQL ``compileFetch(_:)`` produces.
    func whereClause(_ request: StoreFetchRequest, _ compiler: inout SQLitePredicateCompiler) throws
        -> (table: SQLiteSchema.Table, sql: String, arguments: [StoreValue]) {
        let layout = try layout(of: request.entity)
        let table = schema.tables[layout.tableIndex]
        var conditions: [String] = []
        var arguments: [StoreValue] = []
        let numbers = request.includesSubentities ? layout.selfAndDescendantNumbers : [layout.number]
        let tableNumbers = schema.entities.values.filter { $0.tableIndex == layout.tableIndex }.count
        if numbers.count != tableNumbers {
            conditions.append("\"t0\".\"Z_ENT\" IN (\(numbers.map { _ in "?" }.joined(separator: ", ")))")
            arguments += numbers.map { .integer(Int64($0)) }
        }
        let before = compiler.arguments.count
        if let predicate = request.predicate {
            let condition = try compiler.compile(predicate)
            if condition != "1" { conditions.append(condition) }
        }
        arguments += compiler.arguments[before...]
        return (table, conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    /// `FROM table AS t0 <joins>` for the joins `compiler` collected.
    func fromClause(_ table: SQLiteSchema.Table, _ compiler: SQLitePredicateCompiler) -> String {
        (["\(SQLiteSchema.quote(table.name)) AS \"t0\""] + compiler.joins).joined(separator: " ")
    }

    /// The IDs of the matching rows, reading only `Z_PK` and `Z_ENT`.
    public func fetchObjectIDs(_ request: StoreFetchRequest) throws -> [ManagedObjectID] {
        var (_, from, whereClause, orderBy, arguments) = try compileFetch(request)
        let limit = limitClause(request, &arguments)
        let sql = "SELECT \"t0\".\"Z_PK\", \"t0\".\"Z_ENT\" FROM \(from)\(whereClause)\(orderBy)\(limit)"
        return try withQueryConnection("fetching \(request.entity.name) IDs failed") { connection in
            var ids: [ManagedObjectID] = []
            try connection.cachedStatement(sql).forEachRow(arguments) { statement in
                guard let entity = schema.entitiesByNumber[Int(statement.int64(1))] else { return }
                ids.append(ManagedObjectID(entity: entity, store: storeToken, primaryKey: statement.int64(0)))
            }
            return ids
        }
    }

    /// The destination rows of a to-many relationship for many sources, by source: the rows
    /// ``prefetchDestinations(of:relationship:expect:each:)`` reads, gathered per source.
    public func prefetchDestinations(of sources: [ManagedObjectID], relationship: RelationshipDescription) throws
        -> [ManagedObjectID: [RowSnapshot]] {
        var result: [ManagedObjectID: [RowSnapshot]] = [:]
        try prefetchDestinations(of: sources, relationship: relationship, expect: { _ in }) { index, row in
            result[sources[index], default: []].append(row)
        }
        return result
    }

    /// The destination rows of a to-many relationship for many sources with one query per 500
    /// sources: by the inverse foreign key (the source is in each row), or through the join
    /// table; or, for most of a table's sources, with one scan of the destination table
    /// (see `prefetchByScan`).
    /// Each row goes to `body` as it is read, with its source's index in `sources`, and only
    /// once: all batches read one snapshot of the store (one read transaction), and once a row
    /// was handed over, the store found locked fails the prefetch (a ``PersistenceError`` with
    /// code ``PersistenceError/Code/sqlite``) instead of reading it all again.
    public func prefetchDestinations(of sources: [ManagedObjectID], relationship: RelationshipDescription,
                                     expect: (_ rowCount: Int) -> Void,
                                     each body: (_ sourceIndex: Int, _ row: consuming RowSnapshot) throws -> Void) throws {
        let store = storeToken
        try prefetchDestinations(of: sources, relationship: relationship, expect: expect,
                                 eachRowParts: { sourceIndex, key, entity, _, version, values in
                                     try body(sourceIndex, RowSnapshot(entity: entity, store: store, primaryKey: key.primaryKey,
                                                                       version: version, values: values))
                                 })
    }

    /// The rows ``prefetchDestinations(of:relationship:expect:each:)`` gives, handed to `body`
    /// in parts (see ``PersistentStore/prefetchDestinations(of:relationship:expect:eachRowParts:)``
    /// and ``handOverRow(_:into:storeBits:kind:knownDestination:knownInverse:handedOver:_:)``).
    public func prefetchDestinations(of sources: [ManagedObjectID], relationship: RelationshipDescription,
                                     expect: (_ rowCount: Int) -> Void,
                                     eachRowParts body: PrefetchedRowPartsHandler) throws {
        guard relationship.isToMany, let destination = relationship.destinationEntity, let sourceEntity = relationship.entity else {
            throw PersistenceError(.persistentStoreOperation, "\(relationship.name) is not a to-many relationship")
        }
        guard let destinationTable = schema.table(of: destination) else {
            throw PersistenceError(.persistentStoreOperation, "the store does not hold entity \(destination.name)", path: url?.path)
        }
        // Each stored source's index in `sources`, by primary key (sources share a table, so
        // keys name them apart), and the keys in the sources' order.
        var positionByKey: [Int64: Int] = [:]
        positionByKey.reserveCapacity(sources.count)
        var allKeys: [Int64] = []
        allKeys.reserveCapacity(sources.count)
        var allSameEntity = true
        let inverse = relationship.inverseRelationship.flatMap { $0.isToMany ? nil : $0 }
        let inverseDestination = inverse?.destinationEntity
        for (index, id) in sources.enumerated() where holds(id) {
            if positionByKey.updateValue(index, forKey: id.primaryKey) == nil { allKeys.append(id.primaryKey) }
            if id.entity !== inverseDestination { allSameEntity = false }
        }
        let from: String
        let sourceColumn: String
        let order: String
        if let join = schema.joinTable(of: relationship) {
            let canonical = join.relationship === relationship
            let mine = canonical ? join.sourceColumn : join.destinationColumn
            let theirs = canonical ? join.destinationColumn : join.sourceColumn
            let orderColumn = (canonical ? join.destinationOrderColumn : join.sourceOrderColumn) ?? theirs
            sourceColumn = "\"j\".\(SQLiteSchema.quote(mine))"
            from = "\(SQLiteSchema.quote(join.name)) AS \"j\" JOIN \(SQLiteSchema.quote(destinationTable.name)) AS \"t0\" ON \"t0\".\"Z_PK\" = \"j\".\(SQLiteSchema.quote(theirs))"
            order = "\(sourceColumn), \"j\".\(SQLiteSchema.quote(orderColumn)), \"t0\".\"Z_PK\""
        } else {
            guard let inverse = relationship.inverseRelationship,
                  let (_, column) = schema.column(named: inverse.name, of: destination) else {
                throw PersistenceError(.persistentStoreOperation, "no column holds the inverse of \(sourceEntity.name).\(relationship.name)", path: url?.path)
            }
            sourceColumn = "\"t0\".\(SQLiteSchema.quote(column.name))"
            from = "\(SQLiteSchema.quote(destinationTable.name)) AS \"t0\""
            let fok = relationship.isOrdered ? schema.orderColumn(ofOrdered: relationship).map { "\"t0\".\(SQLiteSchema.quote($0)), " } ?? "" : ""
            order = "\(sourceColumn), \(fok)\"t0\".\"Z_PK\""
        }
        // When every source is of the inverse's destination entity, a row's inverse slot holding
        // a source's key names that source (see decodeRow).
        let knownInverse = inverseDestination != nil && allSameEntity ? inverse : nil
        guard !allKeys.isEmpty else { return }
        let scanTable = schema.joinTable(of: relationship) == nil && !relationship.isOrdered ? schema.table(of: sourceEntity) : nil
        // One read transaction for the plan and every batch: all sources' rows come from one
        // snapshot of the store, and rows handed to `body` are never handed over again (see
        // `SQLiteStore+ReadSnapshot.swift`). A read started again (the store found locked before
        // any row was handed over) does not tell `expect` a second time.
        var told = false
        try withReadSnapshot("prefetching \(sourceEntity.name).\(relationship.name) failed") { connection, handedOver in
            if let sourceTable = scanTable {
                let scanned = try prefetchByScan(sourceKeys: allKeys, sources: sources, positionByKey: positionByKey, relationship: relationship,
                                                 knownInverse: knownInverse, destination: destination, destinationTable: destinationTable,
                                                 sourceTable: sourceTable, sourceColumn: sourceColumn, on: connection, handedOver: &handedOver,
                                                 expect: { rowCount in
                                                     if !told { told = true; expect(rowCount) }
                                                 }, each: body)
                if scanned { return }
            }
            // Rows come ordered by their source: the source's index and ID are looked up once
            // per run of its rows.
            var currentKey: Int64?
            var currentPosition: Int?
            var currentSource: ManagedObjectID?
            let slab = SlotSlab()
            let storeBits = storeToken.bits
            for start in stride(from: 0, to: allKeys.count, by: 500) {
                let batch = Array(allKeys[start..<min(start + 500, allKeys.count)])
                let sql = "SELECT \(selectList(destinationTable)), \(sourceColumn) FROM \(from) WHERE \(sourceColumn) IN (\(batch.map { _ in "?" }.joined(separator: ", "))) ORDER BY \(order)"
                let sourceIndex = Int32(3 + destinationTable.columns.count)
                let statement = batch.count == 500 ? try connection.cachedStatement(sql) : try connection.prepare(sql)
                try statement.forEachRow(batch.map { .integer($0) }) { statement in
                    let key = statement.int64(sourceIndex)
                    if key != currentKey {
                        currentKey = key
                        currentPosition = positionByKey[key]
                        currentSource = currentPosition.map { sources[$0] }
                    }
                    guard let position = currentPosition else { return }
                    // The row's inverse slot names the source: reuse its ID rather than make one per row.
                    try handOverRow(statement, into: slab, storeBits: storeBits, kind: destination, knownDestination: currentSource,
                                    knownInverse: knownInverse, handedOver: &handedOver) { key, entity, version, values in
                        try body(position, key, entity, nil, version, &values)
                    }
                }
                currentKey = nil
                currentPosition = nil
                currentSource = nil
            }
        }
    }

    /// Prefetching a large share of a table's sources (a fetch of most parents) reads the whole
    /// destination table once, in primary-key order, and keeps the rows whose foreign key is a
    /// source: one pass costs far less than one index seek and one table seek per destination row.
    /// Returns `false` (the caller then reads by `IN` lists through the foreign-key index) when the
    /// sources are under a quarter of the source table's rows, judged by its largest `Z_PK`.
    /// The members come in primary-key order, as the `IN` reads give them. Each kept row goes
    /// to `body` as it is read, with its source's index in `sources`; `expect` is told the
    /// destination table's largest key first (at least its number of rows). Runs on
    /// `connection` inside the caller's read snapshot, setting `handedOver` before the first row
    /// goes to `body`.
    private func prefetchByScan(sourceKeys: [Int64], sources: [ManagedObjectID], positionByKey: [Int64: Int],
                                relationship: RelationshipDescription, knownInverse: RelationshipDescription?,
                                destination: EntityDescription, destinationTable: SQLiteSchema.Table,
                                sourceTable: SQLiteSchema.Table, sourceColumn: String,
                                on connection: SQLiteConnection, handedOver: inout Bool,
                                expect: (_ rowCount: Int) -> Void,
                                each body: PrefetchedRowPartsHandler) throws -> Bool {
        guard sourceKeys.count >= 64 else { return false }
        let largestKey = try connection.planningInt64("SELECT MAX(\"Z_PK\") FROM \(SQLiteSchema.quote(sourceTable.name))") ?? 0
        guard Int64(sourceKeys.count) * 4 >= largestKey else { return false }
        // Each source's index in `sources`, in a flat table indexed by its key (keys are at
        // most four times as many as the sources here, so the table is small): no hashing per row.
        var positionTable = [Int32](repeating: -1, count: Int(max(0, largestKey)) + 1)
        for key in sourceKeys where key >= 0 && key < Int64(positionTable.count) {
            if let position = positionByKey[key] { positionTable[Int(key)] = Int32(position) }
        }
        let destinationKeys = try connection.planningInt64("SELECT MAX(\"Z_PK\") FROM \(SQLiteSchema.quote(destinationTable.name))") ?? 0
        expect(Int(max(0, destinationKeys)))
        let sourceIndex = Int32(3 + destinationTable.columns.count)
        let sql = "SELECT \(selectList(destinationTable)), \(sourceColumn) FROM \(SQLiteSchema.quote(destinationTable.name)) AS \"t0\" WHERE \(sourceColumn) IS NOT NULL ORDER BY \"t0\".\"Z_PK\""
        let slab = SlotSlab()
        let storeBits = storeToken.bits
        try connection.cachedStatement(sql).forEachRow { statement in
            let key = statement.int64(sourceIndex)
            guard key >= 0 && key < Int64(positionTable.count) else { return }
            let position = Int(positionTable[Int(key)])
            guard position >= 0 else { return }
            // The source's ID borrowed from the array, which holds it throughout: read
            // through a buffer, it was retained and released for each row.
            try sources.withBorrowedElement(at: position) { source in
                try handOverRow(statement, into: slab, storeBits: storeBits, kind: destination, knownDestination: source,
                                knownInverse: knownInverse, handedOver: &handedOver) { key, entity, version, values in
                    try body(position, key, entity, nil, version, &values)
                }
            }
        }
        return true
    }

    /// Dictionary results in one `SELECT [DISTINCT] … FROM … WHERE … GROUP BY … HAVING …
    /// ORDER BY … LIMIT`, with the same results as the in-memory default.
    ///
    /// Without sort descriptors, grouped results are ordered by their grouped values, as the
    /// in-memory default orders them.
    public func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: StoreValue]] {
        try request.validate()
        var compiler = SQLitePredicateCompiler(schema: schema, entity: request.fetch.entity)
        let (table, whereSQL, whereArguments) = try whereClause(request.fetch, &compiler)
        var expressions = SQLiteExpressionSQL(compiler: compiler)

        var selected: [(name: String, sql: String, decode: SQLiteExpressionSQL.Kind, type: AttributeType?)] = []
        for column in request.columns {
            switch column {
            case .keyPath(let path):
                let (sql, kind) = try expressions.sql(.keyPath(path))
                selected.append((path, sql, kind, nil))
            case .expression(let name, let expression, let type):
                let (sql, _) = try expressions.sql(expression)
                selected.append((name, sql, .computed, type))
            }
        }
        let selectArguments = expressions.arguments
        expressions.arguments = []

        var groupBy: [String] = []
        var byName: [String: FetchExpression] = [:]
        for column in request.groupBy {
            switch column {
            case .keyPath(let path):
                groupBy.append(try expressions.sql(.keyPath(path)).sql)
                byName[path] = .keyPath(path)
            case .expression(let name, let expression, _):
                groupBy.append(try expressions.sql(expression).sql)
                byName[name] = expression
            }
        }
        for case .expression(let name, let expression, _) in request.columns { byName[name] = expression }
        let groupArguments = expressions.arguments
        expressions.arguments = []

        var having = ""
        if let predicate = request.having {
            having = " HAVING " + (try expressions.condition(predicate.replacingKeyPaths { byName[$0] }))
        }
        let havingArguments = expressions.arguments
        expressions.arguments = []

        var orderTerms: [String] = []
        let selectedNames = Set(selected.map(\.name))
        for descriptor in request.fetch.sortDescriptors {
            var term: String
            if selectedNames.contains(descriptor.key), case .expression? = request.columns.first(where: { $0.name == descriptor.key }) {
                term = SQLiteSchema.quote(descriptor.key)
            } else {
                term = try expressions.sql(.keyPath(descriptor.key)).sql
            }
            switch descriptor.comparison {
            case .compare: break
            case .caseInsensitiveCompare: term += " COLLATE NOCASE"
            case .localizedStandardCompare: throw SQLiteExpressionSQL.unsupported("localizedStandardCompare sorting")
            }
            orderTerms.append(term + (descriptor.ascending ? "" : " DESC"))
        }
        if orderTerms.isEmpty && request.isGrouped { orderTerms = groupBy }
        let orderArguments = expressions.arguments

        var limitArguments: [StoreValue] = []
        let limit = limitClause(request.fetch, &limitArguments)
        let grouping = groupBy.isEmpty ? "" : " GROUP BY " + groupBy.joined(separator: ", ")
        let select = selected.enumerated().map { "\($0.element.sql) AS \(SQLiteSchema.quote($0.element.name))" }.joined(separator: ", ")
        let sql = "SELECT \(request.distinct ? "DISTINCT " : "")\(select) FROM \(fromClause(table, expressions.compiler))\(whereSQL)\(grouping)\(having)\(orderTerms.isEmpty ? "" : " ORDER BY " + orderTerms.joined(separator: ", "))\(limit)"
        let arguments = selectArguments + whereArguments + groupArguments + havingArguments + orderArguments + limitArguments

        return try withQueryConnection("fetching \(request.fetch.entity.name) dictionaries failed") { connection in
            var results: [[String: StoreValue]] = []
            try connection.prepare(sql).forEachRow(arguments) { statement in
                var dictionary: [String: StoreValue] = [:]
                for (index, column) in selected.enumerated() {
                    let value = decodeColumn(statement, Int32(index), column.decode, column.type)
                    if !value.isNull { dictionary[column.name] = value }
                }
                results.append(dictionary)
            }
            return results
        }
    }

    /// One selected value, decoded by what produced it.
    private func decodeColumn(_ statement: SQLiteStatement, _ index: Int32, _ kind: SQLiteExpressionSQL.Kind,
                              _ type: AttributeType?) -> StoreValue {
        if statement.isNull(index) { return .null }
        switch kind {
        case .attribute(let attributeType):
            return decodeAttribute(statement, index, attributeType)
        case .toOne(let relationship):
            guard let destination = relationship.destinationEntity else { return .null }
            return .object(ManagedObjectID(entity: destination, store: storeToken, primaryKey: statement.int64(index)))
        case .primaryKey(let entity):
            return .object(ManagedObjectID(entity: entity, store: storeToken, primaryKey: statement.int64(index)))
        case .computed:
            let raw: StoreValue
            switch statement.columnType(index) {
            case SQLiteStatement.integerType: raw = .integer(statement.int64(index))
            case SQLiteStatement.floatType: raw = .double(statement.double(index))
            case SQLiteStatement.blobType: raw = .data(statement.data(index))
            default: raw = .string(statement.string(index))
            }
            guard let type else { return raw }
            if case .string(let text) = raw, type == .decimal {
                return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map(StoreValue.decimal) ?? .null
            }
            return StoreValueCoercion.coerce(raw, to: type)
        }
    }
}

extension SQLiteStore {
    /// ``fetchObjectIDs(_:)`` in compact form (for lazily faulted batched fetches): the same
    /// query, without a ``ManagedObjectID`` per row.
    func fetchObjectKeys(_ request: StoreFetchRequest) throws -> StoreObjectKeys {
        var (_, from, whereClause, orderBy, arguments) = try compileFetch(request)
        let limit = limitClause(request, &arguments)
        let sql = "SELECT \"t0\".\"Z_PK\", \"t0\".\"Z_ENT\" FROM \(from)\(whereClause)\(orderBy)\(limit)"
        return try withQueryConnection("fetching \(request.entity.name) IDs failed") { connection in
            var keys = StoreObjectKeys(store: storeToken)
            try connection.cachedStatement(sql).forEachRow(arguments) { statement in
                guard let entity = schema.entitiesByNumber[Int(statement.int64(1))] else { return }
                keys.append(entity, statement.int64(0))
            }
            return keys
        }
    }
}
