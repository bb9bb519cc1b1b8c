import Foundation

/// Writes a model in our JSON model format (`protocol/model.md`).
///
/// Two forms: the *representation* keeps the model's entity and property order and leaves
/// out keys whose value is the format's default; the *normalized* form sorts entities and
/// properties by name and writes every key with its value, so two models with the same
/// meaning print to the same bytes (`persistd --model PATH --check`).
struct ModelJSONWriter {
    /// Whether to write the normalized form.
    let normalized: Bool

    /// The JSON document for `model`.
    func json(for model: ManagedObjectModel) -> JSONValue {
        var root: [String: JSONValue] = ["formatVersion": .integer(Int64(ModelJSONReader.formatVersion))]
        let entities = normalized ? model.entities.sorted { $0.name < $1.name } : model.entities
        root["entities"] = .array(entities.map(json(for:)))
        if normalized || !model.versionIdentifiers.isEmpty {
            root["versionIdentifiers"] = .array(model.versionIdentifiers.sorted().map(JSONValue.string))
        }
        if normalized || !model.configurations.isEmpty {
            root["configurations"] = .object(model.configurations.mapValues { names in
                .array((normalized ? names.sorted() : names).map(JSONValue.string))
            })
        }
        return .object(root)
    }

    private func json(for entity: EntityDescription) -> JSONValue {
        var object: [String: JSONValue] = ["name": .string(entity.name)]
        put(&object, "className", entity.managedObjectClassName)
        put(&object, "parent", entity.superentity?.name ?? entity.superentityName)
        put(&object, "abstract", entity.isAbstract, default: false)
        let attributes = entity.properties.compactMap { $0 as? AttributeDescription }
        let relationships = entity.properties.compactMap { $0 as? RelationshipDescription }
        if normalized || !attributes.isEmpty {
            object["attributes"] = .array(sortedIfNormalized(attributes).map(json(for:)))
        }
        if normalized || !relationships.isEmpty {
            object["relationships"] = .array(sortedIfNormalized(relationships).map(json(for:)))
        }
        if normalized || !entity.uniquenessConstraints.isEmpty {
            object["uniquenessConstraints"] = .array(entity.uniquenessConstraints.map { .array($0.map(JSONValue.string)) })
        }
        if normalized || !entity.indexes.isEmpty {
            let indexes = normalized ? entity.indexes.sorted { $0.name < $1.name } : entity.indexes
            object["indexes"] = .array(indexes.map { index in
                .object([
                    "name": .string(index.name),
                    "elements": .array(index.elements.map { element in
                        .object(["property": .string(element.propertyName), "ascending": .bool(element.isAscending)])
                    }),
                ])
            })
        }
        putUserInfo(&object, entity.userInfo)
        put(&object, "versionHashModifier", entity.versionHashModifier)
        put(&object, "renamingIdentifier", entity.renamingIdentifier)
        return .object(object)
    }

    private func sortedIfNormalized<P: PropertyDescription>(_ properties: [P]) -> [P] {
        normalized ? properties.sorted { $0.name < $1.name } : properties
    }

    private func common(_ property: PropertyDescription) -> [String: JSONValue] {
        var object: [String: JSONValue] = ["name": .string(property.name)]
        put(&object, "optional", property.isOptional, default: true)
        put(&object, "transient", property.isTransient, default: false)
        put(&object, "indexed", property.isIndexed, default: false)
        putUserInfo(&object, property.userInfo)
        put(&object, "versionHashModifier", property.versionHashModifier)
        put(&object, "renamingIdentifier", property.renamingIdentifier)
        return object
    }

    private func json(for attribute: AttributeDescription) -> JSONValue {
        var object = common(attribute)
        object["type"] = .string(attribute.attributeType.rawValue)
        putValue(&object, "default", attribute.defaultValue)
        putValue(&object, "min", attribute.minValue)
        putValue(&object, "max", attribute.maxValue)
        put(&object, "regex", attribute.regularExpression)
        put(&object, "allowsExternalStorage", attribute.allowsExternalBinaryDataStorage, default: false)
        put(&object, "valueTransformer", attribute.valueTransformerName)
        put(&object, "valueClassName", attribute.attributeValueClassName)
        put(&object, "usesScalarValueType", attribute.usesScalarValueType, default: false)
        put(&object, "preservesValueInHistoryOnDeletion", attribute.preservesValueInHistoryOnDeletion, default: false)
        return .object(object)
    }

    private func json(for relationship: RelationshipDescription) -> JSONValue {
        var object = common(relationship)
        object["destination"] = .string(relationship.destinationEntityName)
        put(&object, "inverse", relationship.inverseName)
        put(&object, "toMany", relationship.isToMany, default: false)
        put(&object, "ordered", relationship.isOrdered, default: false)
        if normalized || relationship.deleteRule != .nullify {
            object["deleteRule"] = .string(relationship.deleteRule.rawValue)
        }
        if normalized || relationship.minCount != 0 {
            object["minCount"] = .integer(Int64(relationship.minCount))
        }
        if normalized || (relationship.isToMany && relationship.maxCount != 0) {
            object["maxCount"] = .integer(Int64(relationship.maxCount))
        }
        return .object(object)
    }

    // MARK: - Helpers

    private func put(_ object: inout [String: JSONValue], _ key: String, _ value: String?) {
        if let value { object[key] = .string(value) }
    }

    private func put(_ object: inout [String: JSONValue], _ key: String, _ value: Bool, default defaultValue: Bool) {
        if normalized || value != defaultValue { object[key] = .bool(value) }
    }

    private func putValue(_ object: inout [String: JSONValue], _ key: String, _ value: StoreValue?) {
        if let value, !value.isNull { object[key] = AttributeValueCoding.json(for: value) }
    }

    private func putUserInfo(_ object: inout [String: JSONValue], _ userInfo: [String: String]) {
        if normalized || !userInfo.isEmpty { object["userInfo"] = .object(userInfo.mapValues(JSONValue.string)) }
    }
}
