import Foundation
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// Starting, refusing to start, and stopping.
@Suite("persistd lifecycle", .timeLimit(.minutes(1)))
struct DaemonLifecycleTests {
    @Test("the socket is created with mode 0660")
    func socketMode() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        var info = stat()
        #expect(lstat(daemon.socketPath, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o660)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
    }

    @Test("a second daemon refuses to steal a live socket, and the first keeps serving")
    func noStealing() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let second = Process()
        second.executableURL = ModelCheckTests.binary
        second.arguments = ["--model", DaemonHarness.modelPath, "--store", daemon.directory.appendingPathComponent("other.sqlite").path,
                            "--socket", daemon.socketPath]
        let errors = Pipe()
        second.standardError = errors
        try second.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        second.waitUntilExit()
        #expect(second.terminationStatus == 1)
        #expect(message == "persistd: socket path \(daemon.socketPath): another server is listening on it (a live persistd?); not replacing it\n")
        #expect(try daemon.connect().result(["op": "ping"]) == ["pong": true])
        #expect(!FileManager.default.fileExists(atPath: daemon.directory.appendingPathComponent("other.sqlite").path))
    }

    @Test("a stale socket file is replaced")
    func staleSocket() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("p.sock").path
        // A socket file nobody listens on: bound, then closed.
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(descriptor)
        #expect(bound == 0)
        #expect(FileManager.default.fileExists(atPath: path))
        let daemon = try DaemonHarness.start(directory: directory)
        defer { daemon.stop() }
        #expect(try daemon.connect().result(["op": "ping"]) == ["pong": true])
    }

    @Test("a path that is not a socket is not replaced")
    func notASocket() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("p.sock").path
        try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
        let result = try ModelCheckTests.run(["--model", DaemonHarness.modelPath, "--store", directory.appendingPathComponent("s.sqlite").path,
                                              "--socket", path])
        #expect(result.status == 1)
        #expect(result.err == "persistd: socket path \(path): the file exists and is not a socket; remove it or choose another path\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
    }

    /// Sends an `insert` of a Person named `name` and a `save` in one write (one unit), and
    /// returns both replies, expected to be successes.
    static func sendUnit(_ client: WireClient, name: String, index: Int) throws -> [JSON] {
        let unit = #"{"id":"i\#(index)","op":"insert","entity":"Person","values":{"name":"\#(name)"}}"# + "\n"
            + #"{"id":"s\#(index)","op":"save"}"# + "\n"
        try client.send(raw: Array(unit.utf8))
        let replies = try (0..<2).map { _ in try #require(try client.readLine()) }
        #expect(replies.map { $0["ok"] } == [true, true])
        return replies
    }

    /// The numbers in the daemon's first log line that contains `marker`.
    static func numbers(inLogLine marker: String, of daemon: DaemonHarness) -> [Int] {
        let line = daemon.standardError.split(separator: "\n").first { $0.contains(marker) }
        return (line ?? "").split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
    }

    /// Three saves sent alone, then five `insert`+`save` units, each sent as one write: a lone
    /// save runs on the context's queue and is queued for the committer, while a unit on a
    /// loop with no other client starts on the loop's thread and, the group commit being idle,
    /// commits there (counted as committed on the saving thread). The count is bounded rather
    /// than exact: a unit whose two lines arrive in two reads is not a unit.
    @Test("on SIGTERM the group commit's counters are logged: writes, transactions, largest group, failures, led by the saving thread")
    func groupCommitCountersLogged() throws {
        let daemon = try DaemonHarness.start()
        let client = try daemon.connect()
        for index in 0..<3 {
            _ = try client.result(["op": "insert", "entity": "Person", "values": ["name": .string("p\(index)")]])
            #expect(try client.result(["op": "save"]) == ["inserted": 1, "updated": 0, "deleted": 0])
        }
        for index in 0..<5 {
            let replies = try Self.sendUnit(client, name: "u\(index)", index: index)
            #expect(replies[1]["result"] == ["inserted": 1, "updated": 0, "deleted": 0])
        }
        #expect(daemon.stop() == 0)
        let numbers = Self.numbers(inLogLine: "group commit: ", of: daemon)
        // "group commit: N writes in M transactions (largest L, F failed, K committed on the saving thread)"
        #expect(numbers.count == 5, "\(daemon.standardError)")
        if numbers.count == 5 {
            #expect(numbers[0] >= 8)
            #expect(numbers[1] >= 1 && numbers[1] <= numbers[0])
            #expect(numbers[2] >= 1 && numbers[2] <= numbers[0])
            #expect(numbers[3] == 0)
            #expect(numbers[4] >= 1 && numbers[4] <= 5, "\(daemon.standardError)")
        }
    }

    /// Each save with persistent history writes a few WAL frames (its row's table, the
    /// history's two tables and their indexes), so 600 lone units take the WAL past
    /// `wal_autocheckpoint`'s 1,000 frames: the checkpoints run on the checkpointer's thread.
    @Test("on SIGTERM the WAL checkpoints are logged: run in the background, none by a committing thread, restarts")
    func checkpointCountersLogged() throws {
        let daemon = try DaemonHarness.start()
        let client = try daemon.connect()
        for index in 0..<600 { _ = try Self.sendUnit(client, name: "c\(index)", index: index) }
        #expect(daemon.stop() == 0)
        let numbers = Self.numbers(inLogLine: "WAL checkpoints: ", of: daemon)
        // "WAL checkpoints: B in the background, K on the committing thread; the WAL restarted R times"
        #expect(numbers.count == 3, "\(daemon.standardError)")
        if numbers.count == 3 {
            #expect(numbers[0] >= 1, "\(daemon.standardError)")
            // 600 saves stay well below the limit of 4,000 frames.
            #expect(numbers[1] == 0, "\(daemon.standardError)")
            // A restart needs a checkpoint that finished between two commits: not guaranteed.
            #expect(numbers[2] <= numbers[0], "\(daemon.standardError)")
        }
    }

    @Test("SIGTERM with requests in flight: each is answered or not started, acknowledged saves are on disk, exit 0")
    func sigtermInFlight() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try DaemonHarness.start(["--max-queued", "1000"], directory: directory)
        let client = try daemon.connect()
        let idle = try daemon.connect()
        #expect(try idle.result(["op": "ping"]) == ["pong": true])
        var lines = ""
        for index in 0..<300 {
            lines += #"{"id":"i\#(index)","op":"insert","entity":"Person","values":{"name":"p\#(index)"}}"# + "\n"
            lines += #"{"id":"s\#(index)","op":"save"}"# + "\n"
        }
        try client.send(raw: Array(lines.utf8))
        // Wait for the first acknowledged save, then stop the daemon while the rest are in flight.
        var replies: [JSON] = []
        while let reply = try client.readLine() {
            replies.append(reply)
            if reply["id"] == "s0" { break }
        }
        kill(daemon.process.processIdentifier, SIGTERM)
        var sawClosing = false
        while let reply = try client.readLine() {
            if reply["event"] == "closing" { sawClosing = true; continue }
            #expect(!sawClosing, "no reply after the closing event")
            replies.append(reply)
        }
        #expect(sawClosing)
        #expect(idle.readLineOrNil()?["event"] == "closing")
        #expect(daemon.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))

        // Replies came in order, every one complete; count the acknowledged saves.
        let expectedOrder = (0..<300).flatMap { ["i\($0)", "s\($0)"] }
        #expect(replies.map { $0.string("id") } == Array(expectedOrder.prefix(replies.count)))
        #expect(replies.filter { $0["ok"] != true }.map(\.encoded) == [])
        let acknowledged = replies.filter { $0.string("id").hasPrefix("s") && $0["ok"] == true }.count
        #expect(acknowledged >= 1)

        // Restart on the same store: every acknowledged save is there, nothing unacknowledged is.
        let restarted = try DaemonHarness.start(directory: directory)
        defer { restarted.stop() }
        #expect(try restarted.connect().result(["op": "count", "entity": "Person"]) == .object(["count": .integer(Int64(acknowledged))]))
    }
}

extension WireClient {
    /// The next line, or `nil` at EOF or on a read error.
    func readLineOrNil() -> JSON? { (try? readLine()) ?? nil }
}
