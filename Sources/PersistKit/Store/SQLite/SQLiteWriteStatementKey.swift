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

    /// The `INSERT` of rows of the entity numbered `entityNumber`.
    static func insert(entityNumber: Int) -> Int { (1 << 42) + entityNumber }
    /// The `UPDATE` of rows of the entity numbered `entityNumber`.
    static func update(entityNumber: Int) -> Int { (1 << 42) + (1 << 24) + entityNumber }
}
