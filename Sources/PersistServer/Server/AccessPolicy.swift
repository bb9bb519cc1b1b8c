/// Decides whether a peer may perform an operation: the hook where the systemd issue's
/// authorization rules go.
///
/// Today's rule: when ``allowedUserIDs`` is empty everyone may do everything; otherwise only
/// those users may, and others get `unauthorized` for every op.
public struct AccessPolicy: Sendable {
    /// The users allowed; empty for everyone.
    public var allowedUserIDs: [UInt32]

    /// Creates a policy.
    public init(allowedUserIDs: [UInt32]) {
        self.allowedUserIDs = allowedUserIDs
    }

    /// Whether `peer` may perform `op`; unknown credentials are allowed only when everyone is.
    public func allows(_ peer: PeerCredentials?, op: String) -> Bool {
        if allowedUserIDs.isEmpty { return true }
        guard let peer else { return false }
        return allowedUserIDs.contains(peer.userID)
    }
}
