import Foundation
import Testing
@testable import PersistServer

/// `persistctl watch` and `persistctl history`, as the real binary against a live daemon.
@Suite("persistctl watch and history", .timeLimit(.minutes(1)))
struct PersistctlWatchTests {
    @Test("watch prints the subscribe result, then each event as a JSON line; history lists transactions")
    func watchAndHistory() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let writer = try daemon.connect()
        _ = try writer.insertBeer("Existing", abv: 9.0)
        try writer.save()

        let process = Process()
        process.executableURL = PersistctlTests.binary
        process.arguments = ["--socket", daemon.socketPath, "watch", "Beer", "--where", "abv > %@", "--arg", "8",
                             "--properties", "name", "--events", "2"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // Bounded: a watch that misses an event is stopped, and the test fails instead of hanging.
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { if process.isRunning { process.terminate() } }
        var output = ""
        /// Reads persistctl's output until it holds `count` lines (or ends).
        func readLines(_ count: Int) {
            while output.split(separator: "\n").count < count {
                let data = out.fileHandleForReading.availableData
                if data.isEmpty { return }
                output += String(decoding: data, as: UTF8.self)
            }
        }
        // The first line is the subscribe result: the watch is live from then on.
        readLines(1)
        let subscribed = try JSONParser.parse(String(output.split(separator: "\n").first ?? ""))
        #expect(subscribed["objects"]?.arrayValue?.map { $0["values"] ?? .null } == [["name": "Existing"]])

        let strong = try writer.insertBeer("Strong", abv: 10.0)
        try writer.save()
        // Its event before the next change: the daemon builds an event from the objects as they
        // are when it reads the history, so an object that stopped matching by then would
        // never be reported (protocol/README.md, Subscriptions).
        readLines(2)
        _ = try writer.result(["op": "update", "object": .string(strong), "values": ["abv": 1.0]])
        try writer.save()
        output += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let events = try output.split(separator: "\n").dropFirst().map { try JSONParser.parse(String($0)) }
        #expect(events.count == 2)
        #expect(events.first?.names("inserted") == ["Strong"])
        #expect(events.last?.ids("deleted") == [strong])

        let history = try PersistctlTests.run(["history", "--limit", "2"], socket: daemon.socketPath)
        #expect(history.status == 0)
        let result = try JSONParser.parse(history.out.trimmingCharacters(in: .newlines))
        #expect(result["transactions"]?.arrayValue?.count == 2)
        #expect(result["token"]?.transactionNumber == 2)
    }

    @Test("watch on a terminal: a table, then one line per changed object")
    func describe() {
        let event: JSON = ["event": "changes", "subscription": "s1", "token": "S:4",
                           "inserted": [["id": "x-coredata://S/Beer/p1", "entity": "Beer", "values": ["name": "IPA", "abv": 9.0]]],
                           "updated": [], "deleted": ["x-coredata://S/Beer/p2"]]
        #expect(WatchCommand.describe(event) == "inserted  x-coredata://S/Beer/p1  name=IPA  abv=9.0\ndeleted  x-coredata://S/Beer/p2")
    }
}
