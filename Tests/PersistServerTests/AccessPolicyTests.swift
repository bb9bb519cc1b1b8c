import Testing
@testable import PersistServer

/// The access policy's rules, peer by peer.
@Suite("access policy")
struct AccessPolicyTests {
    static func peer(_ uid: UInt32, _ gid: UInt32 = 100, groups: [UInt32] = []) -> PeerCredentials {
        PeerCredentials(processID: 1, userID: uid, groupID: gid, supplementaryGroupIDs: groups)
    }

    @Test("by default only root and the service's own user, with full access")
    func defaults() {
        let policy = AccessPolicy(serviceUserID: 990)
        #expect(policy.access(for: Self.peer(0)) == .full)
        #expect(policy.access(for: Self.peer(990)) == .full)
        #expect(policy.access(for: Self.peer(1000)) == .refused)
        #expect(policy.access(for: nil) == .refused)
    }

    @Test("users and groups, read-only winning over full, root never restricted")
    func lists() {
        var policy = AccessPolicy(serviceUserID: 990)
        policy.users = [1000, 1002]
        policy.groups = [50]
        policy.readOnlyUsers = [1001, 1002, 0]
        policy.readOnlyGroups = [60]
        #expect(policy.access(for: Self.peer(1000)) == .full)
        #expect(policy.access(for: Self.peer(1001)) == .readOnly)
        #expect(policy.access(for: Self.peer(1002)) == .readOnly)
        #expect(policy.access(for: Self.peer(2000, 50)) == .full)
        #expect(policy.access(for: Self.peer(2000, 100, groups: [7, 50])) == .full)
        #expect(policy.access(for: Self.peer(2000, 100, groups: [50, 60])) == .readOnly)
        #expect(policy.access(for: Self.peer(2000)) == .refused)
        #expect(policy.access(for: Self.peer(0)) == .full)
    }

    @Test("* for every user")
    func everyone() {
        var policy = AccessPolicy(serviceUserID: 990)
        policy.everyUserMayRead = true
        #expect(policy.access(for: Self.peer(1234)) == .readOnly)
        policy.everyUserMayRead = false
        policy.allowsEveryUser = true
        policy.readOnlyUsers = [1001]
        #expect(policy.access(for: Self.peer(1234)) == .full)
        #expect(policy.access(for: Self.peer(1001)) == .readOnly)
    }

    @Test("read-only peers may perform exactly the read ops")
    func readOps() {
        var policy = AccessPolicy(serviceUserID: 990)
        policy.readOnlyUsers = [1001]
        let reader = Self.peer(1001)
        for op in ["hello", "model", "get", "fetch", "count", "subscribe", "history", "ping"] { #expect(policy.allows(reader, op: op), "\(op)") }
        for op in ["insert", "update", "delete", "save", "rollback", "batchInsert", "stats", "configure", "future"] {
            #expect(!policy.allows(reader, op: op), "\(op)")
        }
    }

    @Test("settings: names and IDs resolve, * and allow-uids work")
    func settings() throws {
        let arguments = try DaemonArguments.parse(["--model", "m.json", "--allow-users", "daemon, 1234", "--allow-groups", "nogroup",
                                                   "--read-only-users", "*", "--read-only-groups", "0", "--allow-uids", "77", "--log-level", "notice"])
        let configuration = try DaemonConfiguration.resolve(arguments, environment: [:])
        #expect(configuration.accessPolicy.users == [77, 1, 1234])
        #expect(configuration.accessPolicy.groups == [65534])
        #expect(configuration.accessPolicy.everyUserMayRead)
        #expect(configuration.accessPolicy.readOnlyGroups == [0])
        #expect(configuration.logLevel == .notice)
        #expect(throws: DaemonArguments.UsageError("allow-groups: no group \"no-such-group-xyz\"")) {
            try DaemonConfiguration.resolve(try DaemonArguments.parse(["--model", "m", "--allow-groups", "no-such-group-xyz"]), environment: [:])
        }
    }
}
