import Foundation
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// `sd_notify` messages, received on a real `NOTIFY_SOCKET` the test listens on.
@Suite("systemd notify and watchdog", .timeLimit(.minutes(1)))
struct SystemdNotifyTests {
    /// A daemon with a notify socket, a 0.4 s watchdog (pings every 0.2 s), a status every
    /// 0.2 s and the test hooks on.
    struct Notified {
        let directory: URL
        let listener: DatagramListener
        let process: Process
        let errors = Pipe()
        var socketPath: String { directory.appendingPathComponent("p.sock").path }
        var storePath: String { directory.appendingPathComponent("store.sqlite").path }

        init(config: String? = nil) throws {
            directory = try DaemonHarness.temporaryDirectory()
            listener = try DatagramListener(path: directory.appendingPathComponent("notify.sock").path)
            var arguments = ["--model", DaemonHarness.modelPath, "--store", directory.appendingPathComponent("store.sqlite").path,
                             "--socket", directory.appendingPathComponent("p.sock").path]
            if let config {
                let file = directory.appendingPathComponent("persistd.conf")
                try Data(config.utf8).write(to: file)
                arguments += ["--config", file.path]
            }
            process = try SystemdProcess.start(ModelCheckTests.binary.path, arguments, environment: [
                "NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "400000", "PERSISTD_STATUS_INTERVAL": "0.2",
                "PERSISTD_TEST_HOOKS": "1", "PERSISTD_TEST_BLOCK_SECONDS": "1.5",
            ], standardError: errors)
        }

        /// Messages until one has `prefix` (up to `timeout` s); the matching one is last.
        func until(_ prefix: String, timeout: Double = 5) -> [String] {
            listener.messages(timeout: timeout) { $0.hasPrefix(prefix) }
        }
    }

    @Test("READY=1 first, once the store is loaded, with a one-line STATUS; then WATCHDOG=1 and STATUS updates; STOPPING=1 on SIGTERM")
    func lifecycle() throws {
        let daemon = try Notified()
        defer { SystemdProcess.stop(daemon.process, signal: SIGKILL); try? FileManager.default.removeItem(at: daemon.directory) }
        let first = try #require(daemon.listener.receive(timeout: 10).map { String(decoding: $0, as: UTF8.self) })
        #expect(first == "READY=1\nSTATUS=0 connections, 0.0 requests/s, no save yet")
        // Ready means served: the store exists and the socket answers at once.
        #expect(FileManager.default.fileExists(atPath: daemon.storePath))
        let client = try WireClient(path: daemon.socketPath)
        #expect(try client.result(["op": "insert", "entity": "Person", "values": ["name": "Ada"]])["object"] != nil)
        _ = try client.result(["op": "save"])
        // Returns as soon as the line comes (about a second after the save); the bound is generous
        // because a loaded machine delays the daemon's timer, not because the line may be late.
        let messages = daemon.listener.messages(timeout: 15) { $0.hasPrefix("STATUS=1 connection,") && $0.contains("last save") }
        #expect(messages.contains("WATCHDOG=1"))
        let status = try #require(messages.last)
        #expect(status.hasPrefix("STATUS=1 connection, ") && status.hasSuffix(" s ago") && !status.contains("\n"), "\(status)")
        client.close()
        kill(daemon.process.processIdentifier, SIGTERM)
        let stopping = daemon.until("STOPPING=1")
        #expect(stopping.last == "STOPPING=1\nSTATUS=shutting down")
        #expect(SystemdProcess.stop(daemon.process) == 0)
    }

    @Test("WATCHDOG=1 stops while the serving loop is blocked, and resumes when it answers")
    func watchdogStops() throws {
        let daemon = try Notified()
        defer { SystemdProcess.stop(daemon.process, signal: SIGKILL); try? FileManager.default.removeItem(at: daemon.directory) }
        _ = daemon.until("READY=1", timeout: 10)
        let before = daemon.listener.messages(timeout: 1) { _ in false }
        #expect(before.filter { $0 == "WATCHDOG=1" }.count >= 3, "pings every 0.2 s: \(before)")
        kill(daemon.process.processIdentifier, SIGUSR2) // test hook: blocks the listener queue for 1.5 s
        // At most one ping from a probe that finished just before the block; then none.
        _ = daemon.listener.messages(timeout: 0.45) { _ in false }
        let blocked = daemon.listener.messages(timeout: 0.8) { _ in false }
        #expect(!blocked.contains("WATCHDOG=1"), "\(blocked)")
        #expect(blocked.contains { $0.hasPrefix("STATUS=") }, "the supervisor itself is not blocked")
        let resumed = daemon.until("WATCHDOG=1", timeout: 3)
        #expect(resumed.last == "WATCHDOG=1")
        #expect(SystemdProcess.stop(daemon.process) == 0)
        let log = String(decoding: daemon.errors.fileHandleForReading.availableData, as: UTF8.self)
        #expect(log.contains("persistd: withholding the watchdog ping: the serving loop or the store did not answer within 0.2 s\n"), "\(log)")
        #expect(log.contains("persistd: the serving loop and the store answer again; watchdog pings resumed\n"))
    }

