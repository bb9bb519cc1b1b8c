import PersistKit

extension Session {
    /// `insert {entity, values}` → `{"object":{…}}`. The object gets its permanent ID at once,
    /// so the ID returned is the one it keeps after `save`.
    func insert(_ request: WireRequest) throws(WireError) -> JSON {
        let object = try insertedObject(of: request)
        do {
            try context.obtainPermanentIDs(for: [object])
        } catch {
            context.delete(object)
            throw WireError(persistenceError: error)
        }
        return .object(["object": WireValueCoder.encode(object, properties: nil)])
    }

    /// The object `insert {entity, values}` creates, with its values set and a temporary ID;
    /// on failure nothing of it is left in the context.
    func insertedObject(_ body: JSON) throws(WireError) -> ManagedObject {
        let fields = RequestFields(body, op: "insert")
        let entity = try fields.entity(in: state.container.managedObjectModel)
        guard !entity.isAbstract else {
            throw WireError(.badRequest, "entity \(entity.name) is abstract; insert one of its subentities",
                            details: [JSON.Member("entity", .string(entity.name))])
        }
        let values = try decodeValues(fields.object("values") ?? [], entity: entity)
        let object = ManagedObject(entity: entity, insertInto: context)
        do {
            for value in values { try value.set(on: object) }
        } catch {
            context.delete(object)
            throw WireError(persistenceError: error)
        }
        return object
    }

