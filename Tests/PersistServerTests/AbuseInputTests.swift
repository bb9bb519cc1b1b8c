import Foundation
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// Hostile input: JSON attacks, SQL injection, the socket path (issue 9, items 9–11).
@Suite("Abuse: input and socket", .timeLimit(.minutes(2)))
struct AbuseInputTests {
    /// Lines a hostile client may send; each must get a `bad_request`, and the connection must go on.
    static let hostileLines: [(String, [UInt8])] = [
        ("depth 100,000", Array(#"{"op":"ping","x":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: 100_000)
            + Array(repeating: UInt8(ascii: "]"), count: 100_000) + [UInt8(ascii: "}")]),
        ("1e400", Array(#"{"op":"fetch","entity":"Person","limit":1e400}"#.utf8)),
        ("-1e400 as a value", Array(#"{"op":"insert","entity":"Beer","values":{"abv":-1e400}}"#.utf8)),
        ("2^64", Array(#"{"op":"fetch","entity":"Person","limit":18446744073709551616}"#.utf8)),
        ("2^64 as an id", Array(#"{"id":18446744073709551616,"op":"ping"}"#.utf8)),
        ("invalid UTF-8", Array(#"{"op":"insert","entity":"Person","values":{"name":""#.utf8) + [0xC3, 0x28] + Array(#""}}"#.utf8)),
        ("overlong UTF-8", Array(#"{"op":"ping","x":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8)),
        ("a lone high surrogate", Array(#"{"op":"insert","entity":"Person","values":{"name":"\ud800"}}"#.utf8)),
        ("a lone low surrogate", Array(#"{"op":"insert","entity":"Person","values":{"name":"x\udc00y"}}"#.utf8)),
        ("NUL in an entity name", Array(#"{"op":"count","entity":"Person\u0000"}"#.utf8)),
        ("NUL in a key", Array(#"{"op":"insert","entity":"Person","values":{"name\u0000":"x"}}"#.utf8)),
        ("NUL in op", Array(#"{"op":"ping\u0000"}"#.utf8)),
        ("a raw NUL byte", Array(#"{"op":"ping","x":""#.utf8) + [0] + Array(#""}"#.utf8)),
        ("duplicate op", Array(#"{"op":"ping","op":"stats"}"#.utf8)),
        ("duplicate values key", Array(#"{"op":"insert","entity":"Person","values":{"name":"a","name":"b"}}"#.utf8)),
    ]

    @Test("JSON attacks: each a typed error (bad_request, or unknown_* for a name), never a crash, never a silent repair")
    func jsonAttacks() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        for (name, line) in Self.hostileLines {
            try client.send(raw: line + [0x0A])
            let reply = try #require(try client.readLine(), "\(name): no reply")
            #expect(reply["ok"] == false, "\(name): \(reply.encoded)")
            let code = reply["error"]?.string("code") ?? ""
            #expect(["bad_request", "unknown_op", "unknown_entity", "unknown_property"].contains(code), "\(name): \(reply.encoded)")
            #expect(try client.result(["op": "ping"]) == ["pong": true], "\(name): the connection did not go on")
        }
        // Nothing was inserted by any of them.
        _ = try client.result(["op": "save"])
        #expect(try client.result(["op": "count", "entity": "Person"]) == ["count": 0])
    }

    @Test("SQL injection: key paths are only model names; quotes, %, _ and \\ in values match literally")
    func sqlInjection() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        let hostile = [#"O'Brien"#, "100%", "a_c", #"back\slash"#, #"x"; DROP TABLE ZPERSON; --"#, "abc", "a%c", #"it''s"#]
        for name in hostile {
            _ = try client.result(["op": "insert", "entity": "Person", "values": ["name": .string(name)]])
        }
        _ = try client.result(["op": "save"])
        for key in [#"name"; DROP TABLE ZPERSON; --"#, "name) OR 1=1 --", "ZNAME", "Z_PK", "name'"] {
            let error = try client.error(["op": "fetch", "entity": "Person", "predicate": "%K == 'x'", "arguments": [.string(key)]])
            #expect(["unknown_property", "predicate_syntax", "bad_request"].contains(error.string("code")), "\(key): \(error.encoded)")
            #expect(!error.string("message").lowercased().contains("sqlite"))
            let sorted = try client.error(["op": "fetch", "entity": "Person", "sort": [.string(key)]])
            #expect(sorted.string("code") == "unknown_property", "\(key): \(sorted.encoded)")
            let projected = try client.error(["op": "fetch", "entity": "Person", "resultType": "dictionaries", "properties": [.string(key)]])
            #expect(projected.string("code") == "unknown_property", "\(key): \(projected.encoded)")
        }
        for name in hostile {
            #expect(try client.result(["op": "count", "entity": "Person", "predicate": "name == %@", "arguments": [.string(name)]]) == ["count": 1], "== \(name)")
            #expect(try client.result(["op": "count", "entity": "Person", "predicate": "name BEGINSWITH %@", "arguments": [.string(name)]]) == ["count": 1], "BEGINSWITH \(name)")
            #expect(try client.result(["op": "count", "entity": "Person", "predicate": "name ENDSWITH %@", "arguments": [.string(name)]]) == ["count": 1], "ENDSWITH \(name)")
        }
        // SQL's wildcards are not ours: % and _ are literal in LIKE, CONTAINS, BEGINSWITH.
        #expect(try client.result(["op": "count", "entity": "Person", "predicate": "name LIKE 'a%c'"]) == ["count": 1])
        #expect(try client.result(["op": "count", "entity": "Person", "predicate": "name LIKE 'a_c'"]) == ["count": 1])
        #expect(try client.result(["op": "count", "entity": "Person", "predicate": "name CONTAINS '%'"]) == ["count": 2])
        #expect(try client.result(["op": "count", "entity": "Person", "predicate": "name CONTAINS '_'"]) == ["count": 1])
        #expect(try client.result(["op": "count", "entity": "Person", "predicate": "name BEGINSWITH 'a_'"]) == ["count": 1])
        #expect(try client.result(["op": "count", "entity": "Person", "predicate": #"name CONTAINS "\\""#]) == ["count": 1])
        // The table is still there, whole.
        #expect(try client.result(["op": "count", "entity": "Person"]) == ["count": .integer(Int64(hostile.count))])
        // Entity names too come only from the model.
        let error = try client.error(["op": "count", "entity": #"Person"; DROP TABLE ZPERSON; --"#])
        #expect(error.string("code") == "unknown_entity")
    }

    @Test("the socket is never created through a symlink, nor over a planted file or a live socket")
    func socketPlanting() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("elsewhere.sock").path
        let socketPath = directory.appendingPathComponent("p.sock").path
        // A dangling symlink at the path: bind does not follow it, and it is not replaced.
        try FileManager.default.createSymbolicLink(atPath: socketPath, withDestinationPath: target)
        let process = Process()
        process.executableURL = ModelCheckTests.binary
        process.arguments = ["--model", DaemonHarness.modelPath, "--store", directory.appendingPathComponent("s.sqlite").path,
                             "--socket", socketPath]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: socketPath)) == target)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("s.sqlite").path))
    }
}
