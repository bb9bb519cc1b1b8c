/// One optimistic-locking conflict met by a save: an object this context changed or deleted
/// whose stored row another save (another context, coordinator or process) changed or deleted
/// since this context read it.
///
/// The corresponding Core Data class is `NSMergeConflict`. A save under
/// ``MergePolicy/error`` throws ``PersistenceError/Code/managedObjectMerge`` with every
/// conflict in ``PersistenceError/conflicts``; the other policies resolve them instead.
/// Snapshots are keyed by property name (attributes and to-one relationships; to-many
/// relationships are not compared: their changes are merged as additions and removals).
public struct MergeConflict: Sendable, Hashable, CustomStringConvertible {
    /// One property whose value differs between this context and the store.
    public struct Property: Sendable, Hashable {
        /// The property's name.
        public var key: String
        /// This context's value.
        public var ours: StoreValue
        /// The store's current value.
        public var theirs: StoreValue
        /// The value both started from (when this context read the object).
        public var original: StoreValue
        /// Whether this context changed the property.
        public var changedByUs: Bool
        /// Whether the other save changed the property.
        public var changedByThem: Bool
    }

    /// The object in conflict (Core Data's `sourceObject`, by ID).
    public var objectID: ManagedObjectID
    /// The version (`Z_OPT`) this context read (`oldVersionNumber`).
    public var oldVersion: Int64
    /// The version now in the store, or 0 when the other save deleted the object (`newVersionNumber`).
    public var newVersion: Int64
    /// This context's values, or `nil` when this context deletes the object (`objectSnapshot`).
    public var objectSnapshot: [String: StoreValue]?
    /// The values this context read (`cachedSnapshot`).
    public var cachedSnapshot: [String: StoreValue]
    /// The values now in the store, or `nil` when the other save deleted the object (`persistedSnapshot`).
    public var persistedSnapshot: [String: StoreValue]?
    /// The properties whose values differ between this context and the store and that either
    /// side changed, in the entity's property order.
    public var properties: [Property]

    /// Whether the other save deleted the object.
    public var deletedInStore: Bool { persistedSnapshot == nil }
    /// Whether this context deletes the object.
    public var deletedByUs: Bool { objectSnapshot == nil }

    /// `Beer p1 (version 1 → 2): abv ours 6.5, theirs 7, was 5`.
    public var description: String {
        var text = "\(objectID.entity.name) \(objectID.uriRepresentation().absoluteString) (version \(oldVersion) → "
        text += deletedInStore ? "deleted in the store)" : "\(newVersion))"
        if deletedByUs { text += ", deleted here" }
        let details = properties.map { property in
            "\(property.key) ours \(Self.show(property.ours)), theirs \(Self.show(property.theirs)), was \(Self.show(property.original))"
        }
        if !details.isEmpty { text += ": " + details.joined(separator: "; ") }
        return text
    }

    private static func show(_ value: StoreValue) -> String {
        value.anyValue.map { "\($0)" } ?? "nil"
    }
}
