import Foundation

extension ManagedObject {
    /// The value of the attribute or relationship `key`, firing the fault if needed.
    ///
    /// Attributes give their Swift type (`Int16`, `Int32`, `Int64`, `Double`, `Float`, `Decimal`,
    /// `String`, `Bool`, `Date`, `Data`, `UUID`, `URL`, or a transformable attribute's value);
    /// a to-one relationship gives its destination `ManagedObject`; a to-many gives a
    /// `Set<ManagedObject>`, or an `[ManagedObject]` when ordered. An unknown key is a
    /// programmer error and traps, as Core Data raises `NSUnknownKeyException`.
    public func value(forKey key: String) -> Any? {
        // Plain attributes first, through the reference-free accessor: nothing retained per read.
        if let plain = entity.plainAttribute(for: key), let type = plain.type {
            willAccessValue()
            return type.objectValue(from: values[plain.slot])
        }
        guard let accessor = entity.accessor(for: key) else {
            preconditionFailure("ManagedObject: entity \(entity.name) has no property \"\(key)\"")
        }
        willAccessValue()
        switch accessor.kind {
        case .attribute(let type):
            return type.objectValue(from: values[accessor.slot])
        case .transformable(let attribute):
            guard case .data(let data) = values[accessor.slot] else { return nil }
            return try? AttributeValueTransformers.transformer(for: attribute).reverseTransformedValue(data)
        case .toOne:
            return destination(values[accessor.slot])
        case .toMany(let relationship):
            return value(for: relationship)
        }
    }

    /// Sets the attribute or relationship `key`, keeping inverse relationships in step.
    ///
    /// Traps on an unknown key or a value of the wrong type, as Core Data raises
    /// `NSInvalidArgumentException`; use ``setCheckedValue(_:forKey:)`` for untrusted input.
    public func setValue(_ value: Any?, forKey key: String) {
        do {
            try setCheckedValue(value, forKey: key)
        } catch {
            preconditionFailure("ManagedObject: \(error)")
        }
    }

    /// Sets the attribute or relationship `key` to a value that is not `nil`: the same as
    /// the `Any?` form of `setValue(_:forKey:)`, which Swift picks for `nil` and for optionals.
    ///
    /// A separate entry point only for speed: a value handed over as `Any` is read in place,
    /// while an `Any?` is wrapped by the caller and unwrapped (copied) here, which costs about
    /// as much as storing a plain attribute's value.
    public func setValue(_ value: Any, forKey key: String) {
        if let plain = entity.plainAttribute(for: key), let type = plain.type,
           let stored = Self.exactStoreValue(value, type: type) {
            setSlot(plain.slot, to: stored)
            return
        }
        let optional: Any? = value
        setValue(optional, forKey: key)
    }

    /// Sets the attribute or relationship `key` like ``setValue(_:forKey:)``, but throws a
    /// ``PersistenceError`` naming the object, key and expected type instead of trapping.
    public func setCheckedValue(_ value: Any?, forKey key: String) throws {
        // The common case first: a plain attribute given a value of exactly the Swift type it
        // takes, converted by metatype comparison (no dynamic cast, no accessor copy). Anything
        // else, and every value this refuses, takes the general path below.
        if let value, let plain = entity.plainAttribute(for: key), let type = plain.type,
           let stored = Self.exactStoreValue(value, type: type) {
            setSlot(plain.slot, to: stored)
            return
        }
        guard let accessor = entity.accessor(for: key) else {
            throw PersistenceError(.managedObjectValidation, "entity \(entity.name) has no property \"\(key)\"",
                                   objectID: objectID, key: key)
        }
        switch accessor.kind {
        case .attribute, .transformable:
            // Attribute: the cast cannot fail for these kinds (see PropertyAccessor.init).
            guard let attribute = accessor.property as? AttributeDescription else { return }
            setSlot(accessor.slot, to: try storeValue(for: value, attribute: attribute))
        case .toOne(let relationship), .toMany(let relationship):
            try setRelationship(relationship, to: value)
        }
    }

