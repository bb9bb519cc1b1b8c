import Foundation

extension ManagedObjectContext {
    /// Runs a batch request in the store that holds its entity (Core Data's `execute(_:)`).
    ///
    /// The store changes directly: this context's objects are not updated, and no save
    /// notification is posted. To bring the changes in, ask for ``BatchRequestResultType/objectIDs``
    /// and pass them to ``mergeChanges(fromRemoteContextSave:into:)``.
    public func execute(_ request: any PersistentStoreRequest) throws -> BatchResult {
        try onQueue {
            switch request {
            case let insert as BatchInsertRequest:
                let entity = try resolveEntity(insert.entity, insert.entityName)
                var rows: [[StoreValue]] = []
                // An empty list inserts nothing, whatever the entity: no row to refuse.
                if !insert.objects.isEmpty {
                    guard !entity.isAbstract else {
                        throw PersistenceError(.persistentStoreOperation, "cannot batch insert objects of the abstract entity \(entity.name)")
                    }
                    // One object converts every row's values (its conversions read only the entity).
                    let converter = ManagedObject(entity: entity, insertInto: nil)
                    let template = BatchRowTemplate(entity)
                    rows = try insert.objects.map { try batchRow($0, entity: entity, converter: converter, template: template) }
                }
                return BatchResult(insert.resultType, try rootStore(for: entity).execute(.insert(entity: entity, rows: rows)), .inserted)
            case let update as BatchUpdateRequest:
                let entity = try resolveEntity(update.entity, update.entityName)
                var assignments: [StoreBatchAssignment] = []
                for (key, value) in update.propertiesToUpdate.sorted(by: { $0.key < $1.key }) {
                    guard let attribute = entity.propertiesByName[key] as? AttributeDescription, !attribute.isTransient else {
                        throw PersistenceError(.persistentStoreOperation,
                                               "propertiesToUpdate names \(key), which is not a stored attribute of \(entity.name)", key: key)
                    }
                    assignments.append(StoreBatchAssignment(attribute: attribute, value: value))
                }
                let fetch = StoreFetchRequest(entity: entity, predicate: update.predicate, includesSubentities: update.includesSubentities)
                return BatchResult(update.resultType, try rootStore(for: entity).execute(.update(fetch: fetch, assignments: assignments)), .updated)
            case let delete as BatchDeleteRequest:
                if let fetchRequest = delete.fetchRequest {
                    let entity = try resolveEntity(of: fetchRequest)
                    let fetch = StoreFetchRequest(entity: entity, predicate: fetchRequest.predicate,
                                                  includesSubentities: fetchRequest.includesSubentities)
                    return BatchResult(delete.resultType, try rootStore(for: entity).execute(.delete(fetch: fetch)), .deleted)
                }
                let ids = delete.objectIDs ?? []
                guard let first = ids.first else { return BatchResult(delete.resultType, StoreBatchResult(count: 0, objectIDs: []), .deleted) }
                if let other = ids.first(where: { $0.entity.rootEntity !== first.entity.rootEntity }) {
                    throw PersistenceError(.persistentStoreOperation,
                                           "a batch delete's object IDs must be of one entity, not \(first.entity.name) and \(other.entity.name)",
                                           objectID: other)
                }
                return BatchResult(delete.resultType, try rootStore(for: first.entity).execute(.deleteObjects(ids)), .deleted)
            default:
                throw PersistenceError(.persistentStoreOperation, "the request \(type(of: request)) is not a batch request this context runs")
            }
        }
    }

    private func resolveEntity(_ entity: EntityDescription?, _ name: String) throws -> EntityDescription {
        if let entity { return entity }
        guard let model = persistentStoreCoordinator?.managedObjectModel else {
            throw PersistenceError(.persistentStoreOperation, "the context has neither a coordinator nor a parent")
        }
        guard let entity = model.entitiesByName[name] else {
            throw PersistenceError(.persistentStoreOperation, "the batch request names entity \"\(name)\", which is not in the model")
        }
        return entity
    }

    /// A full row for a batch insert (``checkedBatchRow(_:entity:converter:)``), made by one
    /// pass over the dictionary from `template`: each key found by the entity's accessor table
    /// (no hashing of short names), where reading the row attribute by attribute hashed every
    /// name twice. A row with anything wrong is made again by ``checkedBatchRow(_:entity:converter:)``,
    /// which throws the error a check in the model's order finds first.
    private func batchRow(_ dictionary: [String: Any], entity: EntityDescription, converter: ManagedObject,
                          template: BatchRowTemplate) throws -> [StoreValue] {
        var row = template.defaults
        for (key, given) in dictionary {
            guard let accessor = entity.accessor(for: key), let attribute = accessor.property as? AttributeDescription,
                  let converted = try? converter.storeValue(for: given, attribute: attribute) else {
                return try checkedBatchRow(dictionary, entity: entity, converter: converter)
            }
            // A transient attribute's value is not stored.
            if !attribute.isTransient { row[accessor.slot] = converted }
        }
        for slot in template.mandatorySlots where row[slot].isNull {
            return try checkedBatchRow(dictionary, entity: entity, converter: converter)
        }
        return row
    }

    /// A full row for a batch insert: each value converted to its attribute's type, defaults
    /// for missing attributes, `nil` for to-one and transient slots; checked key by key, then
    /// attribute by attribute in the entity's order, throwing at the first problem.
    private func checkedBatchRow(_ dictionary: [String: Any], entity: EntityDescription, converter: ManagedObject) throws -> [StoreValue] {
        for key in dictionary.keys {
            guard let property = entity.propertiesByName[key] else {
                throw PersistenceError(.validationInvalidType, "entity \(entity.name) has no property \"\(key)\"", key: key)
            }
            if property is RelationshipDescription {
                throw PersistenceError(.validationInvalidType, "a batch insert cannot set the relationship \(entity.name).\(key)", key: key)
            }
        }
        return try entity.slots.map { property -> StoreValue in
            guard let attribute = property as? AttributeDescription, !attribute.isTransient else { return .null }
            var value = attribute.defaultValue ?? .null
            if let given = dictionary[attribute.name] {
                value = try converter.storeValue(for: given, attribute: attribute)
            }
            if value.isNull && !attribute.isOptional {
                throw PersistenceError(.validationMissingMandatoryProperty,
                                       "a batch insert of \(entity.name) gives no value for the non-optional attribute \(attribute.name)",
                                       key: attribute.name)
            }
            return value
        }
    }
}
