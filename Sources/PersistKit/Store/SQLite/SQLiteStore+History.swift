import Foundation

/// What a ``SQLiteStore`` remembers about history and other connections' commits.
struct HistoryState {
    /// Transactions this store's own connection committed, not yet seen by the remote-change
    /// observer (which skips them: their changes were merged in-process already).
    var ownTransactions = TransactionNumbers()
    /// The last `PRAGMA data_version` seen, or `nil` before the first poll.
    var lastDataVersion: Int64?
    /// Whether a remote-change observer reads history (only then are own transactions noted).
    var isObserved = false
}

/// Persistent history in a SQLite store: tables in the spirit of Core Data's
/// (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`; see `docs/sharing.md` for what matches),
/// written in the same SQLite transaction as the save they record.
extension SQLiteStore: PersistentHistoryStore {
    /// `Z_ENT` values written in the history tables (Core Data uses numbers of its own above
    /// the model's; these are ours).
    static let transactionEntityNumber: Int64 = 16001
    static let changeEntityNumber: Int64 = 16002
    static let stringEntityNumber: Int64 = 16003

    /// The `Z_NAME`s of the history's rows in `Z_PRIMARYKEY` (written only by a purge, see
    /// ``historyNumberFloors``).
    static let transactionEntityName = "TRANSACTION"
    static let changeEntityName = "CHANGE"

    /// The history tables and indexes; `IF NOT EXISTS`, so opening a store twice, or from two
    /// processes at once, is harmless.
    ///
    /// `ATRANSACTION` and `ACHANGE` are keyed as Core Data keys its own tables, by a plain
    /// `INTEGER PRIMARY KEY`: a new row takes the largest `Z_PK` plus one, unless the history's
    /// row in `Z_PRIMARYKEY` says a purge removed larger numbers (see
    /// ``historyNumberFloors``). (Stores written before this layout keyed them
    /// `AUTOINCREMENT`, which reads and writes `sqlite_sequence` at every insert; opening such
    /// a store rewrites the two tables once, see ``migrateHistoryLayout(_:)``.)
    static let historyCreationSQL = [
        """
        CREATE TABLE IF NOT EXISTS "ATRANSACTIONSTRING" ("Z_PK" INTEGER PRIMARY KEY, "Z_ENT" INTEGER, "Z_OPT" INTEGER, \
        "ZNAME" VARCHAR NOT NULL UNIQUE)
        """,
        transactionTableSQL("ATRANSACTION"),
        changeTableSQL("ACHANGE"),
    ] + historyIndexSQL

    /// The history's indexes: changes by transaction (history fetches and purges), and
    /// transactions by timestamp (fetches and purges by date).
    static let historyIndexSQL = [
        #"CREATE INDEX IF NOT EXISTS "ACHANGE_ZTRANSACTIONID_INDEX" ON "ACHANGE" ("ZTRANSACTIONID")"#,
        #"CREATE INDEX IF NOT EXISTS "ATRANSACTION_ZTIMESTAMP_INDEX" ON "ATRANSACTION" ("ZTIMESTAMP")"#,
    ]

    /// `CREATE TABLE` of the transactions table, named `name`.
    static func transactionTableSQL(_ name: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(SQLiteSchema.quote(name)) ("Z_PK" INTEGER PRIMARY KEY, "Z_ENT" INTEGER, "Z_OPT" INTEGER, \
        "ZAUTHORTS" INTEGER, "ZBUNDLEIDTS" INTEGER, "ZCONTEXTNAMETS" INTEGER, "ZPROCESSIDTS" INTEGER, "ZTIMESTAMP" FLOAT, \
        "ZQUERYGEN" BLOB)
        """
    }

    /// `CREATE TABLE` of the changes table, named `name`.
    static func changeTableSQL(_ name: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(SQLiteSchema.quote(name)) ("Z_PK" INTEGER PRIMARY KEY, "Z_ENT" INTEGER, "Z_OPT" INTEGER, \
        "ZCHANGETYPE" INTEGER, "ZENTITY" INTEGER, "ZENTITYPK" INTEGER, "ZTRANSACTIONID" INTEGER, "ZCOLUMNS" BLOB, \
        "ZTOMBSTONE" BLOB)
        """
    }

    /// The `Z_PK` a new row of `table` (`ATRANSACTION` or `ACHANGE`, whose `Z_PRIMARYKEY` row
    /// is `entity`) takes, as an SQL expression: one above the floor a purge left when that is
    /// at or above the table's largest `Z_PK`, else `NULL` (SQLite then takes the largest
    /// `Z_PK` plus one). Without a floor row (no purge ever removed the newest rows) it costs
    /// one look-up in `Z_PRIMARYKEY`'s single page: the maximum is not read.
    static func nextNumberSQL(_ table: String, entity: Int64) -> String {
        """
        (SELECT "Z_MAX" + 1 FROM "Z_PRIMARYKEY" WHERE "Z_ENT" = \(entity) \
        AND "Z_MAX" >= ifnull((SELECT max("Z_PK") FROM \(SQLiteSchema.quote(table))), 0))
        """
    }

