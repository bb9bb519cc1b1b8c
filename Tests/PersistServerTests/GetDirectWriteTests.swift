import Foundation
import Testing
@testable import PersistServer

/// `get`s answered at once write their replies straight into the connection's output; a `get`
/// that fails after part of its reply is written leaves none of it, only its error line.
@Suite("get replies written into the connection's output: the same lines, failed gets leave nothing behind",
       .timeLimit(.minutes(1)))
struct GetDirectWriteTests {
    @Test("gets failing midway (a missing second ID, an unknown property, another store) give the lines of gets sent one by one")
    func failuresMidwayLeaveOnlyTheErrorLine() throws {
        let daemon = try DaemonHarness.start(["--max-queued", "1000"])
        defer { daemon.stop() }
        let client = try daemon.connect()
        let ids = try PipelinedBatchTests.people(3, client: client)
        let prefix = String(ids[0][..<(ids[0].range(of: "/p", options: .backwards)?.lowerBound ?? ids[0].endIndex)])
        let otherStore = "x-coredata://00000000-0000-0000-0000-000000000000/Person/p1"
        let unknownEntity = ids[0].replacingOccurrences(of: "/Person/", with: "/Nobody/")
        var lines: [String] = []
        for round in 0..<4 {
            let base = round * 10
            lines += [
                #"{"id":\#(base + 1),"op":"get","ids":["\#(ids[0])","\#(ids[1])"]}"#,
                #"{"id":\#(base + 2),"op":"get","ids":["\#(ids[0])","\#(prefix)/p999999"]}"#,
                #"{"id":\#(base + 3),"op":"get","ids":["\#(ids[2])","\#(ids[1])"],"properties":["name","nope"]}"#,
                #"{"id":\#(base + 4),"op":"get","ids":["\#(ids[1])","\#(otherStore)"]}"#,
                #"{"id":\#(base + 5),"op":"get","ids":["\#(ids[2])","\#(unknownEntity)"]}"#,
                #"{"id":"s\#(base + 6)","op":"get","ids":["\#(ids[2])"],"properties":["name"]}"#,
            ]
        }
        // One by one: each get alone on the connection.
        var single: [[UInt8]] = []
        for line in lines {
            try client.send(line: line)
            single.append(try #require(try client.readRawLine(), "no reply to \(line)"))
        }
        // All at once: batches of gets answered in one hop, written into the output together.
        try client.send(raw: Array((lines.joined(separator: "\n") + "\n").utf8))
        for (index, expected) in single.enumerated() {
            let reply = try #require(try client.readRawLine(), "reply \(index) of \(lines.count) is missing")
            #expect(reply == expected, "reply \(index): \(String(decoding: reply, as: UTF8.self))")
        }
        // The error lines are the failures themselves, nothing of the objects written before.
        let failed = try JSONParser.parse(single[1])
        #expect(failed["ok"] == false)
        #expect(failed["error"]?.string("code") == "not_found")
        #expect(failed["result"] == nil)
        #expect(try JSONParser.parse(single[2])["error"]?.string("code") == "unknown_property")
        #expect(try JSONParser.parse(single[3])["error"]?.string("code") == "not_found")
        #expect(try JSONParser.parse(single[4])["error"]?.string("code") == "not_found")
        guard case .array(let objects)? = try JSONParser.parse(single[0])["result"]?["objects"] else {
            Issue.record("no objects: \(String(decoding: single[0], as: UTF8.self))")
            return
        }
        #expect(objects.map { $0["values"]?["name"] } == [.string("p0"), .string("p1")])
    }
}
