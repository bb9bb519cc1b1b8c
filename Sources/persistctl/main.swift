import Foundation
import PersistServer
#if canImport(Glibc)
import Glibc
#endif

// Thin entry point: persistctl's logic lives in PersistServer, where tests reach it.

exit(Persistctl.run(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment,
                    output: { FileHandle.standardOutput.write(Data($0.utf8)) },
                    errorOutput: { FileHandle.standardError.write(Data($0.utf8)) },
                    isTerminal: isatty(STDOUT_FILENO) == 1))
