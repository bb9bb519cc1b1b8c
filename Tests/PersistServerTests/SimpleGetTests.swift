import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// `get`s of one ID read straight from their line's bytes (`SimpleGet`): each stands for
/// exactly the request the general decoder gives for its line, and the session answers them
/// with the very bytes of the general path, whatever state their objects are in.
@Suite("simple gets: the general decoder's requests, the general path's replies", .timeLimit(.minutes(1)))
struct SimpleGetTests {
    /// The outcome of parsing `line` under `prefix`, and the general decoder's request.
    static func both(_ line: String, prefix: WireObjectIDPrefix) -> (SimpleGet.Outcome, WireRequest?) {
        let bytes = Array(line.utf8)
        let outcome = bytes.withUnsafeBufferPointer { SimpleGet.parse($0, prefix: prefix) }
        return (outcome, try? WireRequest.decode(bytes))
    }

    /// The session's prefix for `text`, an ID of a simple form (parsed once to set it).
    static func prefix(of text: String, session: Session) throws -> WireObjectIDPrefix {
        _ = try WireObjectID.parse(.string(text), coordinator: session.state.coordinator, what: "ids", prefix: session.idPrefix)
        return try #require(session.idPrefix.withLock { $0 })
    }

    /// Calls `body` with the `Person` IDs' text before `p` in a fresh store, and a session's
    /// prefix for it.
    static func withPersonPrefix(_ body: (_ base: String, _ prefix: WireObjectIDPrefix) throws -> Void) throws {
        try InsertSaveGroupCommitTests.withState { state, _ in
            let session = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "parse")
            let storeID = try #require(state.coordinator.persistentStores.first?.identifier)
            let base = "x-coredata://\(storeID)/Person/"
            try body(base, try prefix(of: base + "p1", session: session))
        }
    }

    @Test("lines of one-ID gets under the prefix are taken, and rebuild the decoder's request; others are declined")
    func parsedLinesRebuildTheDecodedRequest() throws {
        try Self.withPersonPrefix { base, prefix in
            let taken = [
                #"{"id":1,"op":"get","ids":["\#(base)p42"]}"#,
                #"{"ids":["\#(base)p0"],"op":"get","id":"s7"}"#,
                #"{"op":"get","ids":["\#(base)p9223372036854775807"]}"#,
                #"{"op":"get","id":-12,"ids":["\#(base)p5"]}"#,
                "\t { \"id\" : 0 , \"op\" : \"get\" , \"ids\" : [ \"\(base)p3\" ] } \r",
                #"{"id":"","op":"get","ids":["\#(base)p1"]}"#,
                #"{"id":123456789012345678,"op":"get","ids":["\#(base)p1"]}"#,
                #"{"id":-0,"op":"get","ids":["\#(base)p1"]}"#,
            ]
            for line in taken {
                let (outcome, decoded) = Self.both(line, prefix: prefix)
                guard case .get(let get) = outcome else {
                    Issue.record("declined: \(line)")
                    continue
                }
                #expect(get.request == decoded, "\(line)")
            }
            let otherPrefix = [
                #"{"id":1,"op":"get","ids":["\#(base)p007"]}"#,
                #"{"id":1,"op":"get","ids":["\#(base)p99999999999999999999"]}"#,
                #"{"id":1,"op":"get","ids":["\#(base)p"]}"#,
                #"{"id":1,"op":"get","ids":["\#(base)p1x"]}"#,
                #"{"id":1,"op":"get","ids":["\#(base.replacingOccurrences(of: "/Person/", with: "/Beer/"))p1"]}"#,
                #"{"id":1,"op":"get","ids":["x-coredata://00000000-0000-0000-0000-000000000000/Person/p1"]}"#,
                #"{"id":1,"op":"get","ids":["nonsense"]}"#,
            ]
            for line in otherPrefix {
                let (outcome, _) = Self.both(line, prefix: prefix)
                guard case .otherPrefix = outcome else {
                    Issue.record("not left to another prefix: \(line)")
                    continue
                }
            }
            let other = [
                #"{"id":1,"op":"get","ids":["\#(base)p1","\#(base)p2"]}"#,
                #"{"id":1,"op":"get","ids":[]}"#,
                #"{"id":1,"op":"get","ids":["\#(base)p1"],"properties":["name"]}"#,
                #"{"id":1,"op":"fetch","ids":["\#(base)p1"]}"#,
                #"{"id":1,"op":"gets","ids":["\#(base)p1"]}"#,
                #"{"id":1,"op":"get"}"#,
                #"{"id":1,"ids":["\#(base)p1"]}"#,
                #"{"id":1,"id":2,"op":"get","ids":["\#(base)p1"]}"#,
                #"{"id":1,"op":"get","ids":["\#(base)p1"],"ids":["\#(base)p1"]}"#,
                #"{"id":null,"op":"get","ids":["\#(base)p1"]}"#,
                #"{"id":1.5,"op":"get","ids":["\#(base)p1"]}"#,
                #"{"id":01,"op":"get","ids":["\#(base)p1"]}"#,
                #"{"id":"a\"b","op":"get","ids":["\#(base)p1"]}"#,
                #"{"id":1,"op":"get","ids":["\#(base)p1"]} x"#,
                #"{"id":1,"op":"get","ids":["\#(base)p1"],}"#,
                #"{"id":1,"op":"get","ids":["\#(base)p1"]"#,
                #"{"id":1,"op":"get","ids":"\#(base)p1"}"#,
                #"{"id":1,"op":"get","ids":[1]}"#,
                #"{"id":1,"op":"get","ids":["\#(base)p1"] "x":1}"#,
                #"{"id":1,"op":"g\u0065t","ids":["\#(base)p1"]}"#,
                #"[{"id":1,"op":"get","ids":["\#(base)p1"]}]"#,
                "",
            ]
            for line in other {
                let (outcome, _) = Self.both(line, prefix: prefix)
                guard case .other = outcome else {
                    Issue.record("not declined: \(line)")
                    continue
                }
            }
        }
    }

    @Test("random edits of get lines: a line taken rebuilds exactly the request the decoder gives")
    func mutations() throws {
        try Self.withPersonPrefix { base, prefix in
            let seeds = [
                #"{"id":17,"op":"get","ids":["\#(base)p42"]}"#,
                #"{ "ids" : [ "\#(base)p305" ] , "id" : "abc" , "op" : "get" }"#,
                #"{"op":"get","ids":["\#(base)p1"]}"#,
            ]
            var generator = MigrationCrashTests.SplitMix64(state: 0x6E7)
            let alphabet = Array(#"{}[]",: -0123456789.eE\"abgiopdstux/é"#.utf8) + [0x00, 0x09, 0x0A, 0x0D, 0x80, 0xFF]
            var taken = 0
            for round in 0..<6_000 {
                let bytes = LineMutation.mutated(seeds[round % seeds.count], alphabet: alphabet, generator: &generator)
                let outcome = bytes.withUnsafeBufferPointer { SimpleGet.parse($0, prefix: prefix) }
                guard case .get(let get) = outcome else { continue }
                taken += 1
                let decoded = try? WireRequest.decode(bytes)
                #expect(get.request == decoded, "\(String(decoding: bytes, as: UTF8.self))")
            }
            #expect(taken > 100)
        }
    }

    /// The lines `answerSimpleGetsNow` writes for `lines` and those `answerGetsNow` (the general
    /// path, with the requests the decoder gives) writes, each batch alone and as one batch.
    static func compare(_ lines: [String], session: Session, prefix: WireObjectIDPrefix,
                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        var gets: [SimpleGet] = []
        for line in lines {
            let bytes = Array(line.utf8)
            guard case .get(let get) = bytes.withUnsafeBufferPointer({ SimpleGet.parse($0, prefix: prefix) }) else {
                Issue.record("declined: \(line)", sourceLocation: sourceLocation)
                return
            }
            gets.append(get)
        }
        let requests = try lines.map { try WireRequest.decode(Array($0.utf8)) }
        for batch in [gets.map { [$0] }, [gets]].joined() {
            var fast: [UInt8] = []
            #expect(session.answerSimpleGetsNow(batch, into: &fast), sourceLocation: sourceLocation)
            var general: [UInt8] = []
            #expect(session.answerGetsNow(batch.map(\.request), into: &general), sourceLocation: sourceLocation)
            #expect(fast.filter { $0 == UInt8(ascii: "\n") }.count == batch.count, sourceLocation: sourceLocation)
            #expect(String(decoding: fast, as: UTF8.self) == String(decoding: general, as: UTF8.self), sourceLocation: sourceLocation)
        }
        // And in one batch, the general decoder's requests.
        var fast: [UInt8] = []
        #expect(session.answerSimpleGetsNow(gets, into: &fast), sourceLocation: sourceLocation)
        var general: [UInt8] = []
        #expect(session.answerGetsNow(requests, into: &general), sourceLocation: sourceLocation)
        #expect(fast == general, sourceLocation: sourceLocation)
    }

    @Test("the session's replies: every attribute type, relationships, missing and deleted objects, other sessions' saves, own pending changes")
    func repliesMatchTheGeneralPath() throws {
        try InsertSaveGroupCommitTests.withState { state, _ in
            let writer = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "writer")
            let reader = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "reader")
            let brewery = try InProcessServerState.result(writer, "insert", ["entity": "Brewery", "values": [
                "name": "North", "city": "Oslo", "founded": 1911]])["object"]?.string("id") ?? ""
            let tag = try InProcessServerState.result(writer, "insert", ["entity": "Tag", "values": ["name": "hoppy"]])["object"]?.string("id") ?? ""
            var beers: [String] = []
            for index in 0..<4 {
                var values: [JSON.Member] = [
                    JSON.Member("name", .string("beer \(index) \"quoted\" é")), JSON.Member("abv", .double(4.5 + Double(index))),
                    JSON.Member("ibu", .integer(Int64(20 + index))), JSON.Member("isFavorite", .bool(index % 2 == 0)),
                    JSON.Member("brewedOn", .string("2024-0\(index + 1)-02T03:04:05Z")),
                    JSON.Member("price", .string("\(index).25")), JSON.Member("brewery", .string(brewery)),
                    JSON.Member("uuid", .string("6F9619FF-8B86-D011-B42D-00C04FC964F\(index)")),
                    JSON.Member("label", .string("AAEC")), JSON.Member("website", .string("https://example.com/\(index)")),
                    JSON.Member("tags", .array(index < 2 ? [.string(tag)] : [])),
                ]
                if index == 3 { values.removeAll { ["abv", "label", "website", "brewedOn", "price", "brewery"].contains($0.key) } }
                let result = try InProcessServerState.result(writer, "insert", ["entity": "Beer", "values": .object(values)])
                beers.append(result["object"]?.string("id") ?? "")
            }
            _ = try InProcessServerState.result(writer, "save")
            let person = try InProcessServerState.result(writer, "insert", ["entity": "Person", "values": ["name": "Ada"]])["object"]?.string("id") ?? ""
            _ = try InProcessServerState.result(writer, "save")
            let beerPrefix = try Self.prefix(of: beers[0], session: reader)
            let personPrefix = try Self.prefix(of: person, session: reader)
            let missing = String(beers[0][..<(beers[0].range(of: "/p", options: .backwards)?.lowerBound ?? beers[0].endIndex)]) + "/p999999"
            func line(_ id: Int, _ text: String) -> String { #"{"id":\#(id),"op":"get","ids":["\#(text)"]}"# }
            let beerLines = beers.enumerated().map { line($0.offset, $0.element) } + [line(9, missing), line(10, beers[1])]
            // Objects not yet in the view context, then loaded.
            try Self.compare(beerLines, session: reader, prefix: beerPrefix)
            try Self.compare(beerLines, session: reader, prefix: beerPrefix)
            try Self.compare([line(1, person)], session: reader, prefix: personPrefix)
            // Another session's save: the next gets read the new values.
            _ = try InProcessServerState.result(writer, "update", ["object": .string(beers[1]), "values": ["ibu": 99, "name": "renamed"]])
            _ = try InProcessServerState.result(writer, "update", ["object": .string(person), "values": ["age": 37]])
            _ = try InProcessServerState.result(writer, "save")
            var fast: [UInt8] = []
            let gets = [line(1, person)].compactMap { text -> SimpleGet? in
                let bytes = Array(text.utf8)
                guard case .get(let get) = bytes.withUnsafeBufferPointer({ SimpleGet.parse($0, prefix: personPrefix) }) else { return nil }
                return get
            }
            #expect(reader.answerSimpleGetsNow(gets, into: &fast))
            let reply = try JSONParser.parse(Array(fast.dropLast()))
            #expect(reply["result"]?["objects"]?.arrayValue?.first?["values"]?["age"] == .integer(37))
            try Self.compare(beerLines, session: reader, prefix: beerPrefix)
            try Self.compare([line(1, person)], session: reader, prefix: personPrefix)
            // A deleted object, saved: not found, as on the general path.
            _ = try InProcessServerState.result(writer, "delete", ["object": .string(beers[2])])
            _ = try InProcessServerState.result(writer, "save")
            try Self.compare(beerLines, session: reader, prefix: beerPrefix)
            // The reader's own pending changes: read on its own context, deleted objects included.
            _ = try InProcessServerState.result(reader, "update", ["object": .string(beers[0]), "values": ["ibu": 7]])
            _ = try InProcessServerState.result(reader, "delete", ["object": .string(beers[3])])
            let pending = reader.hasPendingChanges.load(ordering: .acquiring)
            #expect(pending)
            try Self.compare(beerLines, session: reader, prefix: beerPrefix)
            _ = try InProcessServerState.result(reader, "rollback")
        }
    }
}
