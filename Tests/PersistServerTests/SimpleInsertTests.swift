import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// `insert`s kept as their line's bytes (`SimpleInsert`) and `{"id":N,"op":…}` lines matched
/// whole: each decodes to exactly the request the general parser gives, and the session makes
/// the same object, or throws the same error, from the bytes as from the general request.
@Suite("simple inserts: the general parser's requests, the general path's objects and errors", .timeLimit(.minutes(1)))
struct SimpleInsertTests {
    /// The request the general parser alone gives for `bytes` (`nil` when it refuses the line),
    /// by the checks `WireRequest.decode` makes.
    static func generalRequest(_ bytes: [UInt8]) -> WireRequest? {
        guard let json = try? JSONParser.parse(bytes), case .object = json, case .string(let op)? = json["op"] else { return nil }
        let id = json["id"] ?? .null
        switch id {
        case .string, .integer, .null: return WireRequest(id: id, op: op, body: json)
        default: return nil
        }
    }

    static let uuid = "6F9619FF-8B86-D011-B42D-00C04FC964FF"

    /// Lines the byte path keeps.
    static let kept: [String] = [
        #"{"id":1,"op":"insert","entity":"Beer","values":{"name":"Duvel","abv":8,"ibu":32}}"#,
        #"{"op":"insert","entity":"Beer","values":{}}"#,
        #"{"values":{"ibu":5,"name":"X"},"entity":"Beer","op":"insert","id":"s1"}"#,
        " \t{ \"id\" : -3 , \"op\" : \"insert\" , \"entity\" : \"Beer\" , \"values\" : { \"name\" : \"A\" , \"ibu\" : 0 } } \r",
        #"{"id":2,"op":"insert","entity":"Nope","values":{"a":1}}"#,
        #"{"id":3,"op":"insert","entity":"Beer","values":{"brewedOn":"2026-01-31T12:00:00.000Z","uuid":"\#(uuid)","price":"3.50","website":"https://b.example/x","label":"AAEC"}}"#,
    ]

    /// Valid lines the byte path leaves to the general parser.
    static let declined: [String] = [
        #"{"id":1,"op":"insert","entity":"Beer","values":{"abv":8.5}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"isFavorite":true}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"name":null}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"tags":[]}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"name":"a\"b"}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"name":"é"}}"#,
        #"{"id":1,"op":"insert","entity":"Beer"}"#,
        #"{"id":1,"op":"insert","values":{}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{},"extra":1}"#,
        #"{"id":1,"op":"update","entity":"Beer","values":{}}"#,
        #"{"id":1.5,"op":"insert","entity":"Beer","values":{}}"#,
        #"{"id":["a"],"op":"insert","entity":"Beer","values":{}}"#,
        #"{"id":1,"op":"insert","entity":["Beer"],"values":{}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"ibu":12345678901234567890}}"#,
    ]

    /// Lines that are not JSON: the byte path declines, and decoding reports the general error.
    static let malformed: [String] = [
        #"{"id":1,"op":"insert","entity":"Beer","values":{"a":1,"a":2}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","entity":"Beer","values":{}}"#,
        #"{"id":1,"id":1,"op":"insert","entity":"Beer","values":{}}"#,
        #"{"id":1,"op":"insert","op":"insert","entity":"Beer","values":{}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"a":1,}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"a":1}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"a":01}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"a"}}"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"a":1}} x"#,
        #"{"id":1,"op":"insert","entity":"Beer","values":{"a":1},}"#,
    ]

