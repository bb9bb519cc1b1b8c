import Foundation

/// Typed getters for plain (non-transformable) attributes: what generated classes read their
/// attributes with (docs/codegen.md).
///
/// Unlike ``ManagedObject/value(forKey:)`` they box nothing in `Any`, and the caller needs no
/// dynamic cast: `value(forKey: "ibu") as? Int64` costs the runtime's cast from `Any?` on top of
/// the read, several times what the read itself costs. An unknown key, or the key of a
/// relationship or a transformable attribute, traps as ``ManagedObject/value(forKey:)`` does
/// for an unknown key; so does a stored value of another type than the getter reads (possible
/// only through ``ManagedObject/setPrimitiveValue(_:atSlot:)``, which checks no type), as a
/// Core Data accessor of the wrong type does.
extension ManagedObject {
    /// The value of the integer (16, 32 or 64 bit) or Boolean attribute `key` as an `Int64`,
    /// or `nil` when it has none, firing the fault if needed.
    ///
    /// Generated accessors use it: `var ibu: Int64 { int64(forKey: "ibu") ?? 0 }`.
    public func int64(forKey key: String) -> Int64? {
        switch storedAttributeValue(forKey: key) {
        case .integer(let value): return value
        case .bool(let value): return value ? 1 : 0
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not an integer")
        }
    }

    /// The value of the Double or Float attribute `key`, or `nil` when it has none.
    public func double(forKey key: String) -> Double? {
        switch storedAttributeValue(forKey: key) {
        case .double(let value): return value
        case .integer(let value): return Double(value)
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a number")
        }
    }

    /// The value of the Decimal attribute `key`, or `nil` when it has none.
    public func decimal(forKey key: String) -> Decimal? {
        switch storedAttributeValue(forKey: key) {
        case .decimal(let value): return value
        case .integer(let value): return Decimal(value)
        case .double(let value): return Decimal(value)
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a decimal")
        }
    }

    /// The value of the String attribute `key`, or `nil` when it has none.
    public func string(forKey key: String) -> String? {
        switch storedAttributeValue(forKey: key) {
        case .string(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a string")
        }
    }

    /// The value of the Boolean attribute `key`, or `nil` when it has none.
    public func bool(forKey key: String) -> Bool? {
        switch storedAttributeValue(forKey: key) {
        case .bool(let value): return value
        case .integer(let value): return value != 0
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a Boolean")
        }
    }

    /// The value of the Date attribute `key`, or `nil` when it has none.
    public func date(forKey key: String) -> Date? {
        switch storedAttributeValue(forKey: key) {
        case .date(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a date")
        }
    }

    /// The value of the Binary Data attribute `key`, or `nil` when it has none.
    public func data(forKey key: String) -> Data? {
        switch storedAttributeValue(forKey: key) {
        case .data(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not binary data")
        }
    }

    /// The value of the UUID attribute `key`, or `nil` when it has none.
    public func uuid(forKey key: String) -> UUID? {
        switch storedAttributeValue(forKey: key) {
        case .uuid(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a UUID")
        }
    }

    /// The value of the URI attribute `key`, or `nil` when it has none.
    public func url(forKey key: String) -> URL? {
        switch storedAttributeValue(forKey: key) {
        case .url(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a URL")
        }
    }

    /// The stored value of the plain attribute `key`, after firing the fault.
    @inline(__always) private func storedAttributeValue(forKey key: String) -> StoreValue {
        guard let plain = entity.plainAttribute(for: key) else {
            preconditionFailure("ManagedObject: entity \(entity.name) has no attribute \"\(key)\" of a plain type")
        }
        willAccessValue()
        return values[plain.slot]
    }
}
