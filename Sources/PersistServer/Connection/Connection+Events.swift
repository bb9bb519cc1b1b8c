extension Connection {
    /// Output below this takes more subscription events; above it they wait in `events`.
    static let eventLowWater = 64 << 10

    /// Queues a subscription event (from the hub's queue); it is written between replies.
    func push(_ event: SubscriptionEvent) {
        loop.execute { [self] in
            guard !closed else { return }
            events.append(event, subscriptions: session.outbox.subscriptions)
            moveEvents()
        }
    }

    /// Moves waiting events into the output while no request is in flight and the output is
    /// small, and writes them; on `loop`'s thread. Events of subscriptions ended meanwhile are skipped.
    func moveEvents() {
        guard !busy, !closed, !movingEvents else { return }
        movingEvents = true
        defer { movingEvents = false }
        let outbox = session.outbox
        while true {
            var moved = false
            while output.count - outputStart < Self.eventLowWater, let line = events.next(isLive: outbox.isLive) {
                output += line
                moved = true
            }
            guard moved, !closed else { return }
            flush()
            // Written whole: take more; otherwise the loop's flush, when the socket is writable, calls again.
            guard output.isEmpty else { return }
        }
    }
}
