import Testing
@testable import PersistServer

/// The parser's duplicate-key check (by comparison for small objects, by a set past 16 members)
/// and its ASCII fast path for strings: the same results as the general paths.
@Suite("JSON parser: duplicate keys and ASCII strings")
struct JSONParserKeyTests {
    /// `{"k0":0,…}` with `count` members, then `extra` as one more member when given.
    static func object(_ count: Int, extra: String? = nil) -> String {
        var members = (0..<count).map { "\"k\($0)\":\($0)" }
        if let extra { members.append(extra) }
        return "{" + members.joined(separator: ",") + "}"
    }

    @Test("a repeated key is refused at its offset, in small and large objects", arguments: [1, 2, 15, 16, 17, 40])
    func duplicateKeys(count: Int) throws {
        let text = Self.object(count, extra: "\"k0\":9")
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(text) }
        do {
            _ = try JSONParser.parse(text)
        } catch {
            #expect(error.message == "duplicate key \"k0\"")
            #expect(error.offset == text.utf8.count - "\"k0\":9}".utf8.count)
        }
        // The last key repeated, too (found by the set past 16 members).
        let last = Self.object(count, extra: "\"k\(count - 1)\":9")
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(last) }
        // Distinct keys parse, in order.
        let members = try #require(try JSONParser.parse(Self.object(count)).members)
        #expect(members.map(\.key) == (0..<count).map { "k\($0)" })
    }

    @Test("keys equal as Swift strings (canonically equivalent) are duplicates, whichever path checks them",
          arguments: [1, 20])
    func canonicallyEquivalentKeys(count: Int) {
        // "é" precomposed and decomposed.
        let text = Self.object(count, extra: "\"caf\u{E9}\":1,\"cafe\u{301}\":2")
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(text) }
    }

    @Test("ASCII, non-ASCII and escaped strings give the same values as before")
    func strings() throws {
        #expect(try JSONParser.parse(#"["plain","","caf\u00e9","naïve","a\"b","x\ny","😀"]"#)
                == .array([.string("plain"), .string(""), .string("café"), .string("naïve"), .string("a\"b"), .string("x\ny"), .string("😀")]))
        // Invalid UTF-8 is refused, with or without an escape before it.
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse([0x22, 0x61, 0xFF, 0x22]) }
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse([0x22, 0x5C, 0x6E, 0xC3, 0x22]) }
    }
}
