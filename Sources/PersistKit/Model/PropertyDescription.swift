import Foundation

/// What attributes and relationships have in common: a name, optionality and transience.
///
/// The corresponding Core Data class is `NSPropertyDescription`. Like all model classes, a
/// property may be changed only until its model is first used by a coordinator
/// (``ManagedObjectModel/isFrozen``).
public class PropertyDescription: @unchecked Sendable {
    // @unchecked Sendable: every stored property is written only before the owning model is
    // frozen (see ManagedObjectModel.freeze()), which happens before the model is shared with
    // any other thread; after that the description is read-only. For the same reason the
    // stored properties have no dynamic exclusivity checks: objects read a relationship's name
    // and kind at every read of it, and a check costs about 60 instructions a read.

    /// The property's name, unique within its entity and its superentities.
    @exclusivity(unchecked) public var name: String
    /// Whether the property may be `nil` (to-one, attribute) or empty (to-many) when saved.
    @exclusivity(unchecked) public var isOptional: Bool = true
    /// Whether the property lives only in memory and is never written to a store.
    @exclusivity(unchecked) public var isTransient: Bool = false
    /// Free-form keys and values from the model file.
    public var userInfo: [String: String] = [:]
    /// The property's name in an earlier model version, for lightweight migration.
    public var renamingIdentifier: String?
    /// Extra input to the property's version hash.
    public var versionHashModifier: String?
    /// Whether the property is indexed in the store (a legacy single-property fetch index).
    public var isIndexed: Bool = false

    /// The entity that declares this property.
    ///
    /// The entity holds its properties, so this back reference must not hold the entity. It is
    /// `unowned` rather than `weak`: a weak reference to an object gives it a side table, and
    /// every retain and release of that object then takes the runtime's slow path. Entities are
    /// retained and released with every object and ID made of them (several times per fetched
    /// row). Reading it after the entity is gone (a property kept beyond its model) traps.
    @exclusivity(unchecked) public internal(set) unowned var entity: EntityDescription?

    init(name: String) {
        self.name = name
    }
}
