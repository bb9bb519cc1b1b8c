/// What a connection's two history `INSERT`s (`ATRANSACTION`, `ACHANGE`) have bound, so a
/// save binds only the values that differ from the last save's: SQLite keeps a statement's
/// bindings across `sqlite3_reset` (only `sqlite3_clear_bindings` clears them), and most
/// values repeat from save to save (the process's name and ID, a session's author and context
/// name, the change type and entity of one-object inserts).
///
/// The statements are held here, so neither can be finalized and another take its place
/// while bindings are remembered for it. Held by ``SQLiteHistoryStrings`` and dropped
/// whenever that drops its pending keys (a rollback of a transaction or of a write's
/// savepoint): a bound string key may name a row the rollback removed. Also dropped when a
/// bind or step throws part-way. Confined like the connection (the store's lock).
struct SQLiteHistoryBindings {
    /// The `ATRANSACTION` insert, once prepared.
    var transaction: SQLiteStatement?
    /// Whether the process's name and ID keys are bound on ``transaction``.
    var processBound = false
    /// The author whose key is bound on ``transaction`` (`.some(nil)`: `NULL` is bound;
    /// `nil`: nothing known).
    var author: String??
    /// The context name whose key is bound on ``transaction`` (as ``author``).
    var contextName: String??

    /// The `ACHANGE` insert, once prepared.
    var change: SQLiteStatement?
    /// The change type bound on ``change`` (`nil`: nothing known).
    var changeType: Int64?
    /// The entity number bound on ``change``.
    var changeEntity: Int64?
    /// The transaction number bound on ``change``.
    var changeTransaction: Int64?
    /// Whether `NULL` is bound for the change's columns, and for its tombstone.
    var columnsNull = false
    var tombstoneNull = false
}
