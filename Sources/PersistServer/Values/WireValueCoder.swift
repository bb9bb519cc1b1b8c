import Foundation
import PersistKit

/// Converts attribute and relationship values between JSON and PersistKit.
///
/// | type | JSON |
/// |---|---|
/// | string, UUID, URI | string |
/// | integer 16/32/64 | integer (64-bit exact) |
/// | double, float | number |
/// | decimal | string of digits (exact); an integer is accepted on input |
/// | boolean | `true`/`false` |
/// | date | `2026-01-31T12:00:00.000Z` |
/// | binary data | base64 string |
/// | to-one | object ID string or `null` |
/// | to-many | array of object ID strings (sorted, unless the relationship is ordered) |
///
/// Every function runs on the queue of the context whose objects it touches.
public enum WireValueCoder {
    // MARK: - Encoding

    /// `{"id":…,"entity":…,"version":n,"values":{…}}` for `object`, with the `properties` named
    /// (all when `nil`). `version` is ``ManagedObject/storeVersion``: the stored version the
    /// values are based on, 0 for an object not saved yet.
    public static func encode(_ object: ManagedObject, properties: [String]?) -> JSON {
        encode(object, properties: properties, id: WireObjectID.format(object.objectID))
    }

    /// ``encode(_:properties:)`` with `id` as the object's ID text (for a reply whose ID is
    /// filled in later, without formatting a temporary ID first).
    static func encode(_ object: ManagedObject, properties: [String]?, id: String) -> JSON {
        let entity = object.entity
        var members: [JSON.Member] = []
        for property in entity.allProperties where !property.isTransient {
            if let properties, !properties.contains(property.name) { continue }
            members.append(JSON.Member(property.name, value(of: object, property: property)))
        }
        return .object([
            "id": .string(id),
            "entity": .string(entity.name),
            "version": .integer(object.storeVersion),
            "values": .object(members),
        ])
    }

    static func value(of object: ManagedObject, property: PropertyDescription) -> JSON {
        if let relationship = property as? RelationshipDescription {
            if relationship.isToMany {
                let destinations: [ManagedObject]
                switch object.value(forKey: relationship.name) {
                case let set as Set<ManagedObject>: destinations = Array(set)
                case let array as [ManagedObject]: destinations = array
                default: destinations = []
                }
                var ids = destinations.map { WireObjectID.format($0.objectID) }
                if !relationship.isOrdered { ids.sort() }
                return .array(ids.map(JSON.string))
            }
            if case .object(let id) = object.primitiveValue(forKey: relationship.name) {
                return .string(WireObjectID.format(id))
            }
            return .null
        }
        guard let attribute = property as? AttributeDescription else { return .null }
        return encode(object.primitiveValue(forKey: attribute.name), type: attribute.attributeType)
    }

    /// The JSON for a stored value of an attribute of `type`.
    public static func encode(_ value: StoreValue, type: AttributeType?) -> JSON {
        switch value {
        case .null: return .null
        case .integer(let v):
            if type == .boolean { return .bool(v != 0) }
            if type == .double || type == .float { return .double(Double(v)) }
            return .integer(v)
        case .double(let v):
            if type == .float { return .double(Double(Float(v))) }
            return .double(v)
        case .decimal(let v): return .string(v.description)
        case .string(let v): return .string(v)
        case .bool(let v): return .bool(v)
        case .date(let v): return .string(WireDate.format(v))
        case .data(let v): return .string(v.base64EncodedString())
        case .uuid(let v): return .string(v.uuidString)
        case .url(let v): return .string(v.absoluteString)
        case .object(let id): return .string(WireObjectID.format(id))
        case .array(let values): return .array(values.map { encode($0, type: type) })
        }
    }

    /// The JSON for a value a dictionary fetch returns (a Swift value of an attribute, or an object ID).
    public static func encode(any value: Any?) -> JSON {
        switch value {
        case nil, is NSNull: return .null
        case let v as ManagedObjectID: return .string(WireObjectID.format(v))
        case let v as ManagedObject: return .string(WireObjectID.format(v.objectID))
        case let v as Bool: return .bool(v)
        case let v as Int: return .integer(Int64(v))
        case let v as Int64: return .integer(v)
        case let v as Int32: return .integer(Int64(v))
        case let v as Int16: return .integer(Int64(v))
        case let v as Double: return .double(v)
        case let v as Float: return .double(Double(v))
        case let v as Decimal: return .string(v.description)
        case let v as String: return .string(v)
        case let v as Date: return .string(WireDate.format(v))
        case let v as Data: return .string(v.base64EncodedString())
        case let v as UUID: return .string(v.uuidString)
        case let v as URL: return .string(v.absoluteString)
        case let v as Set<ManagedObject>: return .array(v.map { WireObjectID.format($0.objectID) }.sorted().map(JSON.string))
        case let v as [ManagedObject]: return .array(v.map { .string(WireObjectID.format($0.objectID)) })
        case let v as StoreValue: return encode(v, type: nil)
        case let v as [Any?]: return .array(v.map { encode(any: $0) })
        default: return .string("\(value!)")
        }
    }

    // MARK: - Decoding

