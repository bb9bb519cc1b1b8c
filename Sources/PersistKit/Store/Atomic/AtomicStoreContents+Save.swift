import Foundation

extension AtomicStoreContents {
    /// Applies a save: checks every update and delete against the stored version, checks
    /// inserted and updated rows against the model, then deletes, inserts, updates and applies
    /// to-many changes. Throws before changing anything if a check fails.
    mutating func apply(_ changes: StoreSaveRequest, storeIdentifier: String, entities: Set<String>, path: String?) throws {
        var conflicts: [PersistenceError] = []
        for (row, kind) in changes.updated.map({ ($0, "updated") }) + changes.deleted.map({ ($0, "deleted") }) {
            guard let stored = self.row(for: row.objectID) else {
                conflicts.append(PersistenceError(.managedObjectMerge,
                    "The object to be \(kind) was deleted from the store by another save", objectID: row.objectID, path: path))
                continue
            }
            if stored.version != row.version {
                conflicts.append(PersistenceError(.managedObjectMerge,
                    "The object to be \(kind) was read at version \(row.version) but the store has version \(stored.version)",
                    objectID: row.objectID, path: path))
            }
        }
        if !conflicts.isEmpty {
            let first = conflicts[0]
            throw PersistenceError(.managedObjectMerge,
                                   "The save conflicts with \(conflicts.count) change(s) saved by someone else",
                                   objectID: first.objectID, detailedErrors: conflicts, path: path)
        }
        var insertedIDs: Set<ManagedObjectID> = []
        for row in changes.inserted {
            if self.row(for: row.objectID) != nil || !insertedIDs.insert(row.objectID).inserted {
                throw PersistenceError(.persistentStoreSave, "The store already holds the inserted object",
                                       objectID: row.objectID, path: path)
            }
        }
        for row in changes.inserted + changes.updated {
            try check(row, storeIdentifier: storeIdentifier, entities: entities, path: path)
        }

        let deleted = Set(changes.deleted.map(\.objectID))
        if !deleted.isEmpty { remove(deleted) }
        for row in changes.inserted {
            rows[row.objectID.entity.name, default: [:]][row.objectID.primaryKey] =
                RowSnapshot(objectID: row.objectID, version: 1, values: stored(row))
            notePrimaryKey(of: row.objectID)
        }
        for row in changes.updated {
            rows[row.objectID.entity.name, default: [:]][row.objectID.primaryKey] =
                RowSnapshot(objectID: row.objectID, version: row.version + 1, values: stored(row))
        }
        for change in changes.toManyChanges where !deleted.contains(change.source) {
            apply(change, deleted: deleted)
        }
    }

    /// Checks that a row belongs to this store and fits its entity's slots.
    private func check(_ row: RowSnapshot, storeIdentifier: String, entities: Set<String>, path: String?) throws {
        let id = row.objectID
        if id.isTemporaryID || id.storeIdentifier != storeIdentifier {
            throw PersistenceError(.persistentStoreSave, "The object's ID does not belong to this store (\(storeIdentifier))",
                                   objectID: id, path: path)
        }
        if !entities.contains(id.entity.name) || id.entity.isAbstract {
            throw PersistenceError(.persistentStoreSave,
                                   "The entity \(id.entity.name) is \(id.entity.isAbstract ? "abstract" : "not in this store's configuration")",
                                   objectID: id, path: path)
        }
        let slots = id.entity.slots
        guard row.values.count == slots.count else {
            throw PersistenceError(.persistentStoreSave,
                                   "The row has \(row.values.count) values but entity \(id.entity.name) has \(slots.count) slots",
                                   objectID: id, path: path)
        }
        for (slot, value) in zip(slots, row.values) {
            if !AtomicStoreContents.fits(value, in: slot) {
                throw PersistenceError(.persistentStoreSave, "The value \(value) does not fit the property \(slot.name)",
                                       objectID: id, key: slot.name, path: path)
            }
        }
    }

    /// The values a store keeps for a row: transient slots are `nil`.
    private func stored(_ row: RowSnapshot) -> [StoreValue] {
        zip(row.objectID.entity.slots, row.values).map { slot, value in slot.isTransient ? .null : value }
    }

    /// Removes objects, their memberships and every membership they are a destination of.
    mutating func remove(_ objectIDs: Set<ManagedObjectID>) {
        for id in objectIDs {
            rows[id.entity.name]?[id.primaryKey] = nil
            memberships[id] = nil
        }
        for (source, byName) in memberships {
            for (name, destinations) in byName where destinations.contains(where: objectIDs.contains) {
                memberships[source]?[name] = destinations.filter { !objectIDs.contains($0) }
            }
        }
    }

    /// Applies one to-many change idempotently, and mirrors it on a to-many inverse so that a
    /// many-to-many relationship stays consistent even if only one side is sent.
    private mutating func apply(_ change: StoreSaveRequest.ToManyChange, deleted: Set<ManagedObjectID>) {
        let name = change.relationship.name
        var destinations = memberships[change.source]?[name] ?? []
        let removed = Set(change.removed)
        if !removed.isEmpty { destinations.removeAll(where: removed.contains) }
        var present = Set(destinations)
        for id in change.added where !deleted.contains(id) && present.insert(id).inserted {
            destinations.append(id)
        }
        if let order = change.order, change.relationship.isOrdered {
            var seen: Set<ManagedObjectID> = []
            destinations = order.filter { !deleted.contains($0) && seen.insert($0).inserted }
        }
        memberships[change.source, default: [:]][name] = destinations

        guard let inverse = change.relationship.inverseRelationship, inverse.isToMany else { return }
        for id in change.removed {
            memberships[id]?[inverse.name]?.removeAll { $0 == change.source }
        }
        for id in change.added where !deleted.contains(id) {
            var back = memberships[id]?[inverse.name] ?? []
            if !back.contains(change.source) {
                back.append(change.source)
                memberships[id, default: [:]][inverse.name] = back
            }
        }
    }
}
