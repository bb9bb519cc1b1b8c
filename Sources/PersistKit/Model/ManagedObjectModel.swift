import Foundation

/// A managed object model: the entities of an object graph, with their properties.
///
/// The corresponding Core Data class is `NSManagedObjectModel`. Build one in code, or load one
/// from a JSON model file or an Xcode `.xcdatamodel`/`.xcdatamodeld` (see
/// ``init(contentsOf:)``). A model may be changed until it is first used by a
/// ``PersistentStoreCoordinator``; then it is frozen and read-only, as in Core Data.
public final class ManagedObjectModel: @unchecked Sendable {
    // @unchecked Sendable: the entity list is written only before freeze(); `frozen` is a `Locked`
    // lock; `freezing` serializes freezes, so the derived lookups are written by one thread.

    /// The model's entities, in the order they were added.
    public var entities: [EntityDescription] {
        willSet { precondition(!isFrozen, "ManagedObjectModel: a model cannot be changed after a coordinator uses it") }
        didSet { for entity in entities { entity.managedObjectModel = self } }
    }
    /// Named subsets of the entities, for stores that hold only some of them.
    public var configurations: [String: [String]] = [:]
    /// Version identifiers from the model file (`.xcdatamodel`'s `userDefinedModelVersionIdentifier`).
    public var versionIdentifiers: Set<String> = []
    /// Where the model was loaded from, used in error messages.
    public var sourceURL: URL?

    private let frozen = Locked(false)
    /// Held for the whole of ``freeze()``: coordinators made on several threads for one model
    /// freeze it at once, and only the first may resolve and lay it out.
    private let freezing = NSLock()
    private var _entitiesByName: [String: EntityDescription] = [:]

    /// Creates a model with the given entities.
    public init(entities: [EntityDescription] = []) {
        self.entities = entities
        for entity in entities { entity.managedObjectModel = self }
    }

    /// Whether the model has been frozen by ``freeze()`` and is now read-only.
    public var isFrozen: Bool { frozen.withLock { $0 } }

