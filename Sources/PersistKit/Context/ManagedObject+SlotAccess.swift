/// Reading and writing stored values by slot, for code that walks an entity's properties in
/// order (a wire encoder or decoder) and would otherwise look each name up in the entity's table.
extension ManagedObject {
    /// The stored value in `slot` (an index into ``EntityDescription/slots``), loading a fault
    /// first; what ``primitiveValue(forKey:)`` returns for that slot's property.
    ///
    /// - Precondition: `slot` is an index of `entity.slots`.
    public func primitiveValue(atSlot slot: Int) -> StoreValue {
        precondition(slot >= 0 && slot < entity.slots.count, "ManagedObject: entity \(entity.name) has no slot \(slot)")
        willAccessValue()
        return values[slot]
    }

    /// Sets the stored value in `slot` without conversion, type checks or inverse maintenance:
    /// what ``setPrimitiveValue(_:forKey:)`` does for that slot's property, without looking
    /// its name up (a PersistKit addition, for code that decodes values slot by slot, such as
    /// a wire decoder). For a plain attribute given the ``StoreValue`` its type stores, this
    /// is what ``setValue(_:forKey:)`` does with the matching Swift value.
    ///
    /// - Precondition: `slot` is an index of `entity.slots`.
    public func setPrimitiveValue(_ value: StoreValue, atSlot slot: Int) {
        precondition(slot >= 0 && slot < entity.slots.count, "ManagedObject: entity \(entity.name) has no slot \(slot)")
        setSlot(slot, to: value)
    }

    /// The object's ``storeVersion`` and the values of all its slots (laid out by
    /// ``EntityDescription/slots``: element `i` is what ``primitiveValue(atSlot:)`` returns for
    /// slot `i`), loading a fault once (a PersistKit addition).
    ///
    /// For code that writes a whole object: one call instead of one per slot, and the values
    /// read in place from the array (each ``primitiveValue(atSlot:)`` copies its value out, a
    /// switch over every case of ``StoreValue``, and destroys the copy after). The values are a
    /// copy: later changes to the object do not show in them.
    public func versionAndValues() -> (version: Int64, values: SlotValues) {
        willAccessValue()
        return (committedVersion, values)
    }

    /// ``versionAndValues()`` lent to `body` instead of copied (a PersistKit addition): the
    /// object's ``storeVersion`` and its slot values in place, laid out by
    /// ``EntityDescription/slots``, loading a fault once. Nothing is retained or released, so
    /// a server writing many objects pays no reference count per object for its values.
    ///
    /// The buffer is valid only during the call, and `body` must not change the object (nor
    /// turn it back into a fault): that would write the values the buffer shows.
    public func withVersionAndValues<R>(_ body: (_ version: Int64, _ values: UnsafeBufferPointer<StoreValue>) throws -> R) rethrows -> R {
        willAccessValue()
        let version = committedVersion
        return try withValuesInPlace { try body(version, $0) }
    }
}
