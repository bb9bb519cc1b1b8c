import Synchronization

/// Counters every connection updates and `stats` reports; lock-free.
public final class ServerStatistics: Sendable {
    /// Connections open now.
    public let openConnections = Atomic<Int>(0)
    /// Connections accepted since start.
    public let acceptedConnections = Atomic<Int>(0)
    /// Requests answered since start.
    public let requestsServed = Atomic<Int>(0)
    /// Successful saves since start.
    public let saves = Atomic<Int>(0)

    /// Creates zeroed counters.
    public init() {}
}
