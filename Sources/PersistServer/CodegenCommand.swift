import Foundation
import PersistCodegen

/// `persistctl codegen --model PATH --out DIR [--access public|internal] [--registry NAME]
/// [--single-file NAME]`: writes typed ``ManagedObject`` subclasses for a model, as mogenerator
/// does for Core Data (docs/codegen.md).
///
/// Per entity, a machine file `_Beer.swift` (rewritten whenever its text changes) and a human
/// file `Beer.swift` (written only when missing), and the registry `_BeersClasses.swift`. One
/// line per file on standard output:
///
/// ```text
/// wrote Out/_Beer.swift
/// kept Out/Beer.swift (exists; not overwritten)
/// unchanged Out/_BeersClasses.swift
/// ```
///
/// Exit status 0 on success; 1 when the model does not load (the model error on standard
/// error: `persistctl: <file>: entity X, property y: message`) or a file cannot be written;
/// 2 for a usage error.
public enum CodegenCommand {
    /// The subcommand's name.
    public static let name = "codegen"

    /// The usage text.
    public static let usage = "usage: persistctl codegen --model PATH --out DIR [--access public|internal] [--registry NAME] [--single-file NAME]\n"
        + CodegenArguments.options

    /// Runs the command with the arguments after `codegen`.
    public static func run(_ arguments: [String]) -> CommandOutput {
        if arguments.contains("--help") || arguments.contains("-h") {
            return CommandOutput(exitCode: 0, standardOutput: usage)
        }
        let run: CodegenRun
        do {
            run = try CodegenArguments.parse(arguments)
        } catch {
            return CommandOutput(exitCode: 2, standardError: "persistctl codegen: \(error.message)\n" + usage)
        }
        do {
            let actions = try run.run()
            return CommandOutput(exitCode: 0, standardOutput: actions.map { $0.line + "\n" }.joined())
        } catch {
            return CommandOutput(exitCode: 1, standardError: "persistctl: \(error)\n")
        }
    }
}
