import Foundation

/// Runs a fuzz target's entry point over files, without libFuzzer: what `make test` does with
/// each target's seed corpus (`Fuzz/Corpus/<target>/`), and how a crash file libFuzzer wrote is
/// reproduced in a normal build.
///
/// A failing input traps (the entry points check their own invariants with `precondition`), so
/// the process dies with a non-zero status; `FUZZ_REPLAY_VERBOSE=1` names each input first.
public enum FuzzReplay {
    /// The seed corpus directory of `target` in the source tree.
    public static func corpusDirectory(of target: String) -> URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Support
            .deletingLastPathComponent()  // Fuzz
            .appendingPathComponent("Corpus")
            .appendingPathComponent(target)
    }

    /// Replays every file named on the command line (a directory stands for the files in it),
    /// or the seed corpus of `target` when none is; exits with status 1 when there is nothing
    /// to replay or a path cannot be read, with 0 after every input passed.
    ///
    /// - Parameters:
    ///   - target: The fuzz target's name, for messages and the default corpus.
    ///   - body: The target's entry point (the function behind `LLVMFuzzerTestOneInput`).
    public static func main(target: String, body: ([UInt8]) -> Void) -> Never {
        var paths = Array(CommandLine.arguments.dropFirst())
        if paths.isEmpty { paths = [corpusDirectory(of: target).path] }
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                fail("\(target): no such file or directory: \(path)")
            }
            if isDirectory.boolValue {
                let names: [String]
                do {
                    names = try FileManager.default.contentsOfDirectory(atPath: path)
                } catch {
                    fail("\(target): cannot list \(path): \(error.localizedDescription)")
                }
                files += names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
            } else {
                files.append(path)
            }
        }
        guard !files.isEmpty else { fail("\(target): no inputs in \(paths.joined(separator: " "))") }
        // FUZZ_REPLAY_VERBOSE=1 names each input before running it, so the last name written
        // before a trap is the failing input.
        let verbose = ProcessInfo.processInfo.environment["FUZZ_REPLAY_VERBOSE"] != nil
        let started = Date()
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { fail("\(target): cannot read \(file)") }
            if verbose { FileHandle.standardError.write(Data("replaying \(file)\n".utf8)) }
            body(Array(data))
        }
        print("\(target): \(files.count) inputs replayed in \(String(format: "%.2f", Date().timeIntervalSince(started))) s, none failed")
        exit(0)
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(1)
    }
}
