/// How important a log message is; the raw value is its syslog priority (`PRIORITY=` in the journal).
///
/// The `log-level` setting names the least important level written: `info` (the default) writes
/// errors, warnings, notices and infos, and drops debug messages (one line per request).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    /// Something failed: a start-up error, a store that no longer answers. syslog `LOG_ERR`.
    case error = 3
    /// Something is wrong but persistd goes on: a reload that kept a setting. syslog `LOG_WARNING`.
    case warning = 4
    /// Normal but significant: start, stop, reload, a refused peer. syslog `LOG_NOTICE`.
    case notice = 5
    /// Connections opened and closed. syslog `LOG_INFO`.
    case info = 6
    /// Every request, with its id, op and peer. syslog `LOG_DEBUG`.
    case debug = 7

    /// The level a `log-level` setting names (`error`, `warning`, `notice`, `info`, `debug`).
    public init?(name: String) {
        guard let level = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    /// The setting's name for the level.
    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// More important levels compare lower, as syslog priorities do: `.error < .debug`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
