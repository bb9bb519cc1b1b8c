import Foundation

/// Entity version hashes: a 32-byte digest of everything about an entity that changes its
/// stored form, as Core Data records in a store's `NSStoreModelVersionHashes`.
///
/// The inputs are those Apple's *Core Data Model Versioning and Data Migration Programming
/// Guide* ("Understanding Versions") lists: for an entity its name, parent, whether it is
/// abstract, its properties and its version hash modifier; for an attribute its name,
/// optionality, transience, type and modifier; for a relationship its name, destination,
/// to-many-ness, minimum and maximum counts, delete rule, inverse and modifier. Class names,
/// user info, defaults and validation rules are not inputs.
///
/// Byte-for-byte compatibility with Apple's hashes is NOT achieved yet (the exact encoding of
/// the inputs is private; a later issue works it out against real stores). These hashes are
/// stable across runs and change exactly when an input changes, which is what a store needs
/// to notice that a model changed.
extension EntityDescription {
    /// The entity's 32-byte version hash (`NSEntityDescription.versionHash`).
    public var versionHash: Data {
        var encoder = VersionHashEncoder()
        encoder.append("entity")
        encoder.append(name)
        encoder.append(superentity?.name ?? "")
        encoder.append(isAbstract)
        // Properties in name order, so declaration order does not change the hash.
        for property in properties.sorted(by: { $0.name < $1.name }) {
            encoder.append(property.versionHash)
        }
        encoder.append(versionHashModifier ?? "")
        return SHA256.hash(encoder.bytes)
    }
}

extension PropertyDescription {
    /// The property's 32-byte version hash (`NSPropertyDescription.versionHash`).
    public var versionHash: Data {
        var encoder = VersionHashEncoder()
        encoder.append(name)
        encoder.append(isOptional)
        encoder.append(isTransient)
        if let attribute = self as? AttributeDescription {
            encoder.append("attribute")
            encoder.append(attribute.attributeType.rawValue)
        } else if let relationship = self as? RelationshipDescription {
            encoder.append("relationship")
            encoder.append(relationship.destinationEntityName)
            encoder.append(relationship.isToMany)
            encoder.append(Int64(relationship.minCount))
            encoder.append(Int64(relationship.maxCount))
            encoder.append(relationship.deleteRule.rawValue)
            encoder.append(relationship.inverseName ?? "")
            encoder.append(relationship.isOrdered)
        }
        encoder.append(versionHashModifier ?? "")
        return SHA256.hash(encoder.bytes)
    }
}

extension ManagedObjectModel {
    /// Every entity's version hash, by entity name (`NSManagedObjectModel.entityVersionHashesByName`).
    public var entityVersionHashesByName: [String: Data] {
        Dictionary(entities.map { ($0.name, $0.versionHash) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Length-prefixed encoding of hash inputs, so `("ab", "c")` and `("a", "bc")` differ.
private struct VersionHashEncoder {
    var bytes = Data()

    mutating func append(_ text: String) {
        let utf8 = Data(text.utf8)
        append(Int64(utf8.count))
        bytes.append(utf8)
    }

    mutating func append(_ flag: Bool) { bytes.append(flag ? 1 : 0) }

    mutating func append(_ value: Int64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ data: Data) {
        append(Int64(data.count))
        bytes.append(data)
    }
}
