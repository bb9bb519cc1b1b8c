import Dispatch
import PersistKit
#if canImport(Glibc)
import Glibc
#endif

/// One client connection: a non-blocking socket registered with one ``EventLoop``, the line
/// framer, the queue of requests waiting, and the session that answers them.
///
/// Everything here runs on ``loop``'s thread, which serves many connections: the thread that
/// reads a request answers it when it is a read (on the view context, without a hop) and
/// writes the reply. Writes (`insert`, `save`, …) run on the session's own context queue, so
/// a slow save does not hold up the loop's other connections, and their replies come back
/// as a task on the loop. Requests are answered in arrival order, one at a time or, for reads
/// queued back to back, as one batch (see ``pump()``), so replies come in request order
/// however the client pipelines; a request waits only for the ones before it on the same
/// connection. The connection owns its descriptor and closes it once.
final class Connection: @unchecked Sendable, EventLoopHandler {
    // @unchecked Sendable: every mutable property is touched only on `loop`'s thread; entry
    // points from other threads (`start`, `checkIdle`, `beginShutdown`, `forceClose`, `push`)
    // hop onto it with `loop.execute`.
    //
    // @exclusivity(unchecked) on that state: one thread, and no access overlaps another of the
    // same property (the session writes into `output` only through the `inout` it is given;
    // the framer's bytes are read while only `pending` changes). Debug builds of the tests
    // run with the checks of every other property, and the checks here cost about 300
    // instructions per pipelined `get` (a runtime call and a thread-local access set each).

    /// What waits in line: a request to answer, a run of `get`s of one ID read without a
    /// ``WireRequest`` (``SimpleGet``s, the next ones of `pendingGets`), or a reply already
    /// known (a decoding error).
    private enum Pending {
        case request(WireRequest)
        /// The next `count` simple `get`s of `pendingGets`, back to back in the line: a run
        /// is one entry, so a batch of them is taken without copying each `get`.
        case gets(count: Int)
        case reply(WireReply)
    }

    /// The connection's number, for logs and context names.
    let id: Int
    /// The event loop whose thread runs everything of this connection.
    let loop: EventLoop
    private let descriptor: Int32
    let session: Session
    private let configuration: ServerConfiguration
    private let statistics: ServerStatistics
    private let onClose: @Sendable (Connection) -> Void

    @exclusivity(unchecked) private var framer: LineFramer
    /// The session's ID prefix last seen, that request lines of `get`s are matched against
    /// (``SimpleGet``); taken again from the session when a line's ID does not fit it.
    @exclusivity(unchecked) private var getPrefix: WireObjectIDPrefix?
    @exclusivity(unchecked) private var pending: [Pending] = []
    /// The simple `get`s of the `.gets` entries of `pending`, in order.
    @exclusivity(unchecked) private var pendingGets: [SimpleGet] = []
    @exclusivity(unchecked) private var queuedRequests = 0
    @exclusivity(unchecked) var busy = false
    @exclusivity(unchecked) var output: [UInt8] = []
    @exclusivity(unchecked) var outputStart = 0
    /// The registration with `loop`, while there is one.
    @exclusivity(unchecked) private var token: UInt64?
    /// What the descriptor is registered for (empty: not registered).
    @exclusivity(unchecked) private var interest: Epoll.Events = []
    /// Reading waits until the client takes the replies buffered.
    @exclusivity(unchecked) private var readSuspended = false
    /// A `send` was refused (EAGAIN): the rest waits for the socket to be writable.
    @exclusivity(unchecked) private var writeBlocked = false
    /// No more input is read: EOF, an over-long line, shutdown or idle timeout.
    @exclusivity(unchecked) private var inputDone = false
    /// The connection is gone (or going): nothing more is written.
    @exclusivity(unchecked) var closed = false
    @exclusivity(unchecked) private var lastActivity = DispatchTime.now()
    /// When the first byte of the line still unfinished arrived; `nil` between lines.
    @exclusivity(unchecked) private var lineStarted: DispatchTime?
    /// When the client last took bytes of its replies (or when replies began to wait).
    @exclusivity(unchecked) private var lastWrite = DispatchTime.now()
    /// Subscription events not yet in `output` (see `Connection+Events.swift`).
    @exclusivity(unchecked) var events: EventQueue
    /// `moveEvents()` is running (it flushes, and a flush may call it again).
    @exclusivity(unchecked) var movingEvents = false
    /// The time of the event ``handle(_:)`` is handling, read once for every time stamp it
    /// sets (see ``now()``); `nil` outside of it.
    @exclusivity(unchecked) private var eventTime: DispatchTime?

