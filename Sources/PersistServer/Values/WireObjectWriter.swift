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
        JSON.append("{\"id\":", to: &bytes)
        writeID(object.objectID, to: &bytes)
        write(object, afterIDWith: properties, to: &bytes)
    }

    /// Appends what ``write(_:properties:to:)`` writes for `object` after its ID:
    /// `,"entity":…,"version":n,"values":{…}}` (for a reply whose ID is written later, in front).
    static func write(_ object: ManagedObject, afterIDWith properties: [String]?, to bytes: inout [UInt8]) {
        let entity = object.entity
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
        // The last prefix written, when it is this ID's store's and entity's: its bytes are
        // appended whole, without checking and copying the two names again (about 900
        // instructions of an insert's reply).
        let entity = id.entity
        if let last = lastIDPrefix.withLock({ $0 }), last.entity === entity, last.store == store {
            bytes.append(contentsOf: last.bytes)
            JSON.writeInteger(id.primaryKey, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
            return
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
        let prefix = IDPrefix(entity: entity, store: store, bytes: Array(bytes[mark...]))
        lastIDPrefix.withLock { $0 = prefix }
        JSON.writeInteger(id.primaryKey, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The bytes ``writeID(_:to:)`` writes before the primary key of a permanent ID of `store`
    /// and `entity` (`"x-coredata://<store>/<entity>/p`), when both names are written as they are.
    private final class IDPrefix: Sendable {
        let entity: EntityDescription
        let store: String
        let bytes: [UInt8]

        init(entity: EntityDescription, store: String, bytes: [UInt8]) {
            self.entity = entity
            self.store = store
            self.bytes = bytes
        }
    }

    /// The prefix ``writeID(_:to:)`` wrote last (one entry: a daemon serves one store, and
    /// its replies mostly name objects of the entity the last one named).
    private static let lastIDPrefix = Locked<IDPrefix?>(nil)

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

    /// Each entity's ``WireValuePlan``, made once. The entity is held, so its identifier is not
    /// reused while it is here; the daemon serves one model, and the table is emptied past
    /// ``maximumPlans`` entities anyway (models loaded again and again in one process).
    private static let plans = Locked<[ObjectIdentifier: (entity: EntityDescription, plan: WireValuePlan)]>([:])
    private static let maximumPlans = 1024

    /// The plan of `entity`, from ``plans`` or made now.
    static func plan(of entity: EntityDescription) -> WireValuePlan {
        let key = ObjectIdentifier(entity)
        if let plan = plans.withLock({ $0[key]?.plan }) { return plan }
        let plan = WireValuePlan(entity)
        plans.withLock { table in
            if table.count >= maximumPlans { table.removeAll() }
            table[key] = (entity, plan)
        }
        return plan
    }

    /// What ``write(_:properties:to:)`` appends for `object` with every property, when it is
    /// the object of the ID `prefix` then `p` and `key` (with `plan`, its entity's plan): the
    /// ID, entity and version written from the prefix's ready-made bytes, small pieces through
    /// `stage` (flushed into `output` before anything is written there directly). An object of
    /// another entity (or a plan of another) goes through ``write(_:properties:to:)``.
    ///
    /// - Precondition: `object` was found by that very ID in its context (its registry, or
    ///   `existingObject(with:)`), which holds each object under its own ID: so its ID is
    ///   not read again (reading it, and comparing its store, cost about 200 instructions).
    static func write(_ object: ManagedObject, prefix: WireObjectIDPrefix, key: Int64, plan: WireValuePlan,
                      stage: inout ByteStage, to output: inout [UInt8]) {
        guard object.entity === prefix.entity, plan.entity === prefix.entity else {
            stage.flush(into: &output)
            return write(object, properties: nil, to: &output)
        }
        stage.append(prefix.objectHead, spill: &output)
        stage.writeInteger(key, spill: &output)
        stage.append(prefix.objectMiddle, spill: &output)
        // The version and the values in one call: reading them fills a fault once, and the
        // values are the ones the version is of. Lent, not copied: no reference count per object.
        object.withVersionAndValues { version, values in
            stage.writeInteger(version, spill: &output)
            stage.append(",\"values\":{", spill: &output)
            stageValues(values, of: object, plan: plan, stage: &stage, to: &output)
        }
        stage.append("}}", spill: &output)
    }

    /// The members of `{"name":value,…}` for every property of `plan` (its entity's object
    /// `object`, whose slot values are `values`), through `stage`: an integer attribute's name
    /// and digits in one step, other values written into `output` after a flush.
    @inline(__always)
    private static func stageValues(_ values: UnsafeBufferPointer<StoreValue>, of object: ManagedObject, plan: WireValuePlan,
                                    stage: inout ByteStage, to output: inout [UInt8]) {
        plan.names.withUnsafeBufferPointer { names in
            plan.steps.withUnsafeBufferPointer { steps in
                // No names: no steps either (each step has its `"name":`).
                guard let base = names.baseAddress else { return }
                // Every slot of the plan is in `values` (an object has a value per slot of
                // its entity, and the plan is of that entity): checked once, not per step.
                let inRange = plan.slotLimit <= values.count
                for index in steps.indices {
                    let step = steps[index]
                    let name = base + Int(step.nameStart)
                    guard step.slot >= 0 else {
                        stage.append(UnsafeBufferPointer(start: name, count: Int(step.nameCount)), spill: &output)
                        stage.flush(into: &output)
                        WireValueCoder.value(of: object, property: plan.properties[index]).write(to: &output)
                        continue
                    }
                    let slot = Int(step.slot)
                    // Read in place: an integer's payload without copying the value out.
                    if inRange, step.writesIntegers, case .integer(let integer) = values[slot] {
                        // An integer attribute's name and digits in one step (the usual value);
                        // a short name as two words (`names` is padded past its last name).
                        if step.nameCount <= 16 {
                            stage.append(padded: name, count: Int(step.nameCount), thenInteger: integer, spill: &output)
                        } else {
                            stage.append(name, count: Int(step.nameCount), thenInteger: integer, spill: &output)
                        }
                        continue
                    }
                    stage.append(UnsafeBufferPointer(start: name, count: Int(step.nameCount)), spill: &output)
                    let value = inRange ? values[slot] : object.primitiveValue(atSlot: slot)
                    if case .null = value {
                        stage.append("null", spill: &output)
                    } else {
                        stage.flush(into: &output)
                        write(value, type: plan.types[index], to: &output)
                    }
                }
            }
        }
    }

    /// `{"name":value,…}` for every non-transient property of `object`, as `plan` lists them.
    private static func writeValues(of object: ManagedObject, plan: WireValuePlan, to bytes: inout [UInt8]) {
        // Staged as a `get`'s objects are (`stageValues`), in a buffer on the stack: a name and
        // an integer appended to the array one `append(contentsOf:)` at a time cost about
        // 200 instructions a value (an insert's reply).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            var stage = ByteStage(buffer)
            stage.append(UInt8(ascii: "{"), spill: &bytes)
            object.withVersionAndValues { _, values in
                stageValues(values, of: object, plan: plan, stage: &stage, to: &bytes)
            }
            stage.append(UInt8(ascii: "}"), spill: &bytes)
            stage.flush(into: &bytes)
        }
    }

    /// `{"name":value,…}` for the non-transient properties of `entity` (those in `properties`
    /// when given), in the entity's order.
    private static func writeValues(of object: ManagedObject, entity: EntityDescription, properties: [String]?,
                                    to bytes: inout [UInt8]) {
        guard let properties else { return writeValues(of: object, plan: plan(of: entity), to: &bytes) }
        bytes.append(UInt8(ascii: "{"))
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
        case .integer(let integer) where writesDigits(type):
            JSON.writeInteger(integer, to: &bytes)
        case .string(let string):
            JSON.writeString(string, to: &bytes)
        default:
            WireValueCoder.encode(value, type: type).write(to: &bytes)
        }
    }

    /// Whether an `.integer` value of an attribute of `type` is written as its digits: every
    /// type but `boolean`, `double` and `float`, whose stored integers ``WireValueCoder`` converts.
    @inline(__always) static func writesDigits(_ type: AttributeType) -> Bool {
        type != .boolean && type != .double && type != .float
    }
}
