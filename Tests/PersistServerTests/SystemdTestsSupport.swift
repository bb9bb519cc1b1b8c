import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket the test binds, standing in for systemd's `NOTIFY_SOCKET` or journald's
/// `/run/systemd/journal/socket`: it collects what the daemon sends.
final class DatagramListener {
    let path: String
    let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw HarnessError("bind \(path): \(errno)") }
        chmod(path, 0o666)
    }

    /// The next datagram, or `nil` after `timeout` seconds.
    func receive(timeout: Double) -> [UInt8]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count >= 0 ? Array(buffer.prefix(count)) : nil
    }

    /// Datagrams as text until one satisfies `done` or `timeout` seconds pass; all of them, in order.
    func messages(timeout: Double, until done: (String) -> Bool) -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var result: [String] = []
        while Date() < deadline, let datagram = receive(timeout: deadline.timeIntervalSinceNow) {
            let text = String(decoding: datagram, as: UTF8.self)
            result.append(text)
            if done(text) { break }
        }
        return result
    }

    deinit {
        close(descriptor)
        unlink(path)
    }
}

/// Processes for the systemd and access tests: `persistd` with an environment, tools by path.
enum SystemdProcess {
    static var binDirectory: URL { ModelCheckTests.binary.deletingLastPathComponent() }

    /// Starts `executable` with `arguments` and `environment` added to the test's own.
    static func start(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                      standardError: Any? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"] {
            merged[key] = nil
        }
        merged.merge(environment) { _, new in new }
        process.environment = merged
        process.standardOutput = FileHandle.nullDevice
        process.standardError = standardError ?? FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs to the end (killed after `timeout` seconds): exit status, stdout, stderr.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], input: String = "", environment: [String: String] = [:],
                    timeout: Double = 30) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        process.environment = merged
        let out = Pipe(), err = Pipe(), stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        let timer = DispatchSource.makeTimerSource()
        timer.schedule(deadline: .now() + timeout)
        let pid = process.processIdentifier
        timer.setEventHandler { kill(pid, SIGKILL) }
        timer.resume()
        defer { timer.cancel() }
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }

    /// Waits (up to 10 s) until `path` accepts connections, or `process` exits.
    static func waitForSocket(_ path: String, process: Process) throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if !process.isRunning { throw HarnessError("the process exited with \(process.terminationStatus)") }
            if let client = try? WireClient(path: path) { client.close(); return }
            usleep(20_000)
        }
        throw HarnessError("\(path) did not answer within 10 s")
    }

    /// Sends `signal` and waits (up to 15 s) for the exit status; kills on timeout (-1).
    @discardableResult
    static func stop(_ process: Process, signal number: Int32 = SIGTERM) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, number) }
        let deadline = Date().addingTimeInterval(15)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        return process.terminationStatus
    }

    /// A temporary directory others can enter (0755), for sockets a dropped-privilege client reaches.
    static func openDirectory() throws -> URL {
        let directory = try DaemonHarness.temporaryDirectory()
        chmod(directory.path, 0o755)
        return directory
    }
}
