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

    /// The entity the rules are of (held, so its address is not reused while cached).
    let entity: EntityDescription
    /// A new object's values: each attribute's default, `null` elsewhere.
    let defaults: [StoreValue]
    /// The transient slots, emptied in store rows.
    let transientSlots: [Int]
    /// The slots with a validation rule, in slot order.
    let slots: [Slot]
    /// The stored to-many relationships (their counts are checked).
    let toMany: [RelationshipDescription]

    init(_ entity: EntityDescription) {
        self.entity = entity
        defaults = entity.slots.map { ($0 as? AttributeDescription)?.defaultValue ?? .null }
        transientSlots = entity.slots.indices.filter { entity.slots[$0].isTransient }
        slots = entity.slots.enumerated().compactMap { index, property in
            let isRequired = !property.isOptional && !property.isTransient
            var checked: AttributeDescription?
            if let attribute = property as? AttributeDescription,
               attribute.minValue != nil || attribute.maxValue != nil || attribute.regularExpression != nil {
                checked = attribute
            }
            return isRequired || checked != nil ? Slot(index: index, property: property, isRequired: isRequired, checked: checked) : nil
        }
        toMany = entity.allProperties.compactMap { property in
            guard let relationship = property as? RelationshipDescription, relationship.isToMany, !relationship.isTransient else { return nil }
            return relationship
        }
    }

    /// Rules of entities of frozen models (whose rules no longer change), by entity. Each
    /// holds its entity, so no other entity can take a cached one's address; the cache is
    /// emptied when it grows past 256 entities (models made and dropped, as tests do).
    private static let cache = Locked<[ObjectIdentifier: EntityRules]>([:])

    /// The rules of `entity`, cached once its model is frozen.
    static func of(_ entity: EntityDescription) -> EntityRules {
        let key = ObjectIdentifier(entity)
        if let rules = cache.withLock({ $0[key] }) { return rules }
        let rules = EntityRules(entity)
        guard entity.managedObjectModel?.isFrozen == true else { return rules }
        cache.withLock { cache in
            if cache.count >= 256 { cache.removeAll() }
            cache[key] = rules
        }
        return rules
    }
}
