import PersistKit

extension Session {
    /// `subscribe` and `unsubscribe`; `completion` gets the reply. Fields are checked here, on
    /// the connection's queue; the subscription is made on the hub's queue.
    func subscriptionOp(_ request: WireRequest, completion: @escaping @Sendable (WireReply) -> Void) {
        do throws(WireError) {
            switch request.op {
            case "subscribe":
                try subscribe(request, completion: completion)
            default:
                let fields = RequestFields(request.body, op: "unsubscribe")
                let id = try fields.requiredString("subscription")
                guard state.subscriptions.unsubscribe(id, outbox: outbox) else {
                    throw WireError(.notFound, "no subscription \"\(id)\" on this connection", details: [JSON.Member("subscription", .string(id))])
                }
                completion(.success(id: request.id, result: .object([])))
            }
        } catch {
            completion(.failure(id: request.id, error: error))
        }
    }

    /// `subscribe {entity, predicate?, arguments?, sort?, properties?}` →
    /// `{"subscription":"s1","token":"…","objects":[…]}`, then `changes` events.
    private func subscribe(_ request: WireRequest, completion: @escaping @Sendable (WireReply) -> Void) throws(WireError) {
        let fields = RequestFields(request.body, op: "subscribe")
        let entity = try fields.entity(in: state.container.managedObjectModel)
        guard state.subscriptions.isAvailable else {
            throw WireError(.unsupported, "subscribe: this daemon keeps no persistent history (it needs a SQLite store and --history on)")
        }
        let predicate = try predicate(fields, entity: entity)
        let sort = try sortDescriptors(fields, entity: entity)
        let properties = try fields.stringArray("properties")
        if let properties { for name in properties { _ = try entity.checkProperty(name) } }
        let id = request.id
        state.subscriptions.subscribe(entity: entity, predicate: predicate, sort: sort, properties: properties, outbox: outbox) { result in
            switch result {
            case .success(let json): completion(.success(id: id, result: json))
            case .failure(let error): completion(.failure(id: id, error: error))
            }
        }
    }
}
