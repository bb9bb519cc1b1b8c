#if canImport(Glibc)
import Glibc
#endif
import PersistKit

extension Session {
    /// The object the `insert` `request` creates, with its values set and a temporary ID; on
    /// failure nothing of it is left in the context. An insert kept as its line
    /// (``WireRequest/insert``) has its values set from the line's bytes when each of them is
    /// a plain attribute's (``simpleInsertedObject(_:)``); any other goes through
    /// ``insertedObject(_:)``, which gives the same object and the same errors.
    func insertedObject(of request: WireRequest) throws(WireError) -> ManagedObject {
        if let insert = request.insert, let object = try simpleInsertedObject(insert) { return object }
        return try insertedObject(request.body)
    }

    /// The object of `insert`, its values decoded from the line's bytes into their slots as
    /// ``decodeValues(_:entity:)`` decodes them (``WireValueCoder/storeValue(_:for:of:)``, in
    /// the members' order, all before the object is made), without a ``JSON`` tree, the keys'
    /// `String`s or ``DecodedValue``s; `nil`, with nothing done, when the entity is not a
    /// concrete one of the model or a key is not a stored attribute's (the general path then
    /// decides, and reports what is wrong). Keys are matched against the entity's
    /// ``WireValuePlan`` (a property's name is unique among the entity's properties, so the
    /// plan's property of that name is the one `checkProperty` finds).
    ///
    /// - Throws: the error ``insertedObject(_:)`` throws for the first value that does not
    ///   decode (the members before it decoded the same way on both paths).
    func simpleInsertedObject(_ insert: SimpleInsert) throws(WireError) -> ManagedObject? {
        guard let plan = insertPlan(insert) else { return nil }
        let entity = plan.entity
        var values: [(slot: Int, value: StoreValue)] = []
        values.reserveCapacity(plan.count)
        var failure: WireError?
        let decoded = insert.line.withUnsafeBufferPointer { bytes in
            var next = 0
            for member in insert.values {
                guard let index = plan.index(ofName: UnsafeBufferPointer(rebasing: bytes[member.key]), from: next),
                      plan.slots[index] >= 0 else { return false }
                next = index + 1
                let slot = plan.slots[index]
                // An Integer 64's integer is stored as it is, as the coder stores it.
                if case .integer(let value) = member.scalar, plan.types[index] == .integer64 {
                    values.append((slot, .integer(value)))
                    continue
                }
                // A plan's property with a slot is an attribute (WireValuePlan.init).
                let attribute = unsafeDowncast(plan.properties[index], to: AttributeDescription.self)
                let json: JSON
                switch member.scalar {
                case .integer(let value): json = .integer(value)
                case .string(let range): json = .string(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
                }
                do throws(WireError) {
                    values.append((slot, try WireValueCoder.storeValue(json, for: attribute, of: entity)))
                } catch {
                    failure = error
                    return false
                }
            }
            return true
        }
        if let failure { throw failure }
        guard decoded else { return nil }
        let object = ManagedObject(entity: entity, insertInto: context)
        for (slot, value) in values { object.setPrimitiveValue(value, atSlot: slot) }
        return object
    }

    /// The plan of the entity `insert` names, when it is a concrete entity of the model: the
    /// last one's (``lastInsertPlan``, compared by name) or looked up and kept.
    private func insertPlan(_ insert: SimpleInsert) -> WireValuePlan? {
        let last = lastInsertPlan.withLock { $0 }
        if let last, insert.line.withUnsafeBufferPointer({ Self.name(last.entity.name, is: UnsafeBufferPointer(rebasing: $0[insert.entityName])) }) {
            return last
        }
        // The model is the container's, which does not change (so a kept plan stays its own).
        guard let entity = state.container.managedObjectModel.entitiesByName[insert.entity], !entity.isAbstract else { return nil }
        let plan = WireObjectWriter.plan(of: entity)
        lastInsertPlan.withLock { $0 = plan }
        return plan
    }

    /// Whether `name`'s UTF-8 bytes are `key`.
    private static func name(_ name: String, is key: UnsafeBufferPointer<UInt8>) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            // The force-unwraps cannot fail: both buffers hold at least one byte.
            bytes.count == key.count && (bytes.isEmpty || memcmp(bytes.baseAddress!, key.baseAddress!, bytes.count) == 0)
        }
    }
}
