import Foundation
import PersistKit

/// Resolves a ``ServerConfiguration`` from the command line, the environment and a config file.
///
/// The command line wins over the environment (`PERSISTD_SOCKET`, …), which wins over the
/// config file (`--config FILE` or `PERSISTD_CONFIG`), which wins over the defaults.
///
/// A config file:
/// ```
/// # /etc/persistd.conf
/// model = /usr/share/persistd/Beers.model.json
/// store = /var/lib/persistd/store.sqlite
/// socket = /run/persistd/persistd.sock
/// idle-timeout = 600
/// ```
public enum DaemonConfiguration {
    /// The socket path used when none is given: `./.persistd/persistd.sock`; `persistctl` uses it too.
    public static let defaultSocketPath = ".persistd/persistd.sock"
    /// The store path used when none is given.
    public static let defaultStorePath = ".persistd/store.sqlite"

    /// The environment variable for a setting: `store-type` → `PERSISTD_STORE_TYPE`.
    public static func environmentName(_ setting: String) -> String {
        "PERSISTD_" + setting.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The settings of a config file's text.
    /// - Throws: ``DaemonArguments/UsageError`` naming the file and line of a malformed line or unknown name.
    public static func parseFile(_ text: String, path: String) throws(DaemonArguments.UsageError) -> [String: String] {
        var settings: [String: String] = [:]
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw DaemonArguments.UsageError("\(path):\(number + 1): expected `name = value`")
            }
            let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            var value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = String(value.dropFirst().dropLast()) }
            guard DaemonArguments.settingNames.contains(name) else {
                throw DaemonArguments.UsageError("\(path):\(number + 1): unknown setting \"\(name)\"")
            }
            settings[name] = value
        }
        return settings
    }

    /// The configuration `arguments` and `environment` describe, reading the config file they name.
    public static func resolve(_ arguments: DaemonArguments, environment: [String: String]) throws(DaemonArguments.UsageError) -> ServerConfiguration {
        var settings: [String: String] = [:]
        if let configPath = arguments.configPath ?? environment["PERSISTD_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 }) {
            let text: String
            do {
                text = try String(contentsOfFile: configPath, encoding: .utf8)
            } catch {
                throw DaemonArguments.UsageError("cannot read config file \(configPath)")
            }
            settings = try parseFile(text, path: configPath)
        }
        for name in DaemonArguments.settingNames {
            if let value = environment[environmentName(name)], !value.isEmpty { settings[name] = value }
        }
        settings.merge(arguments.settings) { _, flag in flag }

        guard let model = settings["model"] else {
            throw DaemonArguments.UsageError("no model: give --model PATH (or PERSISTD_MODEL, or model in the config file)")
        }
        var configuration = ServerConfiguration(modelPath: model, storePath: settings["store"] ?? defaultStorePath,
                                                socketPath: settings["socket"] ?? defaultSocketPath)
        if let type = settings["store-type"] {
            guard let storeType = StoreType(name: type) else {
                throw DaemonArguments.UsageError("store-type must be sqlite, xml, binary or memory, not \"\(type)\"")
            }
            configuration.storeType = storeType
        }
        if let mode = settings["socket-mode"] {
            guard let bits = UInt32(mode, radix: 8), bits <= 0o777 else {
                throw DaemonArguments.UsageError("socket-mode must be octal permissions such as 0660, not \"\(mode)\"")
            }
            configuration.socketMode = bits
        }
        func positive(_ name: String) throws(DaemonArguments.UsageError) -> Int? {
            guard let text = settings[name] else { return nil }
            guard let value = Int(text), value > 0 else { throw DaemonArguments.UsageError("\(name) must be a positive integer, not \"\(text)\"") }
            return value
        }
        configuration.maximumConnections = try positive("max-connections") ?? configuration.maximumConnections
        configuration.maximumLineLength = try positive("max-line") ?? configuration.maximumLineLength
        configuration.maximumQueuedRequests = try positive("max-queued") ?? configuration.maximumQueuedRequests
        configuration.maximumConnectionsPerUser = try positive("max-connections-per-user") ?? configuration.maximumConnectionsPerUser
        configuration.maximumQueuedBytes = try positive("max-queued-bytes") ?? configuration.maximumQueuedBytes
        func seconds(_ name: String) throws(DaemonArguments.UsageError) -> Double? {
            guard let text = settings[name] else { return nil }
            guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                throw DaemonArguments.UsageError("\(name) must be a number of seconds, not \"\(text)\"")
            }
            return seconds
        }
        configuration.idleTimeout = try seconds("idle-timeout") ?? configuration.idleTimeout
        configuration.lineTimeout = try seconds("line-timeout") ?? configuration.lineTimeout
        configuration.writeTimeout = try seconds("write-timeout") ?? configuration.writeTimeout
        configuration.queryTimeout = try seconds("query-timeout") ?? configuration.queryTimeout
        configuration.maximumQueuedEvents = try positive("max-events") ?? configuration.maximumQueuedEvents
        configuration.eventLoops = try positive("event-loops") ?? configuration.eventLoops
        func microseconds(_ name: String, upTo limit: Int) throws(DaemonArguments.UsageError) -> Double? {
            guard let text = settings[name] else { return nil }
            guard let microseconds = Int(text), (0...limit).contains(microseconds) else {
                throw DaemonArguments.UsageError("\(name) must be a number of microseconds from 0 to \(limit), not \"\(text)\"")
            }
            return Double(microseconds) / 1e6
        }
        configuration.busyPoll = try microseconds("busy-poll", upTo: 1_000_000) ?? configuration.busyPoll
        if let text = settings["history"] {
            switch text.lowercased() {
            case "on", "true", "yes", "1": configuration.historyTracking = true
            case "off", "false", "no", "0": configuration.historyTracking = false
            default: throw DaemonArguments.UsageError("history must be on or off, not \"\(text)\"")
            }
        }
        if let text = settings["busy-timeout"] {
            guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                throw DaemonArguments.UsageError("busy-timeout must be a number of seconds, not \"\(text)\"")
            }
            configuration.busyTimeout = seconds
        }
        configuration.commitDelay = try microseconds("commit-delay", upTo: 100_000) ?? configuration.commitDelay
        try resolveAccess(settings, into: &configuration)
        return configuration
    }
}
