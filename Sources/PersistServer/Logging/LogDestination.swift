#if canImport(Glibc)
import Glibc
#endif

/// Where log messages go: the journal's native protocol, or stderr lines.
public enum LogDestination: Sendable, Equatable {
    /// `persistd: <message> name=value …` lines on stderr.
    case standardError
    /// Structured entries through `sd_journal_sendv`, falling back to stderr if the journal refuses one.
    case journal

    /// The journal when stderr is the stream systemd connected to the journal, else stderr.
    ///
    /// systemd sets `JOURNAL_STREAM=<device>:<inode>` of the stream it gives a service as stdout
    /// and stderr; a process that finds its stderr is that very file may log natively instead
    /// (see systemd.exec(5), "JOURNAL_STREAM"). A mismatch means stderr was redirected (a shell
    /// pipe inside the service), so plain lines it is.
    public static func detect(environment: [String: String]) -> LogDestination {
        guard let value = environment["JOURNAL_STREAM"] else { return .standardError }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return .standardError }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return .standardError }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode ? .journal : .standardError
    }
}
