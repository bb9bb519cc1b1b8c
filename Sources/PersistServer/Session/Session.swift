import Foundation
import PersistKit
import Synchronization

/// One connection's view of the store: its own private-queue context, and the ops.
///
/// Changes a connection makes go into its context and are visible to it at once, and to other
/// connections after its `save`. Reads of a connection with no pending changes are served by
/// the container's view context, which every save is merged into, so hot objects come from
/// memory; reads of a connection with pending changes are served by its own context, so they
/// include those changes (`includesPendingChanges`).
///
/// A connection's changes form a transaction from its first change to its `save` or
/// `rollback`: the context is reset when a change starts on a context with none pending, so
/// objects are read fresh; a save that conflicts with another connection's save of the same
/// object fails with `merge_conflict`.
///
/// ``handle(_:completion:)`` is called for one request at a time (the connection waits for the
/// reply before starting the next), and calls `completion` exactly once: before it returns for
/// reads and server ops (a synchronous hop onto the read context, on the calling thread when
/// the context is free), later and on the session context's queue for writes.
public final class Session: Sendable {
    /// The state every session shares.
    public let state: ServerState
    /// The connection's own context.
    public let context: ManagedObjectContext
    /// Who is at the other end, when the kernel says.
    public let peer: PeerCredentials?
    /// Where this session's subscription events go (the connection sets the sink).
    let outbox = SessionOutbox()
    /// Whether ``context`` had unsaved changes when its last write hop ended: set at the end of
    /// every hop that runs writes on it (the only place its changes are made), so a read asks
    /// this instead of hopping onto the context's queue to ask `hasChanges`. The connection
    /// runs one request (or batch) at a time, so no write is running when a read reads it;
    /// the write's reply reaches the loop through `EventLoop.execute` (a lock), after the store.
    let hasPendingChanges = Atomic<Bool>(false)
    /// The store and entity of the last object ID this session's requests named, so the next
    /// ID of the same store and entity is parsed by comparing bytes (``WireObjectIDPrefix``).
    let idPrefix = Locked<WireObjectIDPrefix?>(nil)
    /// The plan of the entity this session's last `insert` kept as its line named
    /// (``simpleInsertedObject(_:)``), so the next of the same entity is found by comparing
    /// its name's bytes.
    let lastInsertPlan = Locked<WireValuePlan?>(nil)
    /// Where the second half of this session's queued saves runs, and their replies are made,
    /// once the store committed them: the connection's event loop, which made the saves'
    /// objects and so frees them on its own thread (`ManagedObjectContext.saveQueued`); `nil`,
    /// on the group commit's committer thread.
    let completingOn: CompletionExecutor?
    /// The peer's access as last decided (``access()``): the policy's generation shifted left
    /// by two, then the access's code (0 refused, 1 read-only, 2 full); `UInt64.max`, no
    /// generation, before the first decision. An atomic, not a lock: read on the event loop's
    /// thread for every batch, written there or on the session context's queue (writes). Each
    /// value pairs a generation with the access decided under it (read together under the
    /// state's lock), so a value written late by a slower thread is at worst decided again.
    private let admission = Atomic<UInt64>(.max)
    /// Whether batches of writes are in flight (``writeReplies(_:leadingIfIdle:then:)``), and the session's
    /// `close` held off until none is (``close(completion:)``): while a batch waits for its
    /// queued saves the context's queue is free, but the saves' objects are between their two
    /// halves, and the batch has requests still to run.
    let writeBatches = Locked<WriteBatchesState>(WriteBatchesState())

    /// See ``writeBatches``.
    struct WriteBatchesState {
        /// How many batches of writes are in flight.
        var inFlight = 0
        /// The close that came while batches were in flight; run on the context's queue once
        /// the last is answered.
        var closeAfter: (() -> Void)?
    }

    /// What an op needs: nothing, a read context, or the session's own context.
    enum Kind {
        case server
        case read
        case write
        /// `subscribe`, `unsubscribe`: answered by the subscription hub.
        case subscription
    }