    /// The value of `key` without conversion: the stored ``StoreValue`` of an attribute or
    /// to-one relationship (Core Data's `primitiveValue(forKey:)`, in PersistKit's value type).
    public func primitiveValue(forKey key: String) -> StoreValue {
        guard let slot = entity.slotIndex(of: key) else {
            preconditionFailure("ManagedObject: entity \(entity.name) has no attribute or to-one relationship \"\(key)\"")
        }
        willAccessValue()
        return values[slot]
    }

    /// Sets the stored value of an attribute without conversion, type checks or inverse
    /// maintenance (Core Data's `setPrimitiveValue(_:forKey:)`).
    public func setPrimitiveValue(_ value: StoreValue, forKey key: String) {
        guard let slot = entity.slotIndex(of: key) else {
            preconditionFailure("ManagedObject: entity \(entity.name) has no attribute or to-one relationship \"\(key)\"")
        }
        setSlot(slot, to: value)
    }

    /// The changed stored properties and their new values since the last save; for an inserted
    /// object, every property that has a value. Transient properties are left out, as Core
    /// Data's `changedValues()` leaves them out.
    public func changedValues() -> [String: Any] {
        var result: [String: Any] = [:]
        // An inserted object is all change: every value it holds counts.
        let slots = _isInserted ? SlotSet(values.indices.filter { !values[$0].isNull }) : changedSlots
        for slot in slots {
            let property = entity.slots[slot]
            if property.isTransient { continue }
            result[property.name] = value(for: property) ?? NSNull()
        }
        for (name, state) in toMany where state.hasChanges {
            if let property = entity.propertiesByName[name], !property.isTransient { result[name] = value(for: property) ?? NSNull() }
        }
        return result
    }

    /// The last saved values of the given attributes and to-one relationships, or of all of
    /// them for `nil` (`committedValues(forKeys:)`). A new object has none. Transient
    /// properties have no saved value and are left out, named or not, as in Core Data.
    public func committedValues(forKeys keys: [String]?) -> [String: Any] {
        willAccessValue()
        guard let committed else { return [:] }
        var result: [String: Any] = [:]
        for (index, property) in entity.slots.enumerated() where !property.isTransient && (keys?.contains(property.name) ?? true) {
            guard index < committed.values.count else { continue }
            result[property.name] = objectValue(committed.values[index], property: property) ?? NSNull()
        }
        return result
    }

    /// Checks that `value` would be accepted for `key`, without setting it (`validateValue(_:forKey:)`).
    public func validateValue(_ value: Any?, forKey key: String) throws {
        guard let property = entity.propertiesByName[key] else {
            throw PersistenceError(.managedObjectValidation, "entity \(entity.name) has no property \"\(key)\"",
                                   objectID: objectID, key: key)
        }
        if let attribute = property as? AttributeDescription {
            let stored = try storeValue(for: value, attribute: attribute)
            if let error = ObjectValidator.check(stored, attribute: attribute, objectID: objectID) { throw error }
        }
    }

    // MARK: - Internals

    /// Fires the fault if the object is one; called before every read or write of values.
    @inline(__always) func willAccessValue() {
        if _isFault { fireFault() }
    }

    /// Loads the fault's values. A row fetched with the object (a fetch or prefetch of a root
    /// context) is moved in here, without the context: its weak reference loaded and released
    /// per fault cost about a quarter of reading a prefetched object. Anything else asks the
    /// context (``ManagedObjectContext/fulfillFault(_:)``), which does the same with a row at hand.
    func fireFault() {
        // The row at hand is already in `committed` (a fault's pending row): only its values move.
        if hasCommittedState { return fillFromCommitted() }
        managedObjectContext?.fulfillFault(self) ?? fillWithNulls()
    }

    /// Turns the fault into an object with `row`'s values, its stored state (its version and
    /// values move in; the object knows the rest).
    @inline(__always) func fill(with row: consuming RowSnapshot) {
        fill(with: CommittedState(row))
    }

    /// Turns the fault into an object with `state`'s values, its stored state (the one way a
    /// fault gets its data, whether from the row at hand or from its context).
    func fill(with state: consuming CommittedState) {
        committed = state
        fillFromCommitted()
    }

    /// Ends the fault, whose ``committed`` state is set: its values become the object's,
    /// shared with that state (``shareCommittedValues()``), neither copied nor retained.
    @inline(__always) private func fillFromCommitted() {
        if faultingBatch != nil { faultingBatch = nil }
        shareCommittedValues()
        _isFault = false
        awakeFromFetch()
    }

