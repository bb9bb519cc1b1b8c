import Testing
@testable import PersistServer

/// The request parser's fast path for flat lines (`SimpleRequestParser`): on every line it
/// either declines (and the general parser answers, with its own errors) or gives exactly the
/// general parser's value.
@Suite("simple request parser", .timeLimit(.minutes(1)))
struct SimpleRequestParserTests {
    static let id = "x-coredata://6F9619FF-8B86-D011-B42D-00C04FC964FF/Item/p42"

    /// Lines of the simple shape: the fast path must take them.
    static let simple: [String] = [
        #"{"id":1,"op":"get","ids":["\#(id)"]}"#,
        #"{"op":"get","id":"abc","ids":["\#(id)","\#(id)"]}"#,
        #"  {"id" : -7 , "op" : "get" , "ids" : [ "\#(id)" ] , "properties" : [ "i0" , "i1" ] }  "#,
        "\t{\"id\":0,\"op\":\"ping\"}\r",
        #"{"op":"hello"}"#,
        #"{}"#,
        #"{ }"#,
        #"{"id":123456789012345678,"op":"get","ids":[]}"#,
        #"{"id":-0,"op":"count","entity":"Item"}"#,
        #"{"op":"get","ids":[1,2,-3]}"#,
        #"{"op":"x","a":"","b":"~ !#$%&'()*+,-./:;<=>?@[]^_`{|}"}"#,
        #"{"op":"insert","entity":"Item","values":{"i0":1}}"#,
        #"{"id":9,"op":"insert","entity":"Item","values":{"i0":0,"i1":-1,"name":"Duvel","tags":[1,2],"none":[]}}"#,
        #" { "id" : "u" , "op" : "update" , "values" : { "a" : "x" , "b" : [ "c" ] } , "other" : { } } "#,
    ]

    /// Valid lines the fast path declines: the general parser gives their value.
    static let general: [String] = [
        #"{"id":1,"op":"get","ids":["a\"b"]}"#,
        #"{"id":1,"op":"get","ids":["\u0041"]}"#,
        #"{"id":1,"op":"get","ids":["é"]}"#,
        #"{"id":1.5,"op":"get"}"#,
        #"{"id":1e3,"op":"get"}"#,
        #"{"id":1234567890123456789,"op":"get"}"#,
        #"{"id":99999999999999999999,"op":"get"}"#,
        #"{"id":null,"op":"get"}"#,
        #"{"id":true,"op":"get"}"#,
        #"{"op":"insert","entity":"Item","values":{"i0":{"deeper":1}}}"#,
        #"{"op":"insert","entity":"Item","values":{"i0":1.5}}"#,
        #"{"op":"insert","entity":"Item","values":{"i0":null}}"#,
        #"{"op":"get","ids":[{"i0":1}]}"#,
        #"{"op":"get","ids":[["nested"]]}"#,
        #"{"op":"get","ids":[null]}"#,
        #"[1,2]"#,
        #""just a string""#,
        #"7"#,
    ]

    /// Lines that are not JSON (or not one object): the fast path declines, the general parser throws.
    static let malformed: [String] = [
        "", " ", "{", "}", "{,}", #"{"id"}"#, #"{"id":}"#, #"{"id":1,}"#, #"{"id":1 "op":"get"}"#,
        #"{"id":01,"op":"get"}"#, #"{"id":-,"op":"get"}"#, #"{"id":1.,"op":"get"}"#, #"{"id":1e,"op":"get"}"#,
        #"{"id":1,"op":"get""#, #"{"id":1,"op":"get"} x"#, #"{"id":1,"op":"get"}{"#, #"{"op":"get","ids":["a"}"#,
        #"{"op":"get","ids":["a",]}"#, #"{"op":"get","ids":[,]}"#, #"{"op":"get","ids":["a""b"]}"#,
        #"{"op":"get","op":"get"}"#, #"{"id":1,"id":2}"#, "{\"op\":\"a\u{01}b\"}", #"{"op":"get\"}"#,
        #"{op:"get"}"#, #"{'op':'get'}"#, #"{"op":"\x"}"#, #"{"id":--1}"#, #"{"id":+1}"#,
        #"{"op":"insert","values":{"a":1,"a":2}}"#, #"{"op":"insert","values":{"a":1}"#, #"{"op":"insert","values":{"a":1,}}"#,
        #"{"op":"insert","values":{"a"}}"#, #"{"op":"insert","values":{,}}"#, #"{"op":"insert","values":{"a":1}}}"#,
        #"{"op":"insert","values":{"a":1} x}"#,
    ]