    init(id: Int, descriptor: Int32, loop: EventLoop, session: Session, configuration: ServerConfiguration,
         statistics: ServerStatistics, onClose: @escaping @Sendable (Connection) -> Void) {
        self.id = id
        self.descriptor = descriptor
        self.session = session
        self.configuration = configuration
        self.statistics = statistics
        self.onClose = onClose
        self.framer = LineFramer(maximumLineLength: configuration.maximumLineLength)
        self.loop = loop
        self.events = EventQueue(limit: configuration.maximumQueuedEvents)
        session.outbox.connect { [weak self] event in self?.push(event) }
    }

    /// Starts reading.
    func start() {
        loop.execute { [self] in
            switch loop.register(descriptor, .readable, handler: self) {
            case .success(let token):
                self.token = token
                interest = .readable
            case .failure(let error):
                Logger.daemon.log(.warning, "cannot watch a connection: \(error)", [.connection(id)])
                close()
            }
        }
    }

    /// What the descriptor became (`EventLoopHandler`): reads, or writes what waits.
    func handle(_ events: Epoll.Events) {
        // One clock read per event (the loop's, taken as it took the event): reading, answering
        // and writing a batch stamp up to four times, microseconds apart, and the timeouts they
        // serve count in seconds.
        eventTime = loop.eventTime
        defer { eventTime = nil }
        if interest.contains(.readable), !events.isDisjoint(with: [.readable, .hangUp]) { readAvailable() }
        if !closed, interest.contains(.writable), !events.isDisjoint(with: [.writable, .hangUp]) { flush() }
    }

    /// Registers the descriptor for what the connection waits for now: input unless reading
    /// is done or suspended, writability while a `send` was refused. Waiting for nothing, it
    /// is taken out of the epoll set (a hung-up socket would otherwise be reported for ever).
    private func updateInterest() {
        guard !closed else { return }
        var wanted: Epoll.Events = []
        if !inputDone && !readSuspended { wanted.insert(.readable) }
        if writeBlocked { wanted.insert(.writable) }
        guard wanted != interest else { return }
        if let token {
            if wanted.isEmpty {
                loop.unregister(descriptor, token: token)
                self.token = nil
            } else {
                loop.update(descriptor, token: token, wanted)
            }
        } else {
            // Registered again, with a new token, once the connection waits for something again.
            switch loop.register(descriptor, wanted, handler: self) {
            case .success(let token): self.token = token
            case .failure: return close()
            }
        }
        interest = wanted
    }

    /// The current time: the time of the event being handled, else the clock's (a task of
    /// the loop: a write's replies, a timeout check).
    private func now() -> DispatchTime {
        eventTime ?? .now()
    }

    // MARK: - Reading

    private func readAvailable() {
        // The loop's read buffer, shared by its connections: an idle connection holds none.
        readAvailable(into: loop.readBuffer)
    }

