import Foundation
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// SIGSTOP of a process that holds the store's write lock (issue 9, item 4): `persistd`'s
/// writers get `busy` once its busy timeout passes, its readers are answered meanwhile, and
/// after SIGCONT (and the stopped process's commit) writes succeed again. The lock holder is
/// `PersistStress hold`, a separate program that keeps a `BEGIN IMMEDIATE` transaction open.
@Suite("SIGSTOP of a process holding the write lock", .timeLimit(.minutes(1)))
struct WriterStopTests {
    /// `PersistStress hold` on `store`, once it holds the lock.
    final class LockHolder {
        let process = Process()
        let input = Pipe()
        let output = Pipe()

        init(store: String) throws {
            process.executableURL = BuiltBinary.url("PersistStress")
            process.arguments = ["hold", "--store", store]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.standardError
            try process.run()
            // The first line says the lock is held; nothing else is printed before it.
            var line = Data()
            while !line.contains(0x0A) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { throw HarnessError("PersistStress hold exited before holding the lock") }
                line.append(chunk)
            }
            guard String(decoding: line, as: UTF8.self).contains(#""holding":true"#) else {
                throw HarnessError("PersistStress hold said \(String(decoding: line, as: UTF8.self))")
            }
        }

        /// Ends its standard input: it commits and exits. Returns its exit status.
        func release() throws -> Int32 {
            try input.fileHandleForWriting.close()
            let deadline = Date().addingTimeInterval(15)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            return process.terminationStatus
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGCONT)
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
    }

    @Test("writer stopped while holding the lock: busy within the timeout, reads go on, all resumes after SIGCONT")
    func stoppedLockHolder() throws {
        let daemon = try DaemonHarness.start(["--busy-timeout", "1"])
        defer { daemon.stop() }
        let writer = try daemon.connect()
        defer { writer.close() }
        _ = try writer.result(["op": "insert", "entity": "Person", "values": ["name": "before"]])
        _ = try writer.result(["op": "save"])

        let holder = try LockHolder(store: daemon.storePath)
        #expect(kill(holder.process.processIdentifier, SIGSTOP) == 0)

        // A write waits for the busy timeout (1 s), then gets busy; nothing is written. The
        // insert itself writes (it reserves the object's key), so it may be the one refused.
        let insert: JSON = ["op": "insert", "entity": "Person", "values": ["name": "during"]]
        let started = ContinuousClock.now
        let inserted = try writer.request(insert)
        let insertRefused = inserted["ok"] == .bool(false)
        let busy = insertRefused ? (inserted["error"] ?? .null) : try writer.error(["op": "save"])
        let waited = ContinuousClock.now - started
        #expect(busy.string("code") == "busy")
        #expect(busy.string("message").contains("busyTimeout"))
        print("WriterStopTests: busy after \(waited) (busy timeout 1 s)")

        // Readers are answered while the lock holder is stopped: the committed state.
        let reader = try daemon.connect()
        #expect(try reader.result(["op": "count", "entity": "Person"]) == ["count": 1])
        let names = try reader.result(["op": "fetch", "entity": "Person", "resultType": "dictionaries", "properties": ["name"]])
        #expect(names["rows"] == .array([.object(["name": "before"])]))

        // SIGCONT, and the holder commits: the same save (the connection kept its changes) succeeds.
        #expect(kill(holder.process.processIdentifier, SIGCONT) == 0)
        #expect(try holder.release() == 0)
        if insertRefused { _ = try writer.result(insert) }
        #expect(try writer.result(["op": "save"]) == ["inserted": 1, "updated": 0, "deleted": 0])
        #expect(try reader.result(["op": "count", "entity": "Person"]) == ["count": 2])
        reader.close()
    }
}
