#if canImport(Glibc)
import Glibc
#endif
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
    /// Every property's `"name":` prefix, one after the other, then ``namePadding`` zero bytes,
    /// so that 16 bytes can be read from the start of any prefix (``ByteStage/append(padded:count:thenInteger:spill:)``).
    let names: [UInt8]
    /// Where each prefix starts in ``names`` (and, at `count`, where the last one ends).
    let nameStarts: [Int]
    /// Each attribute's slot; -1 for a relationship (written through ``WireValueCoder``).
    let slots: [Int]
    /// Each attribute's type (unused for a relationship).
    let types: [AttributeType]
    /// The properties.
    let properties: [PropertyDescription]
    /// Each property's step, in order: everything the writer of a whole object needs of it in
    /// one flat array (see ``Step``).
    let steps: [Step]
    /// One more than the highest slot of ``slots`` (0 when none): an object's values array of
    /// at least this many holds every slot the plan reads.
    let slotLimit: Int

    /// The zero bytes after the last prefix of ``names``.
    static let namePadding = 16

    /// What ``WireObjectWriter`` does for one property of an object.
    struct Step {
        /// Where the property's `"name":` prefix starts in ``WireValuePlan/names``, and how long it is.
        let nameStart: Int32
        let nameCount: Int32
        /// The attribute's slot; -1 for a relationship.
        let slot: Int32
        /// Whether an `.integer` value is written as its digits (every attribute type but
        /// `boolean`, `double` and `float`, whose integers are converted).
        let writesIntegers: Bool
    }

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
        names.append(contentsOf: repeatElement(0, count: Self.namePadding))
        var steps: [Step] = []
        for index in properties.indices {
            let type = types[index]
            steps.append(Step(nameStart: Int32(nameStarts[index]), nameCount: Int32(nameStarts[index + 1] - nameStarts[index]),
                              slot: Int32(slots[index]), writesIntegers: WireObjectWriter.writesDigits(type)))
        }
        self.steps = steps
        self.slotLimit = (slots.max() ?? -1) + 1
        self.entity = entity
        self.count = properties.count
        self.names = names
        self.nameStarts = nameStarts
        self.slots = slots
        self.types = types
        self.properties = properties
    }

    /// The index of the property whose name's bytes are `key`: `next` when that is it (clients
    /// usually write values in the model's order), else the first of that name; `nil` when
    /// no property of the plan has it. A name written with escapes in ``names`` never matches,
    /// which suits keys read as plain strings (they have none).
    func index(ofName key: UnsafeBufferPointer<UInt8>, from next: Int) -> Int? {
        names.withUnsafeBufferPointer { names in
            func matches(_ index: Int) -> Bool {
                // The prefix is `,"name":` (no comma for the first): the name lies between
                // its quotes.
                let start = nameStarts[index] + (index == 0 ? 1 : 2)
                let count = nameStarts[index + 1] - 2 - start
                // The force-unwraps cannot fail: `names` holds at least its padding, and `key`
                // is read only when it holds `count` ≥ 1 bytes.
                return count == key.count && (count == 0 || memcmp(names.baseAddress! + start, key.baseAddress!, count) == 0)
            }
            if next < count, matches(next) { return next }
            return (0..<count).first(where: matches)
        }
    }
}
