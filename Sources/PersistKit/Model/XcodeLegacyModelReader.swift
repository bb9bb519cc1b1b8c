import Foundation

/// Reads the legacy Xcode 3 form of an `.xcdatamodel`: a binary `NSKeyedArchiver` property list
/// named `elements` (no XML `contents`), as in MagicalRecord's `Recipes.xcdatamodeld`.
///
/// The archive holds Xcode's UML-like objects: `XDPMEntity` (name, `_isAbstract`, properties in
/// `XDBucketForOwnedAttributesstorage`, superentity through `XDBucketForGeneralizationsstorage`),
/// `XDPMAttribute` and `XDPMRelationship`, whose Core Data settings are "stereotype" tagged
/// values (`XDUMLPropertyImp` `_name` → `_default`): `XD_PPSK_isOptional`,
/// `XD_PPSK_isTransient`, `XD_PPSK_isIndexed`, `XD_PAttK_attributeType` (the `NSAttributeType`
/// number), `XD_PAttK_defaultValueAsString`, `XD_PRK_destination`, `XD_PRK_inverseRelationship`,
/// `XD_PRK_isToMany`, `XD_PRK_minCount`, `XD_PRK_maxCount` (absent on to-many: unbounded),
/// `XD_PRK_deleteRule` (0 no action, 1 nullify, 2 cascade, 3 deny). Read from the corpus archive;
/// the superentity link is INFERRED (the corpus has no legacy model with inheritance).
struct XcodeLegacyModelReader {
    /// The `elements` file being read, for error messages.
    let file: String?

    /// The archive's objects (`$objects`).
    private var objects: [Any] = []

    init(file: String?) { self.file = file }

    /// Fills `model` from the archive `data`.
    mutating func read(_ data: Data, into model: ManagedObjectModel) throws {
        let plist: Any
        do { plist = try PropertyListSerialization.propertyList(from: data, format: nil) } catch {
            throw ModelError(file: file, "not a property list: \(error.localizedDescription)")
        }
        guard let root = plist as? [String: Any], let objects = root["$objects"] as? [Any] else {
            throw ModelError(file: file, "not a keyed archive (no $objects)")
        }
        self.objects = objects
        var entities: [EntityDescription] = []
        var superentities: [(EntityDescription, [String: Any])] = []
        for case let object as [String: Any] in objects where className(object) == "XDPMEntity" {
            guard let name = resolve(object["_name"]) as? String else { throw ModelError(file: file, "an entity has no name") }
            let entity = EntityDescription(name: name)
            entity.isAbstract = (resolve(object["_isAbstract"]) as? Bool) ?? false
            let properties = dictionary(object["XDBucketForOwnedAttributesstorage"])
            entity.properties = try properties.compactMap { try readProperty($0.value, entity: name) }
            superentities.append((entity, object))
            entities.append(entity)
        }
        // Superentity: a generalization naming another entity.
        for (entity, object) in superentities {
            for generalization in array(object["XDBucketForGeneralizationsstorage"]) {
                guard let general = generalization as? [String: Any] else { continue }
                for value in general.values {
                    if let parent = resolve(value) as? [String: Any], className(parent) == "XDPMEntity",
                       let parentName = resolve(parent["_name"]) as? String, parentName != entity.name {
                        entity.superentityName = parentName
                    }
                }
            }
        }
        guard !entities.isEmpty else { throw ModelError(file: file, "the archive holds no entity (XDPMEntity)") }
        model.entities = entities
    }