    /// The Swift value to set for `property` of `entity` from `json`, for
    /// ``ManagedObject/setCheckedValue(_:forKey:)``; relationships are resolved in `context`.
    ///
    /// - Throws: `type_mismatch` for a value of the wrong JSON type or out of range;
    ///   `not_found` for a relationship naming an object that does not exist.
    public static func decode(_ json: JSON, for property: PropertyDescription, of entity: EntityDescription,
                              in context: ManagedObjectContext, coordinator: PersistentStoreCoordinator) throws(WireError) -> Any? {
        // Built only when a message needs it: a value that decodes costs no string.
        var key: String { "\(entity.name).\(property.name)" }
        if let relationship = property as? RelationshipDescription {
            if json == .null { return relationship.isToMany ? [ManagedObject]() : nil }
            if relationship.isToMany {
                guard case .array(let elements) = json else { throw mismatch(key, "an array of object IDs", json) }
                var objects: [ManagedObject] = []
                for element in elements {
                    objects.append(try destination(element, relationship: relationship, key: key, context: context, coordinator: coordinator))
                }
                return objects
            }
            return try destination(json, relationship: relationship, key: key, context: context, coordinator: coordinator)
        }
        guard let attribute = property as? AttributeDescription else { return nil }
        // The stored value's Swift value: the same types `setCheckedValue` takes as they are.
        return try storeValue(json, for: attribute, of: entity).anyValue
    }

    /// The stored value of `attribute` of `entity` from `json` (``StoreValue/null`` for JSON
    /// `null`): what ``ManagedObject/setCheckedValue(_:forKey:)`` stores for the Swift value
    /// ``decode(_:for:of:in:coordinator:)`` gives, made without that value, so a plain
    /// attribute's value can be set in its slot directly
    /// (``ManagedObject/setPrimitiveValue(_:atSlot:)``).
    ///
    /// - Throws: `type_mismatch` for a value of the wrong JSON type or out of range, or for an
    ///   attribute type that cannot be set over the wire.
    public static func storeValue(_ json: JSON, for attribute: AttributeDescription, of entity: EntityDescription) throws(WireError) -> StoreValue {
        // Built only when a message needs it: a value that decodes costs no string.
        var key: String { "\(entity.name).\(attribute.name)" }
        if json == .null { return .null }
        let type = attribute.attributeType
        switch (type, json) {
        case (.integer16, .integer(let v)), (.integer32, .integer(let v)), (.integer64, .integer(let v)):
            if let range = type.integerRange, !range.contains(v) {
                throw WireError(.typeMismatch, "\(v) is out of range for \(key), which is \(type.rawValue)", details: [JSON.Member("key", .string(attribute.name))])
            }
            return .integer(v)
        case (.double, .integer(let v)), (.float, .integer(let v)): return .double(Double(v))
        case (.double, .double(let v)), (.float, .double(let v)): return .double(v)
        case (.decimal, .integer(let v)): return .decimal(Decimal(v))
        case (.decimal, .string(let text)):
            guard isDecimalLiteral(text), let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw mismatch(key, "a decimal string of digits", json)
            }
            return .decimal(decimal)
        case (.string, .string(let v)): return .string(v)
        case (.boolean, .bool(let v)): return .bool(v)
        case (.date, .string(let text)):
            guard let date = WireDate.parse(text) else { throw mismatch(key, "an ISO 8601 date such as 2026-01-31T12:00:00.000Z", json) }
            return .date(date)
        case (.binaryData, .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw mismatch(key, "a base64 string", json) }
            return .data(data)
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw mismatch(key, "a UUID string", json) }
            return .uuid(uuid)
        case (.uri, .string(let text)):
            guard let url = URL(string: text) else { throw mismatch(key, "a URI string", json) }
            return .url(url)
        case (.transformable, _), (.undefined, _), (.objectID, _):
            throw WireError(.typeMismatch, "\(key) is \(type.rawValue), which cannot be set over the wire",
                            details: [JSON.Member("key", .string(attribute.name))])
        default:
            throw mismatch(key, expectation(for: type), json)
        }
    }

    private static func destination(_ json: JSON, relationship: RelationshipDescription, key: String,
                                    context: ManagedObjectContext, coordinator: PersistentStoreCoordinator) throws(WireError) -> ManagedObject {
        guard case .string = json else { throw mismatch(key, relationship.isToMany ? "an array of object IDs" : "an object ID or null", json) }
        let id = try WireObjectID.parse(json, coordinator: coordinator, what: key)
        if let destinationEntity = relationship.destinationEntity, !id.entity.isKind(of: destinationEntity) {
            throw WireError(.typeMismatch, "\(key) takes a \(destinationEntity.name), not a \(id.entity.name)",
                            details: [JSON.Member("key", .string(relationship.name))])
        }
        do {
            return try context.existingObject(with: id)
        } catch {
            throw WireError(.notFound, "no object \(WireObjectID.format(id))", details: [JSON.Member("object", .string(WireObjectID.format(id)))])
        }
    }

    private static func mismatch(_ key: String, _ expected: String, _ json: JSON) -> WireError {
        let name = key.split(separator: ".").last.map(String.init) ?? key
        return WireError(.typeMismatch, "\(key) takes \(expected), not \(json.typeName)", details: [JSON.Member("key", .string(name))])
    }

    private static func expectation(for type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: return "an integer"
        case .double, .float: return "a number"
        case .decimal: return "a decimal string of digits"
        case .string: return "a string"
        case .boolean: return "true or false"
        case .date: return "an ISO 8601 date string"
        case .binaryData: return "a base64 string"
        case .uuid: return "a UUID string"
        case .uri: return "a URI string"
        default: return type.rawValue
        }
    }

    /// `-?digits(.digits)?([eE][+-]?digits)?`.
    static func isDecimalLiteral(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        guard digits() > 0 else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