    /// The kind of `op`; `nil` for an op the protocol does not have. Its first byte picks the
    /// one or two ops it can be, then compared as strings: each unequal comparison of two
    /// strings takes Swift's slow path (about 22 instructions), and a `switch` over every
    /// name compared an `insert` with four names and a `save` with seven.
    static func kind(of op: String) -> Kind? {
        switch op.utf8.first {
        case UInt8(ascii: "g"): return op == "get" ? .read : nil
        case UInt8(ascii: "f"): return op == "fetch" ? .read : nil
        case UInt8(ascii: "c"): return op == "count" ? .read : op == "configure" ? .write : nil
        case UInt8(ascii: "i"): return op == "insert" ? .write : nil
        case UInt8(ascii: "u"): return op == "update" ? .write : op == "unsubscribe" ? .subscription : nil
        case UInt8(ascii: "d"): return op == "delete" ? .write : nil
        case UInt8(ascii: "s"): return op == "save" ? .write : op == "stats" ? .server : op == "subscribe" ? .subscription : nil
        case UInt8(ascii: "r"): return op == "rollback" ? .write : nil
        case UInt8(ascii: "h"): return op == "history" ? .write : op == "hello" ? .server : nil
        case UInt8(ascii: "m"): return op == "model" ? .server : nil
        case UInt8(ascii: "p"): return op == "ping" ? .server : nil
        default: return nil
        }
    }

    /// Creates a session with a new background context.
    public init(state: ServerState, peer: PeerCredentials?, name: String,
                completingOn: CompletionExecutor? = nil) {
        self.state = state
        self.peer = peer
        self.completingOn = completingOn
        self.context = state.container.newBackgroundContext()
        context.name = name
        // Nothing observes a connection's context: its saves post nothing (the subscription
        // hub is told of them by Session+Save.swift; merges and history need no notification).
        context.postsNotifications = false
    }

    /// Answers `request`; `completion` gets the reply.
    public func handle(_ request: WireRequest, completion: @escaping @Sendable (WireReply) -> Void) {
        guard let kind = Self.kind(of: request.op) else {
            completion(.failure(id: request.id, error: WireError(.unknownOp, "unknown op \"\(request.op)\"",
                                                                 details: [JSON.Member("op", .string(request.op))])))
            return
        }
        if let refusal = admit(request, under: access()) {
            completion(.failure(id: request.id, error: refusal))
            return
        }
        switch kind {
        case .server:
            completion(Self.reply(request) { () throws(WireError) in try serverOp(request) })
        case .read:
            read([request]) { completion($0[0]) }
        case .write:
            // Asynchronous: a write may wait for the store's write lock (a save of another
            // connection or process, up to the busy timeout) and the group commit; the thread
            // that read the request goes on serving its other connections meanwhile.
            write([request]) { completion($0[0]) }
        case .subscription:
            subscriptionOp(request, completion: completion)
        }
    }

    /// The peer's access under the access policy in force: decided again only when the
    /// policy's generation changed since the last decision (a reload), so a batch costs one
    /// atomic load here, not a copy of the policy under the state's lock. A reload is in force
    /// for every request that starts after it.
    func access() -> PeerAccess {
        let generation = state.policyGeneration.load(ordering: .acquiring)
        let cached = admission.load(ordering: .relaxed)
        if cached >> 2 == generation {
            switch cached & 3 {
            case 0: return .refused
            case 1: return .readOnly
            case 2: return .full
            default: break
            }
        }
        let (access, decided) = state.access(for: peer)
        let code: UInt64 = switch access {
        case .refused: 0
        case .readOnly: 1
        case .full: 2
        }
        admission.store(decided << 2 | code, ordering: .relaxed)
        return access
    }

