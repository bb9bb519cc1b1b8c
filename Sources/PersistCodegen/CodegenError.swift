import PersistKit

/// Why code generation failed.
public enum CodegenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The model did not load or validate; the ``ModelError`` names file, entity and property.
    case model(ModelError)
    /// Reading or writing a file failed.
    case file(path: String, message: String)

    /// `…/Beers.model.json: entity Beer, property abv: message`, or `path: message`.
    public var description: String {
        switch self {
        case .model(let error): return error.description
        case .file(let path, let message): return "\(path): \(message)"
        }
    }
}
