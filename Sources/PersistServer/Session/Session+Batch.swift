import PersistKit

extension Session {
    /// `update {entity, predicate, arguments?, values}` → `{"updated":n}`, applied in the store and saved at once.
    func batchUpdate(_ body: JSON) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "update")
        _ = try fields.entity(in: state.container.managedObjectModel)
        throw WireError(.badRequest, "update: batch updates (entity and predicate) are not available yet")
    }

    /// `delete {entity, predicate, arguments?}` → `{"deleted":n}`, applied in the store and saved at once.
    func batchDelete(_ body: JSON) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "delete")
        _ = try fields.entity(in: state.container.managedObjectModel)
        throw WireError(.badRequest, "delete: batch deletes (entity and predicate) are not available yet")
    }
}
