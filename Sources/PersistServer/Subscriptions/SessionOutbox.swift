import PersistKit

/// Where a session's subscription events go: the connection's sink, and the subscriptions
/// still live on it.
///
/// The hub sends on its queue; the connection sets the sink once and asks ``isLive(_:)`` on
/// its queue before it writes an event, so an event queued before `unsubscribe` is never
/// written after that reply.
final class SessionOutbox: Sendable {
    private struct State {
        var sink: (@Sendable (SubscriptionEvent) -> Void)?
        var live: Set<String> = []
    }

    private let state = Locked(State())

    /// Creates an outbox with no sink (events are dropped until ``connect(_:)``).
    init() {}

    /// Sets where events go.
    func connect(_ sink: @escaping @Sendable (SubscriptionEvent) -> Void) {
        state.withLock { $0.sink = sink }
    }

    /// Hands an event to the connection, if its subscription is still live.
    func send(_ event: SubscriptionEvent) {
        let sink = state.withLock { $0.live.contains(event.subscription) ? $0.sink : nil }
        sink?(event)
    }

    /// Whether `subscription` is live on this session.
    func isLive(_ subscription: String) -> Bool {
        state.withLock { $0.live.contains(subscription) }
    }

    /// The live subscriptions, sorted.
    var subscriptions: [String] {
        state.withLock { $0.live.sorted { ($0.count, $0) < ($1.count, $1) } }
    }

    /// Whether any subscription is live (an idle subscriber is not idle-closed).
    var hasSubscriptions: Bool { state.withLock { !$0.live.isEmpty } }

    /// Marks `subscription` live.
    func add(_ subscription: String) {
        _ = state.withLock { $0.live.insert(subscription) }
    }

    /// Ends `subscription`; `false` if it was not live.
    func remove(_ subscription: String) -> Bool {
        state.withLock { $0.live.remove(subscription) != nil }
    }

    /// Ends every subscription (the connection closed); returns their IDs.
    func removeAll() -> [String] {
        state.withLock { state in
            defer { state.live = []; state.sink = nil }
            return Array(state.live)
        }
    }
}
