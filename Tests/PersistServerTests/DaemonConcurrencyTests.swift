import Foundation
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// Many clients at once, and clients that misbehave.
@Suite("persistd Concurrency", .timeLimit(.minutes(1)))
struct DaemonConcurrencyTests {
    @Test("50 concurrent clients each insert and save; all objects are present after")
    func fiftyClients() async throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let socketPath = daemon.socketPath
        let ids = try await withThrowingTaskGroup(of: [String].self) { group in
            for client in 0..<50 {
                group.addTask {
                    let connection = try WireClient(path: socketPath)
                    var ids: [String] = []
                    for index in 0..<4 {
                        let object = try connection.result(["op": "insert", "entity": "Person",
                                                            "values": ["name": .string("c\(client)-\(index)"), "age": .integer(Int64(client))]])
                        ids.append(object["object"]?.string("id") ?? "")
                    }
                    let saved = try connection.result(["op": "save"])
                    guard saved == ["inserted": 4, "updated": 0, "deleted": 0] else { throw HarnessError("save: \(saved.encoded)") }
                    return ids
                }
            }
            var all: [String] = []
            for try await ids in group { all += ids }
            return all
        }
        #expect(Set(ids).count == 200)
        let client = try daemon.connect()
        #expect(try client.result(["op": "count", "entity": "Person"]) == ["count": 200])
        let fetched = try client.result(["op": "fetch", "entity": "Person", "resultType": "ids"])["ids"]?.arrayValue?.compactMap(\.stringValue)
        #expect(Set(fetched ?? []) == Set(ids))
        let stats = try client.result(["op": "stats"])
        #expect(stats["saves"] == 50)
        #expect(stats["connectionsAccepted"] == 52) // 50, the readiness probe, this one
    }

    @Test("a client that disconnects mid-request, or mid-line, disturbs no one; its unsaved changes are discarded")
    func disconnectMidRequest() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        do {
            let leaving = try daemon.connect()
            _ = try leaving.result(["op": "insert", "entity": "Person", "values": ["name": "ghost"]])
            // A request in flight, then gone without reading the reply.
            try leaving.send(["op": "fetch", "entity": "Person"])
            try leaving.send(raw: Array(#"{"op":"save""#.utf8)) // half a line
            leaving.close()
        }
        let stayer = try daemon.connect()
        #expect(try stayer.result(["op": "ping"]) == ["pong": true])
        #expect(try stayer.result(["op": "count", "entity": "Person"]) == ["count": 0])
        // The server noticed: only this connection remains.
        try stayer.waitForConnections(1)
    }

    @Test("a client that closes its sending side still gets every reply, then EOF")
    func halfClose() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        try client.send(raw: Array("{\"id\":1,\"op\":\"insert\",\"entity\":\"Person\",\"values\":{}}\n{\"id\":2,\"op\":\"save\"}\n".utf8))
        client.shutdownWrite()
        #expect(try client.readLine()?["id"] == 1)
        #expect(try client.readLine() == ["id": 2, "ok": true, "result": ["inserted": 1, "updated": 0, "deleted": 0]])
        #expect(try client.readLine() == nil)
    }

    @Test("too_many_connections beyond --max-connections")
    func maxConnections() throws {
        let daemon = try DaemonHarness.start(["--max-connections", "2"])
        defer { daemon.stop() }
        let first = try daemon.connect()
        try first.waitForConnections(1) // the harness's readiness probe has gone
        let second = try daemon.connect()
        #expect(try second.result(["op": "ping"]) == ["pong": true])
        let third = try daemon.connect()
        #expect(try third.readLine()?["error"]?["code"] == "too_many_connections")
        #expect(try third.readLine() == nil)
    }

    @Test("too_many_requests beyond --max-queued pipelined requests; the others are answered")
    func maxQueued() throws {
        let daemon = try DaemonHarness.start(["--max-queued", "2"])
        defer { daemon.stop() }
        let client = try daemon.connect()
        var lines = ""
        for index in 0..<20 { lines += #"{"id":\#(index),"op":"fetch","entity":"Person"}"# + "\n" }
        try client.send(raw: Array(lines.utf8))
        var codes: [String] = []
        for index in 0..<20 {
            let reply = try #require(try client.readLine())
            #expect(reply["id"] == .integer(Int64(index)))
            codes.append(reply["ok"] == true ? "ok" : reply["error"]?.string("code") ?? "?")
        }
        #expect(codes.first == "ok")
        #expect(codes.contains("too_many_requests"))
        #expect(Set(codes) == ["ok", "too_many_requests"])
    }

    @Test("an idle connection is told why and closed after --idle-timeout")
    func idleTimeout() throws {
        let daemon = try DaemonHarness.start(["--idle-timeout", "0.3"])
        defer { daemon.stop() }
        let client = try daemon.connect()
        #expect(try client.result(["op": "ping"]) == ["pong": true])
        let event = try client.readLine()
        #expect(event?["event"] == "closing")
        #expect(event?["reason"] == "idle_timeout")
        #expect(try client.readLine() == nil)
    }
}

extension WireClient {
    /// Polls `stats` (up to 5 s) until the server counts `count` open connections.
    func waitForConnections(_ count: Int64) throws {
        for _ in 0..<250 {
            if try result(["op": "stats"])["connections"] == .integer(count) { return }
            usleep(20_000)
        }
        throw HarnessError("the server never counted \(count) connections")
    }
}