    /// The entities by name.
    public var entitiesByName: [String: EntityDescription] {
        isFrozen ? _entitiesByName : Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The entities in the named configuration; every entity for `nil` or `"Default"`.
    public func entities(forConfiguration name: String?) -> [EntityDescription] {
        guard let name, name != "Default", let names = configurations[name] else { return entities }
        let wanted = Set(names)
        return entities.filter { wanted.contains($0.name) }
    }

    /// Validates the model, resolves names to descriptions and makes it read-only.
    ///
    /// Called by the coordinator; safe to call more than once, from several threads at once
    /// (the others wait for the first). Throws the first ``ModelError`` found.
    public func freeze() throws {
        if isFrozen { return }
        freezing.lock()
        defer { freezing.unlock() }
        if isFrozen { return }
        try resolve()
        try validate()
        for entity in entities { entity.computeLayout() }
        _entitiesByName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        frozen.withLock { $0 = true }
    }

    /// Links superentities, destinations and inverses by name.
    func resolve() throws {
        let file = sourceURL?.path
        var byName: [String: EntityDescription] = [:]
        for entity in entities {
            if byName[entity.name] != nil {
                throw ModelError(file: file, entity: entity.name, "duplicate entity name")
            }
            byName[entity.name] = entity
            entity.managedObjectModel = self
        }
        for entity in entities {
            if let parentName = entity.superentityName, entity.superentity == nil {
                guard let parent = byName[parentName] else {
                    throw ModelError(file: file, entity: entity.name, "parent entity \(parentName) does not exist")
                }
                if !parent.subentities.contains(where: { $0 === entity }) { parent.subentities.append(entity) }
            }
            entity.superentityName = entity.superentity?.name
        }
        for entity in entities {
            var seen: Set<ObjectIdentifier> = []
            var current: EntityDescription? = entity
            while let e = current {
                if !seen.insert(ObjectIdentifier(e)).inserted {
                    throw ModelError(file: file, entity: entity.name, "inheritance cycle through \(e.name)")
                }
                current = e.superentity
            }
        }
        for entity in entities {
            for case let relationship as RelationshipDescription in entity.properties {
                guard let destination = byName[relationship.destinationEntityName] else {
                    throw ModelError(file: file, entity: entity.name, property: relationship.name,
                                     "destination entity \(relationship.destinationEntityName) does not exist")
                }
                relationship.destinationEntity = destination
            }
        }
        for entity in entities {
            for case let relationship as RelationshipDescription in entity.properties {
                guard let inverseName = relationship.inverseName, let destination = relationship.destinationEntity else { continue }
                guard let inverse = destination.computeAllProperties().first(where: { $0.name == inverseName }) as? RelationshipDescription else {
                    throw ModelError(file: file, entity: entity.name, property: relationship.name,
                                     "inverse relationship \(inverseName) does not exist on entity \(destination.name)")
                }
                relationship.inverseRelationship = inverse
            }
        }
    }

    /// Checks names, types, defaults and inverses; throws the first problem found.
    ///
    /// The checks are listed in `docs/models.md` ("Validation").
    func validate() throws {
        let file = sourceURL?.path
        try validateConfigurations(file: file)
        for entity in entities {
            if entity.name.isEmpty {
                throw ModelError(file: file, "an entity has an empty name")
            }
            var names: Set<String> = []
            for property in entity.computeAllProperties() {
                if property.name.isEmpty {
                    throw ModelError(file: file, entity: entity.name, "a property has an empty name")
                }
                if !names.insert(property.name).inserted {
                    throw ModelError(file: file, entity: entity.name, property: property.name, "duplicate property name")
                }
            }
            for property in entity.properties {
                if PropertyDescription.reservedNames.contains(property.name) {
                    throw ModelError(file: file, entity: entity.name, property: property.name,
                                     "\(property.name) is a reserved name: a managed object already has a member with that name")
                }
                if property.name.contains(".") {
                    throw ModelError(file: file, entity: entity.name, property: property.name,
                                     "a property name cannot contain \".\" (it separates the parts of a key path)")
                }
            }
            for property in entity.properties {
                if let attribute = property as? AttributeDescription {
                    try validate(attribute, in: entity, file: file)
                } else if let relationship = property as? RelationshipDescription {
                    if let inverse = relationship.inverseRelationship,
                       let inverseDestination = inverse.destinationEntity,
                       !entity.isKind(of: inverseDestination) && !inverseDestination.isKind(of: entity) {
                        throw ModelError(file: file, entity: entity.name, property: relationship.name,
                                         "inverse \(inverse.name) points to \(inverseDestination.name), not back to \(entity.name)")
                    }
                    if let inverse = relationship.inverseRelationship, let back = inverse.inverseName, back != relationship.name {
                        throw ModelError(file: file, entity: entity.name, property: relationship.name,
                                         "inverse \(inverse.name) on \(inverse.entity?.name ?? "?") names \(back) as its inverse, not \(relationship.name)")
                    }
                    if relationship.isOrdered && !relationship.isToMany {
                        throw ModelError(file: file, entity: entity.name, property: relationship.name,
                                         "a to-one relationship cannot be ordered")
                    }
                    if relationship.minCount < 0 || relationship.maxCount < 0
                        || (relationship.maxCount > 0 && relationship.minCount > relationship.maxCount) {
                        throw ModelError(file: file, entity: entity.name, property: relationship.name,
                                         "minimum count \(relationship.minCount) and maximum count \(relationship.maxCount) do not form a range")
                    }
                }
            }
            for constraint in entity.uniquenessConstraints {
                for name in constraint where entity.computeAllProperties().first(where: { $0.name == name }) == nil {
                    throw ModelError(file: file, entity: entity.name, property: name, "uniqueness constraint names an unknown property")
                }
            }
            var indexNames: Set<String> = []
            for index in entity.indexes where !indexNames.insert(index.name).inserted {
                throw ModelError(file: file, entity: entity.name, "duplicate fetch index name \(index.name)")
            }
            for index in entity.indexes {
                for element in index.elements where entity.computeAllProperties().first(where: { $0.name == element.propertyName }) == nil {
                    throw ModelError(file: file, entity: entity.name, property: element.propertyName,
                                     "fetch index \(index.name) names an unknown property")
                }
            }
        }
    }

    private func validateConfigurations(file: String?) throws {
        let names = Set(entities.map(\.name))
        for (configuration, members) in configurations.sorted(by: { $0.key < $1.key }) {
            for member in members where !names.contains(member) {
                throw ModelError(file: file, entity: member, "configuration \(configuration) names entity \(member), which does not exist")
            }
        }
    }

    private func validate(_ attribute: AttributeDescription, in entity: EntityDescription, file: String?) throws {
        try validateBounds(of: attribute, in: entity, file: file)
        if (attribute.attributeType == .undefined || attribute.attributeType == .objectID) && !attribute.isTransient {
            throw ModelError(file: file, entity: entity.name, property: attribute.name,
                             "type \(attribute.attributeType.xcodeName) is allowed only for transient attributes")
        }
        if let defaultValue = attribute.defaultValue, !defaultValue.isNull,
           !attribute.attributeType.accepts(defaultValue) {
            throw ModelError(file: file, entity: entity.name, property: attribute.name,
                             "default value \(AttributeValueCoding.json(for: defaultValue).textForMessage) is not a valid \(attribute.attributeType.xcodeName)")
        }
        if let pattern = attribute.regularExpression {
            do { _ = try NSRegularExpression(pattern: pattern) } catch {
                throw ModelError(file: file, entity: entity.name, property: attribute.name,
                                 "regular expression \(pattern) does not compile")
            }
        }
    }
}

extension AttributeType {
    /// Whether `value` is a valid stored value of this type.
    public func accepts(_ value: StoreValue) -> Bool {
        switch (self, value) {
        case (_, .null): return true
        case (.integer16, .integer(let v)), (.integer32, .integer(let v)), (.integer64, .integer(let v)):
            return integerRange?.contains(v) ?? false
        case (.double, .double), (.float, .double), (.decimal, .decimal), (.string, .string),
             (.boolean, .bool), (.date, .date), (.binaryData, .data), (.transformable, .data),
             (.uuid, .uuid), (.uri, .url), (.objectID, .object), (.undefined, _):
            return true
        default:
            return false
        }
    }
}
