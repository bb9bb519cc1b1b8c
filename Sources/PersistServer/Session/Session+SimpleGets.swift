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

    /// The object of the ID `prefix` then `p` and `key` when `readContext` holds it loaded and
    /// not deleted (what `existingObject` would return without asking the store); `nil`
    /// otherwise. The one place a simple `get` looks its object up: on `readContext`'s queue,
    /// unretained, as the registry lends it for the batch (see `writeSimpleGets(_:in:into:)`).
    @inline(__always)
    private func loadedObject(prefix: WireObjectIDPrefix, key: Int64, in readContext: ManagedObjectContext) -> Unmanaged<ManagedObject>? {
        // By the prefix's store token and the key: no ID is made for a loaded object.
        guard let object = readContext.unretainedRegisteredObject(entity: prefix.entity, store: prefix.storeToken, primaryKey: key),
              object._withUnsafeGuaranteedRef({ !$0.isFault && !$0.isDeleted }) else { return nil }
        return object
    }

    /// The object ID of `get` (for an object not loaded: the store call and `existingObject`).
    private static func objectID(of get: SimpleGet) -> ManagedObjectID {
        ManagedObjectID(entity: get.prefix.entity, store: get.prefix.storeToken, primaryKey: get.key)
    }

    private func writeSimpleGets(_ gets: [SimpleGet], in readContext: ManagedObjectContext, into output: inout [UInt8]) {
        // Each `get`'s object when the context holds it loaded and not deleted, else `nil`, in
        // room on the stack (a batch holds at most `Connection.maximumBatch` gets; a larger
        // one goes to the heap): no array allocated and freed per batch. Unretained: the
        // objects stay registered, so alive, while the batch runs on the context's queue (it
        // loads objects but unregisters none; the release of unreferenced ones comes after).
        withUnsafeTemporaryAllocation(of: Unmanaged<ManagedObject>?.self, capacity: gets.count) { loaded in
            loaded.initialize(repeating: nil)
            writeSimpleGets(gets, loaded: loaded, in: readContext, into: &output)
        }
        releaseObjects(after: readContext)
    }

    /// ``writeSimpleGets(_:in:into:)`` with `loaded`, room for each `get`'s object (all `nil`).
    private func writeSimpleGets(_ gets: [SimpleGet], loaded: UnsafeMutableBufferPointer<Unmanaged<ManagedObject>?>,
                                 in readContext: ManagedObjectContext, into output: inout [UInt8]) {
        // Decided once per batch (see `access()`), not once per request; so is whether this
        // peer may `get` at all, which decides the same for every `get` here.
        let access = self.access()
        let mayGet = access.allows("get")
        // Each `get` still logs its debug line; a refused one is refused (and logged) in turn.
        let admitEach = !mayGet || Logger.daemon.isEnabled(.debug)
        // The `get`s whose store is gone (the general path answers them, with its error),
        // usually none; the others' objects not loaded are asked for through `existingObject`.
        var storeGone: [Int] = []
        var missing = 0
        // Prefixes lent from `gets` (which holds them), compared by identity: not retained per `get`.
        var checked: Unmanaged<WireObjectIDPrefix>?
        var present = false
        for index in gets.indices {
            let prefix = Unmanaged.passUnretained(gets[index].prefix)
            if prefix.toOpaque() != checked?.toOpaque() {
                checked = prefix
                present = prefix._withUnsafeGuaranteedRef { state.coordinator.persistentStore(withIdentifier: $0.store) != nil }
            }
            guard present else {
                storeGone.append(index)
                continue
            }
            let object = prefix._withUnsafeGuaranteedRef { loadedObject(prefix: $0, key: gets[index].key, in: readContext) }
            if object == nil { missing += 1 }
            loaded[index] = object
        }
        // As `preloadObjects(of:in:)`: one store call for the objects of several gets.
        if missing > 1, mayGet {
            var ids: [ManagedObjectID] = []
            for index in gets.indices where loaded[index] == nil && !storeGone.contains(index) {
                ids.append(Self.objectID(of: gets[index]))
            }
            try? readContext.loadObjects(with: ids)
        }
        var plan: WireValuePlan?
        // Each reply's small pieces are staged and appended once (`ByteStage`). 1,024 bytes
        // is the most the standard library places on the stack (a larger buffer is a heap
        // allocation per batch); a reply that does not fit spills into `output`, in order.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer in
            var stage = ByteStage(buffer)
            // Fields read in place (`gets[index].key`), not each `get` copied: a copy retains
            // its prefix and copies its `id` (an enum with payloads) for nothing.
            for index in gets.indices {
                if admitEach, let refusal = admit(id: gets[index].id, op: "get", under: access) {
                    WireReply.failure(id: gets[index].id, error: refusal).write(to: &output)
                    continue
                }
                if !storeGone.isEmpty, storeGone.contains(index) {
                    writeGetReply(id: gets[index].id, body: gets[index].request.body, ids: nil, in: readContext, into: &output)
                    continue
                }
                let mark = output.count
                do throws(WireError) {
                    // The object, the prefix and the plan are lent to the writer, not retained
                    // for it: the registry holds each object found loaded (`fetched` one loaded
                    // here), `gets` each prefix and `plan` the plan, all past the reply. Copied
                    // out, they cost five reference counts a `get` on objects every `get` shares.
                    var fetched: ManagedObject?
                    let object: Unmanaged<ManagedObject>
                    if let found = loaded[index] {
                        object = found
                    } else {
                        let made = try existingObject(Self.objectID(of: gets[index]), in: readContext)
                        fetched = made
                        object = .passUnretained(made)
                    }
                    let prefix = Unmanaged.passUnretained(gets[index].prefix)
                    let entityPlan: Unmanaged<WireValuePlan>
                    if let current = plan, current.entity === prefix._withUnsafeGuaranteedRef({ $0.entity }) {
                        entityPlan = .passUnretained(current)
                    } else {
                        let made = prefix._withUnsafeGuaranteedRef { WireObjectWriter.plan(of: $0.entity) }
                        plan = made
                        entityPlan = .passUnretained(made)
                    }
                    // `{"id":…,"ok":true,"result":` (WireReply.writeSuccessStart), then the result.
                    stage.append("{\"id\":", spill: &output)
                    if case .integer(let number) = gets[index].id {
                        stage.writeInteger(number, spill: &output)
                    } else {
                        stage.flush(into: &output)
                        gets[index].id.write(to: &output)
                    }
                    stage.append(",\"ok\":true,\"result\":{\"objects\":[", spill: &output)
                    object._withUnsafeGuaranteedRef { object in
                        prefix._withUnsafeGuaranteedRef { prefix in
                            entityPlan._withUnsafeGuaranteedRef { plan in
                                WireObjectWriter.write(object, prefix: prefix, key: gets[index].key, plan: plan, stage: &stage, to: &output)
                            }
                        }
                    }
                    withExtendedLifetime(fetched) {}
                    stage.append("]}}\n", spill: &output)
                    stage.flush(into: &output)
                } catch {
                    stage.discard()
                    Self.replaceReply(since: mark, with: error, id: gets[index].id, in: &output)
                }
            }
        }
    }
}
