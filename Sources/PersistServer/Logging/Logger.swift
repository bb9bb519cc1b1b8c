import CSystemd
import Foundation
import PersistKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// persistd's log: messages with a level and structured fields, to the journal or stderr.
///
/// ```swift
/// Logger.daemon.log(.notice, "reloaded the configuration")
/// Logger.daemon.log(.debug, "request", [.op("fetch"), .requestID("7")] + LogField.peer(peer))
/// ```
///
/// One logger for the process, set up once at start (``configure(destination:level:)``), like
/// swift-log's bootstrap; the level can change later (SIGHUP). Checking the level is one atomic
/// load, so a dropped debug message costs nearly nothing.
public final class Logger: Sendable {
    /// The daemon's logger.
    public static let daemon = Logger()

    private let threshold = Atomic<Int>(LogLevel.info.rawValue)
    private let destination = Locked(LogDestination.standardError)

    /// Creates a logger writing infos and more important messages to stderr.
    public init() {}

    /// Sets where messages go and the least important level written.
    public func configure(destination: LogDestination, level: LogLevel) {
        self.destination.withLock { $0 = destination }
        self.level = level
    }

    /// The least important level written.
    public var level: LogLevel {
        get { LogLevel(rawValue: threshold.load(ordering: .relaxed)) ?? .info }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Whether a message of `level` would be written.
    public func isEnabled(_ level: LogLevel) -> Bool { level.rawValue <= threshold.load(ordering: .relaxed) }

    /// Writes `message` with `fields` if `level` is enabled; the caller's location goes to the
    /// journal as `CODE_FILE`, `CODE_LINE` and `CODE_FUNC`.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> [LogField] = [],
                    file: String = #fileID, line: Int = #line, function: String = #function) {
        guard isEnabled(level) else { return }
        let text = message()
        let extra = fields()
        if destination.withLock({ $0 }) == .journal {
            let entry = Self.journalFields(level, text, extra, file: file, line: line, function: function)
            if Self.sendToJournal(entry) { return }
        }
        FileHandle.standardError.write(Data(Self.standardErrorLine(text, extra).utf8))
    }

    /// The stderr line: `persistd: <message>` and the fields as ` name=value` (names lower-cased).
    public static func standardErrorLine(_ message: String, _ fields: [LogField]) -> String {
        var line = "persistd: " + message
        for field in fields { line += " \(field.name.lowercased())=\(field.value)" }
        return line + "\n"
    }

    /// The journal entry's fields, `NAME=value` each, in the order sent.
    public static func journalFields(_ level: LogLevel, _ message: String, _ fields: [LogField],
                                     file: String, line: Int, function: String) -> [String] {
        ["MESSAGE=" + message, "PRIORITY=\(level.rawValue)", "SYSLOG_IDENTIFIER=persistd",
         "CODE_FILE=" + file, "CODE_LINE=\(line)", "CODE_FUNC=" + function]
            + fields.map { "\($0.name)=\($0.value)" }
    }

    /// Sends one entry with `sd_journal_sendv`; `false` if the journal did not take it.
    /// Values may hold newlines: sendv frames each field by its length, not by lines.
    private static func sendToJournal(_ entry: [String]) -> Bool {
        let buffers = entry.map { Array($0.utf8) }
        var vectors: [iovec] = []
        vectors.reserveCapacity(buffers.count)
        return withBuffers(buffers[...], &vectors) { vectors in
            sd_journal_sendv(vectors.baseAddress, Int32(vectors.count)) >= 0
        }
    }

    /// Pins every buffer, then calls `body` with their iovecs (recursion keeps each pointer valid).
    private static func withBuffers(_ buffers: ArraySlice<[UInt8]>, _ vectors: inout [iovec],
                                    _ body: (UnsafeBufferPointer<iovec>) -> Bool) -> Bool {
        guard let first = buffers.first else { return vectors.withUnsafeBufferPointer(body) }
        return first.withUnsafeBytes { bytes in
            vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count))
            return withBuffers(buffers.dropFirst(), &vectors, body)
        }
    }
}