    /// Logs `request` and checks it against `access` (the peer's, read once per batch): the
    /// refusal when the peer may not run its op, else `nil`. A request alone is admitted when
    /// it comes, each of a batch of reads when its turn comes.
    func admit(_ request: WireRequest, under access: PeerAccess) -> WireError? {
        admit(id: request.id, op: request.op, under: access)
    }

    /// ``admit(_:under:)`` for the request of `id` and `op`.
    func admit(id: JSON, op: String, under access: PeerAccess) -> WireError? {
        Logger.daemon.log(.debug, "request", [.requestID(id.encoded), .op(op)] + LogField.peer(peer))
        return access.allows(op) ? nil : AccessPolicy.refusal(peer, op: op)
    }

    /// Whether `request` is a read that ``handle(_:completion:)-([WireRequest],_)`` may answer
    /// together with the reads next to it: `get`, `fetch` and `count`.
    static func isBatchableRead(_ request: WireRequest) -> Bool {
        kind(of: request.op) == .read
    }

    /// Whether `request` is a write that ``handle(_:completion:)-([WireRequest],_)`` may run
    /// together with the writes next to it: `insert`, `update`, `delete`, `save`, `rollback`,
    /// `configure` and `history`, which all run on the session's own context.
    static func isBatchableWrite(_ request: WireRequest) -> Bool {
        kind(of: request.op) == .write
    }

    /// Answers `requests` in order; `completion` gets one reply per request, in the same order.
    ///
    /// Consecutive reads (see ``isBatchableRead(_:)``) are answered in one hop to the read
    /// context, and consecutive writes (see ``isBatchableWrite(_:)``) run one after the other in
    /// one hop to the session's context, as if they had arrived at once; anything else goes one
    /// by one.
    ///
    /// `onIdleThread`: whether the calling thread has nothing else waiting for it (an event loop
    /// with no other client ready), asked only for a lone `insert`+`save` unit, which may then
    /// commit on it, when the store's group commit is idle too, and answer before this
    /// returns, with no thread woken (``write(_:onIdleThread:completion:)``).
    func handle(_ requests: [WireRequest], onIdleThread: @autoclosure () -> Bool = false,
                completion: @escaping @Sendable ([WireReply]) -> Void) {
        guard requests.count > 1 else {
            handle(requests[0]) { completion([$0]) }
            return
        }
        if requests.allSatisfy(Self.isBatchableRead) { return read(requests, completion: completion) }
        guard requests.allSatisfy(Self.isBatchableWrite) else {
            preconditionFailure("Session: a batch of several requests must be all reads or all writes")
        }
        write(requests, onIdleThread: onIdleThread, completion: completion)
    }

    /// Runs the writes `requests` in order in one asynchronous hop to the session's context
    /// (see ``handle(_:completion:)`` for why writes go asynchronously). Each write succeeds or
    /// fails on its own, as when they come one by one: a failed one does not stop the ones
    /// after it (an `insert`+`save` unit started while a failed one was in flight does not
    /// save the failed one's objects, ``writeReplies(_:leadingIfIdle:then:)``).
    ///
    /// A single `insert`+`save` unit that starts on the calling thread, when `onIdleThread`
    /// says that thread has nothing else to do, commits there if the store's group commit is
    /// idle (`ManagedObjectContext.saveQueued(overlapping:leadingIfIdle:completingOn:completion:)`): a
    /// client saving alone is answered without the two thread wake-ups of a hand-over to the
    /// committer and back. Several units, or a thread with other clients ready, queue as usual,
    /// so that their saves share groups.
    private func write(_ requests: [WireRequest], onIdleThread: () -> Bool = { false },
                       completion: @escaping @Sendable ([WireReply]) -> Void) {
        let context = self.context
        // A save among them is expected by the group commit from now on (Session+Save.swift).
        let announced = announceWrite(for: requests)
        let startsHere = startsOnCallingThread(requests)
        let leadingIfIdle = startsHere && requests.count == 2 && onIdleThread()
        let run: @Sendable () -> Void = { [self] in
            expectingWrite(adoptingAnnouncement: announced) {
                writeReplies(requests, leadingIfIdle: leadingIfIdle) { [self] replies in
                    hasPendingChanges.store(context.hasChanges, ordering: .releasing)
                    completion(replies)
                }
            }
        }
        if startsHere {
            context.performAndWait(run)
        } else {
            context.perform(run)
        }
    }

