/// Why `persistctl` failed: a usage error (exit 2), a server error (exit 1), or no server (exit 69).
public enum ControlError: Error, Sendable, Equatable {
    /// The command line is wrong.
    case usage(String)
    /// The server answered with an error.
    case server(code: String, message: String)
    /// The server could not be reached.
    case connection(String)

    /// The exit status.
    public var exitCode: Int32 {
        switch self {
        case .usage: return 2
        case .server: return 1
        case .connection: return 69 // EX_UNAVAILABLE
        }
    }

    /// The line printed on stderr.
    public var message: String {
        switch self {
        case .usage(let text): return "persistctl: \(text)"
        case .server(let code, let message): return "persistctl: \(code): \(message)"
        case .connection(let text): return "persistctl: \(text)"
        }
    }
}