    static func createHistoryTables(_ connection: SQLiteConnection) throws {
        try connection.inTransaction(.immediate) {
            try migrateHistoryLayout(connection)
            for sql in historyCreationSQL { try connection.execute(sql) }
        }
    }

    /// The program name and process ID recorded with each transaction.
    private static let processInfo: (bundleID: String, processID: String) = {
        let info = ProcessInfo.processInfo
        return (info.processName, String(info.processIdentifier))
    }()

    // MARK: - Recording

    /// Records `changes` as one history transaction, on `connection` inside the save's own
    /// SQLite transaction; returns the transaction's number. `insertedKeys` holds the keys
    /// given to the inserted rows by position (none: the row's own ID), for a request that
    /// still carries temporary IDs.
    ///
    /// The `INSERT`s are prepared once per connection and keep their bindings from save to
    /// save (``SQLiteHistoryBindings``): only values that changed are bound again, and the
    /// author's and context name's keys are looked up only when the text differs from the one
    /// bound. Only a transaction's first row of each table is numbered by the subquery that
    /// respects a purge's floor; the rows after it are numbered by SQLite alone.
    func recordHistory(_ changes: StoreSaveRequest, _ connection: SQLiteConnection,
                       insertedKeys: AssignedKeys = .none, updateOrder: [WriteOrderEntry]? = nil,
                       deleteOrder: [WriteOrderEntry]? = nil) throws -> Int64 {
        // Taken out while bound and stepped; put back only if nothing threw on the way (a
        // half-bound statement's bindings are not known).
        var bindings = connection.historyStrings.takeBindings()
        let number = try recordTransaction(changes, connection, &bindings)
        // Rows of one entity come together: its number is looked up once per run.
        var lastEntity: EntityDescription?
        var lastEntityNumber: Int64 = 0
        func entityNumber(_ entity: EntityDescription) -> Int64 {
            if entity !== lastEntity {
                lastEntity = entity
                lastEntityNumber = schema.layout(of: entity).map { Int64($0.number) } ?? 0
            }
            return lastEntityNumber
        }
        func record(_ id: ManagedObjectID, _ type: PersistentHistoryChange.ChangeType, columns: StoreValue = .null, tombstone: StoreValue = .null) throws {
            try record(id.entity, id.primaryKey, type, columns: columns, tombstone: tombstone)
        }
        func record(_ entity: EntityDescription, _ primaryKey: Int64, _ type: PersistentHistoryChange.ChangeType,
                    columns: StoreValue = .null, tombstone: StoreValue = .null) throws {
            let change = HistoryChangeValues(type: Int64(type.rawValue), entity: entityNumber(entity), primaryKey: primaryKey,
                                             transaction: number, columns: columns, tombstone: tombstone)
            if bindings.changeNumbered {
                try Self.insertChange(change, &bindings.nextChange, abovePurgeFloor: false, connection)
            } else {
                try Self.insertChange(change, &bindings.firstChange, abovePurgeFloor: true, connection)
                bindings.changeNumbered = true
            }
        }
        // Read in place through the buffer, as the save's INSERT loop reads them: bound to a
        // local, each row was copied out of the array first. Once the transaction's first
        // change is numbered, full runs of inserted rows of one entity go in one statement each
        // (``insertChangeRun(_:columns:of:at:keys:entity:transaction:_:)``), as the rows themselves did.
        try changes.inserted.withUnsafeBufferPointer { rows in
            try Self.forEachChangeRun(count: rows.count, runsAllowed: { bindings.changeNumbered },
                                      together: { rows[$1].entity === rows[$0].entity }) { run in
                try Self.insertChangeRun(.insert, of: rows, at: run, keys: insertedKeys,
                                         entity: entityNumber(rows[run.lowerBound].entity), transaction: number, connection)
            } single: { position in
                try record(rows[position].entity, insertedKeys.primaryKey(at: position) ?? rows[position].primaryKey, .insert)
            }
        }
        // Updated rows in `updateOrder` (the order their `UPDATE`s ran in) when given, in the
        // request's order otherwise; runs of rows of one entity that changed the same properties
        // go in one statement each, the names bound once.
        try changes.updated.withUnsafeBufferPointer { rows in
            func position(_ index: Int) -> Int { updateOrder?[index].position ?? index }
            // Each row's changed property names, in write order (the arrays the request holds).
            let names = (0..<rows.count).map { index in
                let row = position(index)
                return changes.updatedKeys[rows[row].objectID] ?? rows[row].entity.slots.filter { !$0.isTransient }.map(\.name)
            }
            func columns(_ index: Int) -> StoreValue { .data(Data(names[index].joined(separator: ",").utf8)) }
            try Self.forEachChangeRun(count: rows.count, runsAllowed: { bindings.changeNumbered }, together: { first, other in
                rows[position(other)].entity === rows[position(first)].entity && names[other] == names[first]
            }) { run in
                try Self.insertChangeRun(.update, columns: columns(run.lowerBound), of: rows, at: run.lazy.map(position), keys: .none,
                                         entity: entityNumber(rows[position(run.lowerBound)].entity), transaction: number, connection)
            } single: { index in
                let row = position(index)
                try record(rows[row].entity, rows[row].primaryKey, .update, columns: columns(index))
            }
        }
        // Deleted rows in `deleteOrder` (the order their `DELETE`s ran in) when given, in the
        // request's order otherwise; runs of rows of one entity with no value to preserve go in
        // one statement each, as inserted rows do.
        try changes.deleted.withUnsafeBufferPointer { rows in
            func position(_ index: Int) -> Int { deleteOrder?[index].position ?? index }
            // Whether an entity preserves any value in its tombstones, asked once per run of
            // rows of one entity.
            var preservingEntity: EntityDescription?
            var preserves = false
            func preservesValues(_ entity: EntityDescription) -> Bool {
                if entity !== preservingEntity {
                    preservingEntity = entity
                    preserves = Self.preservesValuesOnDeletion(entity)
                }
                return preserves
            }
            try Self.forEachChangeRun(count: rows.count, runsAllowed: { bindings.changeNumbered }, together: { first, other in
                let entity = rows[position(first)].entity
                return rows[position(other)].entity === entity && !preservesValues(entity)
            }) { run in
                try Self.insertChangeRun(.delete, of: rows, at: run.lazy.map(position), keys: .none,
                                         entity: entityNumber(rows[position(run.lowerBound)].entity), transaction: number, connection)
            } single: { index in
                let row = position(index)
                let entity = rows[row].entity
                try record(entity, rows[row].primaryKey, .delete, tombstone: preservesValues(entity) ? Self.tombstone(of: rows[row]) : .null)
            }
        }
        // Objects whose to-many relationships changed but which are not in `updated` (the
        // context sends both sides of a relationship; only one may have a row change).
        // (With to-many changes the request's IDs are all permanent: it was remapped.)
        if !changes.toManyChanges.isEmpty {
            let written = Set(changes.updated.map(\.objectID)).union(changes.inserted.map(\.objectID)).union(changes.deleted.map(\.objectID))
            var extra: [ManagedObjectID: Set<String>] = [:]
            for change in changes.toManyChanges where !written.contains(change.source) {
                extra[change.source, default: []].insert(change.relationship.name)
            }
            for (id, names) in extra.sorted(by: { ($0.key.entity.name, $0.key.primaryKey) < ($1.key.entity.name, $1.key.primaryKey) }) {
                try record(id, .update, columns: .data(Data(names.sorted().joined(separator: ",").utf8)))
            }
        }
        connection.historyStrings.keepBindings(bindings)
        return number
    }

