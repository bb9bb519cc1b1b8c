/// An error in a managed object model: what is wrong, and where.
///
/// Every error names the file (when the model came from one), the entity and the property,
/// so that `persistd --check` can point at the exact place.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The model file the error was found in, if the model was loaded from one.
    public var file: String?
    /// The entity the error concerns, if any.
    public var entity: String?
    /// The property the error concerns, if any.
    public var property: String?
    /// What is wrong, in one sentence.
    public var message: String

    /// Creates a model error.
    public init(file: String? = nil, entity: String? = nil, property: String? = nil, _ message: String) {
        self.file = file
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// `file: entity Beer, property abv: message`.
    public var description: String {
        var location: [String] = []
        if let entity { location.append("entity \(entity)") }
        if let property { location.append("property \(property)") }
        var text = file.map { "\($0): " } ?? ""
        if !location.isEmpty { text += location.joined(separator: ", ") + ": " }
        return text + message
    }
}
