/// Keys of the write path's cached statements (``SQLiteConnection/cachedStatement(key:_:)``):
/// a statement run at every save is found by an integer instead of by hashing its SQL text.
///
/// The read path's keys start at `1 << 40` and stay below `1 << 41`; these start at `1 << 41`.
/// One key always stands for the same SQL on a connection (its store's schema does not change).
enum SQLiteWriteStatementKey {
    /// `BEGIN <kind> TRANSACTION`.
    static func begin(_ kind: SQLiteConnection.TransactionKind) -> Int {
        switch kind {
        case .deferred: return (1 << 41)
        case .immediate: return (1 << 41) + 1
        case .exclusive: return (1 << 41) + 2
        }
    }

    /// `COMMIT TRANSACTION`.
    static let commit = (1 << 41) + 8
    /// `SELECT "Z_MAX" FROM "Z_PRIMARYKEY" WHERE "Z_ENT" = ?`.
    static let readKeyMaximum = (1 << 41) + 9
    /// `UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = ? WHERE "Z_ENT" = ?`.
    static let writeKeyMaximum = (1 << 41) + 10
    /// `SAVEPOINT "persist_write"` (a write of a group commit).
    static let savepoint = (1 << 41) + 11
    /// `RELEASE "persist_write"`.
    static let releaseSavepoint = (1 << 41) + 12
    /// `ROLLBACK TO "persist_write"`.
    static let rollbackToSavepoint = (1 << 41) + 13
    /// The `INSERT` of a history transaction (`ATRANSACTION`).
    static let historyTransaction = (1 << 41) + 14
    /// The `INSERT` of a history change (`ACHANGE`).
    static let historyChange = (1 << 41) + 15
    /// The `SELECT` of a history string's key (`ATRANSACTIONSTRING`).
    static let historyStringKey = (1 << 41) + 16
    /// The `INSERT OR IGNORE` of a history string.
    static let historyString = (1 << 41) + 17
    /// The `INSERT` of a history transaction after the first of a SQLite transaction, which
    /// leaves `Z_PK` to SQLite (``SQLiteHistoryBindings``).
    static let historyNextTransaction = (1 << 41) + 18
    /// The `INSERT` of a history change after the first of a SQLite transaction.
    static let historyNextChange = (1 << 41) + 19
    /// The `INSERT` of the history changes of a run of inserted rows of one entity, after the
    /// first change of a SQLite transaction.
    static let historyChangeRun = (1 << 41) + 20
    /// The `INSERT` of the history changes of a run of deleted rows of one entity, after the
    /// first change of a SQLite transaction.
    static let historyDeleteChangeRun = (1 << 41) + 21
    /// The `INSERT` of the history changes of a run of updated rows of one entity that changed
    /// the same properties, after the first change of a SQLite transaction.
    static let historyUpdateChangeRun = (1 << 41) + 22

    /// The `INSERT` of rows of the entity numbered `entityNumber`.
    static func insert(entityNumber: Int) -> Int { (1 << 42) + entityNumber }
    /// The `INSERT` of several rows at once of the entity numbered `entityNumber`
    /// (``SQLiteStore/WriteColumns/insertManySQL``).
    static func insertMany(entityNumber: Int) -> Int { (1 << 42) + (2 << 24) + entityNumber }
    /// The `UPDATE` of rows of the entity numbered `entityNumber`.
    static func update(entityNumber: Int) -> Int { (1 << 42) + (1 << 24) + entityNumber }
    /// The `DELETE` of one row of the entity numbered `entityNumber`
    /// (``SQLiteStore/WriteColumns/deleteSQL``).
    static func delete(entityNumber: Int) -> Int { (1 << 42) + (3 << 24) + entityNumber }
    /// The `DELETE` of several rows at once of the entity numbered `entityNumber`
    /// (``SQLiteStore/WriteColumns/deleteManySQL``).
    static func deleteMany(entityNumber: Int) -> Int { (1 << 42) + (4 << 24) + entityNumber }
    /// The `DELETE` of the memberships of one deleted row from the join table numbered
    /// `joinTable` (its index in the schema's join tables), by its source column (`side` 0) or
    /// its destination column (`side` 1).
    static func deleteJoinRows(joinTable: Int, side: Int) -> Int { (1 << 42) + (5 << 24) + 2 * joinTable + side }
    /// The same for several deleted rows at once.
    static func deleteManyJoinRows(joinTable: Int, side: Int) -> Int { (1 << 42) + (6 << 24) + 2 * joinTable + side }
    /// The `INSERT OR IGNORE` of one membership into the join table numbered `joinTable`.
    static func insertMembership(joinTable: Int) -> Int { (1 << 42) + (7 << 24) + joinTable }
    /// The `DELETE` of one membership from the join table numbered `joinTable`.
    static func deleteMembership(joinTable: Int) -> Int { (1 << 42) + (8 << 24) + joinTable }

    /// The number of slots of ``directSlot(_:)``.
    static let directSlotCount = 256

    /// Where the statement cache keeps `key`'s statement in its array, without hashing: the
    /// fixed keys above (`BEGIN`, `COMMIT`, the key sequence's, savepoints, history: slots
    /// 0 to 31) and the `INSERT` of entities numbered below 224 (slots 32 and up), the
    /// statements of every save; `nil` for any other key (kept in a dictionary).
    @inline(__always) static func directSlot(_ key: Int) -> Int? {
        let fixed = key &- (1 << 41)
        if UInt(bitPattern: fixed) < 32 { return fixed }
        let insert = key &- (1 << 42)
        if UInt(bitPattern: insert) < UInt(directSlotCount - 32) { return 32 + insert }
        return nil
    }
}
