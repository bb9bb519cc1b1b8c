import PersistKit

/// One live subscription: what it watches, the objects that match now, and where its events go.
///
/// Confined to the ``SubscriptionHub``'s queue (the hub owns every subscription); the context
/// it reads with is the hub's, used inside `performAndWait`.
final class Subscription {
    /// The subscription's ID on the wire (`"s1"`).
    let id: String
    /// The entity watched (its subentities too).
    let entity: EntityDescription
    /// The predicate objects must match; `nil` for all.
    let predicate: FetchPredicate?
    /// The order of `inserted` and `updated` (and of the initial objects).
    let sort: [FetchSortDescriptor]?
    /// The properties whose values are sent; `nil` for all.
    let properties: [String]?
    /// Where events go.
    let outbox: SessionOutbox
    /// The number of the last history transaction processed for this subscription.
    var position: Int64 = 0
    /// The IDs of the objects that match, as last reported to the client.
    private(set) var matched: Set<ManagedObjectID> = []

    /// Creates a subscription with no matches yet.
    init(id: String, entity: EntityDescription, predicate: FetchPredicate?, sort: [FetchSortDescriptor]?, properties: [String]?,
         outbox: SessionOutbox) {
        self.id = id
        self.entity = entity
        self.predicate = predicate
        self.sort = sort
        self.properties = properties
        self.outbox = outbox
    }

    /// The objects that match now, encoded; remembers them as matched. On the context's queue.
    func initialObjects(in context: ManagedObjectContext) throws -> [JSON] {
        let request = FetchRequest<ManagedObject>(entity: entity)
        request.predicate = predicate
        request.sortDescriptors = sort
        request.returnsObjectsAsFaults = false
        let objects = try context.fetch(request)
        matched = Set(objects.map(\.objectID))
        return objects.map { WireValueCoder.encode($0, properties: properties) }
    }

    /// The `changes` event for `transaction`, or `nil` when it changes nothing this
    /// subscription reports. Reads the changed objects' current rows; on the context's queue.
    func changes(for transaction: PersistentHistoryTransaction, in context: ManagedObjectContext) throws -> WireReply? {
        var deleted: [JSON] = []
        var candidates: [ManagedObjectID] = []
        var updatedProperties: [ManagedObjectID: Set<String>] = [:]
        var inserted: Set<ManagedObjectID> = []
        for change in transaction.changes where change.changedObjectID.entity.isKind(of: entity) {
            let id = change.changedObjectID
            switch change.changeType {
            case .delete:
                if matched.remove(id) != nil { deleted.append(.string(WireObjectID.format(id))) }
            case .insert:
                inserted.insert(id)
                candidates.append(id)
            case .update:
                if updatedProperties[id] == nil { candidates.append(id) }
                updatedProperties[id, default: []].formUnion(change.updatedProperties)
            }
        }
        var insertedObjects: [JSON] = []
        var updatedObjects: [JSON] = []
        if !candidates.isEmpty {
            // In chunks below SQLite's limit of bound parameters; `sort` orders each chunk
            // (a transaction changing more than `chunk` objects is the rare batch).
            var objects: [ManagedObject] = []
            let chunk = 500
            for start in stride(from: 0, to: candidates.count, by: chunk) {
                let ids = candidates[start..<min(start + chunk, candidates.count)]
                let request = FetchRequest<ManagedObject>(entity: entity)
                let these = FetchPredicate.comparison(.evaluatedObject, .in, .constant(.array(ids.map { .object($0) })))
                request.predicate = predicate.map { these && $0 } ?? these
                request.sortDescriptors = sort
                request.returnsObjectsAsFaults = false
                objects += try context.fetch(request)
            }
            var found: Set<ManagedObjectID> = []
            for object in objects {
                let id = object.objectID
                found.insert(id)
                if matched.insert(id).inserted {
                    insertedObjects.append(WireValueCoder.encode(object, properties: properties))
                } else if reportsUpdate(inserted.contains(id) ? nil : updatedProperties[id]) {
                    updatedObjects.append(WireValueCoder.encode(object, properties: properties))
                }
            }
            for id in candidates where !found.contains(id) && matched.remove(id) != nil {
                deleted.append(.string(WireObjectID.format(id)))
            }
        }
        guard !insertedObjects.isEmpty || !updatedObjects.isEmpty || !deleted.isEmpty else { return nil }
        return .event(name: "changes", members: [
            JSON.Member("subscription", .string(id)),
            JSON.Member("token", .string(transaction.token.description)),
            JSON.Member("inserted", .array(insertedObjects)),
            JSON.Member("updated", .array(updatedObjects)),
            JSON.Member("deleted", .array(deleted)),
        ])
    }

    /// Whether an update of `changed` properties is reported: always without `properties`
    /// (or when history does not name them), else when it changed one of them.
    private func reportsUpdate(_ changed: Set<String>?) -> Bool {
        guard let properties, let changed, !changed.isEmpty else { return true }
        return !changed.isDisjoint(with: properties)
    }
}
