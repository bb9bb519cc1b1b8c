/// The command line of `persistd`, parsed.
///
/// A small value type so that later options (socket path, store directory…) are added as
/// new properties and new cases in ``parse(_:)``. Usage errors are ``UsageError`` values;
/// `persistd` prints them with the usage text and exits with status 2.
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

    /// What to do.
    public var mode: Mode = .serve
    /// The model file given with `--model PATH` (`.json`, `.xcdatamodel` or `.xcdatamodeld`).
    public var modelPath: String?

    /// Creates arguments with the defaults: serve, no model.
    public init() {}

    /// The usage text printed by `--help` and after a usage error.
    public static let usage = """
        usage: persistd --model PATH [--check]
               persistd --help

        options:
          --model PATH   the managed object model: a .json model file, an Xcode
                         .xcdatamodel directory or an .xcdatamodeld bundle
          --check        load and validate the model, print it as normalized JSON
                         and exit (status 0 if valid, 1 if not)
          -h, --help     print this help and exit

        """

    /// Parses the arguments after the program name.
    ///
    /// Accepts `--model PATH` and `--model=PATH`. `--help` wins over everything else.
    /// - Throws: ``UsageError`` for an unknown option, a missing value, or `--check`
    ///   without `--model`.
    public static func parse(_ arguments: [String]) throws(UsageError) -> DaemonArguments {
        var result = DaemonArguments()
        var check = false
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "-h", "--help":
                result.mode = .help
                return result
            case "--check":
                check = true
            case "--model":
                guard index < arguments.endIndex else { throw UsageError("option --model needs a path") }
                result.modelPath = arguments[index]
                index += 1
            case let option where option.hasPrefix("--model="):
                result.modelPath = String(option.dropFirst("--model=".count))
            default:
                throw UsageError(argument.hasPrefix("-") ? "unknown option \(argument)" : "unexpected argument \(argument)")
            }
        }
        if let path = result.modelPath, path.isEmpty { throw UsageError("option --model needs a path") }
        if check {
            guard result.modelPath != nil else { throw UsageError("--check needs --model PATH") }
            result.mode = .checkModel
        }
        return result
    }
}
