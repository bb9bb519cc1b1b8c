// Links jemalloc as the process's malloc (docs/daemon.md, "Memory allocator"); nothing of it
// is called by name.
import CJemalloc
import Foundation
import PersistServer

// Thin entry point: parsing, checking and serving live in PersistServer, where tests reach them.

let arguments: DaemonArguments
do {
    arguments = try DaemonArguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("persistd: \(error.message)\n\(DaemonArguments.usage)".utf8))
    exit(2)
}

switch arguments.mode {
case .help:
    FileHandle.standardOutput.write(Data(DaemonArguments.usage.utf8))
    exit(0)
case .checkModel:
    let result = ModelCheck.run(modelPath: arguments.modelPath ?? "")
    FileHandle.standardOutput.write(Data(result.standardOutput.utf8))
    FileHandle.standardError.write(Data(result.standardError.utf8))
    exit(result.exitCode)
case .serve:
    exit(Daemon.run(arguments, environment: ProcessInfo.processInfo.environment))
}
