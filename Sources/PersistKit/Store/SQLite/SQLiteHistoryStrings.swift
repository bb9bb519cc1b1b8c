/// The `Z_PK`s of `ATRANSACTIONSTRING` rows (authors, context names, the process's name and
/// ID) a connection has seen committed, so a save's history transaction finds its four
/// strings without a `SELECT` each.
///
/// A key is trusted only once the transaction that read or inserted it committed: keys met
/// inside a transaction wait in ``pending`` and move to ``committed`` at `COMMIT`
/// (``commit()``); a rollback, of the transaction or of one write's savepoint in a group
/// commit, drops them (``rollBack()``). A committed string row is never deleted or changed
/// (purging history deletes transactions and changes, never strings), so a committed key
/// stays valid for the connection's life, whichever process wrote it. Held by the
/// ``SQLiteConnection``, so it is confined like the connection (the store's lock).
struct SQLiteHistoryStrings {
    /// Keys of strings seen in committed transactions.
    private(set) var committed: [String: Int64] = [:]
    /// Keys read or inserted by the transaction in progress, not yet committed.
    private var pending: [String: Int64] = [:]
    /// The most strings kept: more distinct authors and context names than this (a daemon
    /// naming each connection's context) start the table again rather than grow it forever.
    static let limit = 1024
    /// What the history statements have bound (see ``SQLiteHistoryBindings``): dropped with
    /// the pending keys at a rollback, as a bound key may be one of them.
    private var bindings = SQLiteHistoryBindings()

    /// The key of `text`, if a committed transaction saw it (or the one in progress did).
    func key(of text: String) -> Int64? {
        committed[text] ?? (pending.isEmpty ? nil : pending[text])
    }

    /// Notes that the transaction in progress read or inserted `text` as `key`.
    mutating func note(_ text: String, key: Int64) {
        pending[text] = key
    }

    /// A transaction began (every history write is inside one, `SQLiteConnection.inTransaction`):
    /// no history row of it is written yet, so its first rows are numbered above a purge's floor.
    mutating func began() {
        bindings.transactionNumbered = false
        bindings.changeNumbered = false
    }

    /// The transaction in progress committed: its keys are trusted from now on.
    mutating func commit() {
        guard !pending.isEmpty else { return }
        if committed.count + pending.count > Self.limit { committed = [:] }
        committed.merge(pending) { _, new in new }
        pending = [:]
    }

    /// The transaction in progress, or a savepoint of it, was rolled back: keys it noted may
    /// name rows that do not exist.
    mutating func rollBack() {
        if !pending.isEmpty { pending = [:] }
        bindings = SQLiteHistoryBindings()
    }

    /// Takes what the history statements have bound, leaving nothing known until
    /// ``keepBindings(_:)`` puts it back (a history write that throws part-way does not).
    mutating func takeBindings() -> SQLiteHistoryBindings {
        var taken = SQLiteHistoryBindings()
        swap(&taken, &bindings)
        return taken
    }

    /// Keeps what the history statements have bound, after a history write that did not throw.
    mutating func keepBindings(_ kept: SQLiteHistoryBindings) {
        bindings = kept
    }
}
