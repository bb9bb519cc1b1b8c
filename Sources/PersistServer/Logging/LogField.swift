/// One structured field of a log message: a journal field name (upper case, digits and `_`)
/// and its value.
///
/// In the journal each field is its own `NAME=value`, so `journalctl -u persistd PEER_UID=1000`
/// selects one user's requests; on stderr the fields follow the message as `name=value` words.
public struct LogField: Sendable, Equatable {
    /// The journal field name, such as `PEER_UID`.
    public var name: String
    /// The value.
    public var value: String

    /// Creates a field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    /// `REQUEST_ID`: the request's `id` as sent (JSON text).
    public static func requestID(_ id: String) -> LogField { LogField("REQUEST_ID", id) }
    /// `OP`: the request's op.
    public static func op(_ op: String) -> LogField { LogField("OP", op) }
    /// `CONNECTION`: the connection's number.
    public static func connection(_ id: Int) -> LogField { LogField("CONNECTION", String(id)) }

    /// `PEER_UID`, `PEER_GID`, `PEER_PID` of a peer, or `PEER_UID=unknown` when the kernel did not say.
    public static func peer(_ peer: PeerCredentials?) -> [LogField] {
        guard let peer else { return [LogField("PEER_UID", "unknown")] }
        return [LogField("PEER_UID", String(peer.userID)), LogField("PEER_GID", String(peer.groupID)),
                LogField("PEER_PID", String(peer.processID))]
    }
}
