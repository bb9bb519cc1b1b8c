import Foundation

/// Paths shared by the code generation tests.
enum CodegenTestSupport {
    /// The package's root directory, from this file's path.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `<package root>/../shared/corpus/xcdatamodels`.
    static let xcdatamodels = packageRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/corpus/xcdatamodels")

    /// Whether the corpus is there; prints why the corpus tests are skipped when it is not.
    static var corpusIsPresent: Bool {
        let present = FileManager.default.fileExists(atPath: xcdatamodels.path)
        if !present { print("code generation corpus tests skipped: no corpus at \(xcdatamodels.path)") }
        return present
    }
}
