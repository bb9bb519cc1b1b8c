/// The count of statements a connection started, and the observer shown each one: shared by
/// the connection and every statement it prepared.
///
/// A statement reaches it through a strong reference, a plain load at each first step. Through
/// the statement's `unowned` connection, the step took a checked retain and release of the
/// connection (about 40 instructions, on every single-object read).
final class SQLiteStatementTally {
    // Not Sendable, like the connection: used by one thread at a time (the store's lock).

    /// The number of statements started (see ``SQLiteConnection/statementCount``).
    // Unchecked exclusivity: confined as the connection is; the dynamic check cost more than
    // the increment on the single-row read path.
    @exclusivity(unchecked) var count = 0
    /// Called with the SQL of each statement started, if set (see ``SQLiteConnection/statementObserver``).
    @exclusivity(unchecked) var observer: ((String) -> Void)?

    /// Counts the start of the statement `sql` and shows it to the observer.
    @inline(__always) func noteStarted(_ sql: String) {
        count += 1
        observer?(sql)
    }
}
