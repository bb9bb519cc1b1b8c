/// Who may connect to persistd, and who may only read: decided from the peer's `SO_PEERCRED`
/// user, group and supplementary groups.
///
/// ```
/// # /etc/persistd/persistd.conf
/// allow-users = alice, 1001        # every op
/// allow-groups = persistd-writers
/// read-only-users = bob            # hello, model, get, fetch, count, subscribe, unsubscribe, history, ping
/// read-only-groups = auditors
/// ```
///
/// The rules, in order:
/// 1. root (uid 0) and the daemon's own user (``serviceUserID``) have full access, always;
/// 2. a peer listed in `read-only-users`, or in one of the `read-only-groups`, may only read,
///    even if an `allow-*` list names it too: the narrower grant wins;
/// 3. a peer listed in `allow-users`, or in one of the `allow-groups`, has full access;
/// 4. everyone else is refused. `*` in a user list stands for every user.
///
/// The socket's mode and group decide who can reach the daemon at all; this policy decides
/// what those who reach it may do. Names are resolved to IDs when the configuration is read.
public struct AccessPolicy: Sendable, Equatable {
    /// The ops a read-only peer may perform. Everything else, including ops added later, needs
    /// full access (an allow-list, so a new write op is never readable by mistake). `stats` is
    /// not here: it shows every client's activity.
    public static let readOperations: Set<String> = ["hello", "model", "get", "fetch", "count", "subscribe", "unsubscribe", "history", "ping"]

    /// Users with full access.
    public var users: [UInt32] = []
    /// Groups whose members have full access.
    public var groups: [UInt32] = []
    /// Users who may only read.
    public var readOnlyUsers: [UInt32] = []
    /// Groups whose members may only read.
    public var readOnlyGroups: [UInt32] = []
    /// Every user has full access (`allow-users = *`) unless read-only.
    public var allowsEveryUser = false
    /// Every user may read (`read-only-users = *`).
    public var everyUserMayRead = false
    /// The daemon's own user (its effective user ID at start), which always has full access.
    public var serviceUserID: UInt32

    /// A policy that lets only root and `serviceUserID` in.
    public init(serviceUserID: UInt32) {
        self.serviceUserID = serviceUserID
    }

    /// The peer's access; unknown credentials are refused.
    public func access(for peer: PeerCredentials?) -> PeerAccess {
        guard let peer else { return .refused }
        if peer.userID == 0 || peer.userID == serviceUserID { return .full }
        let groups = [peer.groupID] + peer.supplementaryGroupIDs
        if everyUserMayRead || readOnlyUsers.contains(peer.userID) || groups.contains(where: readOnlyGroups.contains) {
            return .readOnly
        }
        if allowsEveryUser || users.contains(peer.userID) || groups.contains(where: self.groups.contains) { return .full }
        return .refused
    }

    /// Whether `peer` may perform `op`.
    public func allows(_ peer: PeerCredentials?, op: String) -> Bool {
        access(for: peer).allows(op)
    }

    /// Whether `op` is one of ``readOperations``: compared as (small) strings, `get` first,
    /// without hashing the op for the set (`AccessPolicyTests` checks both agree).
    static func isReadOperation(_ op: String) -> Bool {
        switch op {
        case "get", "fetch", "count", "hello", "model", "subscribe", "unsubscribe", "history", "ping": true
        default: false
        }
    }
}

extension AccessPolicy {
    /// The `unauthorized` error for an op `peer` may not perform, logged at notice level.
    static func refusal(_ peer: PeerCredentials?, op: String) -> WireError {
        Logger.daemon.log(.notice, "refused an op: not allowed by the access policy", [.op(op)] + LogField.peer(peer))
        let who = peer.map { "user \($0.userID)" } ?? "a peer of unknown credentials"
        return WireError(.unauthorized, "\(who) may only read; \(op) needs write access", details: [JSON.Member("op", .string(op))])
    }
}
