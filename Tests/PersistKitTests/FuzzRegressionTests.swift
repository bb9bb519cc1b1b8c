import Foundation
import Testing
import PersistKit

/// Inputs the fuzz targets (`Fuzz/`, `make fuzz`) crashed on, as plain tests; each is also in
/// its target's seed corpus (`Fuzz/Corpus/<target>/`), which `make test` replays.
@Suite("FuzzRegression", .timeLimit(.minutes(1)))
struct FuzzRegressionTests {
    /// FuzzXcodeModel: FoundationXML's `XMLDocument(data:)` dereferenced a null document for an
    /// empty `contents` file (SEGV); it is now a ``ModelError`` naming the file.
    @Test func emptyXcodeContentsFileIsAnError() throws {
        let url = URL(fileURLWithPath: "/tmp/Empty.xcdatamodel/contents")
        let error = try #require(throws: ModelError.self) {
            try ManagedObjectModel(xcdatamodelContents: Data(), sourceURL: url)
        }
        #expect("\(error)".contains("empty"))
        #expect("\(error)".contains(url.path))
    }

    /// FuzzPredicateParser: a `\uD8xx` high surrogate followed by a `\u` escape below `\uDC00`
    /// overflowed `UInt32` (`low - 0xDC00`) in the lexer before the range check; it is now a
    /// syntax error, and a real pair still combines.
    @Test func surrogateHighHalfFollowedByANonLowHalfIsASyntaxError() throws {
        #expect(throws: PredicateSyntaxError.self) {
            try FetchPredicate(format: #"name == "\ud83c\uda7a""#)
        }
        let pair = try FetchPredicate(format: #"name == "\ud83c\udf7a""#)
        #expect(pair == .comparison(.keyPath("name"), .equalTo, .constant(.string("\u{1F37A}"))))
    }

    /// FuzzXcodeModel: an XML declaration naming an encoding libxml2 does not know made
    /// FoundationXML dereference a null document (SEGV); it is now a ``ModelError``.
    @Test func unknownXMLEncodingIsAnError() throws {
        let contents = #"<?xml version="1.0" encoding="UTng"?><model type="com.apple.IDECoreDataModeler.DataModel"/>"#
        let error = try #require(throws: ModelError.self) {
            try ManagedObjectModel(xcdatamodelContents: Data(contents.utf8), sourceURL: nil)
        }
        #expect("\(error)".contains("UTng"))
        let utf8 = #"<?xml version="1.0" encoding="utf-8"?><model><entity name="A"/></model>"#
        #expect(try ManagedObjectModel(xcdatamodelContents: Data(utf8.utf8), sourceURL: nil).entities.map(\.name) == ["A"])
    }

    /// FuzzPredicateParser: a string starting with a combining mark (U+0F7A) was printed raw after
    /// the opening quote, where it forms one character with the quote, so the printed predicate
    /// did not parse. Such scalars are now printed as `\u{…}` and the round trip holds.
    @Test func combiningMarksNextToQuotesAndEscapesRoundTrip() throws {
        for value in ["\u{F7A}x", "a\u{301}", "\n\u{301}", "%%\u{301}", "x\u{600}", "\u{1F44D}\u{1F3FD}", "e\u{200D}"] {
            let predicate = FetchPredicate.comparison(.keyPath("name"), .equalTo, .constant(.string(value)))
            let printed = predicate.predicateFormat
            #expect(try FetchPredicate(format: printed) == predicate, "\(printed)")
        }
    }

    /// FuzzXcodeModel: a NUL first byte made libxml2 guess another encoding and give no document
    /// (SEGV in FoundationXML); a `contents` file that is not UTF-8 text is now a ``ModelError``.
    @Test func contentsThatAreNotUTF8TextAreAnError() throws {
        let inputs = [Data([0]) + Data("nxml version=\"1.0\"?><model/>".utf8), Data([0xFF, 0xFE, 0x3C, 0x00]), Data([0x3C, 0x6D, 0xC3])]
        for data in inputs {
            #expect(throws: ModelError.self) { try ManagedObjectModel(xcdatamodelContents: data, sourceURL: nil) }
        }
    }

    /// FuzzPredicateParser: the one-argument function `FUNCTION:` was printed as `FUNCTION(5)`,
    /// which reads as the `FUNCTION` keyword (two arguments at least); it keeps its colon now.
    @Test func oneArgumentFunctionNamedLikeAKeywordRoundTrips() throws {
        for format in ["FUNCTION:(5) > 0", "ternary:(1) == 1", "cast:(name) == nil", "lowercase:(name) == 'a'"] {
            let predicate = try FetchPredicate(format: format)
            #expect(try FetchPredicate(format: predicate.predicateFormat) == predicate, "\(predicate.predicateFormat)")
        }
        #expect(try FetchPredicate(format: "lowercase:(name) == 'a'").predicateFormat == #"lowercase(name) == "a""#)
    }

    /// FuzzPredicateParser: a format starting with a combining mark (U+0651) read it as the start
    /// of a key path, which printed after `(` formed one character with it and did not parse
    /// back. A combining mark no longer starts a word: the format is a syntax error.
    @Test func combiningMarkCannotStartAKeyPath() throws {
        #expect(throws: PredicateSyntaxError.self) { try FetchPredicate(format: "\u{651}gs == 'dark' AND t == ''") }
        #expect(throws: PredicateSyntaxError.self) { try FetchPredicate(format: "\u{93E}x == 1") }
        #expect(try FetchPredicate(format: "x\u{651} == 1 AND _a == 2") == FetchPredicate(format: "(x\u{651} == 1) AND (_a == 2)"))
    }

    /// FuzzPredicateParser: a key path on a number (`1.SELF.x`) was printed `1.#SELF.x`, which
    /// reads as the number `1.` followed by garbage; the number is now parenthesized.
    @Test func keyPathOnANumberRoundTrips() throws {
        for format in ["x == 1.SELF.a", "x == 2.5.a"] {
            guard let predicate = try? FetchPredicate(format: format) else { continue }
            #expect(try FetchPredicate(format: predicate.predicateFormat) == predicate, "\(predicate.predicateFormat)")
        }
        let member = FetchPredicate.comparison(.keyPath("x"), .equalTo, .member(.constant(.integer(1)), "SELF.a"))
        #expect(try FetchPredicate(format: member.predicateFormat) == member, "\(member.predicateFormat)")
    }

    /// FuzzPredicateParser (a hang): each `(` was read as a predicate and, failing that, read again
    /// as an expression, so nested parentheses doubled the work per level (13 s for 340 bytes in
    /// a debug build). Failed readings are now remembered per position; this parses in
    /// milliseconds (a syntax error either way).
    @Test func nestedParenthesesParseInLinearTime() throws {
        let format = String(repeating: "(", count: 60) + "TERNARY(" + String(repeating: "(", count: 60) + "a == 1"
        #expect(throws: PredicateSyntaxError.self) { try FetchPredicate(format: format) }
        let closed = String(repeating: "(", count: 60) + "a + 1" + String(repeating: ")", count: 60) + " > 2"
        #expect(try FetchPredicate(format: closed).predicateFormat == "a + 1 > 2")
    }
}
