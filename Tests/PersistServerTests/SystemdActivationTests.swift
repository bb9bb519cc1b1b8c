import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Socket activation with the real `systemd-socket-activate`, and fatal start-up errors.
@Suite("systemd socket activation", .timeLimit(.minutes(1)))
struct SystemdActivationTests {
    @Test("socket-activated: serves the passed socket, binds none, leaves the socket file to its owner")
    func activated() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("activated.sock").path
        let unused = directory.appendingPathComponent("unused.sock").path
        let errors = Pipe()
        let process = try SystemdProcess.start("/usr/bin/systemd-socket-activate",
            ["-l", socket, "--fdname=persistd", ModelCheckTests.binary.path, "--model", DaemonHarness.modelPath,
             "--store", directory.appendingPathComponent("store.sqlite").path, "--socket", unused], standardError: errors)
        defer { SystemdProcess.stop(process, signal: SIGKILL) }
        try SystemdProcess.waitForSocket(socket, process: process)
        let client = try WireClient(path: socket)
        #expect(try client.result(["op": "ping"]) == ["pong": true])
        #expect(try client.result(["op": "count", "entity": "Beer"]) == ["count": 0])
        client.close()
        #expect(!FileManager.default.fileExists(atPath: unused), "no socket of its own")
        #expect(SystemdProcess.stop(process) == 0)
        let log = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
        #expect(log.contains("persistd: serving SQLite store \(directory.path)/store.sqlite on \(socket)\n"), "\(log)")
        // The socket file belongs to whoever passed it (systemd's socket unit): persistd leaves it.
        #expect(FileManager.default.fileExists(atPath: socket))
    }

    @Test("an unwritable store is one clear line on stderr and exit status 1")
    func unwritableStore() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try SystemdProcess.run(ModelCheckTests.binary.path, ["--model", DaemonHarness.modelPath, "--store", "/proc/none/store.sqlite",
                                                                           "--socket", directory.appendingPathComponent("p.sock").path])
        #expect(result.status == 1)
        #expect(result.err.hasPrefix("persistd: cannot open the store /proc/none/store.sqlite: "), "\(result.err)")
        #expect(result.err.filter { $0 == "\n" }.count == 1, "one line: \(result.err)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("p.sock").path))
    }

    @Test("an unknown user in the access policy is a usage error naming it")
    func unknownUser() throws {
        let result = try SystemdProcess.run(ModelCheckTests.binary.path, ["--model", DaemonHarness.modelPath, "--allow-users", "no-such-user-xyz"])
        #expect(result.status == 2)
        #expect(result.err.hasPrefix("persistd: allow-users: no user \"no-such-user-xyz\"\n"))
    }
}
