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
    ///
    /// The two replies go to `then`, on the context's queue; the save is made as `mode` says: a
    /// queued save's `then` runs once its write is done (see ``saveCounts(_:mode:leadingIfIdle:then:)``), else
    /// before this returns. Returns whether the context may be used before `then` runs.
    @discardableResult
    func insertThenSave(_ insert: WireRequest, _ save: WireRequest, mode: SaveMode, leadingIfIdle: Bool = false,
                        then: @escaping (consuming [WireReply]) -> Void) -> Bool {
        Logger.daemon.log(.debug, "request", [.requestID(insert.id.encoded), .op(insert.op)] + LogField.peer(peer))
        Logger.daemon.log(.debug, "request", [.requestID(save.id.encoded), .op(save.op)] + LogField.peer(peer))
        let access = self.access()
        guard access.allows(insert.op), access.allows(save.op) else {
            then([checkedWriteReply(insert), checkedWriteReply(save)])
            return true
        }
        // The save's write is expected from the insert on: a group committing meanwhile waits
        // for it a little (Session+Save.swift).
        return expectingWrite { insertedThenSaved(insert, save, mode: mode, leadingIfIdle: leadingIfIdle, then: then) }
    }

    /// ``insertThenSave(_:_:mode:leadingIfIdle:then:)`` once access is granted.
    private func insertedThenSaved(_ insert: WireRequest, _ save: WireRequest, mode: SaveMode, leadingIfIdle: Bool,
                                   then: @escaping (consuming [WireReply]) -> Void) -> Bool {
        // A change starting on a context with none pending (and no save of its own in flight)
        // starts a transaction: read fresh.
        if !context.hasChanges && !context.hasOverlappingSaves { context.reset() }
        let object: ManagedObject
        do {
            object = try insertedObject(of: insert)
        } catch {
            // The save saves what is pending, if anything (nothing, when the context was clean).
            return grantedSaveReply(save, mode: mode == .now ? .now : .queued, leadingIfIdle: leadingIfIdle) {
                then([.failure(id: insert.id, error: error), $0])
            }
        }
        // The reply's object is written now, as inserted (version 0), all but its ID, which is
        // written in front of it once it is the permanent one.
        var afterID: [UInt8] = []
        afterID.reserveCapacity(256)
        WireObjectWriter.write(object, afterIDWith: nil, to: &afterID)
        let queued = mode != .now
        return saveCounts(save.body, mode: mode, leadingIfIdle: leadingIfIdle) { [self] outcome in
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
