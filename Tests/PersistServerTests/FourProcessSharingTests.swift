import Foundation
import Testing
@testable import PersistServer
import PersistKit

/// Issue 6's test: four processes on one store file — two persistd instances (each driven by a
/// client over its socket) and two Swift programs linking PersistKit (`PersistStress`) — each
/// incrementing one shared counter and inserting objects for a bounded time. Every increment
/// and every object must be accounted for exactly, with no "database is locked", and the store
/// must pass `PRAGMA integrity_check`.
@Suite("Four processes sharing one store", .timeLimit(.minutes(2)))
struct FourProcessSharingTests {
    static func stress(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try BuiltBinary.run("PersistStress", arguments)
    }

    static func sql(_ path: String, _ query: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, query]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Over one daemon: until `deadline`, read the counter, write value + 1 conditional on the
    /// version read, and insert Item(worker, seq), in one save; past `deadline` only until a
    /// first increment. A `merge_conflict` (another process saved the counter since it was
    /// read) on `update` retries from the stored state the error carries, on `save` rolls back
    /// and reads again. Returns the increments made, the conflicts met on `update`, and any
    /// other errors.
    static func drive(_ daemon: DaemonHarness, worker: Int64, until deadline: Date) -> (increments: Int64, updateConflicts: Int, errors: [String]) {
        var increments: Int64 = 0
        var updateConflicts = 0
        var errors: [String] = []
        do {
            let client = try daemon.connect()
            defer { client.close() }
            var counter: JSON?
            // Past the deadline, until a first increment (within a bound): the programs stop at
            // the deadline, and a client whose every read went stale while they ran (seen
            // under a loaded machine: each round trip is a chance for another process to save
            // first) must still show that its saves count once the others let it.
            let lastChance = deadline.addingTimeInterval(20)
            while Date() < deadline || (increments == 0 && Date() < lastChance) {
                if counter == nil {
                    counter = try client.result(["op": "fetch", "entity": "Counter", "predicate": "name == 'shared'"])["objects"]?.arrayValue?.first
                }
                guard let read = counter, case .integer(let value)? = read["values"]?["value"], case .integer(let version)? = read["version"] else {
                    errors.append("no shared counter with a version: \(counter?.encoded ?? "none")")
                    break
                }
                let update = try client.request(["op": "update", "object": .string(read.string("id")), "version": .integer(version),
                                                 "values": ["value": .integer(value + 1)]])
                if update["ok"] != .bool(true) {
                    guard update["error"]?.string("code") == "merge_conflict", let current = update["error"]?["current"] else {
                        errors.append(update.encoded)
                        break
                    }
                    updateConflicts += 1
                    counter = current
                    continue
                }
                _ = try client.result(["op": "insert", "entity": "Item", "values": ["worker": .integer(worker), "seq": .integer(increments)]])
                let reply = try client.request(["op": "save"])
                if reply["ok"] == .bool(true) {
                    increments += 1
                } else if reply["error"]?.string("code") == "merge_conflict" {
                    _ = try client.result(["op": "rollback"])
                } else {
                    errors.append(reply.encoded)
                    _ = try client.result(["op": "rollback"])
                }
                counter = nil
            }
        } catch {
            errors.append("\(error)")
        }
        return (increments, updateConflicts, errors)
    }

    @Test func twoDaemonsAndTwoProgramsShareOneStore() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let modelJSON = try Self.stress(["model"])
        #expect(modelJSON.status == 0)
        let model = directory.appendingPathComponent("stress.model.json")
        try Data(modelJSON.out.utf8).write(to: model)
        let store = directory.appendingPathComponent("store.sqlite").path
        #expect(try Self.stress(["create", "--store", store, "--history"]).status == 0)

        let first = try DaemonHarness.start(model: model.path, directory: directory, socketName: "a.sock")
        let second = try DaemonHarness.start(model: model.path, directory: directory, socketName: "b.sock")
        let seconds = 3.0
        let deadline = Date().addingTimeInterval(seconds)
        let programs = try (1...2).map { worker -> Process in
            let process = Process()
            process.executableURL = BuiltBinary.url("PersistStress")
            process.arguments = ["stress", "--store", store, "--worker", "\(worker)", "--seconds", "\(seconds)", "--history"]
            process.standardOutput = Pipe()
            try process.run()
            return process
        }
        let results = Locked<[Int64: (increments: Int64, updateConflicts: Int, errors: [String])]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let result = Self.drive(index == 0 ? first : second, worker: Int64(11 + index), until: deadline)
            results.withLock { $0[Int64(11 + index)] = result }
        }
        var increments: [Int64: Int64] = [:]
        for (offset, process) in programs.enumerated() {
            let output = (process.standardOutput as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let report = try JSONSerialization.jsonObject(with: output) as? [String: Any] ?? [:]
            #expect(report["errors"] as? [String] == [], "program \(offset + 1): \(report)")
            increments[Int64(offset + 1)] = Int64(report["increments"] as? Int ?? -1)
        }
        for (worker, result) in results.withLock({ $0 }) {
            #expect(result.errors.isEmpty, "daemon client \(worker): \(result.errors)")
            increments[worker] = result.increments
            print("daemon client \(worker): \(result.increments) increments, \(result.updateConflicts) stale reads refused at update")
        }
        first.stop()
        second.stop()

        #expect(increments.count == 4)
        #expect(increments.values.allSatisfy { $0 > 0 }, "every process made progress: \(increments)")
        let total = increments.values.reduce(0, +)
        let counter = try Self.sql(store, "SELECT ZVALUE FROM ZCOUNTER WHERE ZNAME = 'shared'")
        // Every increment exactly once: a read-modify-write over the wire names the version it
        // read, so it cannot overwrite another process's increment.
        #expect(counter == "\(total)", "increments by process: \(increments)")
        #expect(try Self.sql(store, "SELECT COUNT(*) FROM ZITEM") == "\(total)")
        for (worker, count) in increments {
            // Each process's items exactly once: seq 0..<count.
            let seqs = try Self.sql(store, "SELECT group_concat(ZSEQ) FROM (SELECT ZSEQ FROM ZITEM WHERE ZWORKER = \(worker) ORDER BY ZSEQ)")
            #expect(seqs == (0..<count).map(String.init).joined(separator: ","), "worker \(worker)")
        }
        #expect(try Self.sql(store, "PRAGMA integrity_check") == "ok")
    }
}
