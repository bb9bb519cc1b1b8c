import PersistKit

extension Session {
    /// An `insert` followed at once by a `save` in the same batch of pipelined writes (what
    /// `persistctl insert --save` and most clients send): both replies as if they had run one
    /// by one, with one store transaction instead of two.
    ///
    /// Alone, an `insert` takes its object's permanent ID at once (the reply promises the ID the
    /// object keeps), which costs a transaction of its own to reserve the primary key. Here the
    /// insert's reply is encoded before the save, as it would have been, and its `id` is filled
    /// in after it: the save's transaction reserves the key, as it does for any new object. If
    /// the save fails (its changes stay pending, as always), the object takes its permanent ID
    /// then, exactly as a lone `insert` would have. The replies are the same bytes either way.
    func insertThenSave(_ insert: WireRequest, _ save: WireRequest) -> [WireReply] {
        Logger.daemon.log(.debug, "request", [.requestID(insert.id.encoded), .op(insert.op)] + LogField.peer(peer))
        Logger.daemon.log(.debug, "request", [.requestID(save.id.encoded), .op(save.op)] + LogField.peer(peer))
        guard state.policy.allows(peer, op: insert.op), state.policy.allows(peer, op: save.op) else {
            return [checkedWriteReply(insert), checkedWriteReply(save)]
        }
        // A change starting on a context with none pending starts a transaction: read fresh.
        if !context.hasChanges { context.reset() }
        let object: ManagedObject
        do {
            object = try insertedObject(insert.body)
        } catch {
            return [.failure(id: insert.id, error: error), Self.reply(save) { () throws(WireError) in try self.save(save.body) }]
        }
        // The ID is filled in below, once it is the permanent one.
        let encoded = WireValueCoder.encode(object, properties: nil, id: "")
        let saveReply = Self.reply(save) { () throws(WireError) in try self.save(save.body) }
        if object.objectID.isTemporaryID {
            // The save failed (or did not include the object): the insert takes its ID now.
            do {
                try context.obtainPermanentIDs(for: [object])
            } catch {
                context.delete(object)
                return [.failure(id: insert.id, error: WireError(persistenceError: error)), saveReply]
            }
        }
        return [.success(id: insert.id, result: .object(["object": Self.replacingID(of: encoded, with: object.objectID)])), saveReply]
    }

    /// The reply to the write `request`, after the access check (for requests of a batch,
    /// which ``handle(_:completion:)`` did not check one by one).
    func checkedWriteReply(_ request: WireRequest) -> WireReply {
        guard state.policy.allows(peer, op: request.op) else {
            return .failure(id: request.id, error: AccessPolicy.refusal(peer, op: request.op))
        }
        return Self.reply(request) { () throws(WireError) in try self.writeOp(request) }
    }

    /// `object` (an encoded object: `{"id":…,…}`) with its `id` member set to `id`.
    static func replacingID(of object: JSON, with id: ManagedObjectID) -> JSON {
        guard var members = object.members, let index = members.firstIndex(where: { $0.key == "id" }) else { return object }
        members[index].value = .string(WireObjectID.format(id))
        return .object(members)
    }
}
