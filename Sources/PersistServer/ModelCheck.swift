import Foundation
import PersistKit

/// `persistd --model PATH --check`: loads and validates a model file and reports the result.
///
/// A pure function of the path (and the file it names), so tests can run it without a
/// process; `persistd` prints ``Result/standardOutput`` and ``Result/standardError`` and
/// exits with ``Result/exitCode``.
public enum ModelCheck {
    /// What `--check` prints and its exit status.
    public struct Result: Sendable, Equatable {
        /// 0 when the model is valid, 1 when it is not.
        public var exitCode: Int32
        /// The model's normalized JSON when valid; empty otherwise.
        public var standardOutput: String
        /// Empty when valid; otherwise one line, `persistd: <file>: entity X, property y: message`.
        public var standardError: String
    }

    /// Checks the model at `path`.
    public static func run(modelPath path: String) -> Result {
        do {
            let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: path))
            try model.freeze()
            let json = try model.normalizedJSON()
            return Result(exitCode: 0, standardOutput: String(decoding: json, as: UTF8.self), standardError: "")
        } catch let error as ModelError {
            return failure(error.description)
        } catch {
            return failure("\(path): \(error)")
        }
    }

    private static func failure(_ message: String) -> Result {
        // One line, whatever the message holds.
        let line = message.replacingOccurrences(of: "\n", with: " ")
        return Result(exitCode: 1, standardOutput: "", standardError: "persistd: \(line)\n")
    }
}