    /// Walks the positions `0..<count` of a save's rows in their order: each full run of
    /// ``changeRunRows`` positions that `together(first, other)` keeps with the run's first goes
    /// to `run`, once `runsAllowed()` (asked at each position: the transaction's first change
    /// must be numbered alone first); every other position goes to `single`.
    @inline(__always)
    private static func forEachChangeRun(count: Int, runsAllowed: () -> Bool, together: (_ first: Int, _ other: Int) -> Bool,
                                         _ run: (Range<Int>) throws -> Void, single: (Int) throws -> Void) rethrows {
        var index = 0
        while index < count {
            if count - index >= changeRunRows && runsAllowed() {
                var end = index + 1
                while end < index + changeRunRows && together(index, end) { end += 1 }
                if end - index == changeRunRows {
                    try run(index..<end)
                    index = end
                    continue
                }
            }
            try single(index)
            index += 1
        }
    }

    /// How many inserted rows' `ACHANGE` rows one statement of ``insertChangeRun(_:columns:of:at:keys:entity:transaction:_:)``
    /// writes: as many as the rows' own `INSERT`s of several rows (docs/stores.md, "Inserting
    /// rows in runs").
    static let changeRunRows = SQLiteStore.insertManyMaximumRows

    /// Inserts the `ACHANGE` rows of type `type` of the ``changeRunRows`` rows of `rows` at
    /// `positions`, all of the entity numbered `entity`, in the history transaction
    /// `transaction`, in one statement: the entity and transaction bound once (and, for updates,
    /// `columns`, the changed property names all the rows share), each row's key (from `keys`
    /// by position, or its own) after them, `Z_PK` left to SQLite as for every change row after
    /// a transaction's first (see ``SQLiteHistoryBindings``).
    private static func insertChangeRun(_ type: PersistentHistoryChange.ChangeType, columns: StoreValue = .null,
                                        of rows: UnsafeBufferPointer<RowSnapshot>, at positions: some Sequence<Int>,
                                        keys: AssignedKeys, entity: Int64, transaction: Int64, _ connection: SQLiteConnection) throws {
        let key: Int
        switch type {
        case .insert: key = SQLiteWriteStatementKey.historyChangeRun
        case .update: key = SQLiteWriteStatementKey.historyUpdateChangeRun
        case .delete: key = SQLiteWriteStatementKey.historyDeleteChangeRun
        }
        // An update's names are the third parameter, the keys after them.
        let firstKey: Int32 = type == .update ? 4 : 3
        let statement = try connection.cachedStatement(key: key, keepingBindings: true) {
            let columnsSQL = type == .update ? "?3" : "NULL"
            let values = (0..<changeRunRows).map {
                "(\(changeEntityNumber), 1, \(type.rawValue), ?1, ?\(Int32($0) + firstKey), ?2, \(columnsSQL), NULL)"
            }
            return """
                INSERT INTO "ACHANGE" ("Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS", "ZTOMBSTONE") \
                VALUES \(values.joined(separator: ", "))
                """
        }
        // Through `bind`, which readies the statement after its last step.
        try statement.bind(.integer(entity), at: 1)
        try statement.bindInteger(transaction, at: 2)
        if type == .update { try statement.bind(columns, at: 3) }
        for (offset, row) in positions.enumerated() {
            try statement.bindInteger(keys.primaryKey(at: row) ?? rows[row].primaryKey, at: Int32(offset) + firstKey)
        }
        while try statement.step() {}
        statement.resetKeepingBindings()
        // The names were bound as a copy: let go of it.
        if type == .update { statement.reset() }
    }

