import Foundation
import PersistServer
#if canImport(Glibc)
import Glibc
#endif

// Thin dispatcher. Subcommands that work offline are pure functions in PersistServer from
// their arguments to a CommandOutput; every other command talks to the daemon through
// Persistctl.run, also in PersistServer, where tests reach it.

let offline: [String: ([String]) -> CommandOutput] = [
    PredicateCommand.name: PredicateCommand.run,
    CodegenCommand.name: CodegenCommand.run,
    MigrateCommand.name: MigrateCommand.run,
    BenchCommand.name: BenchCommand.run,
]

let arguments = Array(CommandLine.arguments.dropFirst())
if let name = arguments.first, let command = offline[name] {
    let output = command(Array(arguments.dropFirst()))
    FileHandle.standardOutput.write(Data(output.standardOutput.utf8))
    FileHandle.standardError.write(Data(output.standardError.utf8))
    exit(output.exitCode)
}

exit(Persistctl.run(arguments, environment: ProcessInfo.processInfo.environment,
                    output: { FileHandle.standardOutput.write(Data($0.utf8)) },
                    errorOutput: { FileHandle.standardError.write(Data($0.utf8)) },
                    isTerminal: isatty(STDOUT_FILENO) == 1))
