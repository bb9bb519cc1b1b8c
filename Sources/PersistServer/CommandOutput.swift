/// What a command-line subcommand prints and its exit status: commands are pure functions of
/// their arguments to this, so tests can run them without a process, and the executables only
/// write it out.
public struct CommandOutput: Sendable, Equatable {
    /// 0 on success, 1 when the input was rejected, 2 for a usage error.
    public var exitCode: Int32
    /// What goes to standard output.
    public var standardOutput: String
    /// What goes to standard error.
    public var standardError: String

    /// Creates an output.
    public init(exitCode: Int32, standardOutput: String = "", standardError: String = "") {
        self.exitCode = exitCode
        self.standardOutput = standardOutput
        self.standardError = standardError
    }
}
