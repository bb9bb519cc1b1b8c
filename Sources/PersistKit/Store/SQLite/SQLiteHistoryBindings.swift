/// What a connection's history `INSERT`s (`ATRANSACTION`, `ACHANGE`) have bound, so a save
/// binds only the values that differ from the last save's: SQLite keeps a statement's
/// bindings across `sqlite3_reset` (only `sqlite3_clear_bindings` clears them), and most
/// values repeat from save to save (the process's name and ID, a session's author and context
/// name, the change type and entity of one-object inserts).
///
/// Each table has two inserts. The first row a transaction writes to a table is numbered
/// above the floor a purge of the newest rows left (``SQLiteStore/nextNumberSQL(_:entity:)``,
/// a subquery of about 1.5 K instructions); the rows after it in the same transaction leave
/// `Z_PK` to SQLite, which gives them the largest plus one: the number the subquery would
/// give, since the transaction's first row is above any floor and only a purge, never part of
/// a save's transaction, moves a floor or removes rows. ``transactionNumbered`` and
/// ``changeNumbered`` say whether the transaction in progress wrote its first row of each
/// table; ``SQLiteHistoryStrings`` clears them at `BEGIN`, and a rollback of the
/// transaction or of a write's savepoint drops everything (the rolled-back row may have been
/// the one above the floor).
///
/// The statements are held here, so none can be finalized and another take its place while
/// bindings are remembered for it. Held by ``SQLiteHistoryStrings`` and dropped whenever that
/// drops its pending keys (a rollback of a transaction or of a write's savepoint): a bound
/// string key may name a row the rollback removed. Also dropped when a bind or step throws
/// part-way. Confined like the connection (the store's lock).
struct SQLiteHistoryBindings {
    /// An `ATRANSACTION` insert, once prepared, and what it has bound.
    struct TransactionInsert {
        /// The statement, once prepared.
        var statement: SQLiteStatement?
        /// Whether the process's name and ID keys are bound.
        var processBound = false
        /// The author whose key is bound (`.some(nil)`: `NULL` is bound; `nil`: nothing known).
        var author: String??
        /// The context name whose key is bound (as ``author``).
        var contextName: String??
    }

    /// An `ACHANGE` insert, once prepared, and what it has bound.
    struct ChangeInsert {
        /// The statement, once prepared.
        var statement: SQLiteStatement?
        /// The change type bound (`nil`: nothing known).
        var changeType: Int64?
        /// The entity number bound.
        var changeEntity: Int64?
        /// The transaction number bound.
        var changeTransaction: Int64?
        /// Whether `NULL` is bound for the change's columns, and for its tombstone.
        var columnsNull = false
        var tombstoneNull = false
    }

    /// The inserts numbering their row above a purge's floor: a transaction's first row of
    /// each table.
    var firstTransaction = TransactionInsert()
    var firstChange = ChangeInsert()
    /// The inserts leaving `Z_PK` to SQLite: the rows after the first in the same transaction.
    var nextTransaction = TransactionInsert()
    var nextChange = ChangeInsert()
    /// Whether the transaction in progress wrote an `ATRANSACTION` row, and an `ACHANGE` row,
    /// that is still there (not rolled back).
    var transactionNumbered = false
    var changeNumbered = false
}