    /// Whether `entity` has an attribute whose value its deleted objects' tombstones keep
    /// (``AttributeDescription/preservesValueInHistoryOnDeletion``).
    private static func preservesValuesOnDeletion(_ entity: EntityDescription) -> Bool {
        entity.slots.contains { ($0 as? AttributeDescription)?.preservesValueInHistoryOnDeletion == true }
    }

    /// The values of one `ACHANGE` row.
    private struct HistoryChangeValues {
        var type: Int64
        var entity: Int64
        var primaryKey: Int64
        var transaction: Int64
        var columns: StoreValue
        var tombstone: StoreValue
    }

    /// Inserts the `ACHANGE` row `change` with `insert`, binding only what differs from what
    /// `insert` says is bound. `abovePurgeFloor`: the transaction's first change row, numbered
    /// above a purge's floor (see ``SQLiteHistoryBindings``).
    private static func insertChange(_ change: HistoryChangeValues, _ insert: inout SQLiteHistoryBindings.ChangeInsert,
                                     abovePurgeFloor: Bool, _ connection: SQLiteConnection) throws {
        let statement: SQLiteStatement
        if let held = insert.statement {
            statement = held
        } else if abovePurgeFloor {
            statement = try connection.cachedStatement(key: SQLiteWriteStatementKey.historyChange) {
                """
                INSERT INTO "ACHANGE" ("Z_PK", "Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS", "ZTOMBSTONE") \
                VALUES (\(nextNumberSQL("ACHANGE", entity: changeEntityNumber)), \(changeEntityNumber), 1, ?, ?, ?, ?, ?, ?)
                """
            }
            insert.statement = statement
        } else {
            statement = try connection.cachedStatement(key: SQLiteWriteStatementKey.historyNextChange) {
                """
                INSERT INTO "ACHANGE" ("Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS", "ZTOMBSTONE") \
                VALUES (\(changeEntityNumber), 1, ?, ?, ?, ?, ?, ?)
                """
            }
            insert.statement = statement
        }
        if insert.changeType != change.type {
            try statement.bind(.integer(change.type), at: 1)
            insert.changeType = change.type
        }
        if insert.changeEntity != change.entity {
            try statement.bind(.integer(change.entity), at: 2)
            insert.changeEntity = change.entity
        }
        try statement.bind(.integer(change.primaryKey), at: 3)
        if insert.changeTransaction != change.transaction {
            try statement.bind(.integer(change.transaction), at: 4)
            insert.changeTransaction = change.transaction
        }
        let columnsNull = change.columns.isNull
        if !(columnsNull && insert.columnsNull) {
            try statement.bind(change.columns, at: 5)
            insert.columnsNull = columnsNull
        }
        let tombstoneNull = change.tombstone.isNull
        if !(tombstoneNull && insert.tombstoneNull) {
            try statement.bind(change.tombstone, at: 6)
            insert.tombstoneNull = tombstoneNull
        }
        while try statement.step() {}
        statement.resetKeepingBindings()
    }

