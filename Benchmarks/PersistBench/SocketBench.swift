import Foundation
import PersistKit
#if canImport(Glibc)
import Glibc
#endif

/// Workloads 7 and 8's daemon part: persistd, redis-server and an echo server on Unix
/// sockets in a temporary directory, started and stopped here, every run bounded in time.
enum SocketBench {
    /// The executables built next to this one (`swift build -c release` puts them together).
    static func sibling(_ name: String) -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent(name).path
    }

    /// The first of `names` found on `PATH` (or in the sbin directories Debian installs servers in).
    static func which(_ name: String) -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/usr/bin:/sbin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The bench's model: `Item` with ten non-optional Integer 64 attributes.
    static let modelJSON = """
        {"formatVersion":1,"entities":[{"name":"Item","attributes":[\
        \((0..<10).map { "{\"name\":\"i\($0)\",\"type\":\"integer64\",\"optional\":false}" }.joined(separator: ","))]}]}
        """

    static let itemValues = "{" + (0..<10).map { "\"i\($0)\":\($0)" }.joined(separator: ",") + "}"

    /// A child process, killed (SIGKILL after SIGTERM) if still running when stopped.
    final class Child {
        let process = Process()
        let output = Pipe()

        init(_ executable: String, _ arguments: [String], captureOutput: Bool = true) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = captureOutput ? output : FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        var pid: Int32 { process.processIdentifier }

        /// Waits up to `seconds`; kills the child if it is still running. Returns its standard output.
        @discardableResult
        func wait(seconds: Double) -> String {
            let deadline = Date().addingTimeInterval(seconds)
            let data = Locked(Data())
            let handle = output.fileHandleForReading
            let reader = Thread { data.withLock { $0 = handle.readDataToEndOfFile() } }
            reader.start()
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { stop() }
            process.waitUntilExit()
            // The reader finishes once the child's end of the pipe is closed.
            var text = ""
            for _ in 0..<200 {
                text = data.withLock { String(decoding: $0, as: UTF8.self) }
                if !text.isEmpty || !reader.isExecuting { break }
                usleep(10_000)
            }
            return text
        }

        func stop() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGTERM)
            for _ in 0..<300 where process.isRunning { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    /// Waits until something accepts connections at `path` (up to 10 s).
    static func waitForSocket(_ path: String) throws {
        for _ in 0..<1000 {
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in path.utf8.enumerated() where index < buffer.count - 1 { buffer[index] = byte }
            }
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            close(descriptor)
            if status == 0 { return }
            usleep(10_000)
        }
        throw BenchError("nothing answers on \(path)")
    }

    /// Raises the descriptor limit to its hard maximum (1,000 idle connections need more than 1,024).
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The resident set of process `pid` in KiB (`VmRSS`), or its peak (`VmHWM`).
    static func residentKiB(of pid: Int32, peak: Bool = false) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        let key = peak ? "VmHWM:" : "VmRSS:"
        for line in status.split(separator: "\n") where line.hasPrefix(key) {
            return line.split(separator: " ").compactMap { Double($0) }.first ?? 0
        }
        return 0
    }

    /// One load run's figures.
    struct Load {
        var perSecond: Double
        var p50: Double
        var p99: Double
    }

    /// Runs `persistctl bench` with `arguments` and parses its JSON report.
    static func persistctlBench(_ arguments: [String], seconds: Double) throws -> Load {
        let child = try Child(sibling("persistctl"), ["bench", "--json", "--seconds", String(seconds)] + arguments)
        let text = child.wait(seconds: seconds + 60)
        guard let data = text.split(separator: "\n").last.map({ Data($0.utf8) }),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let rate = object["units_per_second"] as? Double, let p50 = object["p50_ms"] as? Double,
              let p99 = object["p99_ms"] as? Double else {
            throw BenchError("persistctl bench \(arguments.joined(separator: " ")) gave no report: \(text)")
        }
        if let errors = object["errors"] as? Int, errors > 0 { throw BenchError("persistctl bench \(arguments): \(errors) errors") }
        return Load(perSecond: rate, p50: p50, p99: p99)
    }

    /// Runs `redis-benchmark` for one test (`get` or `set`) and parses its CSV line.
    static func redisBenchmark(_ tool: String, socket: String, test: String, clients: Int, pipeline: Int, requests: Int) throws -> Load {
        let child = try Child(tool, ["-s", socket, "-t", test, "-c", String(clients), "-P", String(pipeline),
                                     "-n", String(requests), "-r", "1000", "-q", "--csv"])
        let text = child.wait(seconds: 120)
        // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
        for line in text.split(separator: "\n") where line.hasPrefix("\"\(test.uppercased())\"") {
            let fields = line.split(separator: ",").map { Double($0.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
            guard fields.count >= 7, let rps = fields[1] else { break }
            return Load(perSecond: rps, p50: fields[4] ?? 0, p99: fields[6] ?? 0)
        }
        throw BenchError("redis-benchmark gave no \(test) line: \(text)")
    }
}
