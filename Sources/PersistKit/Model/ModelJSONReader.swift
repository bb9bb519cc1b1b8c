import Foundation

/// Reads our JSON model format (`protocol/model.md`) into model descriptions.
///
/// Type errors, unknown keys and values that do not fit their attribute type are reported
/// here, with the entity and property they concern; cross-entity checks (destinations,
/// inverses, parents) are left to ``ManagedObjectModel/resolve()`` and
/// ``ManagedObjectModel/validate()``.
struct ModelJSONReader {
    /// The file being read, for error messages.
    let file: String?

    static let modelKeys: Set<String> = ["formatVersion", "versionIdentifiers", "configurations", "entities"]
    static let entityKeys: Set<String> = [
        "name", "className", "parent", "abstract", "attributes", "relationships",
        "uniquenessConstraints", "indexes", "userInfo", "versionHashModifier", "renamingIdentifier",
    ]
    static let commonPropertyKeys: Set<String> = [
        "name", "optional", "transient", "indexed", "userInfo", "versionHashModifier", "renamingIdentifier",
    ]
    static let attributeKeys: Set<String> = commonPropertyKeys.union([
        "type", "default", "min", "max", "regex", "allowsExternalStorage", "valueTransformer",
        "valueClassName", "usesScalarValueType", "preservesValueInHistoryOnDeletion",
    ])
    static let relationshipKeys: Set<String> = commonPropertyKeys.union([
        "destination", "inverse", "toMany", "ordered", "deleteRule", "minCount", "maxCount",
    ])
    static let indexKeys: Set<String> = ["name", "elements"]
    static let indexElementKeys: Set<String> = ["property", "ascending"]

    /// The version of the format this reader understands.
    static let formatVersion = 1

    /// Fills `model` from the JSON document `json`.
    func read(_ json: JSONValue, into model: ManagedObjectModel) throws {
        let root = try JSONObjectReader(json, what: "model", file: file)
        try root.rejectUnknownKeys(Self.modelKeys)
        if let version = try root.integer("formatVersion"), version != Self.formatVersion {
            throw root.error("formatVersion \(version) is not supported (this version of persistd reads \(Self.formatVersion))")
        }
        model.versionIdentifiers = Set(try root.stringArray("versionIdentifiers"))
        if let configurations = root.value("configurations") {
            let reader = try JSONObjectReader(configurations, what: "configurations", file: file)
            for key in reader.members.keys {
                model.configurations[key] = try reader.stringArray(key)
            }
        }
        var entities: [EntityDescription] = []
        for (index, value) in try root.array("entities").enumerated() {
            entities.append(try readEntity(value, index: index))
        }
        model.entities = entities
    }

    private func readEntity(_ value: JSONValue, index: Int) throws -> EntityDescription {
        let anonymous = try JSONObjectReader(value, what: "entity", file: file, entity: "#\(index + 1)")
        let name = try anonymous.requiredString("name")
        let object = try JSONObjectReader(value, what: "entity", file: file, entity: name)
        try object.rejectUnknownKeys(Self.entityKeys)
        let entity = EntityDescription(name: name)
        entity.managedObjectClassName = try object.string("className")
        entity.superentityName = try object.string("parent")
        entity.isAbstract = try object.bool("abstract", default: false)
        entity.userInfo = try object.stringDictionary("userInfo")
        entity.versionHashModifier = try object.string("versionHashModifier")
        entity.renamingIdentifier = try object.string("renamingIdentifier")
        entity.uniquenessConstraints = try object.stringArrayArray("uniquenessConstraints")
        var properties: [PropertyDescription] = []
        for value in try object.array("attributes") {
            properties.append(try readAttribute(value, entity: name))
        }
        for value in try object.array("relationships") {
            properties.append(try readRelationship(value, entity: name))
        }
        entity.properties = properties
        entity.indexes = try object.array("indexes").map { try readIndex($0, entity: name) }
        return entity
    }

    private func propertyReader(_ value: JSONValue, what: String, entity: String) throws -> JSONObjectReader {
        let anonymous = try JSONObjectReader(value, what: what, file: file, entity: entity)
        let name = try anonymous.requiredString("name")
        return try JSONObjectReader(value, what: what, file: file, entity: entity, property: name)
    }

    private func readCommon(_ object: JSONObjectReader, into property: PropertyDescription) throws {
        property.isOptional = try object.bool("optional", default: true)
        property.isTransient = try object.bool("transient", default: false)
        property.isIndexed = try object.bool("indexed", default: false)
        property.userInfo = try object.stringDictionary("userInfo")
        property.versionHashModifier = try object.string("versionHashModifier")
        property.renamingIdentifier = try object.string("renamingIdentifier")
    }