    /// Whether the writes `requests` run their first part on the calling thread (an event
    /// loop's), rather than in a hop to the context's queue: `insert`+`save` units alone, on a
    /// context with no pending changes whose saves are queued for the store's group commit.
    /// Nothing of it then waits: each insert and its save's first half (`willSave()`,
    /// validation, the rows) only compute, and read the store at most; the writes are queued
    /// (overlapping, Session+WriteBatch.swift), and the replies come back from the committer
    /// once committed. (A failed insert leaves its save nothing to write; a failed save takes
    /// the insert's ID in a hop of its own; a unit that cannot overlap the one before it waits
    /// for it, and the batch goes on in a hop.) A synchronous hop runs on the calling thread
    /// when the context's queue is free: no thread is woken.
    private func startsOnCallingThread(_ requests: [WireRequest]) -> Bool {
        guard requests.count % 2 == 0 else { return false }
        for index in stride(from: 0, to: requests.count, by: 2)
        where requests[index].op != "insert" || requests[index + 1].op != "save" {
            return false
        }
        return !hasPendingChanges.load(ordering: .acquiring) && context.queuesSaves
    }

    /// Answers the reads `requests` in one hop to the read context: the connection's own while
    /// it has pending changes, else the view context.
    ///
    /// `get`s only, with no query on the view context: a synchronous hop (`performAndWait`),
    /// which runs on the calling thread when the context is free, so the event loop's thread
    /// answers without a thread wake-up. A `fetch` or `count` may take up to the query
    /// timeout: it goes asynchronously (`perform`), as do `get`s while one is on the view
    /// context, so the loop's thread never waits behind it; the reply comes back later.
    private func read(_ requests: [WireRequest], completion: @escaping @Sendable ([WireReply]) -> Void) {
        let (readContext, own) = contextForReads()
        let queries = requests.contains { $0.op != "get" }
        if !queries && mayReadNow(own: own) {
            completion(readContext.performAndWait { answer(requests, in: readContext) })
            return
        }
        let counted = queries && !own
        if counted { state.queriesOnViewContext.add(1, ordering: .acquiringAndReleasing) }
        readContext.perform { [self] in
            let replies = answer(requests, in: readContext)
            if counted { state.queriesOnViewContext.subtract(1, ordering: .acquiringAndReleasing) }
            completion(replies)
        }
    }

    /// The most objects the view context keeps registered after a read. Past it, the view
    /// context lets go of every object that has no changes and that nothing holds: all of them,
    /// since replies hold no objects and the view context has no changes of its own. Reads of many
    /// objects leave its memory bounded; reads of a few keep them in memory.
    static let viewContextObjectLimit = 10_000

    /// The replies to the reads `requests`, in order; on `readContext`'s queue.
    func answer(_ requests: [WireRequest], in readContext: ManagedObjectContext) -> [WireReply] {
        let replies = replies(to: requests, in: readContext)
        releaseObjects(after: readContext)
        return replies
    }