    /// Inserts the `ATRANSACTION` row of `changes` and returns its number, with the insert
    /// numbering it above a purge's floor when it is the transaction's first (see
    /// ``SQLiteHistoryBindings``).
    private func recordTransaction(_ changes: StoreSaveRequest, _ connection: SQLiteConnection,
                                   _ bindings: inout SQLiteHistoryBindings) throws -> Int64 {
        if bindings.transactionNumbered {
            return try insertTransaction(changes, &bindings.nextTransaction, abovePurgeFloor: false, connection)
        }
        let number = try insertTransaction(changes, &bindings.firstTransaction, abovePurgeFloor: true, connection)
        bindings.transactionNumbered = true
        return number
    }

    /// Inserts the `ATRANSACTION` row of `changes` with `insert` and returns its number,
    /// binding only what differs from what `insert` says is bound.
    private func insertTransaction(_ changes: StoreSaveRequest, _ insert: inout SQLiteHistoryBindings.TransactionInsert,
                                   abovePurgeFloor: Bool, _ connection: SQLiteConnection) throws -> Int64 {
        let transaction: SQLiteStatement
        if let held = insert.statement {
            transaction = held
        } else if abovePurgeFloor {
            transaction = try connection.cachedStatement(key: SQLiteWriteStatementKey.historyTransaction) {
                """
                INSERT INTO "ATRANSACTION" ("Z_PK", "Z_ENT", "Z_OPT", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP") \
                VALUES (\(Self.nextNumberSQL("ATRANSACTION", entity: Self.transactionEntityNumber)), \(Self.transactionEntityNumber), 1, ?, ?, ?, ?, ?)
                """
            }
            insert.statement = transaction
        } else {
            transaction = try connection.cachedStatement(key: SQLiteWriteStatementKey.historyNextTransaction) {
                """
                INSERT INTO "ATRANSACTION" ("Z_ENT", "Z_OPT", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP") \
                VALUES (\(Self.transactionEntityNumber), 1, ?, ?, ?, ?, ?)
                """
            }
            insert.statement = transaction
        }
        // A string's key is looked up before the statement is touched: the look-up may run
        // statements of its own, none of them this one.
        if insert.author != .some(changes.transactionAuthor) {
            try transaction.bind(try stringKey(changes.transactionAuthor, connection), at: 1)
            insert.author = .some(changes.transactionAuthor)
        }
        if !insert.processBound {
            try transaction.bind(try stringKey(Self.processInfo.bundleID, connection), at: 2)
            try transaction.bind(try stringKey(Self.processInfo.processID, connection), at: 4)
            insert.processBound = true
        }
        if insert.contextName != .some(changes.contextName) {
            try transaction.bind(try stringKey(changes.contextName, connection), at: 3)
            insert.contextName = .some(changes.contextName)
        }
        try transaction.bind(.double(Date().timeIntervalSinceReferenceDate), at: 5)
        while try transaction.step() {}
        transaction.resetKeepingBindings()
        return connection.lastInsertRowID
    }

    /// The `Z_PK` in `ATRANSACTIONSTRING` of `text` (`NULL` for `nil`), adding it when missing.
    /// A key a committed transaction of this connection saw is taken from
    /// ``SQLiteConnection/historyStrings`` (string rows are never deleted or changed);
    /// otherwise a `SELECT`, and an `INSERT` only for a text new to the store (once per
    /// author, context name or process). (One `SELECT … IN (…)` for a save's four strings
    /// costs more: SQLite builds an ephemeral table for the list.) Inside the save's
    /// transaction, which holds the write lock.
    private func stringKey(_ text: String?, _ connection: SQLiteConnection) throws -> StoreValue {
        guard let text else { return .null }
        if let key = connection.historyStrings.key(of: text) { return .integer(key) }
        let select = try connection.cachedStatement(key: SQLiteWriteStatementKey.historyStringKey) {
            #"SELECT "Z_PK" FROM "ATRANSACTIONSTRING" WHERE "ZNAME" = ?"#
        }
        func selected() throws -> Int64? {
            try select.bind(.string(text), at: 1)
            defer { select.reset() }
            guard try select.step(), !select.isNull(0) else { return nil }
            return select.int64(0)
        }
        if let key = try selected() {
            connection.historyStrings.note(text, key: key)
            return .integer(key)
        }
        try connection.cachedStatement(key: SQLiteWriteStatementKey.historyString) {
            #"INSERT OR IGNORE INTO "ATRANSACTIONSTRING" ("Z_ENT", "Z_OPT", "ZNAME") VALUES (?, 1, ?)"#
        }.execute([.integer(Self.stringEntityNumber), .string(text)])
        guard let key = try selected() else { return .null }
        connection.historyStrings.note(text, key: key)
        return .integer(key)
    }

