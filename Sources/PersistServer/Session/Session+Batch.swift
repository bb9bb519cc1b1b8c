import PersistKit

extension Session {
    /// `update {entity, predicate, arguments?, values}` → `{"updated":n}`: applied in the
    /// store directly and saved at once, then merged into the view context. Connections with
    /// pending changes to the same objects get `merge_conflict` when they save.
    func batchUpdate(_ body: JSON) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "update")
        let entity = try fields.entity(in: state.container.managedObjectModel)
        guard let predicate = try predicate(fields, entity: entity) else {
            throw WireError(.badRequest, "a batch update needs \"predicate\" (use \"TRUEPREDICATE\" for every object)")
        }
        let request = BatchUpdateRequest(entity: entity)
        request.predicate = predicate
        request.resultType = .count
        for member in try fields.object("values") ?? [] {
            let property = try entity.checkProperty(member.key)
            guard property is AttributeDescription else {
                throw WireError(.badRequest, "a batch update sets attributes only; \(entity.name).\(member.key) is a relationship",
                                details: [JSON.Member("key", .string(member.key))])
            }
            let value = try WireValueCoder.decode(member.value, for: property, of: entity, in: context, coordinator: state.coordinator)
            request.propertiesToUpdate[member.key] = .constant(WireStoreValue.storeValue(value))
        }
        guard !request.propertiesToUpdate.isEmpty else { throw WireError(.badRequest, "a batch update needs \"values\"") }
        let result = try run { try context.execute(request) }
        mergeBatch(result)
        return .object(["updated": .integer(Int64(result.count ?? result.changes[ManagedObjectContext.updatedObjectIDsKey]?.count ?? 0))])
    }

    /// `delete {entity, predicate, arguments?}` → `{"deleted":n}`: applied in the store
    /// directly and saved at once (delete rules are not run, as in Core Data), then merged.
    func batchDelete(_ body: JSON) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "delete")
        let entity = try fields.entity(in: state.container.managedObjectModel)
        guard let predicate = try predicate(fields, entity: entity) else {
            throw WireError(.badRequest, "a batch delete needs \"predicate\" (use \"TRUEPREDICATE\" for every object)")
        }
        let fetch = FetchRequest<ManagedObject>(entity: entity)
        fetch.predicate = predicate
        let request = BatchDeleteRequest(fetchRequest: fetch)
        request.resultType = .objectIDs
        let result = try run { try context.execute(request) }
        mergeBatch(result)
        return .object(["deleted": .integer(Int64(result.objectIDs?.count ?? 0))])
    }

    /// Tells the view context and this connection's context what a batch changed.
    private func mergeBatch(_ result: BatchResult) {
        state.statistics.saves.add(1, ordering: .relaxed)
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: result.changes, into: [state.container.viewContext, context])
        state.subscriptions.kick()
    }
}