    func fillWithNulls() {
        replaceValues(SlotValues(repeating: .null, count: entity.slots.count))
        _isFault = false
    }

    func value(for property: PropertyDescription) -> Any? {
        willAccessValue()
        if let relationship = property as? RelationshipDescription, relationship.isToMany {
            if relationship.isOrdered { return orderedMembers(relationship) as Any }
            return memberSet(relationship) as Any
        }
        guard let slot = entity.slotIndex(of: property.name) else { return nil }
        return objectValue(values[slot], property: property)
    }

    /// The members of the unordered to-many `relationship` (after ``willAccessValue()``); empty
    /// once the object has no context.
    func memberSet(_ relationship: RelationshipDescription) -> Set<ManagedObject> {
        // An object is used on its context's queue, so the context's registry is read
        // directly: no queue check and no weak load per member.
        guard let context = managedObjectContext else { return [] }
        if let objects = recordedMembers(relationship, in: context) {
            return objects.withUnsafeBufferPointer { buffer in
                var members = Set<ManagedObject>(roomFor: buffer.count)
                for object in buffer { members.add(object) }
                return members
            }
        }
        let ids = toManyMembers(relationship)
        var members = Set<ManagedObject>(roomFor: ids.count)
        // Through the buffer, no retain and release of each ID as it is read; a plain lookup
        // first (a member is almost always registered), rather than the registry's modify
        // accessor, which checks the table's uniqueness and takes the key per member.
        ids.withUnsafeBufferPointer { buffer in
            for id in buffer { members.add(context.registered[id] ?? context.registeredObject(with: id)) }
        }
        return members
    }

    /// The members of a to-many `relationship` (after ``willAccessValue()``), in order for an
    /// ordered one: the array a prefetch recorded itself when it is still current. Empty once
    /// the object has no context.
    func orderedMembers(_ relationship: RelationshipDescription) -> [ManagedObject] {
        guard let context = managedObjectContext else { return [] }
        if let objects = recordedMembers(relationship, in: context) { return objects }
        return toManyMembers(relationship).map { context.registeredObject(with: $0) }
    }

    /// The member objects of `relationship` a prefetch recorded, when none changed since (the
    /// registry's generation is the one they were recorded under): no lookups. In debug builds,
    /// checks that each is the registered one for its key, the generation's promise.
    @inline(__always)
    private func recordedMembers(_ relationship: RelationshipDescription, in context: ManagedObjectContext) -> [ManagedObject]? {
        guard let objects = recordedMemberObjects(named: relationship.name, generation: context.registryGeneration) else { return nil }
        #if DEBUG
        for member in objects {
            assert(context.registered.objectWithoutFiling(forKey: member.objectKey) === member, "ToManyState: a recorded member is no longer registered")
        }
        #endif
        return objects
    }

    /// The object a to-one relationship's stored value names, registered in this object's
    /// context (a fault if it was not), or `nil` for no destination or no context.
    func destination(_ stored: StoreValue) -> ManagedObject? {
        guard case .object(let id) = stored else { return nil }
        return managedObjectContext?.object(with: id)
    }

    func objectValue(_ stored: StoreValue, property: PropertyDescription) -> Any? {
        if case .object = stored { return destination(stored) }
        guard let attribute = property as? AttributeDescription else { return nil }
        if attribute.attributeType == .transformable, case .data(let data) = stored {
            return try? AttributeValueTransformers.transformer(for: attribute).reverseTransformedValue(data)
        }
        return attribute.attributeType.objectValue(from: stored)
    }

