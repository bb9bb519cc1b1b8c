import PersistKit

extension Session {
    /// `save` → `{"inserted":n,"updated":n,"deleted":n}`. On failure nothing is written, the
    /// connection keeps its changes (fix them, or `rollback`), and the error lists every
    /// failing object and key. `mergePolicy` applies to this save only.
    func save(_ body: JSON = .object([])) throws(WireError) -> JSON {
        // The save's write is expected by the group commit while it runs (an `insert`+`save`
        // unit expects it from the insert on, Session+InsertThenSave.swift).
        let (inserted, updated, deleted) = try expectingWrite { () throws(WireError) in try saveCounts(body) }
        return .object(["inserted": .integer(Int64(inserted)), "updated": .integer(Int64(updated)), "deleted": .integer(Int64(deleted))])
    }

    /// Runs `save` and returns how many objects it inserted, updated and deleted (inside the
    /// caller's ``expectingWrite(adoptingAnnouncement:_:)``: `save` or an `insert`+`save` unit).
    func saveCounts(_ body: JSON) throws(WireError) -> SaveCounts {
        var outcome: Result<SaveCounts, WireError>?
        saveCounts(body, mode: .now) { outcome = $0 }
        // Not queued: the save ran, and called back, before saveCounts(_:mode:leadingIfIdle:then:) returned.
        guard let outcome else { preconditionFailure("Session: a save that is not queued called back late") }
        return try outcome.get()
    }

    /// How many objects a save inserted, updated and deleted.
    typealias SaveCounts = (inserted: Int, updated: Int, deleted: Int)

    /// How ``saveCounts(_:mode:leadingIfIdle:then:)`` saves.
    enum SaveMode {
        /// `ManagedObjectContext.save()`: done when the call returns.
        case now
        /// The write queued for the store's group commit (`ManagedObjectContext.saveQueued`);
        /// the context is the save's until it is done.
        case queued
        /// Queued, and, when it saves new objects alone, overlapping the context's later work
        /// (`saveQueued(overlapping: true)`; not with a `mergePolicy` of its own, which holds
        /// until the save is done).
        case overlapping
    }

    /// Runs `save` and passes how many objects it inserted, updated and deleted, or why it
    /// failed, to `then`, on the context's queue. A queued save (`mode`) returns before its
    /// write is done; `then` runs once it is, from the committer's thread. Queued saves run only
    /// in a batch of writes, which holds off the session's `close` until it is answered
    /// (``writeReplies(_:leadingIfIdle:then:)``). Returns whether the context may be used before
    /// `then` runs: `then` ran already, or the save overlaps (see ``SaveMode``).
    ///
    /// `leadingIfIdle`: a queued save commits on this thread when the store's group commit is
    /// idle (`ManagedObjectContext.saveQueued(overlapping:leadingIfIdle:completingOn:completion:)`).
    @discardableResult
    func saveCounts(_ body: JSON, mode: SaveMode, leadingIfIdle: Bool = false,
                    then: @escaping (Result<SaveCounts, WireError>) -> Void) -> Bool {
        let policy: MergePolicy?
        do throws(WireError) {
            policy = try Self.mergePolicy(RequestFields(body, op: "save"))
        } catch {
            then(.failure(error))
            return true
        }
        let configured = context.mergePolicy
        if let policy { context.mergePolicy = policy }
        context.processPendingChanges()
        let counts = context.changeCounts
        let finish = { [self] (error: (any Error)?) in
            // The policy applies until the save, conflicts resolved, is done.
            if policy != nil { context.mergePolicy = configured }
            if let error { return then(.failure(WireError(persistenceError: error))) }
            if counts.inserted + counts.updated + counts.deleted > 0 {
                state.statistics.saves.add(1, ordering: .relaxed)
                // The context posts no did-save notification (Session.init): the hub is told here.
                state.subscriptions.kick()
            }
            then(.success(counts))
        }
        guard mode != .now else {
            do {
                try context.save()
                finish(nil)
            } catch {
                finish(error)
            }
            return true
        }
        return context.saveQueued(overlapping: mode == .overlapping && policy == nil, leadingIfIdle: leadingIfIdle,
                                  completingOn: completingOn, completion: finish)
    }

    /// The reply to a `save` of a batch of writes, saved as `mode` says
    /// (``saveCounts(_:mode:leadingIfIdle:then:)``): `then` gets it once the save is done. Returns whether
    /// the context may be used before `then` runs.
    @discardableResult
    func saveReply(_ request: WireRequest, mode: SaveMode, then: @escaping (WireReply) -> Void) -> Bool {
        guard access().allows(request.op) else {
            then(.failure(id: request.id, error: AccessPolicy.refusal(peer, op: request.op)))
            return true
        }
        Logger.daemon.log(.debug, "request", [.requestID(request.id.encoded), .op(request.op)] + LogField.peer(peer))
        return grantedSaveReply(request, mode: mode, then: then)
    }

    /// ``saveReply(_:mode:then:)`` once access is granted and the request logged.
    @discardableResult
    func grantedSaveReply(_ request: WireRequest, mode: SaveMode, leadingIfIdle: Bool = false,
                          then: @escaping (WireReply) -> Void) -> Bool {
        expectingWrite {
            saveCounts(request.body, mode: mode, leadingIfIdle: leadingIfIdle) { outcome in
                switch outcome {
                case .success(let counts): then(.encodedSuccess(id: request.id, result: Self.saveResult(counts)))
                case .failure(let error): then(.failure(id: request.id, error: error))
                }
            }
        }
    }

    /// Runs `body` (a save of the session's context) telling the store's group commit that a
    /// write is coming from this thread, so a group about to commit meanwhile waits for it a
    /// little and commits it too (see `SQLiteStore.expectingWrite(_:)`).
    ///
    /// `adoptingAnnouncement`: `body` runs the requests that ``announceWrite(for:)`` announced
    /// when it handed them to the context's queue.
    func expectingWrite<T, E: Error>(adoptingAnnouncement: Bool = false, _ body: () throws(E) -> T) throws(E) -> T {
        guard let store = state.sqliteStore else { return try body() }
        return try store.expectingWrite(adoptingAnnouncement: adoptingAnnouncement, body)
    }

    /// Tells the store's group commit that `requests`, about to be handed to the context's
    /// queue, will save (when one of them is a `save`), so a group about to commit waits for
    /// them a little even before that queue's thread starts them. Returns whether it did: the
    /// hop that runs them must then run in ``expectingWrite(adoptingAnnouncement:_:)`` with
    /// `adoptingAnnouncement` set.
    func announceWrite(for requests: some Sequence<WireRequest>) -> Bool {
        guard let store = state.sqliteStore, requests.contains(where: { $0.op == "save" }) else { return false }
        store.announceWrite()
        return true
    }

    /// The bytes of ``save(_:)``'s result for `counts` (what its `JSON` writes).
    static func saveResult(_ counts: (inserted: Int, updated: Int, deleted: Int)) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(48)
        JSON.append("{\"inserted\":", to: &bytes)
        JSON.writeInteger(Int64(counts.inserted), to: &bytes)
        JSON.append(",\"updated\":", to: &bytes)
        JSON.writeInteger(Int64(counts.updated), to: &bytes)
        JSON.append(",\"deleted\":", to: &bytes)
        JSON.writeInteger(Int64(counts.deleted), to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
