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
}