    private func readAttribute(_ value: JSONValue, entity: String) throws -> AttributeDescription {
        let object = try propertyReader(value, what: "attribute", entity: entity)
        try object.rejectUnknownKeys(Self.attributeKeys)
        let typeName = try object.requiredString("type")
        guard let type = AttributeType(rawValue: typeName) ?? AttributeType(xcodeName: typeName)
            ?? (typeName == "Binary Data" ? .binaryData : nil) else {
            throw object.error("unknown attribute type \"\(typeName)\"")
        }
        let attribute = AttributeDescription(name: try object.requiredString("name"), type: type)
        try readCommon(object, into: attribute)
        if let json = object.value("default") {
            guard let value = AttributeValueCoding.value(fromJSON: json, type: type) else {
                throw object.error("default value \(describe(json)) is not a valid \(type.rawValue)")
            }
            attribute.defaultValue = value
        }
        attribute.minValue = try readBound(object, key: "min", type: type)
        attribute.maxValue = try readBound(object, key: "max", type: type)
        attribute.regularExpression = try object.string("regex")
        attribute.allowsExternalBinaryDataStorage = try object.bool("allowsExternalStorage", default: false)
        attribute.valueTransformerName = try object.string("valueTransformer")
        attribute.attributeValueClassName = try object.string("valueClassName")
        attribute.usesScalarValueType = try object.bool("usesScalarValueType", default: false)
        attribute.preservesValueInHistoryOnDeletion = try object.bool("preservesValueInHistoryOnDeletion", default: false)
        return attribute
    }

    private func readBound(_ object: JSONObjectReader, key: String, type: AttributeType) throws -> StoreValue? {
        guard let json = object.value(key) else { return nil }
        let word = key == "min" ? "minimum" : "maximum"
        switch AttributeValueCoding.boundKind(of: type) {
        case .none:
            throw object.error("a \(word) is not allowed for type \(type.rawValue)")
        case .length:
            guard let value = AttributeValueCoding.bound(fromJSON: json, type: type) else {
                throw object.error("\(word) \(describe(json)) is not a valid length (a non-negative integer)")
            }
            return value
        case .value:
            guard let value = AttributeValueCoding.bound(fromJSON: json, type: type) else {
                throw object.error("\(word) \(describe(json)) is not a valid \(type.rawValue)")
            }
            return value
        }
    }

    private func readRelationship(_ value: JSONValue, entity: String) throws -> RelationshipDescription {
        let object = try propertyReader(value, what: "relationship", entity: entity)
        try object.rejectUnknownKeys(Self.relationshipKeys)
        let ruleName = try object.string("deleteRule") ?? DeleteRule.nullify.rawValue
        guard let rule = DeleteRule(rawValue: ruleName) ?? DeleteRule(xcodeName: ruleName) else {
            throw object.error("unknown delete rule \"\(ruleName)\"")
        }
        let relationship = RelationshipDescription(
            name: try object.requiredString("name"),
            destination: try object.requiredString("destination"),
            inverse: try object.string("inverse"),
            deleteRule: rule
        )
        try readCommon(object, into: relationship)
        let toMany = try object.bool("toMany", default: false)
        relationship.isOrdered = try object.bool("ordered", default: false)
        relationship.minCount = try object.integer("minCount") ?? 0
        relationship.maxCount = try RelationshipCounts.maxCount(
            toMany: toMany, written: object.integer("maxCount"), error: object.error)
        if relationship.isOrdered && !toMany {
            throw object.error("a to-one relationship cannot be ordered")
        }
        return relationship
    }

    private func readIndex(_ value: JSONValue, entity: String) throws -> FetchIndexDescription {
        let anonymous = try JSONObjectReader(value, what: "fetch index", file: file, entity: entity)
        let name = try anonymous.requiredString("name")
        try anonymous.rejectUnknownKeys(Self.indexKeys)
        let elements = try anonymous.array("elements").map { element in
            let object = try JSONObjectReader(element, what: "fetch index element", file: file, entity: entity)
            try object.rejectUnknownKeys(Self.indexElementKeys)
            let property = try object.requiredString("property")
            return FetchIndexDescription.Element(propertyName: property, isAscending: try object.bool("ascending", default: true))
        }
        if elements.isEmpty {
            throw anonymous.error("fetch index \(name) has no elements")
        }
        return FetchIndexDescription(name: name, elements: elements)
    }

    private func describe(_ json: JSONValue) -> String {
        switch json {
        case .string(let s): return "\"\(s)\""
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        default: return json.typeName
        }
    }
}

/// The rule both loaders share for a relationship's maximum count.
enum RelationshipCounts {
    /// The ``RelationshipDescription/maxCount`` for a relationship written with `toMany` and
    /// an optional maximum: a to-one's maximum is 1; a to-many's is 0 (no maximum) or at least 2.
    static func maxCount(toMany: Bool, written: Int?, error: (String) -> ModelError) throws -> Int {
        if toMany {
            let count = written ?? 0
            if count == 1 {
                throw error("a to-many relationship cannot have a maximum count of 1 (make it to-one)")
            }
            if count < 0 { throw error("maximum count \(count) is negative") }
            return count
        }
        if let count = written, count != 1 {
            throw error("a to-one relationship cannot have a maximum count of \(count) (make it to-many)")
        }
        return 1
    }
}
