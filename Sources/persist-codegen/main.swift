import Foundation
import PersistCodegen

// The generator as a stand-alone tool, for the PersistKitCodegen build plugin (which can only
// run executables of this package, not persistctl's subcommands). Same arguments as
// `persistctl codegen`; prints nothing on success, so builds stay quiet.

let usage = "usage: persist-codegen --model PATH --out DIR [--access public|internal] [--registry NAME] [--single-file NAME]\n"
    + CodegenArguments.options

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data(message.utf8))
    exit(status)
}

let run: CodegenRun
do {
    run = try CodegenArguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("persist-codegen: \(error.message)\n" + usage, status: 2)
}
do {
    _ = try run.run()
} catch {
    fail("persist-codegen: \(error)\n", status: 1)
}
