/// Everything an object needs to read or write one property, computed once per entity when the
/// model is frozen, so that `value(forKey:)` costs one dictionary lookup and no dynamic casts.
struct PropertyAccessor {
    /// What kind of property this is.
    enum Kind {
        /// A plain attribute of the given type.
        case attribute(AttributeType)
        /// A transformable attribute, read and written through its transformer.
        case transformable(AttributeDescription)
        /// A to-one relationship.
        case toOne(RelationshipDescription)
        /// A to-many relationship.
        case toMany(RelationshipDescription)
    }

    /// The property described.
    let property: PropertyDescription
    /// The property's slot in an object's values; -1 for to-many relationships.
    let slot: Int
    /// What kind of property this is.
    let kind: Kind

    init(property: PropertyDescription, slot: Int) {
        self.property = property
        self.slot = slot
        if let relationship = property as? RelationshipDescription {
            kind = relationship.isToMany ? .toMany(relationship) : .toOne(relationship)
        } else if let attribute = property as? AttributeDescription, attribute.attributeType == .transformable {
            kind = .transformable(attribute)
        } else {
            kind = .attribute((property as? AttributeDescription)?.attributeType ?? .undefined)
        }
    }
}

/// The part of a ``PropertyAccessor`` the typed getters need, without references: an
/// attribute's slot and type (`type` is `nil` for any property that is not a plain attribute).
struct PlainAttributeAccessor {
    /// The attribute's slot in an object's values.
    let slot: Int
    /// The attribute's type, or `nil` when the property is not a plain attribute.
    let type: AttributeType?
}
