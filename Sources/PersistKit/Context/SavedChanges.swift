import Foundation

/// What one save changed, by object ID: what a context hands to other contexts to merge,
/// and what the `didSave` notifications carry.
public struct SavedChanges: Sendable {
    /// Objects inserted, by permanent ID.
    public var inserted: [ManagedObjectID] = []
    /// Objects updated, with their new stored state.
    public var updated: [RowSnapshot] = []
    /// Objects deleted.
    public var deleted: [ManagedObjectID] = []
    /// Objects whose to-many relationships changed, with the names of those relationships.
    public var toManyChanged: [ManagedObjectID: Set<String>] = [:]
    /// The name of the context that saved, if it has one.
    public var contextName: String?
    /// The transaction author the saving context set, if any.
    public var transactionAuthor: String?

    /// Creates an empty change list.
    public init() {}

    /// IDs of every updated object.
    public var updatedIDs: [ManagedObjectID] { updated.map(\.objectID) }

    /// ``updatedIDs`` as a set, built from the rows in place: through the array, each ID was
    /// retained for it and again for the set, and released with it.
    func updatedIDSet() -> Set<ManagedObjectID> {
        var set = Set<ManagedObjectID>(roomFor: updated.count)
        updated.withUnsafeBufferPointer { rows in
            // The made ID read as a field: through `objectID`, each row was copied first.
            for row in rows.indices { set.add(rows[row].objectIDIfMade ?? rows[row].objectID) }
        }
        return set
    }
}