    /// `update {object, version?, values}` → `{"object":{…}}`. With `version`, the update is
    /// made only if the object's stored version is still `version` (see ``requireVersion(_:of:)``).
    func update(_ body: JSON) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "update")
        guard let idValue = body["object"] else {
            if fields.has("predicate") || fields.has("entity") { return try batchUpdate(body) }
            throw fields.missing("object")
        }
        let expected = try fields.integer64("version")
        let object = try existingObject(idValue, in: context, what: "object")
        if let expected { try requireVersion(expected, of: object) }
        let values = try decodeValues(fields.object("values") ?? [], entity: object.entity)
        do {
            for value in values { try value.set(on: object) }
        } catch {
            throw WireError(persistenceError: error)
        }
        return .object(["object": WireValueCoder.encode(object, properties: nil)])
    }

    /// `delete {object, version?}` or `{ids}` → `{"deleted":n}`; delete rules apply at save.
    /// With `version`, as for `update`.
    func delete(_ body: JSON) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "delete")
        var idValues: [JSON]
        var expected: Int64?
        if let single = body["object"] {
            expected = try fields.integer64("version")
            idValues = [single]
        } else if let list = try fields.array("ids") {
            idValues = list
        } else {
            if fields.has("predicate") || fields.has("entity") { return try batchDelete(body) }
            throw WireError(.badRequest, "delete needs \"object\" or \"ids\" (or \"entity\" and \"predicate\")")
        }
        var objects: [ManagedObject] = []
        for value in idValues { objects.append(try existingObject(value, in: context, what: "object")) }
        if let expected { try requireVersion(expected, of: objects[0]) }
        let fresh = Set(objects.filter { !$0.isDeleted }.map(\.objectID))
        for object in objects { context.delete(object) }
        return .object(["deleted": .integer(Int64(fresh.count))])
    }

    /// `get {ids, properties?}` → `{"objects":[…]}`.
    func get(_ body: JSON, in context: ManagedObjectContext) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "get")
        guard let idValues = try fields.array("ids") else { throw fields.missing("ids") }
        let properties = try fields.stringArray("properties")
        var objects: [JSON] = []
        for value in idValues {
            let object = try existingObject(value, in: context, what: "ids")
            if let properties { for name in properties { _ = try object.entity.checkProperty(name) } }
            objects.append(WireValueCoder.encode(object, properties: properties))
        }
        return .object(["objects": .array(objects)])
    }

    /// The `result` of `get {ids, properties?}` as compact JSON text: the bytes of
    /// ``get(_:in:)``'s result, written without building it. `ids`, when given, are the
    /// request's `ids` already parsed (all of them, in order).
    func getResult(_ body: JSON, ids: [ManagedObjectID]? = nil, in context: ManagedObjectContext) throws(WireError) -> [UInt8] {
        var bytes: [UInt8] = []
        if case .array(let values)? = body["ids"] { bytes.reserveCapacity(64 + 256 * values.count) }
        try writeGetResult(body, ids: ids, in: context, to: &bytes)
        return bytes
    }

    /// Appends ``getResult(_:ids:in:)``'s bytes to `bytes`; on an error, what it appended
    /// so far stays (the caller removes it).
    func writeGetResult(_ body: JSON, ids: [ManagedObjectID]?, in context: ManagedObjectContext,
                        to bytes: inout [UInt8]) throws(WireError) {
        let fields = RequestFields(body, op: "get")
        guard let idValues = try fields.array("ids") else { throw fields.missing("ids") }
        let properties = try fields.stringArray("properties")
        JSON.append("{\"objects\":[", to: &bytes)
        for (index, value) in idValues.enumerated() {
            let object: ManagedObject
            if let ids, ids.count == idValues.count {
                object = try existingObject(ids[index], in: context)
            } else {
                object = try existingObject(value, in: context, what: "ids")
            }
            if let properties { for name in properties { _ = try object.entity.checkProperty(name) } }
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            WireObjectWriter.write(object, properties: properties, to: &bytes)
        }
        JSON.append("]}", to: &bytes)
    }

    // MARK: - Helpers

    /// Throws `merge_conflict` unless `object`'s stored version is `expected`: the version a
    /// client read (objects in replies carry it), so a change based on that read cannot
    /// overwrite what another connection or process saved since. The store is asked when the
    /// context's copy differs and has no changes of this connection, so a stale copy is not
    /// mistaken for a conflict. After the check the context's copy is of version `expected`,
    /// and `save` checks the store against it again (merge policy applies).
    func requireVersion(_ expected: Int64, of object: ManagedObject) throws(WireError) {
        var current = object.storeVersion
        let fresh = !object.hasChanges
        if current != expected, fresh {
            context.refresh(object, mergeChanges: false)
            current = object.storeVersion
        }
        guard current != expected else { return }
        let text = WireObjectID.format(object.objectID)
        // A saved object has version 1 or more: 0 after a refresh means its row is gone.
        if current == 0, fresh {
            throw WireError(.mergeConflict, "object \(text) was deleted since version \(expected) was read",
                            details: [JSON.Member("conflicts", .array([.object([JSON.Member("object", .string(text)),
                                                                                 JSON.Member("deletedInStore", .bool(true))])]))])
        }
        var details = [JSON.Member("conflicts", .array([.object([
            JSON.Member("object", .string(text)),
            JSON.Member("version", .integer(expected)),
            JSON.Member("storeVersion", .integer(current)),
        ])]))]
        // The stored state, so the client can retry without another read; not when this
        // connection's own unsaved changes are on top of it.
        if fresh { details.append(JSON.Member("current", WireValueCoder.encode(object, properties: nil))) }
        throw WireError(.mergeConflict, "object \(text) is at version \(current), not \(expected): it was saved since it was read",
                        details: details)
    }

    /// The object `value` names, loaded in `context`; `not_found` if it does not exist (or is deleted there).
    func existingObject(_ value: JSON, in context: ManagedObjectContext, what: String) throws(WireError) -> ManagedObject {
        try existingObject(WireObjectID.parse(value, coordinator: state.coordinator, what: what, prefix: idPrefix), in: context)
    }

    /// The object `id` names, loaded in `context`; `not_found` if it does not exist (or is deleted there).
    func existingObject(_ id: ManagedObjectID, in context: ManagedObjectContext) throws(WireError) -> ManagedObject {
        let object: ManagedObject
        do {
            object = try context.existingObject(with: id)
        } catch {
            let text = WireObjectID.format(id)
            throw WireError(.notFound, "no object \(text)", details: [JSON.Member("object", .string(text))])
        }
        if object.isDeleted {
            let text = WireObjectID.format(id)
            throw WireError(.notFound, "object \(text) is deleted", details: [JSON.Member("object", .string(text))])
        }
        return object
    }

    /// Every value of `members` converted for its property, checked before anything is set.
    func decodeValues(_ members: [JSON.Member], entity: EntityDescription) throws(WireError) -> [DecodedValue] {
        var result: [DecodedValue] = []
        result.reserveCapacity(members.count)
        // Clients usually write values in the model's order: each key is first compared with
        // the name of the next slot, which costs less than hashing it. A property's name is
        // unique among an entity's own and inherited properties (the model's validation, run
        // before a coordinator opens it), so a slot of that name is the property
        // `checkProperty` finds.
        let slots = entity.slots
        var next = 0
        for member in members {
            let property: PropertyDescription, slot: Int?
            if next < slots.count, slots[next].name == member.key {
                (property, slot) = (slots[next], next)
            } else {
                property = try entity.checkProperty(member.key)
                slot = entity.slotIndex(of: member.key)
            }
            next += 1
            // An attribute's value goes to its slot as stored (the types the coder refuses
            // throw here); relationships take the general path.
            if let slot, let attribute = property as? AttributeDescription {
                result.append(.slot(slot, try WireValueCoder.storeValue(member.value, for: attribute, of: entity)))
            } else {
                result.append(.property(member.key, try WireValueCoder.decode(member.value, for: property, of: entity,
                                                                              in: context, coordinator: state.coordinator)))
            }
        }
        return result
    }
}
