import PersistKit

/// Writes objects in their wire form straight into the reply's bytes: the same bytes as
/// `WireValueCoder.encode(object, properties:).write(to:)`, without building the ``JSON``
/// tree first (which cost about a fifth of persistd's CPU for small `get`s).
///
/// Integers, doubles, booleans, strings and nulls are written directly; other values and
/// relationships go through ``WireValueCoder``. Runs on the queue of the object's context.
enum WireObjectWriter {
    /// Appends `{"id":…,"entity":…,"version":n,"values":{…}}` for `object`, with the
    /// `properties` named (all when `nil`).
    static func write(_ object: ManagedObject, properties: [String]?, to bytes: inout [UInt8]) {
        let entity = object.entity
        JSON.append("{\"id\":", to: &bytes)
        writeID(object.objectID, to: &bytes)
        JSON.append(",\"entity\":", to: &bytes)
        JSON.writeString(entity.name, to: &bytes)
        JSON.append(",\"version\":", to: &bytes)
        // Reading the version fills a fault; the values read next are the ones it is the version of.
        JSON.writeInteger(object.storeVersion, to: &bytes)
        JSON.append(",\"values\":", to: &bytes)
        writeValues(of: object, entity: entity, properties: properties, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// The JSON string of `WireObjectID.format(id)`; a permanent ID whose store and entity
    /// need neither percent-encoding nor escaping is written byte by byte, without making the
    /// `String` (five concatenations).
    static func writeID(_ id: ManagedObjectID, to bytes: inout [UInt8]) {
        guard !id.isTemporaryID, let store = id.storeIdentifier else {
            return JSON.writeString(WireObjectID.format(id), to: &bytes)
        }
        let mark = bytes.count
        JSON.append("\"x-coredata://", to: &bytes)
        // The store's and entity's bytes are checked and copied over their contiguous UTF-8
        // (walking `String.UTF8View` cost about 1.5 K instructions per ID).
        guard appendName(store, dash: true, to: &bytes) else {
            bytes.removeSubrange(mark...)
            return JSON.writeString(WireObjectID.format(id), to: &bytes)
        }
        bytes.append(UInt8(ascii: "/"))
        guard appendName(id.entity.name, dash: false, to: &bytes) else {
            bytes.removeSubrange(mark...)
            return JSON.writeString(WireObjectID.format(id), to: &bytes)
        }
        JSON.append("/p", to: &bytes)
        JSON.writeInteger(id.primaryKey, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `text`'s UTF-8 bytes when every one is a name byte (or `-`, with `dash`);
    /// `false`, with nothing appended, otherwise.
    private static func appendName(_ text: String, dash: Bool, to bytes: inout [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            for byte in utf8 where !(WireObjectID.isNameByte(byte) || (dash && byte == UInt8(ascii: "-"))) { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
    }

    /// One non-transient property of an entity, as ``writeValues(of:entity:properties:to:)``
    /// writes it when every property is asked for.
    private struct Entry {
        /// `"name":`, after a `,` for every property but the first.
        var prefix: [UInt8]
        var property: PropertyDescription
        /// The attribute's slot and type; `nil` for a relationship.
        var attribute: (slot: Int, type: AttributeType)?
    }

    /// Each entity's entries, made once. The entity is held, so its identifier is not reused
    /// while it is here; the daemon serves one model, and the table is emptied past
    /// ``maximumPlans`` entities anyway (models loaded again and again in one process).
    private static let plans = Locked<[ObjectIdentifier: (entity: EntityDescription, entries: [Entry])]>([:])
    private static let maximumPlans = 1024

    /// The entries of `entity`, from ``plans`` or made now.
    private static func entries(of entity: EntityDescription) -> [Entry] {
        let key = ObjectIdentifier(entity)
        if let entries = plans.withLock({ $0[key]?.entries }) { return entries }
        var entries: [Entry] = []
        for property in entity.allProperties where !property.isTransient {
            var prefix: [UInt8] = entries.isEmpty ? [] : [UInt8(ascii: ",")]
            JSON.writeString(property.name, to: &prefix)
            prefix.append(UInt8(ascii: ":"))
            // An attribute without a slot (none has one) would go through WireValueCoder, by name.
            let attribute = (property as? AttributeDescription).flatMap { attribute in
                entity.slotIndex(of: attribute.name).map { (slot: $0, type: attribute.attributeType) }
            }
            entries.append(Entry(prefix: prefix, property: property, attribute: attribute))
        }
        plans.withLock { table in
            if table.count >= maximumPlans { table.removeAll() }
            table[key] = (entity, entries)
        }
        return entries
    }

    /// `{"name":value,…}` for the non-transient properties of `entity` (those in `properties`
    /// when given), in the entity's order.
    private static func writeValues(of object: ManagedObject, entity: EntityDescription, properties: [String]?,
                                    to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        guard let properties else {
            for entry in entries(of: entity) {
                bytes.append(contentsOf: entry.prefix)
                if let (slot, type) = entry.attribute {
                    write(object.primitiveValue(atSlot: slot), type: type, to: &bytes)
                } else {
                    WireValueCoder.value(of: object, property: entry.property).write(to: &bytes)
                }
            }
            bytes.append(UInt8(ascii: "}"))
            return
        }
        var first = true
        // Slots are the attributes and to-one relationships in `allProperties` order
        // (`EntityDescription.slots`), so the slot of each is counted, not looked up by name.
        var slot = 0
        for property in entity.allProperties {
            let attribute = property as? AttributeDescription
            var propertySlot = -1
            if attribute != nil || (property as? RelationshipDescription)?.isToMany == false {
                propertySlot = slot
                slot += 1
            }
            if property.isTransient { continue }
            if !properties.contains(property.name) { continue }
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            JSON.writeString(property.name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            guard let attribute else {
                WireValueCoder.value(of: object, property: property).write(to: &bytes)
                continue
            }
            assert(entity.slotIndex(of: property.name) == propertySlot, "slot order differs from allProperties order")
            write(object.primitiveValue(atSlot: propertySlot), type: attribute.attributeType, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// What `WireValueCoder.encode(value, type:).write(to:)` appends.
    private static func write(_ value: StoreValue, type: AttributeType, to bytes: inout [UInt8]) {
        switch value {
        case .null:
            JSON.append("null", to: &bytes)
        case .integer(let integer) where type != .boolean && type != .double && type != .float:
            JSON.writeInteger(integer, to: &bytes)
        case .string(let string):
            JSON.writeString(string, to: &bytes)
        default:
            WireValueCoder.encode(value, type: type).write(to: &bytes)
        }
    }
}