    func storeValue(for value: Any?, attribute: AttributeDescription) throws -> StoreValue {
        guard let value else { return .null }
        // The common case first: a value of exactly the Swift type the attribute takes, read
        // from the opened existential by its metatype, without a dynamic cast (hundreds of
        // instructions). What it refuses (an integer out of range too) is judged below.
        if let stored = Self.exactStoreValue(value, type: attribute.attributeType) { return stored }
        if attribute.attributeType == .transformable {
            if value is NSNull { return .null }
            do {
                return .data(try AttributeValueTransformers.transformer(for: attribute).transformedValue(value))
            } catch {
                throw PersistenceError(.validationInvalidType,
                                       "value of type \(type(of: value)) cannot be transformed for \(entity.name).\(attribute.name): \(error)",
                                       objectID: objectID, key: attribute.name)
            }
        }
        if attribute.attributeType == .undefined {
            throw PersistenceError(.validationInvalidType, "attribute \(entity.name).\(attribute.name) of type Undefined cannot hold a value",
                                   objectID: objectID, key: attribute.name)
        }
        // The typed conversion first: checking for NSNull is a bridging cast, costly on a hot path.
        if let stored = attribute.attributeType.storeValue(fromObject: value) { return stored }
        if value is NSNull { return .null }
        throw PersistenceError(.validationInvalidType,
                               "unacceptable value \(value) of type \(type(of: value)) for \(entity.name).\(attribute.name), which is \(attribute.attributeType.xcodeName)",
                               objectID: objectID, key: attribute.name)
    }

    /// The store value of `value` for a plain attribute of `type` when `value`'s type is
    /// exactly one that type takes as is (`Int64`, `Int`, `Int32` or `Int16` within range for
    /// integers, `Double` or `Float` for floating point, `String`, `Bool`, `Date`, `Data`,
    /// `UUID`, `URL`, `Decimal` for their own types), else `nil`. Called with an `Any`, which
    /// Swift 6 opens: `T` is then the value's own type, and each test is a metatype comparison.
    /// Gives what ``AttributeType/storeValue(fromObject:)`` gives for the same value.
    @inline(__always) static func exactStoreValue<T>(_ value: T, type: AttributeType) -> StoreValue? {
        switch type {
        case .integer16, .integer32, .integer64:
            let integer: Int64
            if T.self == Int64.self { integer = unsafeBitCast(value, to: Int64.self) }
            else if T.self == Int.self { integer = Int64(unsafeBitCast(value, to: Int.self)) }
            else if T.self == Int32.self { integer = Int64(unsafeBitCast(value, to: Int32.self)) }
            else if T.self == Int16.self { integer = Int64(unsafeBitCast(value, to: Int16.self)) }
            else { return nil }
            // Out of range: the general path throws the error that says so.
            guard let range = type.integerRange, range.contains(integer) else { return nil }
            return .integer(integer)
        case .double, .float:
            if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
            if T.self == Float.self { return .double(Double(unsafeBitCast(value, to: Float.self))) }
            return nil
        case .string:
            return T.self == String.self ? .string(unsafeBitCast(value, to: String.self)) : nil
        case .boolean:
            return T.self == Bool.self ? .bool(unsafeBitCast(value, to: Bool.self)) : nil
        case .date:
            return T.self == Date.self ? .date(unsafeBitCast(value, to: Date.self)) : nil
        case .binaryData:
            return T.self == Data.self ? .data(unsafeBitCast(value, to: Data.self)) : nil
        case .uuid:
            return T.self == UUID.self ? .uuid(unsafeBitCast(value, to: UUID.self)) : nil
        case .uri:
            return T.self == URL.self ? .url(unsafeBitCast(value, to: URL.self)) : nil
        case .decimal:
            return T.self == Decimal.self ? .decimal(unsafeBitCast(value, to: Decimal.self)) : nil
        case .objectID, .transformable, .undefined:
            return nil
        }
    }

    /// Writes one slot, recording the change and telling the context. `value` is taken
    /// (callers make it for the call), so a new object's slot is written without copying it.
    func setSlot(_ slot: Int, to value: consuming StoreValue) {
        willAccessValue()
        if _isInserted {
            // A new object is written whole at save: no change tracking needed.
            setSlotValue(value, at: slot)
            return
        }
        let newValue = value
        if values[slot] == newValue { return }
        // Asked before the write, which leaves the committed values as they are.
        let backToCommitted = committedValue(at: slot, is: newValue)
        setSlotValue(newValue, at: slot)
        // The change state and the context borrowed, not retained for the calls.
        withMadeChangeState { state in
            if backToCommitted { state.changedSlots.remove(slot) } else { state.changedSlots.insert(slot) }
        }
        withContext { $0.objectDidChange(self) }
    }
}
