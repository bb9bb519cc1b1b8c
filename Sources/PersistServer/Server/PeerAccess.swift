/// What a peer may do, as the ``AccessPolicy`` decides when it connects.
public enum PeerAccess: String, Sendable, Equatable {
    /// Nothing: the connection gets one `unauthorized` line and is closed.
    case refused
    /// The read ops only (``AccessPolicy/readOperations``); others get `unauthorized`.
    case readOnly = "read-only"
    /// Every op.
    case full

    /// Whether a peer of this access may perform `op` (``AccessPolicy/allows(_:op:)``).
    func allows(_ op: String) -> Bool {
        switch self {
        case .refused: false
        case .readOnly: AccessPolicy.isReadOperation(op)
        case .full: true
        }
    }
}
