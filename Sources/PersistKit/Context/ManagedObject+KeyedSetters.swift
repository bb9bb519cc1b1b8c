import Foundation

/// Setters of plain attributes through an ``AttributeKey``: what generated classes write their
/// attributes with (docs/codegen.md), the counterparts of the keyed getters (`int64(_:)`, …).
///
/// Each does what ``ManagedObject/setValue(_:forKey:)`` does with the same value and the key's
/// name, and is faster only where that is certain: a value of the Swift type the attribute
/// stores (an integer within the attribute's range), or `nil`, goes straight into the
/// attribute's slot, found by comparing one word (``AttributeKey``), without boxing the value
/// in `Any` or looking the name up. Anything else (a value the attribute converts, an unknown
/// key, a relationship, a transformable attribute) takes `setValue(_:forKey:)` itself, with
/// its conversions and its trap.
extension ManagedObject {
    /// Sets the integer (16, 32 or 64 bit) attribute `key`, like `setValue(value, forKey: key.name)`.
    public func setInt64(_ value: Int64?, for key: AttributeKey) {
        setPlainValue(value, for: key)
    }

    /// Sets the Double or Float attribute `key`, like `setValue(value, forKey: key.name)`.
    public func setDouble(_ value: Double?, for key: AttributeKey) {
        setPlainValue(value, for: key)
    }

    /// Sets the Decimal attribute `key`, like `setValue(value, forKey: key.name)`.
    public func setDecimal(_ value: Decimal?, for key: AttributeKey) {
        setPlainValue(value, for: key)
    }

    /// Sets the String attribute `key`, like `setValue(value, forKey: key.name)`.
    public func setString(_ value: String?, for key: AttributeKey) {
        setPlainValue(value, for: key)
    }

    /// Sets the Boolean attribute `key`, like `setValue(value, forKey: key.name)`.
    public func setBool(_ value: Bool?, for key: AttributeKey) {
        setPlainValue(value, for: key)
    }

    /// Sets the Date attribute `key`, like `setValue(value, forKey: key.name)`.
    public func setDate(_ value: Date?, for key: AttributeKey) {
        setPlainValue(value, for: key)
    }

    /// Sets the Binary Data attribute `key`, like `setValue(value, forKey: key.name)`.
    public func setData(_ value: Data?, for key: AttributeKey) {
        setPlainValue(value, for: key)
    }

    /// Sets the UUID attribute `key`, like `setValue(value, forKey: key.name)`.
    public func setUUID(_ value: UUID?, for key: AttributeKey) {
        setPlainValue(value, for: key)
    }

    /// Sets the URI attribute `key`, like `setValue(value, forKey: key.name)`.
    public func setURL(_ value: URL?, for key: AttributeKey) {
        setPlainValue(value, for: key)
    }

    /// Stores `value` in the slot of the plain attribute `key` when it is `nil` or of exactly
    /// the Swift type the attribute stores (``exactStoreValue(_:type:)``, which also checks an
    /// integer's range), as `setValue(_:forKey:)` stores such a value; otherwise hands it to
    /// `setValue(_:forKey:)`.
    @inline(__always) private func setPlainValue<T>(_ value: T?, for key: AttributeKey) {
        if let slot = key.slot(in: entity) {
            // The key finds plain attributes only, which `setValue(nil, forKey:)` sets to null.
            guard let value else { return setSlot(slot, to: .null) }
            if let stored = Self.exactStoreValue(value, type: entity.plainType(atSlot: slot)) {
                return setSlot(slot, to: stored)
            }
        }
        // `Any?`, not `Any`: a `nil` stays `nil` instead of becoming a boxed empty optional.
        let general: Any? = value
        setValue(general, forKey: key.name)
    }
}
