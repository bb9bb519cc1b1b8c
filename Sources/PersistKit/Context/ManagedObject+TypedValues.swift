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
    public func int64(forKey key: String) -> Int64? {
        int64(storedAttributeValue(forKey: key), key: key)
    }

    /// ``int64(forKey:)`` for the attribute `key` names, its slot found by comparing one word
    /// once `key` found it in an object of the same entity (``AttributeKey``).
    ///
    /// Generated accessors use it: `var ibu: Int64 { int64(AttributeKeys.ibu) ?? 0 }`.
    public func int64(_ key: AttributeKey) -> Int64? {
        int64(storedAttributeValue(key), key: key.name)
    }

    /// The Int64 of the stored value `value` of the attribute `key`, as the getters read it.
    @inline(__always) private func int64(_ value: StoreValue, key: String) -> Int64? {
        switch value {
        case .integer(let value): return value
        case .bool(let value): return value ? 1 : 0
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not an integer")
        }
    }

    /// The value of the Double or Float attribute `key`, or `nil` when it has none.
    public func double(forKey key: String) -> Double? {
        double(storedAttributeValue(forKey: key), key: key)
    }

    /// ``double(forKey:)`` for the attribute `key` names, its slot found by comparing one word
    /// once `key` found it in an object of the same entity (``AttributeKey``).
    public func double(_ key: AttributeKey) -> Double? {
        double(storedAttributeValue(key), key: key.name)
    }

    /// The Double of the stored value `value` of the attribute `key`, as the getters read it.
    @inline(__always) private func double(_ value: StoreValue, key: String) -> Double? {
        switch value {
        case .double(let value): return value
        case .integer(let value): return Double(value)
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a number")
        }
    }

    /// The value of the Decimal attribute `key`, or `nil` when it has none.
    public func decimal(forKey key: String) -> Decimal? {
        decimal(storedAttributeValue(forKey: key), key: key)
    }

    /// ``decimal(forKey:)`` for the attribute `key` names, its slot found by comparing one word
    /// once `key` found it in an object of the same entity (``AttributeKey``).
    public func decimal(_ key: AttributeKey) -> Decimal? {
        decimal(storedAttributeValue(key), key: key.name)
    }

    /// The Decimal of the stored value `value` of the attribute `key`, as the getters read it.
    @inline(__always) private func decimal(_ value: StoreValue, key: String) -> Decimal? {
        switch value {
        case .decimal(let value): return value
        case .integer(let value): return Decimal(value)
        case .double(let value): return Decimal(value)
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a decimal")
        }
    }

    /// The value of the String attribute `key`, or `nil` when it has none.
    public func string(forKey key: String) -> String? {
        string(storedAttributeValue(forKey: key), key: key)
    }

    /// ``string(forKey:)`` for the attribute `key` names, its slot found by comparing one word
    /// once `key` found it in an object of the same entity (``AttributeKey``).
    public func string(_ key: AttributeKey) -> String? {
        string(storedAttributeValue(key), key: key.name)
    }

    /// The String of the stored value `value` of the attribute `key`, as the getters read it.
    @inline(__always) private func string(_ value: StoreValue, key: String) -> String? {
        switch value {
        case .string(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a string")
        }
    }

    /// The value of the Boolean attribute `key`, or `nil` when it has none.
    public func bool(forKey key: String) -> Bool? {
        bool(storedAttributeValue(forKey: key), key: key)
    }

    /// ``bool(forKey:)`` for the attribute `key` names, its slot found by comparing one word
    /// once `key` found it in an object of the same entity (``AttributeKey``).
    public func bool(_ key: AttributeKey) -> Bool? {
        bool(storedAttributeValue(key), key: key.name)
    }

    /// The Bool of the stored value `value` of the attribute `key`, as the getters read it.
    @inline(__always) private func bool(_ value: StoreValue, key: String) -> Bool? {
        switch value {
        case .bool(let value): return value
        case .integer(let value): return value != 0
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a Boolean")
        }
    }

    /// The value of the Date attribute `key`, or `nil` when it has none.
    public func date(forKey key: String) -> Date? {
        date(storedAttributeValue(forKey: key), key: key)
    }

    /// ``date(forKey:)`` for the attribute `key` names, its slot found by comparing one word
    /// once `key` found it in an object of the same entity (``AttributeKey``).
    public func date(_ key: AttributeKey) -> Date? {
        date(storedAttributeValue(key), key: key.name)
    }

    /// The Date of the stored value `value` of the attribute `key`, as the getters read it.
    @inline(__always) private func date(_ value: StoreValue, key: String) -> Date? {
        switch value {
        case .date(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a date")
        }
    }

    /// The value of the Binary Data attribute `key`, or `nil` when it has none.
    public func data(forKey key: String) -> Data? {
        data(storedAttributeValue(forKey: key), key: key)
    }

    /// ``data(forKey:)`` for the attribute `key` names, its slot found by comparing one word
    /// once `key` found it in an object of the same entity (``AttributeKey``).
    public func data(_ key: AttributeKey) -> Data? {
        data(storedAttributeValue(key), key: key.name)
    }

    /// The Data of the stored value `value` of the attribute `key`, as the getters read it.
    @inline(__always) private func data(_ value: StoreValue, key: String) -> Data? {
        switch value {
        case .data(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not binary data")
        }
    }

    /// The value of the UUID attribute `key`, or `nil` when it has none.
    public func uuid(forKey key: String) -> UUID? {
        uuid(storedAttributeValue(forKey: key), key: key)
    }

    /// ``uuid(forKey:)`` for the attribute `key` names, its slot found by comparing one word
    /// once `key` found it in an object of the same entity (``AttributeKey``).
    public func uuid(_ key: AttributeKey) -> UUID? {
        uuid(storedAttributeValue(key), key: key.name)
    }

    /// The UUID of the stored value `value` of the attribute `key`, as the getters read it.
    @inline(__always) private func uuid(_ value: StoreValue, key: String) -> UUID? {
        switch value {
        case .uuid(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a UUID")
        }
    }

    /// The value of the URI attribute `key`, or `nil` when it has none.
    public func url(forKey key: String) -> URL? {
        url(storedAttributeValue(forKey: key), key: key)
    }

    /// ``url(forKey:)`` for the attribute `key` names, its slot found by comparing one word
    /// once `key` found it in an object of the same entity (``AttributeKey``).
    public func url(_ key: AttributeKey) -> URL? {
        url(storedAttributeValue(key), key: key.name)
    }

    /// The URL of the stored value `value` of the attribute `key`, as the getters read it.
    @inline(__always) private func url(_ value: StoreValue, key: String) -> URL? {
        switch value {
        case .url(let value): return value
        case .null: return nil
        case let other: preconditionFailure("ManagedObject: \(entity.name).\(key) holds \(other), not a URL")
        }
    }

    /// The stored value of the plain attribute `key` names, after firing the fault.
    @inline(__always) private func storedAttributeValue(_ key: AttributeKey) -> StoreValue {
        guard let slot = key.slot(in: entity) else {
            preconditionFailure("ManagedObject: entity \(entity.name) has no attribute \"\(key.name)\" of a plain type")
        }
        willAccessValue()
        return values[slot]
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
