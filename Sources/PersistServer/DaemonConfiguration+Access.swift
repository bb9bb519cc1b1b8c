import Foundation

extension DaemonConfiguration {
    /// Reads the access and logging settings (`allow-users`, `allow-groups`, `read-only-users`,
    /// `read-only-groups`, `allow-uids`, `log-level`) into `configuration`, resolving names to IDs.
    static func resolveAccess(_ settings: [String: String], into configuration: inout ServerConfiguration) throws(DaemonArguments.UsageError) {
        var policy = configuration.accessPolicy
        func list(_ name: String) -> [String] {
            (settings[name] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        func users(_ name: String) throws(DaemonArguments.UsageError) -> [UInt32] {
            var ids: [UInt32] = []
            for entry in list(name) where entry != "*" {
                guard let id = AccountDirectory.userID(entry) else { throw DaemonArguments.UsageError("\(name): no user \"\(entry)\"") }
                ids.append(id)
            }
            return ids
        }
        func groups(_ name: String) throws(DaemonArguments.UsageError) -> [UInt32] {
            var ids: [UInt32] = []
            for entry in list(name) {
                guard let id = AccountDirectory.groupID(entry) else { throw DaemonArguments.UsageError("\(name): no group \"\(entry)\"") }
                ids.append(id)
            }
            return ids
        }
        if let text = settings["allow-uids"] {
            for part in text.split(separator: ",") {
                guard let uid = UInt32(part.trimmingCharacters(in: .whitespaces)) else {
                    throw DaemonArguments.UsageError("allow-uids must be comma-separated user IDs, not \"\(text)\"")
                }
                policy.users.append(uid)
            }
        }
        policy.users += try users("allow-users")
        policy.groups = try groups("allow-groups")
        policy.readOnlyUsers = try users("read-only-users")
        policy.readOnlyGroups = try groups("read-only-groups")
        policy.allowsEveryUser = list("allow-users").contains("*")
        policy.everyUserMayRead = list("read-only-users").contains("*")
        configuration.accessPolicy = policy
        if let text = settings["log-level"] {
            guard let level = LogLevel(name: text) else {
                throw DaemonArguments.UsageError("log-level must be error, warning, notice, info or debug, not \"\(text)\"")
            }
            configuration.logLevel = level
        }
    }
}
