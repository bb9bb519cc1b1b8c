import Foundation

extension ManagedObjectModel {
    /// Loads a model written in our JSON model format, and validates it.
    ///
    /// The format is described in `protocol/model.md`. The model is resolved and validated
    /// (as ``freeze()`` would) but not frozen: it can still be changed before a coordinator
    /// uses it.
    ///
    /// - Parameters:
    ///   - json: The model file's bytes.
    ///   - sourceURL: Where the bytes came from; named in every error.
    /// - Throws: ``ModelError`` naming the file, entity and property of the first problem.
    public convenience init(json: Data, sourceURL: URL?) throws {
        self.init()
        self.sourceURL = sourceURL
        let file = sourceURL?.path
        try ModelJSONReader(file: file).read(JSONValue.parse(json, file: file), into: self)
        try resolveAndValidate()
    }

    /// The model in our JSON model format: entities and properties in model order, keys whose
    /// value is the format's default left out, keys sorted, pretty printed.
    ///
    /// Loading the result with ``init(json:sourceURL:)`` gives a model with the same
    /// ``normalizedJSON()``.
    ///
    /// - Throws: ``ModelError`` if the model is not valid.
    public func jsonRepresentation() throws -> Data {
        try resolveAndValidate()
        return ModelJSONWriter(normalized: false).json(for: self).prettyPrinted()
    }

    /// The model in the normalized form of our JSON model format: entities and properties
    /// sorted by name, every key written with its value, keys sorted, pretty printed.
    ///
    /// The output is deterministic: equal models give byte-identical output, on every run.
    /// `persistd --model PATH --check` prints it.
    ///
    /// - Throws: ``ModelError`` if the model is not valid.
    public func normalizedJSON() throws -> Data {
        try resolveAndValidate()
        return ModelJSONWriter(normalized: true).json(for: self).prettyPrinted()
    }

    /// Links names to descriptions and validates, unless the model is already frozen
    /// (and so already checked).
    func resolveAndValidate() throws {
        if isFrozen { return }
        try resolve()
        try validate()
    }
}
