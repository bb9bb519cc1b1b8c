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
}
