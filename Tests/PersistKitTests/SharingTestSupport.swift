import Foundation
@testable import PersistKit

/// Helpers for the tests of a store shared by several processes: the `PersistStress`
/// executable (found in `$PERSIST_BIN_DIR`, else `<package root>/.build/debug`), its model,
/// and stores in temporary directories.
enum SharingTestSupport {
    struct RunError: Error, CustomStringConvertible {
        var description: String
    }

    /// The `PersistStress` executable.
    static func stressBinary(file: String = #filePath) throws -> URL {
        let directory: URL
        if let dir = ProcessInfo.processInfo.environment["PERSIST_BIN_DIR"], !dir.isEmpty {
            directory = URL(fileURLWithPath: dir, isDirectory: true)
        } else {
            let root = URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            directory = root.appendingPathComponent(".build/debug", isDirectory: true)
        }
        let binary = directory.appendingPathComponent("PersistStress")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw RunError(description: "PersistStress not found at \(binary.path): run `swift build` first or set PERSIST_BIN_DIR")
        }
        return binary
    }

    /// A started `PersistStress` process, with its output collected.
    final class Child: @unchecked Sendable {
        // @unchecked Sendable: `output` is written by the pipe's reader thread and read after
        // `wait`, both under `lock`.
        let process = Process()
        private let pipe = Pipe()
        private let errors = Pipe()
        private let lock = NSLock()
        private var output = Data()
        private var errorOutput = Data()

        init(_ arguments: [String]) throws {
            process.executableURL = try SharingTestSupport.stressBinary()
            process.arguments = arguments
            process.standardOutput = pipe
            process.standardError = errors
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self else { return }
                self.lock.lock(); self.output.append(data); self.lock.unlock()
            }
            errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self else { return }
                self.lock.lock(); self.errorOutput.append(data); self.lock.unlock()
            }
            try process.run()
        }

        /// Waits at most `timeout` seconds (then kills the process and throws), and returns
        /// the JSON object the process printed last.
        func wait(timeout: Double = 20) throws -> [String: Any] {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(2_000) }
            if process.isRunning {
                process.terminate()
                throw RunError(description: "PersistStress \(process.arguments ?? []) did not finish within \(timeout) s")
            }
            process.waitUntilExit()
            // Let the readers drain the pipes.
            usleep(20_000)
            pipe.fileHandleForReading.readabilityHandler = nil
            errors.fileHandleForReading.readabilityHandler = nil
            let rest = pipe.fileHandleForReading.readDataToEndOfFile()
            lock.lock()
            output.append(rest)
            let text = String(decoding: output, as: UTF8.self)
            let errorText = String(decoding: errorOutput, as: UTF8.self)
            lock.unlock()
            guard process.terminationStatus == 0 else {
                throw RunError(description: "PersistStress \(process.arguments ?? []) exited with \(process.terminationStatus): \(errorText)")
            }
            guard let line = text.split(separator: "\n").last,
                  let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw RunError(description: "PersistStress printed no JSON: \(text) \(errorText)")
            }
            return object
        }
    }

    /// Runs `PersistStress` to its end and returns its JSON output.
    @discardableResult
    static func run(_ arguments: [String], timeout: Double = 20) throws -> [String: Any] {
        try Child(arguments).wait(timeout: timeout)
    }

    /// The model `PersistStress` uses, read from `PersistStress model`.
    static func model() throws -> ManagedObjectModel {
        let process = Process()
        process.executableURL = try stressBinary()
        process.arguments = ["model"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try ManagedObjectModel(json: data, sourceURL: nil)
    }

    /// A new store path in a new temporary directory.
    static func storePath() throws -> String {
        try ContextTestModel.temporaryDirectory().appendingPathComponent("shared.sqlite").path
    }

    /// A coordinator on the store at `path`.
    static func coordinator(_ path: String, model: ManagedObjectModel, history: Bool = true, remote: Bool = false,
                            busyTimeout: Double = 5, commitDelay: Double? = nil) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        var options = StoreOptions(persistentHistoryTracking: history, busyTimeout: busyTimeout, remoteChangeNotificationPost: remote)
        if let commitDelay { options.commitDelay = commitDelay }
        try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: path), options: options)
        return coordinator
    }

    static func counter(_ name: String, in context: ManagedObjectContext) throws -> ManagedObject? {
        let request = FetchRequest<ManagedObject>(entityName: "Counter")
        request.predicate = .equal("name", .string(name))
        return try context.fetch(request).first
    }

    /// Rows of `sql` read with a separate connection, as text.
    static func query(_ path: String, _ sql: String) throws -> [[String]] {
        try SQLiteTestSupport.query(URL(fileURLWithPath: path), sql)
    }
}