    @Test("SIGHUP: RELOADING=1, then READY=1; limits, access and log level change, model and store need a restart")
    func reload() throws {
        let daemon = try Notified(config: "max-line = 5000\nlog-level = info\n")
        defer { SystemdProcess.stop(daemon.process, signal: SIGKILL); try? FileManager.default.removeItem(at: daemon.directory) }
        _ = daemon.until("READY=1", timeout: 10)
        let before = try WireClient(path: daemon.socketPath)
        #expect(try before.result(["op": "hello"])["limits"]?["maxLineBytes"] == 5000)
        try Data("max-line = 6000\nlog-level = debug\nstore-type = xml\nread-only-users = 1\n".utf8)
            .write(to: daemon.directory.appendingPathComponent("persistd.conf"))
        kill(daemon.process.processIdentifier, SIGHUP)
        let reloading = daemon.until("RELOADING=1")
        #expect(reloading.last == "RELOADING=1\nSTATUS=reloading the configuration")
        let ready = daemon.until("READY=1")
        #expect(ready.last?.hasPrefix("READY=1\nSTATUS=1 connection, ") == true, "\(ready)")
        // New connections get the new limits; the running store type is kept.
        let after = try WireClient(path: daemon.socketPath)
        let hello = try after.result(["op": "hello"])
        #expect(hello["limits"]?["maxLineBytes"] == 6000)
        #expect(hello["store"]?["type"] == "SQLite")
        before.close()
        after.close()
        #expect(SystemdProcess.stop(daemon.process) == 0)
        let log = String(decoding: daemon.errors.fileHandleForReading.availableData, as: UTF8.self)
        #expect(log.contains("persistd: reload: store-type changed; restart persistd to apply (keeping the running values)\n"), "\(log)")
        #expect(log.contains("persistd: reloaded the configuration (log level debug)\n"))
        #expect(log.contains(" op=hello peer_uid=\(getuid()) "), "debug now logs every request")
    }

    @Test("a reload keeps what needs a restart and applies the rest")
    func reloadMerge() {
        var running = ServerConfiguration(modelPath: "a.json", storePath: "a.sqlite", socketPath: "a.sock")
        running.shutdownGracePeriod = 3
        var new = ServerConfiguration(modelPath: "b.json", storePath: "a.sqlite", socketPath: "b.sock")
        new.maximumLineLength = 10
        new.logLevel = .debug
        new.accessPolicy.readOnlyUsers = [7]
        new.commitDelay = 0.001
        let reload = ConfigurationReload(running: running, new: new)
        #expect(reload.needsRestart == ["model", "socket", "commit-delay"])
        var expected = running
        expected.maximumLineLength = 10
        expected.logLevel = .debug
        expected.accessPolicy.readOnlyUsers = [7]
        #expect(reload.applied == expected)
    }

    /// The server answers before the supervisor starts (it serves, then sends `READY=1`, then
    /// starts the supervisor): a save made in between is the last save, not a baseline.
    @Test("a save made before the supervisor starts shows in the STATUS line")
    func saveBeforeTheSupervisorStarts() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = ServerConfiguration(modelPath: DaemonHarness.modelPath,
                                                storePath: directory.appendingPathComponent("store.sqlite").path,
                                                socketPath: directory.appendingPathComponent("p.sock").path)
        let server = try Server(configuration: configuration)
        server.start()
        defer {
            let stopped = DispatchSemaphore(value: 0)
            server.shutdown { stopped.signal() }
            stopped.wait()
        }
        let client = try WireClient(path: configuration.socketPath)
        _ = try client.result(["op": "insert", "entity": "Person", "values": ["name": "Ada"]])
        _ = try client.result(["op": "save"])
        client.close()
        let supervisor = SystemdSupervisor(server: server, notifier: SystemdNotifier(environment: [:]), watchdogInterval: nil)
        supervisor.start()
        defer { supervisor.stop() }
        // The supervisor's queue runs `start()`'s work first, then this.
        #expect(supervisor.currentStatus.hasSuffix("last save 0 s ago"), "\(supervisor.currentStatus)")
    }

    @Test("status lines")
    func statusLine() {
        #expect(StatusLine(connections: 0, requestsPerSecond: 0, secondsSinceLastSave: nil).text == "0 connections, 0.0 requests/s, no save yet")
        #expect(StatusLine(connections: 1, requestsPerSecond: 12.46, secondsSinceLastSave: 4).text == "1 connection, 12.5 requests/s, last save 4 s ago")
        #expect(SystemdNotifier.oneLine("a\nb") == "a b")
    }
}