    @Test("kept lines decode to the general parser's request; others to the general request")
    func decodedRequests() throws {
        for line in Self.kept {
            let bytes = Array(line.utf8)
            let request = try WireRequest.decode(bytes)
            #expect(request.insert != nil, "not kept: \(line)")
            #expect(request == Self.generalRequest(bytes), "\(line)")
            #expect(request.op == "insert")
            #expect(request.id == Self.generalRequest(bytes)?.id)
        }
        for line in Self.declined {
            let bytes = Array(line.utf8)
            // (Some are not usable requests: both refuse those.)
            let request = try? WireRequest.decode(bytes)
            #expect(request?.insert == nil, "kept: \(line)")
            #expect(request == Self.generalRequest(bytes), "\(line)")
        }
        for line in Self.malformed {
            #expect(SimpleInsert.parse(Array(line.utf8)) == nil, "kept: \(line)")
            #expect(throws: WireRequest.DecodingFailure.self, "\(line)") { try WireRequest.decode(Array(line.utf8)) }
        }
    }

    @Test("a request's body set anew replaces the kept line")
    func settingTheBody() throws {
        var request = try WireRequest.decode(Array(Self.kept[0].utf8))
        request.body = ["op": "insert", "entity": "Person", "values": [:]]
        #expect(request.insert == nil)
        #expect(request.body == ["op": "insert", "entity": "Person", "values": [:]])
    }

    @Test("a copy of a request is a value: setting its id, op or body leaves the original as it was")
    func copiesAreValues() throws {
        let original = try WireRequest.decode(Array(Self.kept[0].utf8))
        let before = (original.id, original.op, original.body)
        var copy = original
        copy.id = .string("other")
        copy.op = "get"
        #expect(copy.insert != nil && copy.id == .string("other") && copy.op == "get")
        copy.body = ["op": "get"]
        #expect(copy.insert == nil && copy.body == ["op": "get"])
        #expect(original.insert != nil)
        #expect(original.id == before.0 && original.op == before.1 && original.body == before.2)
        #expect(original != copy)
    }

    @Test("many keys: all distinct are kept; a repeat of any earlier one, however far back, is declined")
    func manyKeys() throws {
        let keys = (0..<150).map { "k\($0)" }
        func line(_ keys: [String]) -> [UInt8] {
            Array(("{\"op\":\"insert\",\"entity\":\"Beer\",\"values\":{" + keys.map { "\"\($0)\":1" }.joined(separator: ",") + "}}").utf8)
        }
        #expect(SimpleInsert.parse(line(keys)) != nil)
        for repeated in [0, 1, 63, 64, 100, 149] {
            #expect(SimpleInsert.parse(line(keys + [keys[repeated]])) == nil, "repeat of \(keys[repeated])")
        }
    }

    @Test("`id` and `op` lines are matched whole, as the general parser reads them")
    func bareLines() throws {
        for line in [#"{"id":7,"op":"save"}"#, #"{"id":-1,"op":"ping"}"#, #"{"id":0,"op":"save"} "#, #"{"op":"save","id":7}"#,
                     #"{"id":7,"op":"sa\"ve"}"#, #"{"id":7.0,"op":"save"}"#] {
            let bytes = Array(line.utf8)
            #expect((try? WireRequest.decode(bytes)) == Self.generalRequest(bytes), "\(line)")
        }
    }