    /// The preserved attribute values of a deleted row, as JSON (`{"name": ["string", "Duvel"]}`),
    /// or `NULL` when the entity preserves none or the row carries no values.
    private static func tombstone(of row: RowSnapshot) -> StoreValue {
        var object: [String: [String]] = [:]
        for (slot, property) in row.entity.slots.enumerated() {
            guard let attribute = property as? AttributeDescription, attribute.preservesValueInHistoryOnDeletion,
                  slot < row.values.count, let (type, text) = StoreValueText.encode(row.values[slot]) else { continue }
            object[attribute.name] = text.map { [type, $0] } ?? [type]
        }
        guard !object.isEmpty, let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return .null }
        return .data(data)
    }

    private static func decodeTombstone(_ data: Data) -> [String: StoreValue] {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: [String]] else { return [:] }
        var result: [String: StoreValue] = [:]
        for (name, pair) in object {
            guard let type = pair.first else { continue }
            if type == "null" { result[name] = .null; continue }
            if pair.count == 2, let value = StoreValueText.decode(type: type, text: pair[1]) { result[name] = value }
        }
        return result
    }

    // MARK: - Reading and purging

    /// The token after the last transaction committed to the store, by any connection.
    public func currentHistoryToken() throws -> PersistentHistoryToken {
        try requireHistory()
        let number = try withConnection(.sqlite, "reading the history token failed") { connection in
            try Self.lastTransactionNumber(connection)
        }
        return PersistentHistoryToken(storeIdentifier: identifier, transactionNumber: number)
    }

    /// The number of the last transaction committed: the largest `Z_PK` of `ATRANSACTION`, or
    /// the floor a purge left, whichever is larger (0 for a store without history).
    static func lastTransactionNumber(_ connection: SQLiteConnection) throws -> Int64 {
        try lastNumber(connection, table: "ATRANSACTION", entity: transactionEntityNumber)
    }

    /// The largest number `table` has handed out: its largest `Z_PK` or its floor in
    /// `Z_PRIMARYKEY` (``historyNumberFloors``), whichever is larger.
    private static func lastNumber(_ connection: SQLiteConnection, table: String, entity: Int64) throws -> Int64 {
        try connection.int64("""
            SELECT max(ifnull((SELECT max("Z_PK") FROM \(SQLiteSchema.quote(table))), 0), \
            ifnull((SELECT "Z_MAX" FROM "Z_PRIMARYKEY" WHERE "Z_ENT" = ?), 0))
            """, [.integer(entity)]) ?? 0
    }

    /// Raises the history's floors in `Z_PRIMARYKEY` (rows `Z_ENT` 16001 for transactions and
    /// 16002 for changes, as Core Data keeps a `Z_MAX` per table) to `transaction` and
    /// `change`, the last numbers handed out before a purge, when the purge removed the
    /// table's largest `Z_PK`: the next row is numbered above them, so a number is never
    /// handed out twice and a token taken before the purge never names a later transaction.
    /// Purges that keep the newest rows write nothing here (the largest `Z_PK` then is the
    /// last number), so a store that never purged its newest history has no such rows.
    static func historyNumberFloors(_ connection: SQLiteConnection, transaction: Int64, change: Int64) throws {
        for (table, entity, name, last) in [("ATRANSACTION", transactionEntityNumber, transactionEntityName, transaction),
                                             ("ACHANGE", changeEntityNumber, changeEntityName, change)] {
            let kept = try connection.int64("SELECT max(\"Z_PK\") FROM \(SQLiteSchema.quote(table))") ?? 0
            guard last > kept else { continue }
            try connection.execute("""
                INSERT INTO "Z_PRIMARYKEY" ("Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX") VALUES (?, ?, 0, ?) \
                ON CONFLICT ("Z_ENT") DO UPDATE SET "Z_MAX" = max("Z_MAX", excluded."Z_MAX")
                """, [.integer(entity), .string(name), .integer(last)])
        }
    }

    private func requireHistory() throws {
        guard isHistoryTracked else {
            throw PersistenceError(.persistentStoreOperation, "the store does not track persistent history (open it with StoreOptions.persistentHistoryTracking)",
                                   path: url?.path)
        }
    }

    /// Runs a history fetch or purge.
    public func executeHistory(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        try requireHistory()
        switch request.operation {
        case .fetchAfterToken(let token):
            try checkStore(of: token)
            return try fetchHistory(after: token?.transactionNumber ?? 0, since: nil, limit: request.fetchLimit, checkExpiry: token != nil)
        case .fetchAfterDate(let date):
            return try fetchHistory(after: 0, since: date, limit: request.fetchLimit, checkExpiry: false)
        case .deleteBeforeToken(let token):
            try checkStore(of: token)
            return try deleteHistory(where: "\"Z_PK\" <= ?", .integer(token?.transactionNumber ?? Int64.max))
        case .deleteBeforeDate(let date):
            return try deleteHistory(where: "\"ZTIMESTAMP\" < ?", .double(date.timeIntervalSinceReferenceDate))
        }
    }

    private func checkStore(of token: PersistentHistoryToken?) throws {
        if let token, token.storeIdentifier != identifier {
            throw PersistenceError(.persistentStoreOperation, "the history token \(token) belongs to another store (this one is \(identifier))",
                                   path: url?.path)
        }
    }

    /// Transactions numbered above `after` (and committed at or after `since`), oldest first.
    func fetchHistory(after: Int64, since: Date?, limit: Int?, checkExpiry: Bool) throws -> PersistentHistoryResult {
        let storeID = identifier
        return try withConnection(.sqlite, "reading persistent history failed") { connection in
            try connection.inTransaction(.deferred) {
                if checkExpiry {
                    let oldest = try connection.int64("SELECT MIN(\"Z_PK\") FROM \"ATRANSACTION\"")
                        ?? (try Self.lastTransactionNumber(connection) + 1)
                    if after + 1 < oldest {
                        throw PersistenceError(.persistentHistoryTokenExpired,
                                               "the history after transaction \(after) was purged (the oldest kept is \(oldest)); fetch from a newer token",
                                               path: url?.path)
                    }
                }
                var sql = """
                    SELECT t."Z_PK", t."ZTIMESTAMP", a."ZNAME", c."ZNAME", b."ZNAME", p."ZNAME" FROM "ATRANSACTION" AS t \
                    LEFT JOIN "ATRANSACTIONSTRING" AS a ON a."Z_PK" = t."ZAUTHORTS" \
                    LEFT JOIN "ATRANSACTIONSTRING" AS c ON c."Z_PK" = t."ZCONTEXTNAMETS" \
                    LEFT JOIN "ATRANSACTIONSTRING" AS b ON b."Z_PK" = t."ZBUNDLEIDTS" \
                    LEFT JOIN "ATRANSACTIONSTRING" AS p ON p."Z_PK" = t."ZPROCESSIDTS" \
                    WHERE t."Z_PK" > ?
                    """
                var arguments: [StoreValue] = [.integer(after)]
                if let since {
                    sql += " AND t.\"ZTIMESTAMP\" >= ?"
                    arguments.append(.double(since.timeIntervalSinceReferenceDate))
                }
                sql += " ORDER BY t.\"Z_PK\""
                if let limit {
                    sql += " LIMIT ?"
                    arguments.append(.integer(Int64(max(0, limit))))
                }
                var transactions: [PersistentHistoryTransaction] = []
                let statement = try connection.prepare(sql)
                try statement.forEachRow(arguments) { row in
                    func text(_ column: Int32) -> String? { row.isNull(column) ? nil : row.string(column) }
                    transactions.append(PersistentHistoryTransaction(
                        transactionNumber: row.int64(0), storeIdentifier: storeID,
                        timestamp: Date(timeIntervalSinceReferenceDate: row.double(1)),
                        author: text(2), contextName: text(3), bundleID: text(4), processID: text(5), changes: []))
                }
                guard let first = transactions.first?.transactionNumber, let last = transactions.last?.transactionNumber else {
                    let token = PersistentHistoryToken(storeIdentifier: storeID, transactionNumber: since == nil ? after : try Self.lastTransactionNumber(connection))
                    return PersistentHistoryResult(token: token)
                }
                var indexByNumber: [Int64: Int] = [:]
                for (index, transaction) in transactions.enumerated() { indexByNumber[transaction.transactionNumber] = index }
                let changeSQL = """
                    SELECT "Z_PK", "ZTRANSACTIONID", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZCOLUMNS", "ZTOMBSTONE" FROM "ACHANGE" \
                    WHERE "ZTRANSACTIONID" BETWEEN ? AND ? ORDER BY "Z_PK"
                    """
                try connection.cachedStatement(changeSQL).forEachRow([.integer(first), .integer(last)]) { row in
                    guard let index = indexByNumber[row.int64(1)],
                          let type = PersistentHistoryChange.ChangeType(rawValue: Int(row.int64(2))),
                          let entity = schema.entitiesByNumber[Int(row.int64(3))] else { return }
                    let id = ManagedObjectID(entity: entity, storeIdentifier: storeID, primaryKey: row.int64(4))
                    var keys: Set<String> = []
                    if !row.isNull(5) {
                        keys = Set(String(decoding: row.data(5), as: UTF8.self).split(separator: ",").map(String.init))
                    }
                    let tombstone = row.isNull(6) ? [:] : Self.decodeTombstone(row.data(6))
                    transactions[index].changes.append(PersistentHistoryChange(
                        changeNumber: row.int64(0), changedObjectID: id, changeType: type, updatedProperties: keys, tombstone: tombstone))
                }
                return PersistentHistoryResult(transactions: transactions,
                                               token: PersistentHistoryToken(storeIdentifier: storeID, transactionNumber: last))
            }
        }
    }

    private func deleteHistory(where condition: String, _ argument: StoreValue) throws -> PersistentHistoryResult {
        guard !isReadOnly else { throw readOnlyError("delete history") }
        let storeID = identifier
        return try withWriteConnection(.sqlite, "deleting persistent history failed") { connection in
            try connection.inTransaction(.immediate) {
                let lastTransaction = try Self.lastTransactionNumber(connection)
                let lastChange = try Self.lastNumber(connection, table: "ACHANGE", entity: Self.changeEntityNumber)
                try connection.execute("""
                    DELETE FROM "ACHANGE" WHERE "ZTRANSACTIONID" IN (SELECT "Z_PK" FROM "ATRANSACTION" WHERE \(condition))
                    """, [argument])
                try connection.execute("DELETE FROM \"ATRANSACTION\" WHERE \(condition)", [argument])
                let count = connection.changes
                try Self.historyNumberFloors(connection, transaction: lastTransaction, change: lastChange)
                let token = PersistentHistoryToken(storeIdentifier: storeID, transactionNumber: lastTransaction)
                return PersistentHistoryResult(deletedCount: count, token: token)
            }
        }
    }

    // MARK: - Noticing other connections' commits

    /// Whether another connection (another coordinator or process) committed since the last
    /// call (`PRAGMA data_version`: "the integer values returned by two invocations … will be
    /// different if changes were committed to the database by any other connection in the
    /// interim", sqlite.org/pragma.html#pragma_data_version). The first call answers `false`.
    public func hasExternalCommits() throws -> Bool {
        try pollExternalCommits().changed
    }

    /// Whether another connection committed since the last poll and, with history, the number
    /// of the last transaction committed, read together under the store's lock. When nothing
    /// changed, every transaction up to that number is this connection's own or already seen,
    /// so the own-transaction list is emptied up to it (it never grows without bound).
    func pollExternalCommits() throws -> (changed: Bool, lastTransaction: Int64?) {
        let tracked = isHistoryTracked
        let (version, last) = try withConnection(.sqlite, "reading data_version failed") { connection in
            let version = try connection.int64("PRAGMA data_version") ?? 0
            let last = tracked ? try Self.lastTransactionNumber(connection) : nil
            return historyState.withLock { state -> (Bool, Int64?) in
                defer { state.lastDataVersion = version }
                let changed = state.lastDataVersion.map { $0 != version } ?? false
                if !changed, let last { state.ownTransactions.removeAll(through: last) }
                return (changed, last)
            }
        }
        return (version, last)
    }

    /// Notes a transaction committed by this store's own connection, when an observer reads history.
    func noteOwnTransaction(_ number: Int64) {
        historyState.withLock { state in
            if state.isObserved { state.ownTransactions.insert(number) }
        }
    }

    /// Marks the store as read by a remote-change observer.
    func beginObserving() {
        historyState.withLock { $0.isObserved = true }
    }

    /// History after `token` written by other connections, at most `limit` transactions; the
    /// returned token points after everything read (own transactions included).
    func externalHistory(after token: PersistentHistoryToken?, limit: Int) throws -> PersistentHistoryResult {
        var result = try fetchHistory(after: token?.transactionNumber ?? 0, since: nil, limit: limit, checkExpiry: token != nil)
        let last = result.token?.transactionNumber ?? 0
        result.transactions = historyState.withLock { state in
            let kept = result.transactions.filter { !state.ownTransactions.contains($0.transactionNumber) }
            state.ownTransactions.removeAll(through: last)
            return kept
        }
        return result
    }
}

