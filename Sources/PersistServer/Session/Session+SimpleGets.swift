import PersistKit

extension Session {
    /// ``answerGetsNow(_:into:)`` for `get`s read as ``SimpleGet``s: writes their replies into
    /// `output` and returns `true` when they can be answered on the calling thread right now;
    /// `false` otherwise, with nothing done (the caller then answers their ``SimpleGet/request``s
    /// the general way).
    ///
    /// The same reply bytes, checks and log lines as the general path for the same requests: the
    /// store of each prefix is asked for once per batch (an ID of a store removed since is
    /// answered by the general path, with its error), the objects of several `get`s are loaded
    /// with one store call, each `get` is admitted in turn, and each object is written as
    /// `writeGetResult` writes it.
    func answerSimpleGetsNow(_ gets: [SimpleGet], into output: inout [UInt8]) -> Bool {
        guard let readContext = getContextNow() else { return false }
        readContext.performVoidAndWait { writeSimpleGets(gets, in: readContext, into: &output) }
        return true
    }

    private func writeSimpleGets(_ gets: [SimpleGet], in readContext: ManagedObjectContext, into output: inout [UInt8]) {
        // Read once per batch (a copy under the state's lock), not once per request.
        let policy = state.policy
        // Each ID, `nil` when its store is gone (the general path then answers it), and its
        // object when the context holds it loaded and not deleted (what `existingObject` would
        // return without asking the store).
        var ids: [ManagedObjectID?] = []
        var loaded: [ManagedObject?] = []
        ids.reserveCapacity(gets.count)
        loaded.reserveCapacity(gets.count)
        var missing: [ManagedObjectID] = []
        var checked: WireObjectIDPrefix?
        var present = false
        for get in gets {
            if get.prefix !== checked {
                checked = get.prefix
                present = state.coordinator.persistentStore(withIdentifier: get.prefix.store) != nil
            }
            guard present else {
                ids.append(nil)
                loaded.append(nil)
                continue
            }
            let id = ManagedObjectID(entity: get.prefix.entity, storeIdentifier: get.prefix.store, primaryKey: get.key)
            ids.append(id)
            if let object = readContext.registeredObject(for: id), !object.isFault, !object.isDeleted {
                loaded.append(object)
            } else {
                loaded.append(nil)
                missing.append(id)
            }
        }
        // As `preloadObjects(of:in:)`: one store call for the objects of several gets.
        if missing.count > 1, policy.allows(peer, op: "get") { try? readContext.loadObjects(with: missing) }
        var plan: WireValuePlan?
        // Each reply's small pieces are staged and appended once (`ByteStage`).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2048) { buffer in
            var stage = ByteStage(buffer)
            for (index, get) in gets.enumerated() {
                if let refusal = admit(id: get.id, op: "get", under: policy) {
                    WireReply.failure(id: get.id, error: refusal).write(to: &output)
                    continue
                }
                guard let id = ids[index] else {
                    writeGetReply(id: get.id, body: get.request.body, ids: nil, in: readContext, into: &output)
                    continue
                }
                let mark = output.count
                do throws(WireError) {
                    let object: ManagedObject
                    if let found = loaded[index] { object = found } else { object = try existingObject(id, in: readContext) }
                    let entityPlan: WireValuePlan
                    if let plan, plan.entity === get.prefix.entity {
                        entityPlan = plan
                    } else {
                        entityPlan = WireObjectWriter.plan(of: get.prefix.entity)
                        plan = entityPlan
                    }
                    // `{"id":…,"ok":true,"result":` (WireReply.writeSuccessStart), then the result.
                    stage.append("{\"id\":", spill: &output)
                    if case .integer(let number) = get.id {
                        stage.writeInteger(number, spill: &output)
                    } else {
                        stage.flush(into: &output)
                        get.id.write(to: &output)
                    }
                    stage.append(",\"ok\":true,\"result\":{\"objects\":[", spill: &output)
                    WireObjectWriter.write(object, prefix: get.prefix, key: get.key, plan: entityPlan, stage: &stage, to: &output)
                    stage.append("]}}\n", spill: &output)
                    stage.flush(into: &output)
                } catch {
                    stage.discard()
                    Self.replaceReply(since: mark, with: error, id: get.id, in: &output)
                }
            }
        }
        releaseObjects(after: readContext)
    }
}
