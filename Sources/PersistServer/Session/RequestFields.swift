import PersistKit

/// Reads an op's fields from the request object, with `bad_request` errors naming the field.
struct RequestFields {
    let body: JSON
    let op: String

    init(_ body: JSON, op: String) {
        self.body = body
        self.op = op
    }

    func has(_ key: String) -> Bool { body[key] != nil }

    func missing(_ key: String) -> WireError {
        WireError(.badRequest, "\(op) needs \"\(key)\"")
    }

    func wrongType(_ key: String, _ expected: String, _ found: JSON) -> WireError {
        WireError(.badRequest, "\(op): \"\(key)\" must be \(expected), not \(found.typeName)")
    }

    func string(_ key: String) throws(WireError) -> String? {
        guard let value = body[key], value != .null else { return nil }
        guard case .string(let text) = value else { throw wrongType(key, "a string", value) }
        return text
    }

    func requiredString(_ key: String) throws(WireError) -> String {
        guard let text = try string(key) else { throw missing(key) }
        return text
    }

    func integer(_ key: String, minimum: Int64 = 0) throws(WireError) -> Int? {
        guard let value = body[key], value != .null else { return nil }
        guard case .integer(let number) = value, number >= minimum, number <= Int64(Int32.max) else {
            throw wrongType(key, "an integer ≥ \(minimum)", value)
        }
        return Int(number)
    }

    /// A 64-bit integer of at least `minimum` (an object's `version`).
    func integer64(_ key: String, minimum: Int64 = 0) throws(WireError) -> Int64? {
        guard let value = body[key], value != .null else { return nil }
        guard case .integer(let number) = value, number >= minimum else {
            throw wrongType(key, "an integer ≥ \(minimum)", value)
        }
        return number
    }

    func bool(_ key: String) throws(WireError) -> Bool? {
        guard let value = body[key], value != .null else { return nil }
        guard case .bool(let flag) = value else { throw wrongType(key, "true or false", value) }
        return flag
    }

    func stringArray(_ key: String) throws(WireError) -> [String]? {
        guard let value = body[key], value != .null else { return nil }
        guard case .array(let elements) = value else { throw wrongType(key, "an array of strings", value) }
        var result: [String] = []
        for element in elements {
            guard case .string(let text) = element else { throw wrongType(key, "an array of strings", value) }
            result.append(text)
        }
        return result
    }

    func array(_ key: String) throws(WireError) -> [JSON]? {
        guard let value = body[key], value != .null else { return nil }
        guard case .array(let elements) = value else { throw wrongType(key, "an array", value) }
        return elements
    }

    func object(_ key: String) throws(WireError) -> [JSON.Member]? {
        guard let value = body[key], value != .null else { return nil }
        guard case .object(let members) = value else { throw wrongType(key, "an object", value) }
        return members
    }

    /// The entity `"entity"` names.
    func entity(in model: ManagedObjectModel) throws(WireError) -> EntityDescription {
        let name = try requiredString("entity")
        guard let entity = model.entitiesByName[name] else {
            throw WireError(.unknownEntity, "the model has no entity \"\(name)\"", details: [JSON.Member("entity", .string(name))])
        }
        return entity
    }
}

extension EntityDescription {
    /// Throws `unknown_property` unless `name` is a property of the entity.
    func checkProperty(_ name: String) throws(WireError) -> PropertyDescription {
        guard let property = propertiesByName[name] else {
            throw WireError(.unknownProperty, "entity \(self.name) has no property \"\(name)\"",
                            details: [JSON.Member("entity", .string(self.name)), JSON.Member("key", .string(name))])
        }
        return property
    }

    /// Throws `unknown_property` unless `keyPath` leads from the entity through relationships
    /// to a property (`brewery.name`).
    func checkKeyPath(_ keyPath: String) throws(WireError) {
        var entity = self
        let parts = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (index, part) in parts.enumerated() {
            let property = try entity.checkProperty(part)
            if index < parts.count - 1 {
                guard let relationship = property as? RelationshipDescription, let destination = relationship.destinationEntity else {
                    throw WireError(.unknownProperty, "\(entity.name).\(part) is not a relationship, so \"\(keyPath)\" leads nowhere",
                                    details: [JSON.Member("entity", .string(self.name)), JSON.Member("key", .string(keyPath))])
                }
                entity = destination
            }
        }
    }
}