    @Test("random edits of insert lines: decoding gives the general parser's request or its refusal")
    func mutations() {
        var generator = MigrationCrashTests.SplitMix64(state: 0x1A5E)
        let alphabet = Array(#"{}[]",: -0123456789.eE\"abinopstuvé"#.utf8) + [0x00, 0x09, 0x0A, 0x80]
        let lines = Self.kept + [#"{"id":7,"op":"save"}"#]
        var kept = 0
        for round in 0..<6_000 {
            let bytes = LineMutation.mutated(lines[round % lines.count], alphabet: alphabet, generator: &generator)
            let general = Self.generalRequest(bytes)
            if let request = try? WireRequest.decode(bytes) {
                if request.insert != nil { kept += 1 }
                #expect(request == general, "\(String(decoding: bytes, as: UTF8.self))")
            } else {
                #expect(general == nil, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(kept > 0)
    }

    /// Inserts of the byte path and of the general path, compared in one context.
    static let inserts: [String] = [
        #"{"entity":"Beer","values":{"name":"Duvel","abv":8,"ibu":32,"style":"Ale","brewedOn":"2026-01-31T12:00:00.000Z","uuid":"\#(uuid)","price":"3.50","label":"AAEC","website":"https://b.example/x"}}"#,
        #"{"entity":"Beer","values":{"website":"https://b.example/y","ibu":-32768,"name":"Out of order"}}"#,
        #"{"entity":"Beer","values":{}}"#,
        #"{"entity":"Brewery","values":{"founded":2147483647,"city":"Breendonk"}}"#,
        #"{"entity":"Person","values":{"age":32767}}"#,
    ]

    /// Inserts both paths refuse, with the same error.
    static let refused: [String] = [
        #"{"entity":"Nope","values":{"a":1}}"#,
        #"{"entity":"Beer","values":{"nope":1}}"#,
        #"{"entity":"Beer","values":{"name":"A","ibu":32768}}"#,
        #"{"entity":"Beer","values":{"name":5}}"#,
        #"{"entity":"Beer","values":{"ibu":"5"}}"#,
        #"{"entity":"Beer","values":{"isFavorite":1}}"#,
        #"{"entity":"Beer","values":{"uuid":"not-a-uuid"}}"#,
        #"{"entity":"Beer","values":{"label":"!!"}}"#,
        #"{"entity":"Beer","values":{"brewedOn":"yesterday"}}"#,
        #"{"entity":"Beer","values":{"price":"3,50"}}"#,
        #"{"entity":"Beer","values":{"name":"A","brewery":"x-coredata://\#(uuid)/Brewery/p1"}}"#,
        #"{"entity":"Beer","values":{"tags":"x"}}"#,
    ]

    /// The request of `line` (`{"entity":…,"values":…}`) with an `id` and `op` in front.
    static func insertRequest(_ line: String) throws -> WireRequest {
        try WireRequest.decode(Array((#"{"id":1,"op":"insert","# + line.dropFirst()).utf8))
    }

    @Test("the byte path makes the general path's object, and throws its errors, leaving nothing behind")
    func sameObjectsAndErrors() throws {
        try InsertSaveGroupCommitTests.withState { state, _ in
            let session = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "simple-insert")
            let context = session.context
            try context.performAndWait {
                for line in Self.inserts {
                    let request = try Self.insertRequest(line)
                    #expect(request.insert != nil, "not kept: \(line)")
                    let insert = try #require(request.insert)
                    let fast = try #require(try session.simpleInsertedObject(insert), "declined: \(line)")
                    let general = try session.insertedObject(request.body)
                    #expect(fast.entity === general.entity, "\(line)")
                    #expect(fast.objectID.isTemporaryID && fast.isInserted)
                    for slot in fast.entity.slots.indices {
                        #expect(fast.primitiveValue(atSlot: slot) == general.primitiveValue(atSlot: slot),
                                "\(line): \(fast.entity.slots[slot].name)")
                    }
                }
                let before = context.insertedObjects.count
                for line in Self.refused {
                    let request = try Self.insertRequest(line)
                    var fastError: WireError?, generalError: WireError?
                    do throws(WireError) { _ = try session.insertedObject(of: request) } catch { fastError = error }
                    do throws(WireError) { _ = try session.insertedObject(request.body) } catch { generalError = error }
                    #expect(fastError != nil, "\(line)")
                    #expect(fastError == generalError, "\(line): \(String(describing: fastError)) against \(String(describing: generalError))")
                    #expect(context.insertedObjects.count == before, "left an object: \(line)")
                }
                // A value that does not decode is reported by the byte path itself; an entity,
                // key or property it does not handle is left to the general path.
                for (line, thrown) in zip(Self.refused, [false, false, true, true, true, true, true, true, true, true, false, false]) {
                    let insert = try #require(try Self.insertRequest(line).insert)
                    var threw = false
                    do throws(WireError) {
                        #expect(try session.simpleInsertedObject(insert) == nil, "\(line)")
                    } catch {
                        threw = true
                    }
                    #expect(threw == thrown, "\(line)")
                }
            }
        }
    }
}