extension SQLiteStore {
    /// What a batch request changed, for its history transaction.
    enum BatchKind {
        case insert
        /// An update of the named attributes.
        case update([String])
        case delete
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction and, with history tracking, records
    /// what it changed as one history transaction (author and context name unknown; objects a
    /// batch delete nullified count as updated; batch deletes keep no tombstones, as no row
    /// values are read). The transaction's number is noted as this connection's own once
    /// committed.
    func recordingBatch(_ kind: BatchKind, _ connection: SQLiteConnection,
                        _ body: () throws -> StoreBatchResult) throws -> StoreBatchResult {
        var historyNumber: Int64?
        let result = try connection.inTransaction(.immediate) {
            let result = try body()
            guard isHistoryTracked, !result.objectIDs.isEmpty || !result.nullifiedObjectIDs.isEmpty else { return result }
            var changes = StoreSaveRequest()
            changes.contextName = "batch"
            func rows(_ ids: [ManagedObjectID]) -> [RowSnapshot] { ids.map { RowSnapshot(objectID: $0, version: 0, values: []) } }
            switch kind {
            case .insert:
                changes.inserted = rows(result.objectIDs)
            case .update(let names):
                changes.updated = rows(result.objectIDs)
                for id in result.objectIDs { changes.updatedKeys[id] = names }
            case .delete:
                changes.deleted = rows(result.objectIDs)
            }
            for id in result.nullifiedObjectIDs {
                changes.updated.append(RowSnapshot(objectID: id, version: 0, values: []))
                changes.updatedKeys[id] = []
            }
            historyNumber = try recordHistory(changes, connection)
            return result
        }
        if let historyNumber { noteOwnTransaction(historyNumber) }
        return result
    }
}
