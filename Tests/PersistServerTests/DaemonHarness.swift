import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real `persistd` process on a temporary socket and store, for integration tests.
///
/// ```swift
/// let daemon = try DaemonHarness.start()
/// defer { daemon.stop() }
/// let client = try daemon.connect()
/// let reply = try client.request(["op": "ping"])
/// ```
final class DaemonHarness: @unchecked Sendable {
    // @unchecked Sendable: `process` is set once in init; the rest is immutable.
    let directory: URL
    let socketPath: String
    let storePath: String
    let process: Process
    /// Whether the harness made `directory` and so removes it when done (a directory passed in
    /// belongs to the test, which may start another daemon on the same store).
    let ownsDirectory: Bool
    private let errorPipe = Pipe()

    static var packageRoot: URL { ModelCheckTests.packageRoot }
    static var modelPath: String { packageRoot.appendingPathComponent("Examples/Beers.model.json").path }

    /// A new temporary directory for one test.
    static func temporaryDirectory() throws -> URL {
        let directory = URL(fileURLWithPath: "/tmp/persistd-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Starts `persistd` with `extra` arguments and waits (up to 10 s) until it answers.
    /// A `directory` passed in is left in place when the harness ends, unless `removesDirectory`.
    /// A second daemon on the same store: the same `directory`, another `socketName`.
    static func start(_ extra: [String] = [], model: String? = nil, directory: URL? = nil,
                      removesDirectory: Bool = false, socketName: String = "p.sock") throws -> DaemonHarness {
        let harness = try DaemonHarness(extra, model: model ?? modelPath, directory: directory ?? temporaryDirectory(),
                                        ownsDirectory: directory == nil || removesDirectory, socketName: socketName)
        try harness.waitUntilReady()
        return harness
    }

    private init(_ extra: [String], model: String, directory: URL, ownsDirectory: Bool, socketName: String) throws {
        self.directory = directory
        self.ownsDirectory = ownsDirectory
        self.socketPath = directory.appendingPathComponent(socketName).path
        self.storePath = directory.appendingPathComponent("store.sqlite").path
        process = Process()
        process.executableURL = ModelCheckTests.binary
        process.arguments = ["--model", model, "--store", storePath, "--socket", socketPath] + extra
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    private func waitUntilReady() throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if !process.isRunning {
                throw HarnessError("persistd exited with \(process.terminationStatus): \(standardError)")
            }
            if let client = try? WireClient(path: socketPath) {
                client.close()
                return
            }
            usleep(20_000)
        }
        throw HarnessError("persistd did not start within 10 s")
    }

    /// A new client connection.
    func connect() throws -> WireClient { try WireClient(path: socketPath) }

    /// Sends SIGTERM and waits (up to 15 s) for the exit status, which must be 0.
    @discardableResult
    func stop(signal number: Int32 = SIGTERM) -> Int32 {
        let wasRunning = process.isRunning
        if wasRunning { kill(process.processIdentifier, number) }
        let status = waitForExit()
        if wasRunning && status != 0 { Issue.record("persistd exited with \(status) after signal \(number)") }
        return status
    }

    /// Waits (up to 15 s) for the process to exit; kills it if it does not.
    func waitForExit() -> Int32 {
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        return process.terminationStatus
    }

    /// What the daemon wrote to stderr (once it has exited).
    var standardError: String {
        String(decoding: errorPipe.fileHandleForReading.availableData, as: UTF8.self)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if ownsDirectory { try? FileManager.default.removeItem(at: directory) }
    }
}

/// A failure of the test harness itself.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
