/// The command line of `persistctl`, parsed: global options, a command, its words and options.
///
/// `persistctl [--socket PATH] [--json|--table] <command> [words…] [--option value…] [--flag…]`
public struct ControlArguments: Sendable, Equatable {
    /// The socket path given with `--socket`.
    public var socketPath: String?
    /// `--json` (true), `--table` (false), or neither (nil: a table on a terminal, JSON otherwise).
    public var json: Bool?
    /// The command: `insert`, `fetch`, `raw`, ….
    public var command: String = ""
    /// The words after the command that are not options.
    public var words: [String] = []
    /// Options with values, in order (`--sort name --sort abv:desc`).
    public var options: [(String, String)] = []
    /// Options without values (`--save`, `--ids`).
    public var flags: Set<String> = []

    /// Options of commands that take no value.
    static let flagNames: Set<String> = ["save", "ids", "count", "dictionaries", "distinct", "help"]

    /// Creates empty arguments.
    public init() {}

    /// The values of option `name`, in order.
    public func values(_ name: String) -> [String] { options.filter { $0.0 == name }.map(\.1) }

    /// The last value of option `name`.
    public func value(_ name: String) -> String? { values(name).last }

    /// Parses the arguments after the program name.
    public static func parse(_ arguments: [String]) throws(ControlError) -> ControlArguments {
        var result = ControlArguments()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument.hasPrefix("--") && argument.count > 2 {
                var name = String(argument.dropFirst(2))
                var value: String?
                if let equals = name.firstIndex(of: "=") {
                    value = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                switch name {
                case "json": result.json = true; continue
                case "table": result.json = false; continue
                default: break
                }
                if flagNames.contains(name) && value == nil {
                    result.flags.insert(name)
                    continue
                }
                if value == nil {
                    guard index < arguments.count else { throw ControlError.usage("option --\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                if name == "socket" { result.socketPath = value } else { result.options.append((name, value ?? "")) }
            } else if argument == "-h" {
                result.flags.insert("help")
            } else if result.command.isEmpty {
                result.command = argument
            } else {
                result.words.append(argument)
            }
        }
        return result
    }

    /// Equality on every field (tuples are not `Equatable`).
    public static func == (lhs: ControlArguments, rhs: ControlArguments) -> Bool {
        lhs.socketPath == rhs.socketPath && lhs.json == rhs.json && lhs.command == rhs.command && lhs.words == rhs.words
            && lhs.options.map { [$0.0, $0.1] } == rhs.options.map { [$0.0, $0.1] } && lhs.flags == rhs.flags
    }
}