    /// The fast path's value of `line`, and the general parser's (`nil` when it throws).
    static func both(_ line: String) -> (fast: JSON?, general: JSON?) {
        let bytes = Array(line.utf8)
        return (SimpleRequestParser.parse(bytes), try? JSONParser.parse(bytes))
    }

    @Test("simple lines: the fast path gives the general parser's value, member order included")
    func simpleLines() throws {
        for line in Self.simple {
            let (fast, general) = Self.both(line)
            #expect(fast != nil, "declined: \(line)")
            #expect(general != nil, "general parser refused: \(line)")
            #expect(fast == general, "\(line)")
        }
    }

    @Test("other valid lines are left to the general parser")
    func generalLines() {
        for line in Self.general {
            let (fast, general) = Self.both(line)
            #expect(general != nil, "\(line)")
            #expect(fast == nil || fast == general, "\(line)")
        }
        // Non-flat shapes and numbers it does not decide are declined outright.
        for line in Self.general.prefix(16) { #expect(Self.both(line).fast == nil, "\(line)") }
    }

    @Test("malformed lines are declined, and decoding reports the general parser's error")
    func malformedLines() {
        for line in Self.malformed {
            let (fast, general) = Self.both(line)
            #expect(fast == nil, "accepted malformed: \(line)")
            #expect(general == nil, "general parser accepted: \(line)")
            var message: String?
            do {
                _ = try WireRequest.decode(Array(line.utf8))
            } catch {
                message = error.error.message
                #expect(error.id == .null)
                #expect(error.error.code == .badRequest)
            }
            do {
                _ = try JSONParser.parse(Array(line.utf8))
            } catch {
                #expect(message == "the line is not valid JSON: \(error)", "\(line)")
            }
        }
    }

    @Test("decoding a request gives the same id, op and body either way; its checks still apply")
    func decodedRequests() throws {
        let request = try WireRequest.decode(Array(Self.simple[0].utf8))
        #expect(request.id == .integer(1))
        #expect(request.op == "get")
        #expect(request.body == (try JSONParser.parse(Self.simple[0])))
        // Simple shapes that are not usable requests fail as before.
        for (line, id, message) in [
            (#"{"id":1}"#, JSON.integer(1), #"the request has no "op""#),
            (#"{"id":"a","op":7}"#, JSON.string("a"), "the request's op must be a string, not an integer"),
            (#"{"id":["a"],"op":"get"}"#, JSON.null, "the request's id must be a string or an integer, not an array"),
        ] {
            do {
                _ = try WireRequest.decode(Array(line.utf8))
                Issue.record("decoded: \(line)")
            } catch {
                #expect(error.id == id)
                #expect(error.error.message == message)
            }
        }
    }

    @Test("random edits of request lines: the fast path declines or agrees with the general parser")
    func mutations() {
        var generator = MigrationCrashTests.SplitMix64(state: 0x5EED)
        let alphabet = Array(#"{}[]",: -0123456789.eE\"abuxé"#.utf8) + [0x00, 0x09, 0x0A, 0x0D, 0x80, 0xFF]
        var accepted = 0
        for round in 0..<4_000 {
            let bytes = LineMutation.mutated(Self.simple[round % Self.simple.count], alphabet: alphabet, generator: &generator)
            let fast = SimpleRequestParser.parse(bytes)
            let general = try? JSONParser.parse(bytes)
            if let fast {
                accepted += 1
                #expect(fast == general, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(accepted > 0)
    }

    @Test("many keys: all distinct are taken; a repeat of any earlier one, however far back, is declined")
    func manyKeys() throws {
        let keys = (0..<150).map { "k\($0)" }
        let line = "{" + keys.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
        let (fast, general) = Self.both(line)
        #expect(fast != nil && fast == general)
        let values = "{\"op\":\"insert\",\"values\":{" + keys.map { "\"\($0)\":1" }.joined(separator: ",") + "}}"
        #expect(Self.both(values).fast != nil)
        for repeated in [0, 1, 63, 64, 100, 149] {
            let withRepeat = "{" + (keys + [keys[repeated]]).map { "\"\($0)\":1" }.joined(separator: ",") + "}"
            let (fastRepeat, generalRepeat) = Self.both(withRepeat)
            #expect(fastRepeat == nil, "repeat of \(keys[repeated])")
            #expect(generalRepeat == nil)
            let valuesRepeat = "{\"op\":\"insert\",\"values\":{" + (keys + [keys[repeated]]).map { "\"\($0)\":1" }.joined(separator: ",") + "}}"
            #expect(Self.both(valuesRepeat).fast == nil, "values repeat of \(keys[repeated])")
        }
    }
}
