import PersistKit

/// One value of an `insert`'s or `update`'s `values`, decoded and checked before anything is
/// set (``Session/decodeValues(_:entity:)``).
enum DecodedValue {
    /// A plain attribute's stored value, set in its slot as it is
    /// (``ManagedObject/setPrimitiveValue(_:atSlot:)``): what `setCheckedValue` would store,
    /// without the Swift value in between, its dynamic casts and a second look-up of the name.
    case slot(Int, StoreValue)
    /// Any other property's value (a relationship), set by name with
    /// ``ManagedObject/setCheckedValue(_:forKey:)``, which keeps inverses in step.
    case property(String, Any?)

    /// Sets the value on `object`.
    ///
    /// - Throws: what ``ManagedObject/setCheckedValue(_:forKey:)`` throws; a slot's value
    ///   never fails.
    func set(on object: ManagedObject) throws {
        switch self {
        case .slot(let slot, let value): object.setPrimitiveValue(value, atSlot: slot)
        case .property(let key, let value): try object.setCheckedValue(value, forKey: key)
        }
    }
}
