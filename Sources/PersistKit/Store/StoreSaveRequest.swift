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
    /// Objects not listed count as changing every property.
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
