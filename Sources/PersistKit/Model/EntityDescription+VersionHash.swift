import Foundation

/// Entity version hashes, byte-compatible with Core Data's `NSEntityDescription.versionHash`,
/// and the model digest Core Data records as `NSStoreModelVersionHashesDigest`.
///
/// The inputs are those Apple's *Core Data Model Versioning and Data Migration Programming
/// Guide* ("Understanding Versions") lists. The way the bytes are assembled was established
/// against the six entity hashes in the two real Core Data stores of the test corpus (all six
/// reproduced, see `docs/sqlite-layout.md`, "Version hashes"):
///
/// - **property**: SHA-256 of the name (UTF-8), then 2 bytes little-endian of flags
///   (1 optional, 2 transient, 4 read-only), then the version hash modifier (UTF-8) if any.
/// - **attribute**: SHA-256 of the property hash (32 bytes), the `NSAttributeType` number as
///   4 bytes little-endian (Integer 16 is 100, String 700, …), a byte `1` if external binary
///   storage is allowed, a byte `1` if the value is preserved in history on deletion.
/// - **relationship**: SHA-256 of the property hash, the destination entity's name, the
///   inverse's name (when there is an inverse other than the relationship itself), the maximum
///   and minimum counts as 4 bytes little-endian each, and bytes `01 00` if ordered. The delete
///   rule is not an input.
/// - **entity**: SHA-256 of the name, 1 byte "abstract", the superentity's version hash (if
///   any), the hashes of its stored (non-transient) attributes and relationships sorted by
///   name, the version hash modifier, then each uniqueness constraint (property names joined
///   by `.`), sorted.
extension EntityDescription {
    /// The entity's 32-byte version hash (`NSEntityDescription.versionHash`).
    public var versionHash: Data {
        var bytes = Data(name.utf8)
        bytes.append(isAbstract ? 1 : 0)
        if let superentity { bytes.append(superentity.versionHash) }
        // Core Data hashes `properties`, which includes inherited ones (INFERRED for sub-entities).
        for property in computeAllProperties().sorted(by: { $0.name < $1.name }) where !property.isTransient {
            bytes.append(property.versionHash)
        }
        if let versionHashModifier { bytes.append(contentsOf: versionHashModifier.utf8) }
        let constraints = inheritedUniquenessConstraints.map { $0.joined(separator: ".") }.filter { !$0.isEmpty }.sorted()
        for constraint in constraints { bytes.append(contentsOf: constraint.utf8) }
        return SHA256.hash(bytes)
    }
}

extension PropertyDescription {
    /// The property's 32-byte version hash (`NSPropertyDescription.versionHash`).
    public var versionHash: Data {
        var base = Data(name.utf8)
        let flags: UInt16 = (isOptional ? 1 : 0) | (isTransient ? 2 : 0)
        base.append(UInt8(flags & 0xff))
        base.append(UInt8(flags >> 8))
        if let versionHashModifier { base.append(contentsOf: versionHashModifier.utf8) }
        let propertyHash = SHA256.hash(base)
        if let attribute = self as? AttributeDescription {
            var bytes = propertyHash
            bytes.appendLittleEndian(UInt32(attribute.attributeType.coreDataNumber))
            if attribute.allowsExternalBinaryDataStorage { bytes.append(1) }
            if attribute.preservesValueInHistoryOnDeletion { bytes.append(1) }
            return SHA256.hash(bytes)
        }
        if let relationship = self as? RelationshipDescription {
            var bytes = propertyHash
            bytes.append(contentsOf: relationship.destinationEntityName.utf8)
            if let inverse = relationship.inverseName, !(inverse == name && relationship.destinationEntityName == entity?.name) {
                bytes.append(contentsOf: inverse.utf8)
            }
            bytes.appendLittleEndian(UInt32(truncatingIfNeeded: relationship.maxCount))
            bytes.appendLittleEndian(UInt32(truncatingIfNeeded: relationship.minCount))
            if relationship.isOrdered { bytes.append(contentsOf: [1, 0]) }
            return SHA256.hash(bytes)
        }
        return propertyHash
    }
}

extension AttributeType {
    /// The attribute type's number in Core Data (`NSAttributeType`): Integer 16 is 100,
    /// Integer 32 200, Integer 64 300, Decimal 400, Double 500, Float 600, String 700,
    /// Boolean 800, Date 900, Binary 1000, UUID 1100, URI 1200, Transformable 1800,
    /// Object ID 2000, Undefined 0.
    public var coreDataNumber: Int {
        switch self {
        case .undefined: return 0
        case .integer16: return 100
        case .integer32: return 200
        case .integer64: return 300
        case .decimal: return 400
        case .double: return 500
        case .float: return 600
        case .string: return 700
        case .boolean: return 800
        case .date: return 900
        case .binaryData: return 1000
        case .uuid: return 1100
        case .uri: return 1200
        case .transformable: return 1800
        case .objectID: return 2000
        }
    }
}

extension ManagedObjectModel {
    /// Every entity's version hash, by entity name (`NSManagedObjectModel.entityVersionHashesByName`).
    public var entityVersionHashesByName: [String: Data] {
        Dictionary(entities.map { ($0.name, $0.versionHash) }, uniquingKeysWith: { first, _ in first })
    }

    /// The hashes of the entities of one configuration (`nil` for all), by entity name.
    public func entityVersionHashes(forConfiguration name: String?) -> [String: Data] {
        Dictionary(entities(forConfiguration: name).map { ($0.name, $0.versionHash) }, uniquingKeysWith: { first, _ in first })
    }

    /// `NSStoreModelVersionHashesDigest`: base64 of the SHA-512 of every entity name, in name
    /// order, each followed by its 32-byte version hash.
    public static func versionHashesDigest(_ hashes: [String: Data]) -> String {
        var bytes = Data()
        for (name, hash) in hashes.sorted(by: { $0.key < $1.key }) {
            bytes.append(contentsOf: name.utf8)
            bytes.append(hash)
        }
        return SHA512.hash(bytes).base64EncodedString()
    }

    /// This model's ``versionHashesDigest(_:)``.
    public var versionHashesDigest: String { Self.versionHashesDigest(entityVersionHashesByName) }
}

extension Data {
    /// Appends `value` as 4 bytes, least significant first.
    mutating func appendLittleEndian(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
