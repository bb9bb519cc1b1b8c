import Foundation
import PersistServer

// Thin entry point: parsing and checking live in PersistServer, where tests reach them.

func write(_ text: String, to handle: FileHandle) {
    handle.write(Data(text.utf8))
}

let arguments: DaemonArguments
do {
    arguments = try DaemonArguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    write("persistd: \(error.message)\n\(DaemonArguments.usage)", to: .standardError)
    exit(2)
}

switch arguments.mode {
case .help:
    write(DaemonArguments.usage, to: .standardOutput)
    exit(0)
case .checkModel:
    let result = ModelCheck.run(modelPath: arguments.modelPath ?? "")
    write(result.standardOutput, to: .standardOutput)
    write(result.standardError, to: .standardError)
    exit(result.exitCode)
case .serve:
    write("persistd: serving is not implemented yet; use --model PATH --check\n", to: .standardError)
    exit(2)
}
