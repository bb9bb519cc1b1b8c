/// The command line of `persistd`, parsed.
///
/// Every setting is `--name VALUE` (or `--name=VALUE`); the same names are keys of the config
/// file and, upper-cased with `PERSISTD_` in front and `_` for `-`, environment variables
/// (see ``DaemonConfiguration``). Usage errors are ``UsageError`` values; `persistd` prints them
/// with the usage text and exits with status 2.
public struct DaemonArguments: Sendable, Equatable {
    /// What `persistd` was asked to do.
    public enum Mode: Sendable, Equatable {
        /// Print the usage text and exit (`--help`, `-h`).
        case help
        /// Load and validate the model, print its normalized JSON and exit (`--check`).
        case checkModel
        /// Run the daemon.
        case serve
    }

    /// A command line `persistd` does not understand.
    public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, in one sentence.
        public var message: String
        /// Creates a usage error.
        public init(_ message: String) { self.message = message }
        /// The message.
        public var description: String { message }
    }

    /// The settings a command line, config file or environment may give, by name.
    public static let settingNames = [
        "model", "store", "store-type", "socket", "socket-mode", "max-connections", "max-line",
        "max-queued", "idle-timeout", "max-connections-per-user", "max-queued-bytes", "line-timeout",
        "write-timeout", "query-timeout", "allow-uids", "allow-users", "allow-groups", "read-only-users",
        "read-only-groups", "log-level", "history", "busy-timeout", "max-events", "event-loops", "busy-poll",
        "commit-delay",
    ]

    /// What to do.
    public var mode: Mode = .serve
    /// The settings given on the command line, by name (`"socket": "/run/persistd.sock"`).
    public var settings: [String: String] = [:]
    /// The config file given with `--config FILE`.
    public var configPath: String?

    /// The model file given with `--model PATH` (`.json`, `.xcdatamodel` or `.xcdatamodeld`).
    public var modelPath: String? {
        get { settings["model"] }
        set { settings["model"] = newValue }
    }

    /// Creates arguments with the defaults: serve, no settings.
    public init() {}

    /// The usage text printed by `--help` and after a usage error.
    public static let usage = """
        usage: persistd --model PATH [--store PATH] [--store-type TYPE] [--socket PATH] [--config FILE] [options]
               persistd --model PATH --check
               persistd --help

        Serves a PersistKit store over a Unix socket: newline-delimited JSON, protocol v1
        (see protocol/README.md). SIGTERM or SIGINT stops it gracefully;
        SIGHUP reloads the config file (limits, access, log level). Under systemd it serves
        the sockets it is passed (LISTEN_FDS), notifies, pings the watchdog and logs to the journal.

        options:
          --model PATH           the managed object model: a .json model file, an Xcode
                                 .xcdatamodel directory or an .xcdatamodeld bundle (required)
          --store PATH           the store file (default ./.persistd/store.sqlite)
          --store-type TYPE      sqlite, xml, binary or memory (default sqlite)
          --socket PATH          the Unix socket to listen on (default ./.persistd/persistd.sock)
          --socket-mode MODE     the socket file's permissions, octal (default 0660)
          --max-connections N    connections open at once (default 256)
          --max-line BYTES       the longest request line (default 1048576)
          --max-queued N         requests waiting per connection (default 128)
          --idle-timeout SECONDS close connections idle this long; 0 for never (default 300)
          --max-connections-per-user N  connections open at once by one user (default 64)
          --max-queued-bytes BYTES  replies buffered for a client before reading stops (default 4194304)
          --line-timeout SECONDS time to finish a line once started; 0 for never (default 30)
          --write-timeout SECONDS close a client that leaves replies unread this long; 0 for never (default 60)
          --query-timeout SECONDS interrupt a fetch or count running this long; 0 for never (default 10)
          --event-loops N        threads serving connections (default: half the processors, 1 to 4)
          --busy-poll MICROSECONDS  how long a loop polls for the next request after a reply
                                 before it sleeps; 0 to sleep at once (default 50)
          --allow-users LIST     users (names or IDs, `*` for all) with full access; root
                                 and the daemon's own user always have it, others are refused
                                 unless listed (--allow-uids is an older name)
          --allow-groups LIST    groups whose members have full access
          --read-only-users LIST users who may only read (hello, model, get, fetch, count,
                                 subscribe, unsubscribe, history, ping); wins over --allow-*
          --read-only-groups LIST groups whose members may only read
          --log-level LEVEL      error, warning, notice, info (default) or debug (every request)
          --history on|off       keep persistent history and notice other processes' commits
                                 to the store (subscribe, history; default on, SQLite only)
          --busy-timeout SECONDS how long a save waits for another process's write lock
                                 before failing with `busy` (default 5)
          --commit-delay MICROSECONDS  how long a group commit waits for saves already
                                 on their way before it commits without them (default 0)
          --max-events N         subscription events queued unread per connection before
                                 they are dropped for one `overflow` event (default 1024)
          --config FILE          read settings from FILE: lines of `name = value` with the
                                 names above (without --), `#` starts a comment
          --check                load and validate the model, print it as normalized JSON
                                 and exit (status 0 if valid, 1 if not)
          -h, --help             print this help and exit

        Every setting may also come from the environment: PERSISTD_MODEL, PERSISTD_STORE,
        PERSISTD_STORE_TYPE, PERSISTD_SOCKET, PERSISTD_SOCKET_MODE, PERSISTD_MAX_CONNECTIONS,
        PERSISTD_MAX_LINE, PERSISTD_MAX_QUEUED, PERSISTD_IDLE_TIMEOUT, PERSISTD_ALLOW_USERS, …,
        PERSISTD_LOG_LEVEL, and PERSISTD_CONFIG for the config file. The command line wins over the environment,
        which wins over the config file.

        """

    /// Parses the arguments after the program name.
    ///
    /// Accepts `--name VALUE` and `--name=VALUE`. `--help` wins over everything else.
    /// - Throws: ``UsageError`` for an unknown option, a missing value, or `--check`
    ///   without `--model`.
    public static func parse(_ arguments: [String]) throws(UsageError) -> DaemonArguments {
        var result = DaemonArguments()
        var check = false
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" {
                result.mode = .help
                return result
            }
            if argument == "--check" {
                check = true
                continue
            }
            guard argument.hasPrefix("--") else { throw UsageError("unexpected argument \(argument)") }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard name == "config" || settingNames.contains(name) else { throw UsageError("unknown option \(argument)") }
            if value == nil {
                guard index < arguments.endIndex else { throw UsageError("option --\(name) needs \(name == "model" || name == "store" || name == "socket" || name == "config" ? "a path" : "a value")") }
                value = arguments[index]
                index += 1
            }
            guard let value, !value.isEmpty else {
                throw UsageError("option --\(name) needs \(name == "model" || name == "store" || name == "socket" || name == "config" ? "a path" : "a value")")
            }
            if name == "config" { result.configPath = value } else { result.settings[name] = value }
        }
        if check {
            guard result.modelPath != nil else { throw UsageError("--check needs --model PATH") }
            result.mode = .checkModel
        }
        return result
    }
}
