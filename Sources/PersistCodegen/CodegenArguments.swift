/// The command line of `persistctl codegen` and `persist-codegen`:
/// `--model PATH --out DIR [--access public|internal] [--registry NAME] [--single-file NAME]`.
public enum CodegenArguments {
    /// The usage text, without the program name's line.
    public static let options = """
      --model PATH          the model: our JSON format (.json), an Xcode .xcdatamodel or .xcdatamodeld
      --out DIR             where the files go (created if missing)
      --access LEVEL        internal (default) or public: the access level of generated declarations
      --registry NAME       the name of the registry enum (default: from the model file, BeersClasses)
      --single-file NAME    write every class into one machine file NAME and no human files
                            (what the PersistKitCodegen build plugin does)

    """

    /// A command line that does not parse.
    public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, for the user.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// Parses the arguments after the subcommand's name.
    public static func parse(_ arguments: [String]) throws(UsageError) -> CodegenRun {
        var modelPath: String?
        var outputDirectory: String?
        var options = CodeGenerator.Options()
        var layout = CodegenRun.Layout.perEntity
        var index = 0
        func value(after flag: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                throw UsageError(message: "\(flag) needs a value")
            }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--model": modelPath = try value(after: argument)
            case "--out": outputDirectory = try value(after: argument)
            case "--access":
                let text = try value(after: argument)
                guard let level = AccessLevel(rawValue: text) else {
                    throw UsageError(message: "--access takes public or internal, not \(text)")
                }
                options.access = level
            case "--registry":
                let name = try value(after: argument)
                guard SwiftNames.identifier(name) == name, !SwiftNames.keywords.contains(name) else {
                    throw UsageError(message: "--registry takes a Swift identifier, not \(name)")
                }
                options.registryName = name
            case "--single-file":
                let name = try value(after: argument)
                guard !name.contains("/"), name.hasSuffix(".swift") else {
                    throw UsageError(message: "--single-file takes a file name ending in .swift, not \(name)")
                }
                layout = .singleFile(name)
            default:
                throw UsageError(message: argument.hasPrefix("-") ? "unknown option \(argument)" : "unexpected argument \(argument)")
            }
            index += 1
        }
        guard let modelPath else { throw UsageError(message: "--model is required") }
        guard let outputDirectory else { throw UsageError(message: "--out is required") }
        return CodegenRun(modelPath: modelPath, outputDirectory: outputDirectory, options: options, layout: layout)
    }
}
