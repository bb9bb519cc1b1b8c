import Testing
@testable import PersistServer

/// The JSON parser and encoder the wire uses.
@Suite("JSON codec")
struct JSONCodecTests {
    @Test("numbers keep their kind: integers exact to 64 bits, doubles apart")
    func numbers() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .integer(Int64.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .integer(Int64.min))
        #expect(try JSONParser.parse("9.0") == .double(9))
        #expect(try JSONParser.parse("1e3") == .double(1000))
        #expect(try JSONParser.parse("9223372036854775808") == .double(9223372036854775808))
        #expect(JSON.integer(Int64.max).encoded == "9223372036854775807")
        #expect(JSON.double(9).encoded == "9.0")
        #expect(JSON.double(0.1).encoded == "0.1")
        #expect(JSON.double(.nan).encoded == "null")
    }

    @Test("objects keep member order; encoding is compact and deterministic")
    func objects() throws {
        let text = #"{"b":1,"a":[true,false,null],"c":{"x":"y"}}"#
        let value = try JSONParser.parse(" \(text)\t")
        #expect(value.encoded == text)
        #expect(value["a"] == .array([.bool(true), .bool(false), .null]))
        #expect(value["missing"] == nil)
    }

    @Test("strings: escapes, surrogate pairs, UTF-8, and control characters escaped on output")
    func strings() throws {
        #expect(try JSONParser.parse(#""a\"b\\c\/\n\u00e9\ud83c\udf7a""#) == .string("a\"b\\c/\né🍺"))
        #expect(try JSONParser.parse("\"bière 🍺\"") == .string("bière 🍺"))
        #expect(JSON.string("a\"b\\\n\u{01}\u{2028}é").encoded == #""a\"b\\\n\u0001\u2028é""#)
    }

    @Test("malformed texts are refused with the byte offset", arguments: [
        ("", 0, "unexpected end of JSON"),
        ("{", 1, "expected a string key"),
        ("{\"a\" 1}", 5, "expected ':'"),
        ("[1,]", 3, "unexpected character"),
        ("01", 1, "unexpected data after the JSON value"),
        ("\"abc", 4, "unterminated string"),
        ("\"\\x\"", 2, "invalid escape in string"),
        ("\"\\ud800\"", 7, "unpaired surrogate in string"),
        ("tru", 0, "unexpected end of JSON"),
        ("{} {}", 3, "unexpected data after the JSON value"),
    ])
    func malformed(text: String, offset: Int, message: String) {
        #expect(throws: JSONParser.SyntaxError(offset: offset, message: message)) { try JSONParser.parse(text) }
    }

    @Test("invalid UTF-8 and raw control characters in strings are refused")
    func invalidBytes() {
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse([0x22, 0x0A, 0x22]) }
    }

    @Test("nesting deeper than the limit is refused")
    func depth() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect((try? JSONParser.parse(ok)) != nil)
    }
}
