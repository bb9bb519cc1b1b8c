import Foundation
import Testing
@testable import PersistServer

/// Request decoding and reply encoding, byte for byte.
@Suite("Wire codec")
struct WireCodecTests {
    func decode(_ text: String) throws(WireRequest.DecodingFailure) -> WireRequest {
        try WireRequest.decode(Array(text.utf8))
    }

    @Test("a request's id and op are read; the id may be a string, an integer, or absent")
    func requests() throws {
        let request = try decode(#"{"id":7,"op":"get","ids":[]}"#)
        #expect(request.id == .integer(7))
        #expect(request.op == "get")
        #expect(request.body["ids"] == .array([]))
        #expect(try decode(#"{"op":"ping","id":"a-1"}"#).id == .string("a-1"))
        #expect(try decode(#"{"op":"ping"}"#).id == .null)
        #expect(try decode(#"{"op":"ping","id":null}"#).id == .null)
    }

    @Test("bad lines: the error says why, and carries the id when it could be read", arguments: [
        (#"not json"#, JSON.null, "the line is not valid JSON: unexpected character at byte 0"),
        (#"[1,2]"#, .null, "a request must be a JSON object, not an array"),
        (#""ping""#, .null, "a request must be a JSON object, not a string"),
        (#"{"id":3}"#, .integer(3), #"the request has no "op""#),
        (#"{"id":"x","op":5}"#, .string("x"), "the request's op must be a string, not an integer"),
        (#"{"id":1.5,"op":"ping"}"#, .null, "the request's id must be a string or an integer, not a number"),
        (#"{"id":[1],"op":"ping"}"#, .null, "the request's id must be a string or an integer, not an array"),
    ])
    func badLines(line: String, id: JSON, message: String) {
        #expect(throws: WireRequest.DecodingFailure(id: id, error: WireError(.badRequest, message))) { try decode(line) }
    }

    @Test("replies and events encode to exact bytes")
    func replies() {
        let success = WireReply.success(id: .integer(1), result: .object(["pong": .bool(true)]))
        #expect(success.line == Array("{\"id\":1,\"ok\":true,\"result\":{\"pong\":true}}\n".utf8))
        let failure = WireReply.failure(id: .null, error: WireError(.notFound, "no object x", details: [JSON.Member("object", .string("x"))]))
        #expect(String(decoding: failure.line, as: UTF8.self)
            == "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"not_found\",\"message\":\"no object x\",\"object\":\"x\"}}\n")
        let event = WireReply.event(name: "closing", members: [JSON.Member("reason", .string("shutdown"))])
        #expect(String(decoding: event.line, as: UTF8.self) == "{\"event\":\"closing\",\"reason\":\"shutdown\"}\n")
        #expect(String(decoding: WireReply.success(id: .string("é\n"), result: .object([])).line, as: UTF8.self)
            == "{\"id\":\"é\\n\",\"ok\":true,\"result\":{}}\n")
    }

    @Test("dates: ISO 8601 UTC with milliseconds, both ways")
    func dates() throws {
        let date = try #require(WireDate.parse("2026-01-31T12:00:00.123Z"))
        #expect(WireDate.format(date) == "2026-01-31T12:00:00.123Z")
        #expect(WireDate.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(WireDate.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(WireDate.parse("2026-01-31T13:00:00+01:00") == WireDate.parse("2026-01-31T12:00:00Z"))
        #expect(WireDate.parse("2026-02-30T00:00:00Z") == nil)
        #expect(WireDate.parse("2026-01-31 12:00:00Z") == nil)
        #expect(WireDate.parse("2026-01-31T12:00:00") == nil)
        #expect(WireDate.parse("2026-01-31T12:00:00.Z") == nil)
    }

    @Test("decimal literals are digits only")
    func decimals() {
        #expect(WireValueCoder.isDecimalLiteral("3.50"))
        #expect(WireValueCoder.isDecimalLiteral("-12"))
        #expect(WireValueCoder.isDecimalLiteral("1.5e3"))
        #expect(!WireValueCoder.isDecimalLiteral("3.5abc"))
        #expect(!WireValueCoder.isDecimalLiteral(".5"))
        #expect(!WireValueCoder.isDecimalLiteral(""))
    }
}
