import Foundation

/// The package's built executables, run as real processes by the tests.
enum BuiltBinary {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The executable `name`: `$PERSIST_BIN_DIR/name`, else `<package root>/.build/debug/name`.
    static func url(_ name: String) -> URL {
        if let directory = ProcessInfo.processInfo.environment["PERSIST_BIN_DIR"], !directory.isEmpty {
            return URL(fileURLWithPath: directory).appendingPathComponent(name)
        }
        return packageRoot.appendingPathComponent(".build/debug/\(name)")
    }

    /// Runs `name` with `arguments` (and `stdin`, and extra `environment` entries); returns its
    /// exit status, stdout and stderr. Both pipes are read to the end before waiting, so a large
    /// output cannot block the child.
    static func run(_ name: String, _ arguments: [String], stdin: String = "",
                    environment: [String: String?] = [:]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = url(name)
        process.arguments = arguments
        if !environment.isEmpty {
            var merged = ProcessInfo.processInfo.environment
            for (key, value) in environment { merged[key] = value }
            process.environment = merged
        }
        let input = Pipe(), out = Pipe(), err = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }
}
