/// The changes one save writes to one store, applied all together or not at all.
public struct StoreSaveRequest: Sendable {
    /// A change to the membership (and, if ordered, the order) of one object's to-many relationship.
    public struct ToManyChange: Sendable, Hashable {
        /// The to-many relationship changed.
        public var relationship: RelationshipDescription
        /// The object whose relationship changed (permanent ID).
        public var source: ManagedObjectID
        /// Destinations added.
        public var added: [ManagedObjectID]
        /// Destinations removed.
        public var removed: [ManagedObjectID]
        /// For an ordered relationship, every destination in its new order; `nil` otherwise.
        public var order: [ManagedObjectID]?

        /// Creates a to-many change.
        public init(relationship: RelationshipDescription, source: ManagedObjectID,
                    added: [ManagedObjectID], removed: [ManagedObjectID], order: [ManagedObjectID]? = nil) {
            self.relationship = relationship
            self.source = source
            self.added = added
            self.removed = removed
            self.order = order
        }

        /// Equal when they name the same relationship (by identity) with the same changes.
        public static func == (lhs: ToManyChange, rhs: ToManyChange) -> Bool {
            lhs.relationship === rhs.relationship && lhs.source == rhs.source && lhs.added == rhs.added
                && lhs.removed == rhs.removed && lhs.order == rhs.order
        }

        /// Hashes the relationship's identity and the source.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(ObjectIdentifier(relationship))
            hasher.combine(source)
        }
    }

    /// New rows, with permanent IDs; the store writes them with version 1.
    public var inserted: [RowSnapshot] = []
    /// Changed rows, carrying the version they were read at; the store writes version + 1.
    public var updated: [RowSnapshot] = []
    /// Deleted rows, carrying the version they were read at and, when known, their last read
    /// values (kept as tombstones in persistent history).
    public var deleted: [RowSnapshot] = []
    /// Changes to to-many relationships. Contexts send a change for both sides of a
    /// relationship; a store writes what its layout needs (for example join-table rows once,
    /// from one side, and the order of ordered relationships) and ignores the rest.
    public var toManyChanges: [ToManyChange] = []
    /// For persistent history: the names of the properties each updated object changed.
    /// Objects not listed count as changing every property. A context fills it only for a
    /// store whose ``PersistentStore/readsUpdatedKeys`` is `true`.
    public var updatedKeys: [ManagedObjectID: [String]] = [:]
    /// For persistent history: the saving context's ``ManagedObjectContext/transactionAuthor``.
    public var transactionAuthor: String?
    /// For persistent history: the saving context's ``ManagedObjectContext/name``.
    public var contextName: String?

    /// Creates an empty save request.
    public init() {}

    /// Whether there is nothing to write.
    public var isEmpty: Bool {
        inserted.isEmpty && updated.isEmpty && deleted.isEmpty && toManyChanges.isEmpty
    }
}

extension StoreSaveRequest {
    /// The request with the inserted rows' temporary IDs replaced by the permanent ones in
    /// `assigned` (by position: `assigned[i]` is row `i`'s new ID, `nil` to keep it), and every
    /// reference to them replaced too: to-one values, to-many changes and updated keys. Rows
    /// without such an ID are kept as they are (their values are not copied).
    func remapped(_ assigned: [ManagedObjectID?]) -> StoreSaveRequest {
        guard !assigned.isEmpty else { return self }
        let map = Self.map(inserted, assigned)
        @inline(__always) func id(_ id: ManagedObjectID) -> ManagedObjectID {
            id.isTemporaryID ? map[id] ?? id : id
        }
        func row(_ row: RowSnapshot) -> RowSnapshot {
            var row = row
            row.objectID = id(row.objectID)
            for index in row.values.indices {
                if case .object(let target) = row.values[index], target.isTemporaryID, let new = map[target] {
                    row.values[index] = .object(new)
                }
            }
            return row
        }
        var result = self
        result.inserted = inserted.map(row)
        result.updated = updated.map(row)
        result.deleted = deleted.map(row)
        result.toManyChanges = toManyChanges.map { change in
            var change = change
            change.source = id(change.source)
            change.added = change.added.map(id)
            change.removed = change.removed.map(id)
            change.order = change.order?.map(id)
            return change
        }
        if updatedKeys.keys.contains(where: \.isTemporaryID) {
            result.updatedKeys = Dictionary(updatedKeys.map { (id($0.key), $0.value) }, uniquingKeysWith: { first, _ in first })
        }
        return result
    }

    /// Each temporary ID of `rows` with its permanent one in `assigned` (by position).
    static func map(_ rows: [RowSnapshot], _ assigned: [ManagedObjectID?]) -> [ManagedObjectID: ManagedObjectID] {
        var map: [ManagedObjectID: ManagedObjectID] = [:]
        map.reserveCapacity(assigned.count)
        for (row, new) in zip(rows, assigned) {
            if let new { map[row.objectID] = new }
        }
        return map
    }
}

/// A store that gives inserted objects their permanent IDs inside the save's own transaction,
/// so a save of new objects is one transaction and a failed save allocates no keys.
///
/// Contexts give objects headed for other stores permanent IDs first
/// (``ManagedObjectContext/obtainPermanentIDs(for:)``), as before.
protocol InTransactionKeyAssigning: PersistentStore {
    /// Writes `changes` like ``PersistentStore/save(_:)``, where inserted rows may carry
    /// temporary IDs (and other rows and to-many changes may point at them): the store
    /// allocates a primary key for each inside the write transaction, and returns the keys
    /// once the transaction committed, by position: position `i` is the new key of
    /// `changes.inserted[i]`, none for a row that had a permanent ID already;
    /// ``AssignedKeys/none`` when no row had a temporary ID. On error nothing was written and
    /// the objects keep their temporary IDs.
    func saveAssigningKeys(_ changes: StoreSaveRequest) throws -> AssignedKeys
}
