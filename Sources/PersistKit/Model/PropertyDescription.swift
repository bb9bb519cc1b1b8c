import Foundation

/// What attributes and relationships have in common: a name, optionality and transience.
///
/// The corresponding Core Data class is `NSPropertyDescription`. Like all model classes, a
/// property may be changed only until its model is first used by a coordinator
/// (``ManagedObjectModel/isFrozen``).
public class PropertyDescription: @unchecked Sendable {
    // @unchecked Sendable: every stored property is written only before the owning model is
    // frozen (see ManagedObjectModel.freeze()), which happens before the model is shared with
    // any other thread; after that the description is read-only.

    /// The property's name, unique within its entity and its superentities.
    public var name: String
    /// Whether the property may be `nil` (to-one, attribute) or empty (to-many) when saved.
    public var isOptional: Bool = true
    /// Whether the property lives only in memory and is never written to a store.
    public var isTransient: Bool = false
    /// Free-form keys and values from the model file.
    public var userInfo: [String: String] = [:]
    /// The property's name in an earlier model version, for lightweight migration.
    public var renamingIdentifier: String?
    /// Extra input to the property's version hash.
    public var versionHashModifier: String?
    /// Whether the property is indexed in the store (a legacy single-property fetch index).
    public var isIndexed: Bool = false

    /// The entity that declares this property.
    public internal(set) weak var entity: EntityDescription?

    init(name: String) {
        self.name = name
    }
}
