import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// Connections are served by a few event loops, several connections on each: reads are
/// answered on the loop's thread, writes on the session's queue with their replies handed back
/// to the loop. Whatever the interleaving, each connection gets its replies in request order
/// with its own results, and a write acknowledged on one connection is seen by reads on any
/// other.
@Suite("Concurrency of connections served by event loops", .timeLimit(.minutes(1)))
struct EventLoopConcurrencyTests {
    /// Gets each stalled client sends: their replies (about 300 KB) are more than a socket holds.
    static let burst = 2000

    /// How many clients run at once (on 3 loops): loops serve several each.
    static let clients = 8

    @Test("many clients' pipelined reads and writes, interleaved, are answered in order per connection with the right results")
    func interleavedClients() throws {
        let daemon = try DaemonHarness.start(["--max-queued", "1000", "--event-loops", "3"])
        defer { daemon.stop() }
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: Self.clients) { client in
            do {
                try Self.exercise(client: client, daemon: daemon)
            } catch {
                failures.withLock { $0.append("client \(client): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        // Every client's saves landed: 3 rounds of 4 people each.
        let check = try daemon.connect()
        #expect(try check.result(["op": "count", "entity": "Person"]) == ["count": .integer(Int64(Self.clients * 12))])
    }

    /// One client: three rounds, each a pipelined burst of inserts, reads of its own objects
    /// (saved and pending), a save, and reads after it; every reply checked in order.
    static func exercise(client number: Int, daemon: DaemonHarness) throws {
        let client = try daemon.connect()
        var saved: [(id: String, name: String)] = []
        for round in 0..<3 {
            var lines: [String] = []
            enum Expect { case inserted(String), person(String), ownCount(Int64), saved(Int64) }
            var expected: [(id: Int64, expect: Expect)] = []
            func add(_ line: String, _ expect: Expect) {
                let id = Int64(expected.count)
                lines.append(line.replacingOccurrences(of: "#ID#", with: String(id)))
                expected.append((id, expect))
            }
            let prefix = "c\(number)-r\(round)-"
            for index in 0..<4 {
                add(#"{"id":#ID#,"op":"insert","entity":"Person","values":{"name":"\#(prefix)\#(index)"}}"#, .inserted("\(prefix)\(index)"))
                // Reads between the inserts: they see the pending inserts of this connection only.
                add(#"{"id":#ID#,"op":"count","entity":"Person","predicate":"name BEGINSWITH %@","arguments":["c\#(number)-"]}"#,
                    .ownCount(Int64(saved.count + index + 1)))
                for person in saved.suffix(3) {
                    add(#"{"id":#ID#,"op":"get","ids":["\#(person.id)"]}"#, .person(person.name))
                }
            }
            add(#"{"id":#ID#,"op":"save"}"#, .saved(4))
            add(#"{"id":#ID#,"op":"count","entity":"Person","predicate":"name BEGINSWITH %@","arguments":["c\#(number)-"]}"#,
                .ownCount(Int64(saved.count + 4)))
            try client.send(raw: Array((lines.joined(separator: "\n") + "\n").utf8))
            for (index, (id, expect)) in expected.enumerated() {
                guard let reply = try client.readLine() else { throw HarnessError("reply \(index) of round \(round) is missing") }
                guard reply["id"] == .integer(id), reply["ok"] == .bool(true), let result = reply["result"] else {
                    throw HarnessError("reply \(index) of round \(round): expected id \(id) and success, got \(reply.encoded)")
                }
                switch expect {
                case .inserted(let name):
                    guard result["object"]?["values"]?["name"] == .string(name) else { throw HarnessError("insert: \(reply.encoded)") }
                    saved.append((result["object"]?.string("id") ?? "", name))
                case .person(let name):
                    guard result["objects"]?.arrayValue?.first?["values"]?["name"] == .string(name) else {
                        throw HarnessError("get of \(name): \(reply.encoded)")
                    }
                case .ownCount(let count):
                    guard result["count"] == .integer(count) else { throw HarnessError("count, expected \(count): \(reply.encoded)") }
                case .saved(let count):
                    guard result["inserted"] == .integer(count) else { throw HarnessError("save: \(reply.encoded)") }
                }
            }
        }
    }

    @Test("a read on one connection sees a write acknowledged on another, whichever loops serve them")
    func readSeesWriteOfAnotherConnection() throws {
        let daemon = try DaemonHarness.start(["--event-loops", "2"])
        defer { daemon.stop() }
        // Consecutive connections go to different loops (round robin); four cover both cases.
        let connections = try (0..<4).map { _ in try daemon.connect() }
        var id = ""
        for round in 0..<40 {
            let writer = connections[round % connections.count]
            let name = "name \(round)"
            if round == 0 {
                id = try writer.result(["op": "insert", "entity": "Person", "values": ["name": .string(name)]])["object"]?.string("id") ?? ""
            } else {
                _ = try writer.result(["op": "update", "object": .string(id), "values": ["name": .string(name)]])
            }
            _ = try writer.result(["op": "save"])
            for reader in connections where reader !== writer {
                let object = try reader.result(["op": "get", "ids": [.string(id)]])["objects"]?.arrayValue?.first
                #expect(object?["values"]?["name"] == .string(name), "round \(round): \(object?.encoded ?? "nothing")")
            }
        }
    }

    @Test("a client that leaves its replies unread does not hold up the other connections of its loop")
    func unreadRepliesDoNotStallTheLoop() throws {
        let daemon = try DaemonHarness.start(["--max-queued", "100000", "--event-loops", "2"])
        defer { daemon.stop() }
        let setup = try daemon.connect()
        let id = try setup.result(["op": "insert", "entity": "Person", "values": ["name": "big"]])["object"]?.string("id") ?? ""
        _ = try setup.result(["op": "save"])
        // A few clients each send 2,000 gets and read nothing: their replies fill the
        // socket buffers, and the server stops reading them until they catch up.
        let line = #"{"id":1,"op":"get","ids":["\#(id)"]}"# + "\n"
        let burst = Array(String(repeating: line, count: Self.burst).utf8)
        var stalled: [WireClient] = []
        for _ in 0..<3 {
            let client = try daemon.connect()
            try client.send(raw: burst)
            stalled.append(client)
        }
        // Connections on every loop are still answered at once.
        for _ in 0..<6 {
            let client = try daemon.connect()
            #expect(try client.result(["op": "get", "ids": [.string(id)]])["objects"]?.arrayValue?.first?["values"]?["name"] == "big")
        }
        // And the stalled clients get every reply once they read.
        for client in stalled {
            for index in 0..<Self.burst {
                let reply = try #require(try client.readLine(), "reply \(index) is missing")
                if reply["ok"] != .bool(true) { Issue.record("reply \(index): \(reply.encoded)"); break }
            }
        }
    }
}