    private func readAvailable(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        while !inputDone && !closed {
            let count = retryingOnInterrupt { Glibc.read(descriptor, UnsafeMutableRawPointer(buffer.baseAddress), buffer.count) }
            if count == -Int(EAGAIN) || count == -Int(EWOULDBLOCK) { return }
            if count < 0 { return close() }
            if count == 0 {
                // EOF: the client sent all it will. Answer what it sent, then close.
                stopReading()
                return closeWhenDone()
            }
            lastActivity = now()
            let drained = count < buffer.count
            framer.append(UnsafeBufferPointer(rebasing: buffer[0..<count]))
            frames()
            if framer.partialLineLength == 0 {
                lineStarted = nil
            } else if lineStarted == nil {
                lineStarted = lastActivity
            }
            // Output buffered beyond the limit stops reading until the client catches up.
            if output.count - outputStart > configuration.maximumQueuedBytes { return suspendReading() }
            // A short read took all there was: the loop reports the socket again when more
            // comes (level-triggered), which saves a `read` that would fail with EAGAIN.
            if drained { return }
        }
    }

    private func frames() {
        while let frame = framer.nextLineSpan() {
            switch frame {
            case .line(let range):
                // The line is read in the framer's buffer, copied only when it is not a simple `get`.
                Self.withLine(range, of: &framer) { line in
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return } // blank lines are ignored
                    if enqueueSimpleGet(line) { return }
                    enqueue(Array(line))
                }
            case .tooLong:
                pending.append(.reply(.failure(id: .null, error: WireError(.lineTooLong,
                    "the line is longer than \(configuration.maximumLineLength) bytes; closing the connection",
                    details: [JSON.Member("limit", .integer(Int64(configuration.maximumLineLength)))]))))
                stopReading()
                pump()
                return closeWhenDone()
            }
        }
        pump()
    }

    /// The bytes of `range` in `framer`'s buffer, for `body`: through an `inout` access the
    /// framer (and its buffer) is not copied, so not retained and released, per line.
    @inline(__always)
    private static func withLine(_ range: Range<Int>, of framer: inout LineFramer, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        framer.withBytes(of: range, body)
    }

    /// Queues the line when it is a `get` of one ID under the session's ID prefix (a
    /// ``SimpleGet``): `true`; `false` for any other line, with nothing done.
    private func enqueueSimpleGet(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        var outcome = SimpleGet.Outcome.otherPrefix
        // Lent for the parse, not copied out of the connection (a retain and a release a line).
        if let getPrefix = getPrefix.map(Unmanaged.passUnretained) {
            outcome = getPrefix._withUnsafeGuaranteedRef { SimpleGet.parse(line, prefix: $0) }
        }
        if case .otherPrefix = outcome {
            // The session parsed an ID of another store or entity since: match against that one.
            guard let current = session.idPrefix.withLock({ $0 }), current !== getPrefix,
                  current.coordinator === session.state.coordinator else { return false }
            getPrefix = current
            outcome = SimpleGet.parse(line, prefix: current)
        }
        // Moved out of `outcome` and into the queue: a copy would retain its prefix and copy
        // its `id`, and destroying the original release and destroy them again.
        guard case .get(let get) = consume outcome else { return false }
        if queuedRequests >= configuration.maximumQueuedRequests {
            enqueue(get.request)
            return true
        }
        queuedRequests += 1
        pendingGets.append(consume get)
        // The last entry matched in place, through the buffer: `pending.last` or `pending[i]`
        // would copy it (an enum with payloads) and destroy the copy, for every `get`.
        let extended = pending.withUnsafeMutableBufferPointer { entries -> Bool in
            guard let last = entries.indices.last, case .gets(let count) = entries[last] else { return false }
            entries[last] = .gets(count: count + 1)
            return true
        }
        if !extended { pending.append(.gets(count: 1)) }
        return true
    }

    private func enqueue(_ line: [UInt8]) {
        let request: WireRequest
        do {
            request = try WireRequest.decode(line)
        } catch {
            statistics.requestsServed.add(1, ordering: .relaxed)
            pending.append(.reply(.failure(id: error.id, error: error.error)))
            return
        }
        enqueue(request)
    }

    /// Queues a decoded request, or its `too_many_requests` reply past the limit.
    private func enqueue(_ request: WireRequest) {
        if queuedRequests >= configuration.maximumQueuedRequests {
            statistics.requestsServed.add(1, ordering: .relaxed)
            pending.append(.reply(.failure(id: request.id, error: WireError(.tooManyRequests,
                "more than \(configuration.maximumQueuedRequests) requests are waiting on this connection; wait for replies before sending more",
                details: [JSON.Member("limit", .integer(Int64(configuration.maximumQueuedRequests)))]))))
            return
        }
        queuedRequests += 1
        pending.append(.request(request))
    }

    private func stopReading() {
        guard !inputDone else { return }
        inputDone = true
        readSuspended = false
        updateInterest()
    }

    private func suspendReading() {
        guard !readSuspended, !inputDone else { return }
        readSuspended = true
        updateInterest()
    }

    // MARK: - Answering

    /// The most requests answered in one hop: a longer run of pipelined reads goes in several
    /// hops, so one connection does not hold the shared read context for long, and a longer run
    /// of writes sends its first replies before the rest have run.
    static let maximumBatch = 64

    /// Starts the next request if none is in flight. A request at the head of the line that is
    /// a read starts together with the reads right behind it, and a write with the writes right
    /// behind it (up to ``maximumBatch``): the session answers them in one hop, and their
    /// replies go out in one write.
    private func pump() {
        while !busy, !closed, !pending.isEmpty {
            switch pending[0] {
            case .gets(let count):
                busy = true
                // `takeGets` takes them out of `pending`, all or part of the run.
                var gets = takeGets(count)
                if !answeredNow(gets.count, { session.answerSimpleGetsNow(gets, into: &$0) }) { hand(gets.map(\.request)) }
                reuse(&gets)
            case .reply(let reply):
                pending.removeFirst()
                deliver(reply)
            case .request(let request):
                pending.removeFirst()
                busy = true
                let requests = batch(startingWith: request)
                if !answeredNow(requests.count, { session.answerGetsNow(requests, into: &$0) }) { hand(requests) }
            }
        }
    }

    /// Whether `answer` wrote the replies to the `count` requests in flight into `output` at
    /// once (`get`s the session can answer now: no completion closures, no hand-off, replies
    /// written straight into `output`, not built apart and copied); then they are sent.
    private func answeredNow(_ count: Int, _ answer: (inout [UInt8]) -> Bool) -> Bool {
        let idle = outputStart >= output.count
        guard answer(&output) else { return false }
        if idle { lastWrite = now() }
        finishWritten(count)
        if inputDone && pending.isEmpty { closeWhenDone() }
        return true
    }

    /// Starts `requests` (in flight, `busy` set) through ``Session/handle(_:completion:)-([WireRequest],_)``.
    private func hand(_ requests: [WireRequest]) {
        // Reads are answered before `handle` returns, on this thread: their replies are
        // taken here, without a hop; later replies (writes) come back as a loop task.
        let handoff = Locked<(inHandle: Bool, replies: [WireReply]?)>((true, nil))
        // With no other client ready on this loop, a lone insert+save may commit here.
        session.handle(requests, onIdleThread: loop.isOtherwiseIdle) { [self] replies in
            let taken = handoff.withLock { state -> Bool in
                guard state.inHandle else { return false }
                state.replies = replies
                return true
            }
            guard !taken else { return }
            loop.execute { [self] in
                finish(replies)
                pump()
                if inputDone { closeWhenDone() }
            }
        }
        if let replies = handoff.withLock({ state -> [WireReply]? in state.inHandle = false; return state.replies }) {
            finish(replies)
            if inputDone && pending.isEmpty { closeWhenDone() }
        }
    }

    /// The first `count` (at most ``maximumBatch``) `get`s of the run at the head of `pending`,
    /// taken out of it and of `pendingGets`; all of `pendingGets` without a copy when the run
    /// holds every one and fits in one batch (pipelined `get`s, the usual case).
    private func takeGets(_ count: Int) -> [SimpleGet] {
        let taken = min(count, Self.maximumBatch)
        if taken == count { pending.removeFirst() } else { pending[0] = .gets(count: count - taken) }
        if taken == pendingGets.count {
            var gets: [SimpleGet] = []
            swap(&gets, &pendingGets)
            return gets
        }
        let gets = Array(pendingGets[0..<taken])
        pendingGets.removeFirst(taken)
        return gets
    }

    /// The most simple `get`s whose room a batch's array hands back to `pendingGets`.
    private static let reusedGetCapacity = 32

    /// Hands the room of a batch's `gets`, answered, back to `pendingGets` when that is empty
    /// and the room small: the next run is queued without growing an array from nothing
    /// (five allocations for sixteen `get`s). An idle connection keeps at most that room.
    private func reuse(_ gets: inout [SimpleGet]) {
        guard pendingGets.isEmpty, gets.capacity <= Self.reusedGetCapacity else { return }
        gets.removeAll(keepingCapacity: true)
        swap(&gets, &pendingGets)
    }

    /// `first`, and the requests of its kind (reads, or writes) waiting right after it (taken
    /// out of `pending`), up to ``maximumBatch`` in all.
    private func batch(startingWith first: WireRequest) -> [WireRequest] {
        let batchable: (WireRequest) -> Bool
        if Session.isBatchableRead(first) {
            batchable = Session.isBatchableRead
        } else if Session.isBatchableWrite(first) {
            batchable = Session.isBatchableWrite
        } else {
            return [first]
        }
        // Simple `get`s are reads: they join a batch of reads (as requests).
        let reads = Session.isBatchableRead(first)
        // Room for every pending entry up front (a pipelined insert's save is the next one): an
        // array of one would be copied into new storage at the first request that joins it.
        var requests: [WireRequest] = []
        requests.reserveCapacity(min(1 + pending.count, Self.maximumBatch))
        requests.append(first)
        // Entries of `pending` taken whole.
        var entries = 0
        scan: while entries < pending.count, requests.count < Self.maximumBatch {
            switch pending[entries] {
            case .request(let next) where batchable(next):
                requests.append(next)
                entries += 1
            case .gets(let count) where reads:
                let taken = min(count, Self.maximumBatch - requests.count)
                for get in pendingGets[0..<taken] { requests.append(get.request) }
                pendingGets.removeFirst(taken)
                guard taken == count else {
                    // The rest of the run waits for the next batch.
                    pending[entries] = .gets(count: count - taken)
                    break scan
                }
                entries += 1
            default:
                break scan
            }
        }
        pending.removeFirst(entries)
        return requests
    }

    /// The requests in flight were answered with `replies` (one each, in order): writes them
    /// with one `send`, and lets the next request start.
    private func finish(_ replies: [WireReply]) {
        if !closed {
            if outputStart >= output.count { lastWrite = now() }
            // By index: a `for` over the array would copy each reply (retaining what it holds).
            for index in replies.indices { replies[index].write(to: &output) }
        }
        finishWritten(replies.count)
    }

    /// The `count` requests in flight were answered with replies already written into
    /// `output`: sends them with one `send`, and lets the next request start.
    private func finishWritten(_ count: Int) {
        busy = false
        queuedRequests -= count
        lastActivity = now()
        statistics.requestsServed.add(count, ordering: .relaxed)
        if !closed { flush() }
        moveEvents()
    }

    private func deliver(_ reply: WireReply) {
        guard !closed else { return }
        if outputStart >= output.count { lastWrite = now() }
        reply.write(to: &output)
        flush()
    }

    /// Writes what is buffered, as much as the socket takes; waits for the write source otherwise.
    func flush() {
        while outputStart < output.count && !closed {
            // The force-unwrap is safe: the loop runs only while `output` holds unsent bytes,
            // and a non-empty array's buffer has a base address.
            let count = retryingOnInterrupt {
                output.withUnsafeBytes { send(descriptor, $0.baseAddress! + outputStart, output.count - outputStart, Int32(MSG_NOSIGNAL)) }
            }
            if count == -Int(EAGAIN) || count == -Int(EWOULDBLOCK) {
                if !writeBlocked { writeBlocked = true; updateInterest() }
                return
            }
            if count < 0 { return close() } // EPIPE, ECONNRESET: the client is gone.
            outputStart += count
            lastWrite = now()
            loop.noteOutput()
        }
        output.removeAll(keepingCapacity: output.count < 1 << 20)
        outputStart = 0
        if writeBlocked || readSuspended {
            writeBlocked = false
            if !inputDone { readSuspended = false }
            updateInterest()
        }
        events.outputDrained()
        moveEvents()
        if inputDone { closeWhenDone() }
    }

    // MARK: - Closing

    /// Closes once nothing is waiting, nothing is in flight and everything is written.
    private func closeWhenDone() {
        guard !closed, !busy, pending.isEmpty, outputStart >= output.count else { return }
        close()
    }

    /// Closes now: leaves the loop, closes the descriptor, and discards the session's changes
    /// (after a write in flight, on the session's queue) before telling the server.
    private func close() {
        guard !closed else { return }
        closed = true
        inputDone = true
        pending.removeAll()
        pendingGets.removeAll()
        if let token { loop.unregister(descriptor, token: token) }
        token = nil
        interest = []
        Glibc.close(descriptor)
        let onClose = self.onClose
        session.close { [self] in onClose(self) }
    }

    /// Closes the connection if nothing happened on it for `timeout` seconds (0: never),
    /// telling the client why; also enforces the configuration's line and write timeouts.
    func checkIdle(timeout: Double) {
        loop.execute { [self] in
            guard !closed else { return }
            let now = DispatchTime.now()
            func seconds(since time: DispatchTime) -> Double { Double(now.uptimeNanoseconds - min(now.uptimeNanoseconds, time.uptimeNanoseconds)) / 1e9 }
            // A client that leaves its replies unread: nothing more can reach it, so no event.
            if configuration.writeTimeout > 0, outputStart < output.count, seconds(since: lastWrite) >= configuration.writeTimeout {
                Logger.daemon.log(.notice, "closing a connection whose client left \(output.count - outputStart) bytes of replies unread for \(configuration.writeTimeout) s",
                                  [.connection(id)])
                return close()
            }
            // A line begun and not finished in time (a slow client holding a connection open).
            if configuration.lineTimeout > 0, !inputDone, !readSuspended, let started = lineStarted,
               seconds(since: started) >= configuration.lineTimeout {
                stopReading()
                pending.append(.reply(.event(name: "closing", members: [JSON.Member("reason", .string("line_timeout")),
                    JSON.Member("message", .string("a line was not finished within \(configuration.lineTimeout) seconds; closing the connection"))])))
                pump()
                return closeWhenDone()
            }
            // A connection with a live subscription waits for events: never idle.
            guard timeout > 0, !busy, pending.isEmpty, !inputDone, !session.outbox.hasSubscriptions else { return }
            let idle = seconds(since: lastActivity)
            guard idle >= timeout else { return }
            stopReading()
            deliver(.event(name: "closing", members: [JSON.Member("reason", .string("idle_timeout")),
                                                    JSON.Member("message", .string("no request for \(Int(timeout)) seconds; closing the connection"))]))
            closeWhenDone()
        }
    }

    /// Stops reading; answers what was received, tells the client the server is shutting down, then closes.
    func beginShutdown() {
        loop.execute { [self] in
            guard !closed else { return }
            stopReading()
            // Requests already received are still answered, in order, before the event.
            pending.append(.reply(.event(name: "closing", members: [JSON.Member("reason", .string("shutdown")),
                                                                     JSON.Member("message", .string("the server is shutting down"))])))
            pump()
            closeWhenDone()
        }
    }

    /// Closes now, whatever is in flight (after the shutdown grace period).
    func forceClose() {
        loop.execute { [self] in close() }
    }
}
