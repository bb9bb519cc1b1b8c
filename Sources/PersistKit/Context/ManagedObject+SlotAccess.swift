/// Reading stored values by slot, for code that walks an entity's properties in order (a wire
/// encoder) and would otherwise look each name up in the entity's table.
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
}
