import PersistKit

/// How ``WireObjectWriter`` writes the values of an entity's objects when every property is
/// asked for: each non-transient property's `"name":` (after a `,` for all but the first) in
/// one byte array, and its slot and type. Flat arrays of plain values, so walking them per
/// object touches no reference counts.
final class WireValuePlan: Sendable {
    /// The entity planned.
    let entity: EntityDescription
    /// How many properties are written.
    let count: Int
    /// Every property's `"name":` prefix, one after the other.
    let names: [UInt8]
    /// Where each prefix starts in ``names`` (and, at `count`, where the last one ends).
    let nameStarts: [Int]
    /// Each attribute's slot; -1 for a relationship (written through ``WireValueCoder``).
    let slots: [Int]
    /// Each attribute's type (unused for a relationship).
    let types: [AttributeType]
    /// The properties.
    let properties: [PropertyDescription]

    /// The plan of `entity`'s non-transient properties, in the entity's order.
    init(_ entity: EntityDescription) {
        var names: [UInt8] = []
        var nameStarts: [Int] = []
        var slots: [Int] = []
        var types: [AttributeType] = []
        var properties: [PropertyDescription] = []
        for property in entity.allProperties where !property.isTransient {
            nameStarts.append(names.count)
            if !properties.isEmpty { names.append(UInt8(ascii: ",")) }
            JSON.writeString(property.name, to: &names)
            names.append(UInt8(ascii: ":"))
            // An attribute without a slot (none has one) would go through WireValueCoder, by name.
            let attribute = property as? AttributeDescription
            let slot = attribute.flatMap { entity.slotIndex(of: $0.name) }
            slots.append(slot ?? -1)
            types.append(attribute?.attributeType ?? .undefined)
            properties.append(property)
        }
        nameStarts.append(names.count)
        self.entity = entity
        self.count = properties.count
        self.names = names
        self.nameStarts = nameStarts
        self.slots = slots
        self.types = types
        self.properties = properties
    }
}
