import Foundation

extension PersistentStore {
    /// A batch request run through the store's own requirements: the affected rows are
    /// fetched, changed in memory and written with one ``save(_:)``, so the change is atomic
    /// and versions are checked and bumped as for any save. The default for atomic stores.
    ///
    /// A delete also clears every to-one relationship pointing at a deleted object (in the same
    /// save) and, through ``save(_:)``, its to-many memberships; no other delete rule runs.
    public func execute(_ request: StoreBatchRequest) throws -> StoreBatchResult {
        switch request {
        case .insert(let entity, let rows):
            let keys = try allocatePrimaryKeys(for: entity, count: rows.count)
            var changes = StoreSaveRequest()
            changes.inserted = zip(keys, rows).map { key, values in
                RowSnapshot(objectID: ManagedObjectID(entity: entity, storeIdentifier: identifier, primaryKey: key),
                            version: 1, values: values)
            }
            try save(changes)
            return StoreBatchResult(count: rows.count, objectIDs: changes.inserted.map(\.objectID))

        case .update(var fetch, let assignments):
            fetch.sortDescriptors = []
            fetch.fetchLimit = 0
            fetch.fetchOffset = 0
            let rows = try self.fetch(fetch)
            let evaluator = PredicateEvaluator(resolver: StoreRowResolver(store: self, rows: rows))
            var changes = StoreSaveRequest()
            for row in rows {
                var updated = row
                for assignment in assignments {
                    guard let slot = row.objectID.entity.slotIndex(of: assignment.attribute.name) else { continue }
                    let value = try evaluator.value(of: assignment.value, self: .object(row.objectID), variables: [:])
                    updated.values[slot] = try Self.batchValue(value, for: assignment.attribute, objectID: row.objectID)
                }
                changes.updated.append(updated)
            }
            if !changes.isEmpty { try save(changes) }
            return StoreBatchResult(count: rows.count, objectIDs: rows.map(\.objectID))

        case .delete(var fetch):
            fetch.sortDescriptors = []
            fetch.fetchLimit = 0
            fetch.fetchOffset = 0
            return try batchDelete(try self.fetch(fetch))

        case .deleteObjects(let ids):
            return try batchDelete(try rows(for: ids))
        }
    }

    /// Deletes `rows` and clears the to-one relationships that point at them, in one save.
    private func batchDelete(_ rows: [RowSnapshot]) throws -> StoreBatchResult {
        guard !rows.isEmpty else { return StoreBatchResult(count: 0, objectIDs: []) }
        let deleted = Set(rows.map(\.objectID))
        let roots = Set(rows.map { ObjectIdentifier($0.objectID.entity.rootEntity) })
        var changes = StoreSaveRequest()
        changes.deleted = rows
        var nullified: [ManagedObjectID: RowSnapshot] = [:]
        for entity in model.entities(forConfiguration: configurationName) where !entity.isAbstract {
            for (slot, property) in entity.slots.enumerated() {
                guard let relationship = property as? RelationshipDescription, !relationship.isToMany,
                      let destination = relationship.destinationEntity,
                      roots.contains(ObjectIdentifier(destination.rootEntity)) else { continue }
                let pointing = StoreFetchRequest(
                    entity: entity,
                    predicate: .comparison(.keyPath(relationship.name), .in, .constant(.array(deleted.map { .object($0) }))),
                    includesSubentities: false)
                for row in try fetch(pointing) where !deleted.contains(row.objectID) {
                    var changed = nullified[row.objectID] ?? row
                    changed.values[slot] = .null
                    nullified[row.objectID] = changed
                }
            }
        }
        changes.updated = nullified.values.sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
        try save(changes)
        return StoreBatchResult(count: rows.count, objectIDs: rows.map(\.objectID), nullifiedObjectIDs: changes.updated.map(\.objectID))
    }

    /// A batch update's computed value, converted to the attribute's type; throws when it does not fit.
    static func batchValue(_ value: StoreValue, for attribute: AttributeDescription, objectID: ManagedObjectID?) throws -> StoreValue {
        let converted = StoreValueCoercion.coerce(value, to: attribute.attributeType)
        guard attribute.attributeType.accepts(converted) else {
            throw PersistenceError(.validationInvalidType,
                                   "the value \(value) does not fit \(attribute.entity?.name ?? "?").\(attribute.name), which is \(attribute.attributeType.xcodeName)",
                                   objectID: objectID, key: attribute.name)
        }
        return converted
    }
}
