import Foundation
import PersistServer

// Thin dispatcher: each subcommand is a pure function in PersistServer from its arguments to a
// CommandOutput; this file only picks one and writes its output.

let subcommands: [String: ([String]) -> CommandOutput] = [
    PredicateCommand.name: PredicateCommand.run,
    CodegenCommand.name: CodegenCommand.run,
]

let usage = "usage: persistctl <subcommand> [arguments]\nsubcommands: \(subcommands.keys.sorted().joined(separator: ", "))\n"

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let command = subcommands[name] else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
let output = command(Array(arguments.dropFirst()))
FileHandle.standardOutput.write(Data(output.standardOutput.utf8))
FileHandle.standardError.write(Data(output.standardError.utf8))
exit(output.exitCode)