    private func readProperty(_ value: Any, entity: String) throws -> PropertyDescription? {
        guard let object = value as? [String: Any], let name = resolve(object["_name"]) as? String else { return nil }
        let tags = taggedValues(object)
        let property: PropertyDescription
        switch className(object) {
        case "XDPMAttribute":
            let number = (tags["XD_PAttK_attributeType"] as? Int) ?? 0
            guard let type = AttributeType.allCases.first(where: { $0.coreDataNumber == number }) else {
                throw ModelError(file: file, entity: entity, property: name, "unknown attribute type number \(number)")
            }
            let attribute = AttributeDescription(name: name, type: type)
            if let text = tags["XD_PAttK_defaultValueAsString"] as? String, let value = AttributeValueCoding.value(fromXcode: text, type: type) {
                attribute.defaultValue = value
            }
            attribute.valueTransformerName = tags["XD_PAttK_valueTransformerName"] as? String
            property = attribute
        case "XDPMRelationship":
            guard let destination = (tags["XD_PRK_destination"] as? [String: Any]).flatMap({ resolve($0["_name"]) as? String }) else {
                throw ModelError(file: file, entity: entity, property: name, "the relationship has no destination")
            }
            let inverse = (tags["XD_PRK_inverseRelationship"] as? [String: Any]).flatMap { resolve($0["_name"]) as? String }
            let relationship = RelationshipDescription(name: name, destination: destination, inverse: inverse)
            let rules: [Int: DeleteRule] = [0: .noAction, 1: .nullify, 2: .cascade, 3: .deny]
            relationship.deleteRule = rules[(tags["XD_PRK_deleteRule"] as? Int) ?? 1] ?? .nullify
            relationship.minCount = (tags["XD_PRK_minCount"] as? Int) ?? 0
            let toMany = (tags["XD_PRK_isToMany"] as? Bool) ?? false
            relationship.maxCount = (tags["XD_PRK_maxCount"] as? Int) ?? (toMany ? 0 : 1)
            property = relationship
        default:
            return nil // fetched properties and other elements are ignored
        }
        property.isOptional = (tags["XD_PPSK_isOptional"] as? Bool) ?? true
        property.isTransient = (tags["XD_PPSK_isTransient"] as? Bool) ?? false
        property.isIndexed = property is AttributeDescription && ((tags["XD_PPSK_isIndexed"] as? Bool) ?? false)
        return property
    }

    // MARK: - Archive access

    /// Every stereotype tagged value of an element: `_name` → resolved `_default`.
    private func taggedValues(_ element: [String: Any]) -> [String: Any] {
        var values: [String: Any] = [:]
        for stereotype in dictionary(element["XDBucketForStereotypesstorage"]).map(\.value) {
            guard let stereotype = stereotype as? [String: Any] else { continue }
            for tag in dictionary(stereotype["XDBucketForOwnedAttributesstorage"]).map(\.value) {
                guard let tag = tag as? [String: Any], let name = resolve(tag["_name"]) as? String,
                      let value = tag["_default"].flatMap(resolve) else { continue }
                values[name] = value
            }
        }
        return values
    }

    /// The object a `UID` refers to (or the value itself); `nil` for `$null`.
    private func resolve(_ value: Any?) -> Any? {
        guard let value else { return nil }
        guard let index = Self.uid(value) else { return value }
        guard index < objects.count else { return nil }
        let object = objects[index]
        if let text = object as? String, text == "$null" { return nil }
        return object
    }

    /// The class name of an archived object (`$class` → `$classname`).
    private func className(_ object: [String: Any]) -> String? {
        (resolve(object["$class"]) as? [String: Any])?["$classname"] as? String
    }

    /// An archived `NSDictionary`'s entries, keys resolved to strings, values resolved.
    private func dictionary(_ value: Any?) -> [(key: String, value: Any)] {
        guard let object = resolve(value) as? [String: Any], let keys = object["NS.keys"] as? [Any],
              let values = object["NS.objects"] as? [Any] else { return [] }
        return zip(keys, values).compactMap { key, value in
            guard let key = resolve(key) as? String, let value = resolve(value) else { return nil }
            return (key, value)
        }
    }

    /// An archived `NSArray`'s elements, resolved.
    private func array(_ value: Any?) -> [Any] {
        guard let object = resolve(value) as? [String: Any], let values = object["NS.objects"] as? [Any] else { return [] }
        return values.compactMap { resolve($0) }
    }

    /// The index a keyed-archive `UID` holds. swift-corelibs-foundation decodes a binary plist
    /// UID as its internal class `_NSKeyedArchiverUID`, whose only public trace is a stored
    /// property `value`; reflection reads it. Anything else is not a UID.
    static func uid(_ value: Any) -> Int? {
        guard String(describing: type(of: value)).contains("KeyedArchiverUID") else { return nil }
        for child in Mirror(reflecting: value).children where child.label == "value" {
            if let number = child.value as? UInt32 { return Int(number) }
            if let number = child.value as? Int { return number }
            if let number = child.value as? UInt64 { return Int(number) }
        }
        return nil
    }
}

extension ManagedObjectModel {
    /// Loads and validates the legacy Xcode 3 form of an `.xcdatamodel`: its binary `elements`
    /// archive (see ``XcodeLegacyModelReader``).
    public convenience init(xcdatamodelElements data: Data, sourceURL: URL?) throws {
        self.init()
        self.sourceURL = sourceURL
        var reader = XcodeLegacyModelReader(file: sourceURL?.path)
        try reader.read(data, into: self)
        try resolveAndValidate()
    }
}
