import Foundation

/// The one-line state `systemctl status` shows (`STATUS=`): connections, requests per second,
/// last save.
///
/// ```
/// 3 connections, 12.5 requests/s, last save 4 s ago
/// 0 connections, 0.0 requests/s, no save yet
/// ```
public struct StatusLine: Sendable, Equatable {
    /// Connections open.
    public var connections: Int
    /// Requests answered per second over the last interval.
    public var requestsPerSecond: Double
    /// Seconds since the last save was noticed, or `nil` if none was.
    public var secondsSinceLastSave: Int?

    /// Creates a status.
    public init(connections: Int, requestsPerSecond: Double, secondsSinceLastSave: Int?) {
        self.connections = connections
        self.requestsPerSecond = requestsPerSecond
        self.secondsSinceLastSave = secondsSinceLastSave
    }

    /// The line.
    public var text: String {
        let rate = String(format: "%.1f", requestsPerSecond)
        let save = secondsSinceLastSave.map { "last save \($0) s ago" } ?? "no save yet"
        return "\(connections) connection\(connections == 1 ? "" : "s"), \(rate) requests/s, \(save)"
    }
}
