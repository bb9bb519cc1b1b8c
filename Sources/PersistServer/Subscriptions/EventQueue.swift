/// A connection's queue of subscription events the client has not read yet, bounded.
///
/// Events wait here while the socket and the connection's output buffer are full. Past
/// ``limit`` events the whole queue is dropped and replaced by one `overflow` event naming the
/// token to resynchronise from (the token before the first dropped event); then every new
/// event is dropped until the overflow event has been written and the output has drained
/// (``outputDrained()``), so a client that does not read costs at most `limit` events.
///
/// A value confined to its connection's queue; no I/O, so it is tested directly.
struct EventQueue {
    /// The most events queued.
    let limit: Int
    private var events: [SubscriptionEvent] = []
    private var head = 0
    /// Dropping events: the overflow event is queued or not yet written.
    private(set) var isOverflowing = false
    private var overflowTaken = false
    /// Events dropped since the queue was created.
    private(set) var droppedCount = 0

    /// Creates an empty queue holding at most `limit` events (at least 1).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The number of events waiting.
    var count: Int { events.count - head }

    /// Queues `event`, or drops it (see the type's documentation). `subscriptions` names the
    /// connection's live subscriptions, for an overflow event.
    mutating func append(_ event: SubscriptionEvent, subscriptions: @autoclosure () -> [String]) {
        if isOverflowing {
            droppedCount += 1
            return
        }
        guard count >= limit else {
            events.append(event)
            return
        }
        let first = events[head...].first ?? event
        let dropped = count + 1
        droppedCount += dropped
        events = [Self.overflow(subscriptions: subscriptions(), token: first.previousToken, dropped: dropped)]
        head = 0
        isOverflowing = true
        overflowTaken = false
    }

    /// The next event line to write, skipping events of subscriptions no longer live;
    /// `nil` when none waits.
    mutating func next(isLive: (String) -> Bool) -> [UInt8]? {
        while head < events.count {
            let event = events[head]
            head += 1
            if head == events.count {
                events.removeAll(keepingCapacity: events.count < 4096)
                head = 0
            } else if head >= 1024 && head * 2 >= events.count {
                events.removeFirst(head)
                head = 0
            }
            if event.subscription.isEmpty {
                overflowTaken = true
                return event.line
            }
            if isLive(event.subscription) { return event.line }
        }
        return nil
    }

    /// Everything buffered was written to the socket: after an overflow, events flow again.
    mutating func outputDrained() {
        if isOverflowing && overflowTaken {
            isOverflowing = false
            overflowTaken = false
        }
    }

    /// The `overflow` event; its subscription is `""` (it is always written).
    static func overflow(subscriptions: [String], token: String, dropped: Int) -> SubscriptionEvent {
        let reply = WireReply.event(name: "overflow", members: [
            JSON.Member("subscriptions", .array(subscriptions.map(JSON.string))),
            JSON.Member("token", .string(token)),
            JSON.Member("dropped", .integer(Int64(dropped))),
            JSON.Member("message", .string("more than the connection's event limit waited unread; \(dropped) events were dropped; read history since token to resynchronise")),
        ])
        return SubscriptionEvent(subscription: "", line: reply.line, previousToken: token)
    }
}