    /// The replies to the reads `requests`, in order, as ``answer(_:in:)`` returns them.
    private func replies(to requests: [WireRequest], in readContext: ManagedObjectContext) -> [WireReply] {
        // The IDs each `get` names, parsed once when they are preloaded (nil: not parsed, or
        // one of them does not parse, so the `get` reports it itself).
        var parsedIDs: [[ManagedObjectID]?] = []
        if requests.count > 1 || Self.namesSeveralObjects(requests[0]) { parsedIDs = preloadObjects(of: requests, in: readContext) }
        var index = -1
        // Decided once per batch, not once per request.
        let access = requests.count > 1 ? self.access() : nil
        return requests.map { request in
            index += 1
            if let access {
                // A single request was logged and checked by handle(_:completion:).
                if let refusal = admit(request, under: access) { return .failure(id: request.id, error: refusal) }
            }
            if request.op == "get" {
                // Written straight into bytes (WireObjectWriter), no JSON tree.
                do throws(WireError) {
                    let ids = index < parsedIDs.count ? parsedIDs[index] : nil
                    return .encodedSuccess(id: request.id, result: try getResult(request.body, ids: ids, in: readContext))
                } catch {
                    return .failure(id: request.id, error: error)
                }
            }
            return Self.reply(request) { () throws(WireError) in try self.readOp(request, in: readContext) }
        }
    }

    /// Whether `request` is a `get` of more than one ID (whose objects are then loaded with
    /// one store call, as for a batch, rather than one by one).
    static func namesSeveralObjects(_ request: WireRequest) -> Bool {
        guard request.op == "get", case .array(let values)? = request.body["ids"] else { return false }
        return values.count > 1
    }

    /// Loads the objects every `get` of `requests` names with one store call, so each `get` then
    /// finds them loaded. Anything malformed is left for the `get` itself to report.
    ///
    /// Returns, for each request in order, the IDs it names when all of them parsed (`nil` for
    /// other requests), so the `get` does not parse them again.
    func preloadObjects(of requests: [WireRequest], in context: ManagedObjectContext) -> [[ManagedObjectID]?] {
        var ids: [ManagedObjectID] = []
        var parsed: [[ManagedObjectID]?] = []
        parsed.reserveCapacity(requests.count)
        let allowed = access().allows("get")
        for request in requests {
            guard allowed, request.op == "get", case .array(let values)? = request.body["ids"] else {
                parsed.append(nil)
                continue
            }
            var own: [ManagedObjectID] = []
            own.reserveCapacity(values.count)
            for value in values {
                if let id = try? WireObjectID.parse(value, coordinator: state.coordinator, what: "ids", prefix: idPrefix) { own.append(id) }
            }
            ids.append(contentsOf: own)
            parsed.append(own.count == values.count ? own : nil)
        }
        if ids.count > 1 { try? context.loadObjects(with: ids) }
        return parsed
    }

    /// Discards the connection's pending changes, when it closes; `completion` runs after.
    public func close(completion: @escaping @Sendable () -> Void) {
        state.subscriptions.unsubscribeAll(outbox)
        let context = self.context
        context.perform { [self] in
            let close = { [self] in
                context.rollback()
                context.reset()
                hasPendingChanges.store(false, ordering: .releasing)
                completion()
            }
            // Batches of writes in flight finish first (the last runs the close when it is
            // answered).
            let held = writeBatches.withLock { state -> Bool in
                guard state.inFlight > 0 else { return false }
                state.closeAfter = close
                return true
            }
            if !held { close() }
        }
    }

    static func reply(_ request: WireRequest, _ body: () throws(WireError) -> JSON) -> WireReply {
        do {
            return .success(id: request.id, result: try body())
        } catch {
            return .failure(id: request.id, error: error)
        }
    }

    private func readOp(_ request: WireRequest, in context: ManagedObjectContext) throws(WireError) -> JSON {
        switch request.op {
        case "get": return try get(request.body, in: context)
        case "fetch": return try fetch(request.body, in: context)
        default: return try count(request.body, in: context)
        }
    }

    func writeOp(_ request: WireRequest) throws(WireError) -> JSON {
        switch request.op {
        case "save": return try save(request.body)
        case "configure": return try configure(request.body)
        case "history": return try history(request.body)
        case "rollback":
            context.rollback()
            return .object([])
        default:
            break
        }
        // A change starting on a context with none pending starts a transaction: read fresh.
        if !context.hasChanges { context.reset() }
        switch request.op {
        case "insert": return try insert(request)
        case "update": return try update(request.body)
        default: return try delete(request.body)
        }
    }
}
