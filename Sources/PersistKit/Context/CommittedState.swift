/// An object's last state read from or saved to its parent store or context: the version and
/// the slot values, without what the object itself knows (its entity, key and store).
///
/// A ``RowSnapshot`` moves into an object as this pair (``init(_:)``): 24 bytes per object
/// instead of the row's 56, and no ID or store token copied into it.
struct CommittedState: Sendable {
    /// The optimistic-locking version (`Z_OPT`) of the state; 0 for a state never saved.
    var version: Int64
    /// The slot values, laid out by the entity's ``EntityDescription/slots``.
    var values: SlotValues

    /// The state of `version` with `values`.
    @inline(__always) init(version: Int64, values: SlotValues) {
        self.version = version
        self.values = values
    }

    /// The version and values of `row` (the values moved, not copied, when the row is consumed).
    @inline(__always) init(_ row: consuming RowSnapshot) {
        self.version = row.version
        self.values = row.values
    }
}
