import Foundation

/// Typed access to one JSON object of a model file, with errors that say where the
/// object is (file, entity, property) and which key is wrong.
struct JSONObjectReader {
    /// The object's members.
    let members: [String: JSONValue]
    /// The model file, for error messages.
    let file: String?
    /// The entity the object describes or belongs to, for error messages.
    let entity: String?
    /// The property the object describes, for error messages.
    let property: String?
    /// What the object is (`model`, `entity`, `attribute`…), for error messages.
    let what: String

    /// Wraps `value`, which must be a JSON object.
    init(_ value: JSONValue, what: String, file: String?, entity: String? = nil, property: String? = nil) throws {
        self.file = file
        self.entity = entity
        self.property = property
        self.what = what
        guard case .object(let members) = value else {
            throw ModelError(file: file, entity: entity, property: property, "\(what) must be a JSON object, not \(value.typeName)")
        }
        self.members = members
    }

    /// An error at this object's location.
    func error(_ message: String) -> ModelError {
        ModelError(file: file, entity: entity, property: property, message)
    }

    /// Throws if the object has a key not in `allowed` (a misspelt key is an error, not ignored).
    func rejectUnknownKeys(_ allowed: Set<String>) throws {
        for key in members.keys.sorted() where !allowed.contains(key) {
            throw error("unknown key \"\(key)\" in \(what)")
        }
    }

    /// The value of `key`, treating `null` as absent.
    func value(_ key: String) -> JSONValue? {
        guard let value = members[key] else { return nil }
        if case .null = value { return nil }
        return value
    }

    private func typeError(_ key: String, _ expected: String, _ found: JSONValue) -> ModelError {
        error("key \"\(key)\" of \(what) must be \(expected), not \(found.typeName)")
    }

    /// A required string.
    func requiredString(_ key: String) throws -> String {
        guard let value = try string(key) else { throw error("\(what) has no \"\(key)\"") }
        return value
    }

    /// An optional string.
    func string(_ key: String) throws -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let s) = value else { throw typeError(key, "a string", value) }
        return s
    }

    /// An optional boolean, `defaultValue` when absent.
    func bool(_ key: String, default defaultValue: Bool) throws -> Bool {
        guard let value = value(key) else { return defaultValue }
        guard case .bool(let b) = value else { throw typeError(key, "a boolean", value) }
        return b
    }

    /// An optional integer.
    func integer(_ key: String) throws -> Int? {
        guard let value = value(key) else { return nil }
        guard case .integer(let i) = value, let int = Int(exactly: i) else { throw typeError(key, "an integer", value) }
        return int
    }

    /// An optional array of strings.
    func stringArray(_ key: String) throws -> [String] {
        guard let value = value(key) else { return [] }
        guard case .array(let items) = value else { throw typeError(key, "an array of strings", value) }
        return try items.map { item in
            guard case .string(let s) = item else { throw typeError(key, "an array of strings", item) }
            return s
        }
    }

    /// An optional array of arrays of strings.
    func stringArrayArray(_ key: String) throws -> [[String]] {
        guard let value = value(key) else { return [] }
        guard case .array(let items) = value else { throw typeError(key, "an array of arrays of strings", value) }
        return try items.map { item in
            guard case .array(let inner) = item else { throw typeError(key, "an array of arrays of strings", item) }
            return try inner.map { element in
                guard case .string(let s) = element else { throw typeError(key, "an array of arrays of strings", element) }
                return s
            }
        }
    }

    /// An optional object whose values are all strings.
    func stringDictionary(_ key: String) throws -> [String: String] {
        guard let value = value(key) else { return [:] }
        guard case .object(let members) = value else { throw typeError(key, "an object of strings", value) }
        return try members.mapValues { member in
            guard case .string(let s) = member else { throw typeError(key, "an object of strings", member) }
            return s
        }
    }

    /// An optional array of JSON values (usually objects read with another reader).
    func array(_ key: String) throws -> [JSONValue] {
        guard let value = value(key) else { return [] }
        guard case .array(let items) = value else { throw typeError(key, "an array", value) }
        return items
    }
}
