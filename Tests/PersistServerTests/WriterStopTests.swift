import Foundation
import PersistKit
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// SIGSTOP of a process that holds the store's write lock (issue 9, item 4): `persistd`'s
/// writers get `busy` once its busy timeout passes, its readers are answered meanwhile, and
/// after SIGCONT (and the stopped process's commit) writes succeed again. The lock holder is
/// `PersistStress hold`, a separate program that keeps a `BEGIN IMMEDIATE` transaction open,
/// or a second `persistd` stopped in the middle of its batch updates.
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

    /// Whether process `pid` is stopped (state `T` in `/proc/<pid>/stat`), waiting up to 1 s.
    static func waitUntilStopped(_ pid: Int32) -> Bool {
        let deadline = Date().addingTimeInterval(1)
        while Date() < deadline {
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")"), stat[stat.index(after: close)...].hasPrefix(" T") {
                return true
            }
            usleep(200)
        }
        return false
    }

    /// Whether another connection holds the write lock of the store at `path` now.
    ///
    /// A process stopped inside a checkpoint (on its checkpointer's thread) holds locks a
    /// reader may need, and then `BEGIN IMMEDIATE` fails with `SQLITE_BUSY` too, though no
    /// writer holds the write lock: only a probe that can read and cannot write has caught one.
    static func writeLockIsHeld(_ path: String) throws -> Bool {
        // SQLiteError.busy (SQLITE_BUSY) at once: the probe has no busy handler.
        let probe = try SQLiteConnection(path: path, flags: [.readWrite, .noMutex])
        defer { try? probe.close() }
        do {
            _ = try probe.int64("SELECT COUNT(*) FROM sqlite_master")
        } catch {
            guard error.resultCode == SQLiteError.busy else { throw error }
            return false
        }
        do {
            try probe.execute("BEGIN IMMEDIATE TRANSACTION")
            try probe.execute("ROLLBACK TRANSACTION")
            return false
        } catch {
            guard error.resultCode == SQLiteError.busy else { throw error }
            return true
        }
    }

    @Test("a second persistd stopped inside its batch updates: the first one's writers get busy, its readers go on")
    func stoppedDaemonMidWrite() throws {
        let daemon = try DaemonHarness.start(["--busy-timeout", "1"])
        defer { daemon.stop() }
        // persistd opens (creates) the store after it listens: wait for it before opening it here.
        let first = try daemon.connect()
        _ = try first.result(["op": "count", "entity": "Person"])
        first.close()
        // 20,000 people, so each batch update of the second daemon is a long write transaction.
        let model = try ManagedObjectModel(json: Data(contentsOf: URL(fileURLWithPath: DaemonHarness.modelPath)), sourceURL: nil)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .sqlite, at: URL(fileURLWithPath: daemon.storePath))
        let loader = ManagedObjectContext(concurrencyType: .privateQueue)
        loader.persistentStoreCoordinator = coordinator
        let people = 20_000
        try loader.performAndWait {
            _ = try loader.execute(BatchInsertRequest(entityName: "Person", objects: (0..<people).map { ["name": "p\($0)", "age": 1] }))
        }
        try coordinator.remove(store)

        let second = try DaemonHarness.start(["--max-queued", "1000"], directory: daemon.directory, socketName: "b.sock")
        defer { second.stop() }
        // Each reply below follows an update of 20,000 rows by a debug build, which on a loaded
        // machine can take longer than the default 10 s read bound.
        let batch = try WireClient(path: second.socketPath, timeout: 60)
        defer { batch.close() }
        let updates = 8
        var lines: [UInt8] = []
        for round in 0..<updates {
            lines += Array(#"{"op":"update","entity":"Person","predicate":"age >= 0","values":{"age":\#(round % 100)}}"#.utf8) + [0x0A]
        }
        try batch.send(raw: lines)

        // Stop the second daemon until it is caught holding the write lock.
        let pid = second.process.processIdentifier
        var caught = false
        let deadline = Date().addingTimeInterval(20)
        var attempts = 0
        while !caught && Date() < deadline {
            attempts += 1
            kill(pid, SIGSTOP)
            guard Self.waitUntilStopped(pid) else { break }
            caught = try Self.writeLockIsHeld(daemon.storePath)
            if !caught {
                kill(pid, SIGCONT)
                usleep(UInt32.random(in: 200...3000))
            }
        }
        #expect(caught, "the second daemon was never caught inside a write transaction")
        print("WriterStopTests: the second daemon caught holding the write lock after \(attempts) SIGSTOPs")
        defer { kill(pid, SIGCONT) }
        guard caught else { return }

        let writer = try daemon.connect()
        defer { writer.close() }
        let insert: JSON = ["op": "insert", "entity": "Person", "values": ["name": "during"]]
        let inserted = try writer.request(insert)
        let insertRefused = inserted["ok"] == .bool(false)
        let busy = insertRefused ? (inserted["error"] ?? .null) : try writer.error(["op": "save"])
        #expect(busy.string("code") == "busy")
        let reader = try daemon.connect()
        #expect(try reader.result(["op": "count", "entity": "Person"]) == ["count": .integer(Int64(people))])

        kill(pid, SIGCONT)
        for _ in 0..<updates {
            let reply = try batch.readLine()
            #expect(reply?["ok"] == .bool(true), "the second daemon's batch update: \(reply?.encoded ?? "no reply")")
        }
        if insertRefused { _ = try writer.result(insert) }
        #expect(try writer.result(["op": "save"]) == ["inserted": 1, "updated": 0, "deleted": 0])
        #expect(try reader.result(["op": "count", "entity": "Person"]) == ["count": .integer(Int64(people + 1))])
        reader.close()
    }
}
