import Foundation
@testable import PersistKit
import PredicateDifferential

/// Paths the model tests share.
enum ModelTestSupport {
    /// The package root, found from this file's path.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // PersistKitTests
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent()

    /// The shared corpus of real Core Data files: `<package root>/../shared/corpus`.
    static let corpusURL: URL = packageRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/corpus").standardizedFileURL

    /// Whether the corpus is present; when it is not, the corpus tests are skipped.
    static let corpusIsPresent: Bool = {
        let present = FileManager.default.fileExists(atPath: corpusURL.appendingPathComponent("xcdatamodels").path)
        if !present {
            print("Skipping the model corpus tests: no corpus at \(corpusURL.path)/xcdatamodels")
        }
        return present
    }()

    /// The test fixtures folder.
    static let fixturesURL: URL = packageRoot.appendingPathComponent("Tests/PersistKitTests/Fixtures")

    /// A new empty temporary directory.
    static func temporaryDirectory() throws -> URL {
        try ScratchDirectory.make(prefix: "persistkit-model")
    }

    /// Loads a model from JSON text, with a fake source path for messages.
    static func model(json text: String, path: String = "/models/test.json") throws -> ManagedObjectModel {
        try ManagedObjectModel(json: Data(text.utf8), sourceURL: URL(fileURLWithPath: path))
    }

    /// The error thrown by `body`, as a ``ModelError``, or `nil`.
    static func modelError(_ body: () throws -> Void) -> ModelError? {
        do {
            try body()
            return nil
        } catch let error as ModelError {
            return error
        } catch {
            return ModelError("unexpected error \(error)")
        }
    }
}
