import Foundation
import Testing
@testable import PersistServer

/// The transcripts in `protocol/examples/`, replayed against a live daemon, one fresh daemon each.
@Suite("protocol examples", .timeLimit(.minutes(1)))
struct ProtocolExampleTests {
    static let directory = DaemonHarness.packageRoot.appendingPathComponent("protocol/examples")

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".ndjson") }.sorted()
    }

    @Test("there are examples")
    func present() {
        #expect(Self.files.count >= 5)
    }

    @Test("each transcript replays exactly", arguments: files)
    func replay(file: String) throws {
        let text = try String(contentsOf: Self.directory.appendingPathComponent(file), encoding: .utf8)
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        var matcher = TranscriptMatcher()
        for (number, line) in text.split(separator: "\n").enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let json = try JSONParser.parse(String(line))
            if json["op"] != nil {
                try client.send(line: matcher.substitute(json).encoded)
            } else if json["ok"] != nil || json["event"] != nil {
                let reply = try #require(try client.readLine(), "\(file):\(number + 1): EOF instead of a reply")
                if let failure = matcher.match(json, reply) {
                    Issue.record("\(file):\(number + 1): \(failure)")
                    return
                }
            } else if json["raw"] != nil {
                try client.send(line: json.string("raw"))
            } else {
                #expect(json.members?.map(\.key) == ["comment"], "\(file):\(number + 1): a line is a request, a reply, {\"raw\"} or {\"comment\"}")
            }
        }
    }

    @Test("the placeholder matcher binds and checks")
    func matcher() {
        var matcher = TranscriptMatcher()
        #expect(matcher.match(["id": "x-coredata://${store}/Beer/p${pk}"], ["id": "x-coredata://ABC/Beer/p12"]) == nil)
        #expect(matcher.bindings == ["store": "ABC", "pk": "12"])
        #expect(matcher.match("x-coredata://${store}/Tag/p1", "x-coredata://XYZ/Tag/p1") != nil)
        #expect(matcher.match(["a": "*", "b": 1], ["a": [1, 2], "b": 1]) == nil)
        #expect(matcher.match(["a": 1, "b": 2], ["b": 2, "a": 1]) != nil)
        #expect(matcher.substitute(["ids": ["x-coredata://${store}/Beer/p${pk}"]]) == ["ids": ["x-coredata://ABC/Beer/p12"]])
    }
}
