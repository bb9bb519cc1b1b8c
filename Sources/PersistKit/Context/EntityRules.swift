import Foundation

/// What creating, validating and writing one entity's objects needs from its model, worked out once per
/// entity: the slots' default values, which are transient, which are required, which attributes have bounds
/// or a pattern, which to-many relationships are counted. Reading each property's settings for
/// every object of a large insert and save cost more than writing the rows.
final class EntityRules: Sendable {
    struct Slot: Sendable {
        let index: Int
        let property: PropertyDescription
        /// Neither optional nor transient: a null value is an error.
        let isRequired: Bool
        /// The attribute, when it has bounds or a pattern to check.
        let checked: AttributeDescription?
    }

    /// A new object's values, the storage each new object's values are copied from: each
    /// attribute's default, `null` elsewhere.
    let defaultSlots: SlotValues
    /// Whether every default holds no reference (``StoreValue/holdsNoReference``): a new object
    /// then gets a byte copy of ``defaultSlots``.
    let defaultsAreBitwise: Bool
    /// The transient slots, emptied in store rows.
    let transientSlots: [Int]
    /// Whether a to-many relationship is transient (its changes are not persistent changes).
    let hasTransientToMany: Bool
    /// The slots with a validation rule, in slot order.
    let slots: [Slot]
    /// The stored to-many relationships (their counts are checked).
    let toMany: [RelationshipDescription]
    /// When the only rules are required slots (no attribute to check, no to-many to count):
    /// those slots' indices, which a valid object's check reads without touching `slots`
    /// (whose elements hold references, retained and released as each is read); else `nil`.
    let onlyRequiredSlots: [Int]?
    /// The entity's uniqueness constraints with its superentities' (checked at every save).
    let uniquenessConstraints: [[String]]
    /// The slots that hold to-one relationships, in slot order.
    let toOneSlots: [Int]
    /// Whether a slot is a to-one relationship: whether an object's values can name another
    /// object (what saves look for when new objects' temporary IDs are replaced).
    let hasToOne: Bool
    /// Whether a relationship has the deny delete rule (which a deleted object's validation
    /// checks): most entities have none, and their deleted objects' checks look at no property.
    let hasDenyRule: Bool

    init(_ entity: EntityDescription) {
        defaultSlots = SlotValues(entity.slots.map { ($0 as? AttributeDescription)?.defaultValue ?? .null })
        defaultsAreBitwise = defaultSlots.allSatisfy(\.holdsNoReference)
        transientSlots = entity.slots.indices.filter { entity.slots[$0].isTransient }
        hasTransientToMany = entity.relationshipsByName.values.contains { $0.isToMany && $0.isTransient }
        slots = entity.slots.enumerated().compactMap { index, property in
            let isRequired = !property.isOptional && !property.isTransient
            var checked: AttributeDescription?
            if let attribute = property as? AttributeDescription,
               attribute.minValue != nil || attribute.maxValue != nil || attribute.regularExpression != nil {
                checked = attribute
            }
            return isRequired || checked != nil ? Slot(index: index, property: property, isRequired: isRequired, checked: checked) : nil
        }
        uniquenessConstraints = entity.inheritedUniquenessConstraints
        toOneSlots = entity.slots.indices.filter { entity.slots[$0] is RelationshipDescription }
        hasToOne = !toOneSlots.isEmpty
        toMany = entity.allProperties.compactMap { property in
            guard let relationship = property as? RelationshipDescription, relationship.isToMany, !relationship.isTransient else { return nil }
            return relationship
        }
        hasDenyRule = entity.allProperties.contains { ($0 as? RelationshipDescription)?.deleteRule == .deny }
        onlyRequiredSlots = toMany.isEmpty && slots.allSatisfy({ $0.checked == nil }) ? slots.map(\.index) : nil
    }

    /// The values of a new object: storage of its own, so the object's first write does not
    /// copy shared defaults; a byte copy of the defaults when none holds a reference.
    @inline(__always) func newObjectValues() -> SlotValues {
        defaultSlots.withUnsafeBufferPointer { SlotValues(copying: $0, holdsReferences: !defaultsAreBitwise) }
    }

    /// The rules of `entity` as ``EntityDescription/withRules(_:)`` lends them, kept (retained)
    /// by the caller, for callers that use them across many objects.
    static func of(_ entity: EntityDescription) -> EntityRules {
        entity.withRules { $0 }
    }
}
