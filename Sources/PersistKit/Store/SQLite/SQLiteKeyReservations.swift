/// Primary keys a store's connection reserved ahead in `Z_PRIMARYKEY` and has not handed out
/// yet, per key sequence (see ``SQLiteStore/takeKeys(_:sequence:_:)``).
///
/// A save of new objects must keep `Z_MAX` at or above every key it writes, which costs an
/// `UPDATE` of `Z_PRIMARYKEY` in its transaction. A connection that keeps saving new objects
/// raises `Z_MAX` by more than it needs, once, and hands the keys in between to its next
/// saves, which then leave `Z_PRIMARYKEY` alone. Other connections and processes read the
/// raised `Z_MAX` and allocate above it, so keys stay distinct; the keys a process reserved
/// but never used are a gap in `Z_PK`, which Core Data allows.
///
/// The first ``exactReservations`` reservations of a sequence take only the keys asked for, as
/// Core Data does, so a store that saves new objects a few times leaves `Z_MAX` equal to its
/// largest key. After that each reservation takes ``firstAhead`` keys more than asked, doubling
/// up to ``maximumAhead``. Reservations of a transaction count once it commits (``committed()``):
/// a group commit that runs its writes again after one failed does not count them twice.
///
/// A block is usable only once the transaction that raised `Z_MAX` for it committed: the
/// group commit calls ``forgetBlocks()`` whenever a write or a transaction is rolled back, so
/// a block whose `Z_MAX` update was undone is never used (its keys merely stay unused).
///
/// Not `Sendable`: it lives in its ``SQLiteConnection``, used under the store's lock.
struct SQLiteKeyReservations {
    /// Reservations of a sequence that take only the keys asked for.
    static let exactReservations = 8
    /// Keys reserved ahead by the first reservation past ``exactReservations``.
    static let firstAhead: Int64 = 16
    /// The most keys one reservation takes ahead.
    static let maximumAhead: Int64 = 256

    private struct Sequence {
        /// The next key to hand out; `next > last` when nothing is left.
        var next: Int64 = 1
        /// The last key reserved ahead.
        var last: Int64 = 0
        /// Reservations of this sequence committed on the connection so far.
        var reservations = 0
        /// Reservations of this sequence in the transaction in progress.
        var pending = 0
    }

    private var sequences: [Int: Sequence] = [:]

    /// Hands out `count` consecutive keys of `sequence` from the block reserved ahead, and
    /// returns the first; `nil` when the block has fewer left.
    /// The sequence is found once (one hash of its number), then read and advanced in place.
    mutating func take(_ count: Int64, sequence: Int) -> Int64? {
        guard let index = sequences.index(forKey: sequence) else { return nil }
        let first = sequences.values[index].next
        guard sequences.values[index].last - first + 1 >= count else { return nil }
        sequences.values[index].next = first + count
        return first
    }

    /// How many keys beyond those asked for the next reservation of `sequence` takes.
    func ahead(of sequence: Int) -> Int64 {
        let made = sequences[sequence].map { $0.reservations + $0.pending } ?? 0
        guard made >= Self.exactReservations else { return 0 }
        let doublings = min(made - Self.exactReservations, 8)
        return min(Self.firstAhead << Int64(doublings), Self.maximumAhead)
    }

    /// Notes a reservation of `sequence` in the current transaction, whose keys from `next`
    /// to `last` (none when `next > last`) are left for later saves.
    mutating func reserved(sequence: Int, next: Int64, last: Int64) {
        var state = sequences[sequence] ?? Sequence()
        state.next = next
        state.last = last
        state.pending += 1
        sequences[sequence] = state
    }

    /// The transaction in progress committed: its reservations count from now on.
    mutating func committed() {
        updateEach { state in
            state.reservations += state.pending
            state.pending = 0
        }
    }

    /// Drops every block, and the transaction's reservations from the counts: a `Z_MAX` update
    /// that covered one may have been rolled back.
    mutating func forgetBlocks() {
        updateEach { state in
            state.next = 1
            state.last = 0
            state.pending = 0
        }
    }

    /// Changes every sequence's state in place, walking the table by index: iterating its keys
    /// while changing it would copy its storage (``committed()`` runs at every commit).
    private mutating func updateEach(_ change: (inout Sequence) -> Void) {
        var index = sequences.startIndex
        while index != sequences.endIndex {
            change(&sequences.values[index])
            sequences.formIndex(after: &index)
        }
    }
}
