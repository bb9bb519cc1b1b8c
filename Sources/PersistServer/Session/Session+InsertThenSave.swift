import PersistKit

extension Session {
    /// An `insert` followed at once by a `save` in the same batch of pipelined writes (what
    /// `persistctl insert --save` and most clients send): both replies as if they had run one
    /// by one, with one store transaction instead of two.
    ///
    /// Alone, an `insert` takes its object's permanent ID at once (the reply promises the ID the
    /// object keeps), which costs a transaction of its own to reserve the primary key. Here the
    /// insert's reply is written before the save, as it would have been, and its `id` is written
    /// in front of it after the save: the save's transaction reserves the key, as it does for
    /// any new object. If the save fails (its changes stay pending, as always), the object takes
    /// its permanent ID then, exactly as a lone `insert` would have. The replies are the same
    /// bytes either way, written straight into bytes (no `JSON` tree, as ``WireObjectWriter``
    /// does for `get`).
    func insertThenSave(_ insert: WireRequest, _ save: WireRequest) -> [WireReply] {
        var replies: [WireReply] = []
        insertThenSave(insert, save, queued: false) { replies = $0 }
        // Not queued: the replies came back before insertThenSave(_:_:queued:then:) returned.
        return replies
    }

    /// ``insertThenSave(_:_:)`` passing the two replies to `then`, on the context's queue;
    /// `queued`: the save's write is queued for the store's group commit, and `then` runs once
    /// it is done (see ``saveCounts(_:queued:then:)``), else before this returns.
    func insertThenSave(_ insert: WireRequest, _ save: WireRequest, queued: Bool, then: @escaping ([WireReply]) -> Void) {
        Logger.daemon.log(.debug, "request", [.requestID(insert.id.encoded), .op(insert.op)] + LogField.peer(peer))
        Logger.daemon.log(.debug, "request", [.requestID(save.id.encoded), .op(save.op)] + LogField.peer(peer))
        let access = self.access()
        guard access.allows(insert.op), access.allows(save.op) else {
            return then([checkedWriteReply(insert), checkedWriteReply(save)])
        }
        // The save's write is expected from the insert on: a group committing meanwhile waits
        // for it a little (Session+Save.swift).
        expectingWrite { insertedThenSaved(insert, save, queued: queued, then: then) }
    }

    /// ``insertThenSave(_:_:queued:then:)`` once access is granted.
    private func insertedThenSaved(_ insert: WireRequest, _ save: WireRequest, queued: Bool, then: @escaping ([WireReply]) -> Void) {
        // A change starting on a context with none pending starts a transaction: read fresh.
        if !context.hasChanges { context.reset() }
        let object: ManagedObject
        do {
            object = try insertedObject(insert.body)
        } catch {
            return then([.failure(id: insert.id, error: error), Self.reply(save) { () throws(WireError) in try self.save(save.body) }])
        }
        // The reply's object is written now, as inserted (version 0), all but its ID, which is
        // written in front of it once it is the permanent one.
        var afterID: [UInt8] = []
        afterID.reserveCapacity(256)
        WireObjectWriter.write(object, afterIDWith: nil, to: &afterID)
        saveCounts(save.body, queued: queued) { [self] outcome in
            let saveReply: WireReply
            switch outcome {
            case .success(let counts): saveReply = .encodedSuccess(id: save.id, result: Self.saveResult(counts))
            case .failure(let error): saveReply = .failure(id: save.id, error: error)
            }
            let finish = ContextQueueWork { [self] in
                if object.objectID.isTemporaryID {
                    // The save failed (or did not include the object): the insert takes its ID now.
                    do {
                        try context.obtainPermanentIDs(for: [object])
                    } catch {
                        context.delete(object)
                        return then([.failure(id: insert.id, error: WireError(persistenceError: error)), saveReply])
                    }
                }
                var result: [UInt8] = []
                result.reserveCapacity(afterID.count + 80)
                JSON.append("{\"object\":{\"id\":", to: &result)
                WireObjectWriter.writeID(object.objectID, to: &result)
                result.append(contentsOf: afterID)
                result.append(UInt8(ascii: "}"))
                then([.encodedSuccess(id: insert.id, result: result), saveReply])
            }
            // Taking the ID may wait for the store's write lock: a queued unit, which may have
            // started on an event loop's thread (Session.write) or be finishing on the group
            // commit's committer thread, takes it in a hop of its own to the context's queue.
            guard queued, object.objectID.isTemporaryID else { return finish.run() }
            context.perform { finish.run() }
        }
    }

    /// The reply to the write `request`, after the access check (for requests of a batch,
    /// which ``handle(_:completion:)`` did not check one by one).
    func checkedWriteReply(_ request: WireRequest) -> WireReply {
        guard access().allows(request.op) else {
            return .failure(id: request.id, error: AccessPolicy.refusal(peer, op: request.op))
        }
        return Self.reply(request) { () throws(WireError) in try self.writeOp(request) }
    }
}

/// Work for a session context's queue, handed to `perform`: the closure holds the context's
/// objects, which are not `Sendable`.
private final class ContextQueueWork: @unchecked Sendable {
    // @unchecked Sendable: `body` is made on the context's queue and run only there (directly,
    // or by the context's `perform`); no other thread touches it.
    private let body: () -> Void

    init(_ body: @escaping () -> Void) {
        self.body = body
    }

    func run() {
        body()
    }
}
