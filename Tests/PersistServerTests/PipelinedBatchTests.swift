import Foundation
import Testing
@testable import PersistServer

/// Pipelined reads are answered in batches (several reads in one hop to the read context, their
/// replies in one write): replies still come one per request, in request order, with each
/// request's own result or error, and every limit holds as for requests answered one by one.
@Suite("pipelined requests answered in batches", .timeLimit(.minutes(1)))
struct PipelinedBatchTests {
    /// Inserts and saves `count` people named `p0`…; returns their IDs in order.
    static func people(_ count: Int, client: WireClient) throws -> [String] {
        var ids: [String] = []
        for index in 0..<count {
            let result = try client.result(["op": "insert", "entity": "Person", "values": ["name": .string("p\(index)")]])
            ids.append(result["object"]?.string("id") ?? "")
        }
        _ = try client.result(["op": "save"])
        return ids
    }

    @Test("a burst of reads, writes, malformed lines and failing reads is answered in order, each with its own reply")
    func mixedBurst() throws {
        let daemon = try DaemonHarness.start(["--max-queued", "1000"])
        defer { daemon.stop() }
        let client = try daemon.connect()
        let ids = try Self.people(5, client: client)
        let missing = String(ids[0][..<(ids[0].range(of: "/p", options: .backwards)?.lowerBound ?? ids[0].endIndex)]) + "/p999999"
        // What each line is, and what its reply must be.
        enum Expect { case person(String), count(Int64), people(Int), error(String), ok }
        var lines: [String] = []
        var expected: [(id: JSON, expect: Expect)] = []
        func add(_ line: String, id: JSON, _ expect: Expect) {
            lines.append(line)
            expected.append((id, expect))
        }
        for round in 0..<10 {
            let base = Int64(round * 100)
            for (offset, id) in ids.enumerated() {
                add(#"{"id":\#(base + Int64(offset)),"op":"get","ids":["\#(id)"]}"#, id: .integer(base + Int64(offset)), .person("p\(offset)"))
            }
            add(#"{"id":\#(base + 10),"op":"get","ids":["\#(missing)"]}"#, id: .integer(base + 10), .error("not_found"))
            add(#"{"id":"\#(base + 11)","op":"count","entity":"Person"}"#, id: .string("\(base + 11)"), .count(5 + Int64(round)))
            add(#"{"id":\#(base + 12),"op":"get","ids":"not a list"}"#, id: .integer(base + 12), .error("bad_request"))
            add(#"{"id":\#(base + 13),"op":"fetch","entity":"Person","limit":2}"#, id: .integer(base + 13), .people(2))
            add(#"{"id":\#(base + 14),"op":"get","ids":["\#(ids[1])"],"properties":["nope"]}"#, id: .integer(base + 14), .error("unknown_property"))
            add(#"{"id":\#(base + 15),"op":"get","ids":["\#(ids[2])"] this is not JSON"#, id: .null, .error("bad_request"))
            add(#"{"id":\#(base + 16),"op":"nonsense"}"#, id: .integer(base + 16), .error("unknown_op"))
            add(#"{"id":\#(base + 17),"op":"get","ids":["\#(ids[3])"]}"#, id: .integer(base + 17), .person("p3"))
            // A write in the middle: the reads after it see the connection's pending insert.
            add(#"{"id":\#(base + 18),"op":"insert","entity":"Person","values":{"name":"extra\#(round)"}}"#, id: .integer(base + 18), .ok)
            add(#"{"id":\#(base + 19),"op":"count","entity":"Person"}"#, id: .integer(base + 19), .count(6 + Int64(round)))
            add(#"{"id":\#(base + 20),"op":"get","ids":["\#(ids[4])"]}"#, id: .integer(base + 20), .person("p4"))
            add(#"{"id":\#(base + 21),"op":"save"}"#, id: .integer(base + 21), .ok)
        }
        try client.send(raw: Array((lines.joined(separator: "\n") + "\n").utf8))
        for (index, (id, expect)) in expected.enumerated() {
            let reply = try #require(try client.readLine(), "reply \(index) of \(expected.count) is missing")
            #expect(reply["id"] == id, "reply \(index): \(reply.encoded)")
            switch expect {
            case .person(let name):
                #expect(reply["ok"] == true)
                #expect(reply["result"]?["objects"]?.element(0)?["values"]?["name"] == .string(name), "reply \(index): \(reply.encoded)")
            case .count(let count):
                #expect(reply["result"]?["count"] == .integer(count), "reply \(index): \(reply.encoded)")
            case .people(let count):
                if case .array(let objects)? = reply["result"]?["objects"] { #expect(objects.count == count) } else {
                    Issue.record("reply \(index) has no objects: \(reply.encoded)")
                }
            case .error(let code):
                #expect(reply["ok"] == false)
                #expect(reply["error"]?.string("code") == code, "reply \(index): \(reply.encoded)")
            case .ok:
                #expect(reply["ok"] == true, "reply \(index): \(reply.encoded)")
            }
        }
        // The connection goes on.
        #expect(try client.result(["op": "count", "entity": "Person"]) == ["count": 15])
    }

    @Test("a run of pipelined gets longer than one batch is answered completely and in order")
    func longRun() throws {
        let daemon = try DaemonHarness.start(["--max-queued", "1000"])
        defer { daemon.stop() }
        let client = try daemon.connect()
        let ids = try Self.people(20, client: client)
        let count = 500
        var lines = ""
        for index in 0..<count {
            lines += #"{"id":\#(index),"op":"get","ids":["\#(ids[index % ids.count])","\#(ids[(index + 1) % ids.count])"]}"# + "\n"
        }
        try client.send(raw: Array(lines.utf8))
        for index in 0..<count {
            let reply = try #require(try client.readLine())
            #expect(reply["id"] == .integer(Int64(index)))
            #expect(reply["result"]?["objects"]?.element(0)?["values"]?["name"] == .string("p\(index % ids.count)"))
            #expect(reply["result"]?["objects"]?.element(1)?["values"]?["name"] == .string("p\((index + 1) % ids.count)"))
        }
        let stats = try client.result(["op": "stats"])
        if case .integer(let served)? = stats["requestsServed"] { #expect(served >= Int64(count + 21)) } else {
            Issue.record("no requestsServed: \(stats.encoded)")
        }
    }

    @Test("a run of pipelined writes with failures among them: each write succeeds or fails on its own, replies in order")
    func writeBurst() throws {
        let daemon = try DaemonHarness.start(["--max-queued", "1000"])
        defer { daemon.stop() }
        let client = try daemon.connect(), other = try daemon.connect()
        var lines: [String] = []
        var expected: [(id: Int64, error: String?)] = []
        func add(_ id: Int64, _ body: String, _ error: String? = nil) {
            lines.append(#"{"id":\#(id),\#(body)}"#)
            expected.append((id, error))
        }
        // More than one batch of writes, no read between them: inserts, a failing insert, a
        // save, an insert then a rollback, a failing update.
        let rounds = 20
        for round in 0..<rounds {
            let base = Int64(round * 10)
            add(base, #""op":"insert","entity":"Person","values":{"name":"w\#(round)"}"#)
            add(base + 1, #""op":"insert","entity":"Nobody","values":{}"#, "unknown_entity")
            add(base + 2, #""op":"insert","entity":"Person","values":{"name":"x\#(round)"}"#)
            add(base + 3, #""op":"save""#)
            add(base + 4, #""op":"insert","entity":"Person","values":{"name":"gone\#(round)"}"#)
            add(base + 5, #""op":"rollback""#)
            add(base + 6, #""op":"update","entity":"Person","predicate":"name == 'w\#(round)'","values":{"nope":1}"#, "unknown_property")
        }
        try client.send(raw: Array((lines.joined(separator: "\n") + "\n").utf8))
        for (index, (id, error)) in expected.enumerated() {
            let reply = try #require(try client.readLine(), "reply \(index) of \(expected.count) is missing")
            #expect(reply["id"] == .integer(id), "reply \(index): \(reply.encoded)")
            if let error {
                #expect(reply["error"]?.string("code") == error, "reply \(index): \(reply.encoded)")
            } else {
                #expect(reply["ok"] == true, "reply \(index): \(reply.encoded)")
            }
        }
        // What was saved is there for another connection; what was rolled back is not.
        let names = try other.result(["op": "fetch", "entity": "Person"])["objects"]?.arrayValue?
            .compactMap { $0["values"]?["name"]?.stringValue } ?? []
        #expect(Set(names) == Set((0..<rounds).flatMap { ["w\($0)", "x\($0)"] }))
        #expect(try client.result(["op": "count", "entity": "Person"]) == ["count": .integer(Int64(2 * rounds))])
    }

    @Test("pipelined insert+save pairs overlap: each answered in order with the ID its object keeps, a failing insert alone, every object saved, pairs sharing transactions")
    func overlappingInsertSavePairs() throws {
        // Whether pairs share a transaction depends on the threads' timing: the loop must queue
        // a pair's write while the committer still runs an earlier one. On a loaded machine the
        // committer can keep up with every pair of one run (seen once: 119 writes in 119
        // transactions); overlap broken, no run shares. So up to three daemons run the pairs,
        // each checked in full, and one of them must show shared transactions.
        var shared = false
        for _ in 1...3 where !shared {
            shared = try runOverlappingInsertSavePairs()
        }
        #expect(shared, "no run of the pairs shared a transaction in three daemons")
    }

    /// One daemon's run of ``overlappingInsertSavePairs()``; returns whether its writes shared
    /// transactions (fewer transactions than writes, a group of more than one).
    private func runOverlappingInsertSavePairs() throws -> Bool {
        let daemon = try DaemonHarness.start(["--max-queued", "1000"])
        let client = try daemon.connect(), other = try daemon.connect()
        let pairs = 120
        // The pair whose insert fails (an unknown entity): its save has nothing to write.
        let failing = 57
        var lines: [String] = []
        for index in 0..<pairs {
            let entity = index == failing ? "Nobody" : "Beer"
            lines.append(#"{"id":\#(2 * index),"op":"insert","entity":"\#(entity)","values":{"name":"b\#(index)","uuid":"\#(UUID().uuidString)"}}"#)
            lines.append(#"{"id":\#(2 * index + 1),"op":"save"}"#)
        }
        try client.send(raw: Array((lines.joined(separator: "\n") + "\n").utf8))
        var ids: [String] = []
        for index in 0..<pairs {
            let insert = try #require(try client.readLine(), "the insert reply of pair \(index) is missing")
            let save = try #require(try client.readLine(), "the save reply of pair \(index) is missing")
            #expect(insert["id"] == .integer(Int64(2 * index)) && save["id"] == .integer(Int64(2 * index + 1)), "pair \(index)")
            if index == failing {
                #expect(insert["error"]?.string("code") == "unknown_entity", "\(insert.encoded)")
                #expect(save["result"] == ["inserted": 0, "updated": 0, "deleted": 0], "\(save.encoded)")
                continue
            }
            #expect(save["result"] == ["inserted": 1, "updated": 0, "deleted": 0], "pair \(index): \(save.encoded)")
            let id = insert["result"]?["object"]?.string("id") ?? ""
            #expect(id.hasPrefix("x-coredata://") && id.contains("/Beer/p"), "pair \(index): \(insert.encoded)")
            ids.append(id)
        }
        #expect(Set(ids).count == pairs - 1)
        // Every object is saved under the ID its reply gave, for another connection.
        let objects = try other.result(["op": "get", "ids": .array(ids.map(JSON.string))])["objects"]?.arrayValue ?? []
        #expect(objects.map { $0["values"]?["name"]?.stringValue } == (0..<pairs).filter { $0 != failing }.map { "b\($0)" })
        #expect(try other.result(["op": "count", "entity": "Beer"]) == ["count": .integer(Int64(pairs - 1))])
        // The pairs' writes shared transactions: fewer transactions than writes.
        #expect(daemon.stop() == 0)
        let line = daemon.standardError.split(separator: "\n").first { $0.contains("group commit: ") }
        let numbers = (line ?? "").split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        // "group commit: N writes in M transactions (largest L, F failed, K committed on the saving thread)"
        #expect(numbers.count == 5, "\(daemon.standardError)")
        guard numbers.count == 5 else { return false }
        #expect(numbers[0] == pairs - 1)
        #expect(numbers[3] == 0)
        return numbers[1] < numbers[0] && numbers[2] > 1
    }

    @Test("a pipelined run of reads larger than --max-queued: too_many_requests beyond the limit, in order, then served again")
    func runBeyondTheLimit() throws {
        let daemon = try DaemonHarness.start(["--max-queued", "8"])
        defer { daemon.stop() }
        let client = try daemon.connect()
        let ids = try Self.people(3, client: client)
        let count = 200
        var lines = ""
        for index in 0..<count { lines += #"{"id":\#(index),"op":"get","ids":["\#(ids[index % 3])"]}"# + "\n" }
        try client.send(raw: Array(lines.utf8))
        var served = 0, refused = 0
        for index in 0..<count {
            let reply = try #require(try client.readLine())
            #expect(reply["id"] == .integer(Int64(index)))
            if reply["ok"] == true {
                served += 1
                #expect(reply["result"]?["objects"]?.element(0)?["values"]?["name"] == .string("p\(index % 3)"))
            } else {
                refused += 1
                #expect(reply["error"]?.string("code") == "too_many_requests")
                #expect(reply["error"]?["limit"] == 8)
            }
        }
        #expect(served >= 1)
        #expect(refused >= 1)
        #expect(served + refused == count)
        // The connection goes on.
        #expect(try client.result(["op": "get", "ids": .array([.string(ids[0])])])["objects"]?.element(0)?["values"]?["name"] == "p0")
    }
}

extension JSON {
    /// The element at `index` of an array, or `nil`.
    fileprivate func element(_ index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}
