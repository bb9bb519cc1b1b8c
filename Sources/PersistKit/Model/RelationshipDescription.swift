import Foundation

/// A relationship from one entity to another: to-one, to-many or ordered to-many.
///
/// The corresponding Core Data class is `NSRelationshipDescription`.
public final class RelationshipDescription: PropertyDescription, @unchecked Sendable {
    // @unchecked Sendable: read-only once the model is frozen; see PropertyDescription. No
    // dynamic exclusivity checks either, as there.

    /// The name of the destination entity, resolved to ``destinationEntity`` when the model is frozen.
    @exclusivity(unchecked) public var destinationEntityName: String
    /// The name of the inverse relationship on the destination entity, if any.
    @exclusivity(unchecked) public var inverseName: String?
    /// What deleting the source does to the destination objects.
    @exclusivity(unchecked) public var deleteRule: DeleteRule = .nullify
    /// The fewest destination objects allowed at save (to-many only; 0 means no minimum).
    @exclusivity(unchecked) public var minCount: Int = 0
    /// The most destination objects allowed; 1 makes the relationship to-one, 0 means no maximum.
    @exclusivity(unchecked) public var maxCount: Int = 1
    /// Whether the destination objects of a to-many relationship keep an order.
    @exclusivity(unchecked) public var isOrdered: Bool = false

    /// The destination entity; `nil` only before the model is frozen.
    // Unowned, not weak, as `PropertyDescription.entity` (see there): the destination is in the
    // same model, which holds every entity.
    @exclusivity(unchecked) public internal(set) unowned var destinationEntity: EntityDescription?
    /// The inverse relationship; `nil` when there is none or before the model is frozen.
    // Unowned, not weak, as `PropertyDescription.entity` (see there): the inverse belongs to an
    // entity of the same model.
    @exclusivity(unchecked) public internal(set) unowned var inverseRelationship: RelationshipDescription?

    /// Whether the relationship holds a set (or ordered set) rather than one object.
    public var isToMany: Bool {
        get { maxCount != 1 }
        set { maxCount = newValue ? 0 : 1 }
    }

    /// Creates a relationship to the entity named `destination`.
    public init(
        name: String,
        destination: String,
        toMany: Bool = false,
        inverse: String? = nil,
        deleteRule: DeleteRule = .nullify,
        isOptional: Bool = true,
        isOrdered: Bool = false
    ) {
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.deleteRule = deleteRule
        self.isOrdered = isOrdered
        super.init(name: name)
        self.maxCount = toMany ? 0 : 1
        self.isOptional = isOptional
    }

    /// Whether both this relationship and its inverse are to-many, so a join table holds it.
    /// A to-many relationship with no inverse is also kept in a join table.
    public var isManyToMany: Bool {
        guard isToMany else { return false }
        guard let inverse = inverseRelationship else { return true }
        return inverse.isToMany
    }
}
