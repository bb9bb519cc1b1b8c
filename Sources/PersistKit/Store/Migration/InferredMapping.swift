import Foundation

/// The mapping lightweight migration infers between two model versions: which source entity
/// and property each destination entity and property comes from, and every change, blocking
/// ones included.
///
/// Entities and properties are matched by `renamingIdentifier` (Xcode's "Renaming ID",
/// `elementID` in the XML), falling back to the name. The rules follow Apple's "Lightweight
/// Migration" documentation; `docs/migration.md` lists what is inferred and what blocks.
struct InferredMapping: Sendable {
    /// The source entity of each destination entity that has one, by destination name.
    var entitySources: [String: EntityDescription] = [:]
    /// For each destination entity name, the source property of each of its stored properties
    /// (inherited ones included) that has one, by destination property name.
    var propertySources: [String: [String: PropertyDescription]] = [:]
    /// Every change, in entity order.
    var changes: [MigrationChange] = []

    /// Infers the mapping from `source` to `destination` (both frozen) for one configuration.
    init(source: ManagedObjectModel, destination: ManagedObjectModel, configurationName: String?) {
        let sources = source.entities(forConfiguration: configurationName)
        let destinations = destination.entities(forConfiguration: configurationName)
        let sourceByKey = Dictionary(sources.map { ($0.renamingIdentifier ?? $0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let sourceByName = Dictionary(sources.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var used: Set<ObjectIdentifier> = []
        for entity in destinations {
            let candidate = sourceByKey[entity.renamingIdentifier ?? entity.name] ?? sourceByName[entity.name]
            if let candidate, used.insert(ObjectIdentifier(candidate)).inserted {
                entitySources[entity.name] = candidate
            }
        }
        for entity in destinations.sorted(by: { $0.name < $1.name }) {
            guard let sourceEntity = entitySources[entity.name] else {
                changes.append(MigrationChange(.entityAdded, entity: entity.name, "new entity; it starts with no objects"))
                continue
            }
            inferEntity(entity, from: sourceEntity)
        }
        for entity in sources.sorted(by: { $0.name < $1.name }) where !used.contains(ObjectIdentifier(entity)) {
            changes.append(MigrationChange(.entityRemoved, entity: entity.name, "entity removed; its objects are deleted"))
        }
        checkHierarchies(destinations)
    }

    private mutating func inferEntity(_ entity: EntityDescription, from source: EntityDescription) {
        if source.name != entity.name {
            changes.append(MigrationChange(.entityRenamed, entity: entity.name, "renamed from \(source.name)"))
        }
        let mappedParent = entity.superentity.flatMap { entitySources[$0.name]?.name }
        if mappedParent != source.superentity?.name || (entity.superentity == nil) != (source.superentity == nil) {
            changes.append(MigrationChange(.entityHierarchyChanged, entity: entity.name,
                                           "parent entity \(source.superentity?.name ?? "(none)") -> \(entity.superentity?.name ?? "(none)")"))
        }
        if entity.isAbstract && !source.isAbstract {
            changes.append(MigrationChange(.blocking, entity: entity.name,
                                           "the entity became abstract, so its existing objects would have no entity"))
        }
        let sourceProperties = source.computeAllProperties().filter { !$0.isTransient }
        let sourceByKey = Dictionary(sourceProperties.map { ($0.renamingIdentifier ?? $0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let sourceByName = Dictionary(sourceProperties.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var matched: Set<ObjectIdentifier> = []
        var map: [String: PropertyDescription] = [:]
        for property in entity.computeAllProperties() where !property.isTransient {
            let candidate = sourceByKey[property.renamingIdentifier ?? property.name] ?? sourceByName[property.name]
            guard let candidate, !matched.contains(ObjectIdentifier(candidate)) else {
                if property.entity === entity { noteAdded(property, entity: entity) }
                continue
            }
            matched.insert(ObjectIdentifier(candidate))
            map[property.name] = candidate
            if property.entity === entity || candidate.entity === source { compare(property, candidate, entity: entity) }
        }
        propertySources[entity.name] = map
        for property in sourceProperties where property.entity === source && !matched.contains(ObjectIdentifier(property)) {
            let kind: MigrationChange.Kind = property is AttributeDescription ? .attributeRemoved : .relationshipRemoved
            changes.append(MigrationChange(kind, entity: entity.name, property: property.name,
                                           "\(property is AttributeDescription ? "attribute" : "relationship") removed; its values are dropped"))
        }
    }

    private mutating func noteAdded(_ property: PropertyDescription, entity: EntityDescription) {
        if let attribute = property as? AttributeDescription {
            if !attribute.isOptional && (attribute.defaultValue?.isNull ?? true) {
                changes.append(MigrationChange(.blocking, entity: entity.name, property: property.name,
                                               "new required attribute without a default value: existing objects would have none"))
            } else {
                let value = attribute.defaultValue.map { AttributeValueCoding.json(for: $0).textForMessage } ?? "nil"
                changes.append(MigrationChange(.attributeAdded, entity: entity.name, property: property.name, "attribute added (existing objects get \(value))"))
            }
        } else if let relationship = property as? RelationshipDescription {
            // Core Data's validation accepts an empty non-optional to-many with no minimum count.
            if (!relationship.isToMany && !relationship.isOptional) || relationship.minCount > 0 {
                changes.append(MigrationChange(.blocking, entity: entity.name, property: property.name,
                                               "new required relationship: existing objects would have no destination"))
            } else {
                changes.append(MigrationChange(.relationshipAdded, entity: entity.name, property: property.name, "relationship added (empty for existing objects)"))
            }
        }
    }

    private mutating func compare(_ property: PropertyDescription, _ source: PropertyDescription, entity: EntityDescription) {
        let name = property.name
        func add(_ kind: MigrationChange.Kind, _ detail: String) {
            changes.append(MigrationChange(kind, entity: entity.name, property: name, detail))
        }
        switch (property, source) {
        case let (attribute as AttributeDescription, old as AttributeDescription):
            if old.name != name { add(.attributeRenamed, "renamed from \(old.name)") }
            if old.attributeType != attribute.attributeType {
                if Self.canInfer(from: old.attributeType, to: attribute.attributeType) {
                    add(.attributeTypeChanged, "type \(old.attributeType.xcodeName) -> \(attribute.attributeType.xcodeName) (stored alike; values kept)")
                } else {
                    add(.blocking, "type change \(old.attributeType.xcodeName) -> \(attribute.attributeType.xcodeName) cannot be inferred")
                }
            }
            if old.isOptional && !attribute.isOptional {
                if let value = attribute.defaultValue, !value.isNull {
                    add(.attributeMadeRequired, "now required; nil values become \(AttributeValueCoding.json(for: value).textForMessage)")
                } else {
                    add(.blocking, "became required without a default value: objects with no value would fail validation")
                }
            } else if !old.isOptional && attribute.isOptional {
                add(.attributeMadeOptional, "now optional")
            }
        case let (relationship as RelationshipDescription, old as RelationshipDescription):
            if old.name != name { add(.relationshipRenamed, "renamed from \(old.name)") }
            let mappedDestination = entitySources[relationship.destinationEntityName]?.name
            if mappedDestination != old.destinationEntityName {
                add(.blocking, "destination changed from \(old.destinationEntityName) to \(relationship.destinationEntityName)")
            }
            if old.isToMany != relationship.isToMany {
                add(.relationshipCardinalityChanged, relationship.isToMany
                    ? "to-one -> to-many (each object keeps its destination)"
                    : "to-many -> to-one (each object keeps its first destination; the others are unlinked)")
            } else if old.isOrdered != relationship.isOrdered {
                add(.relationshipCardinalityChanged, relationship.isOrdered ? "now ordered (in key order)" : "no longer ordered")
            }
            if !relationship.isToMany && old.isOptional && !relationship.isOptional {
                add(.blocking, "became required: objects without a destination would fail validation")
            }
        default:
            add(.blocking, "changed between attribute and relationship")
        }
    }

    /// Core Data stores these types alike (its `_attributeTypeIsSchemaEqual:`), so a change
    /// between them keeps every value: the integers and Boolean among themselves, Float and Double.
    static func canInfer(from old: AttributeType, to new: AttributeType) -> Bool {
        let integers: Set<AttributeType> = [.integer16, .integer32, .integer64, .boolean]
        let floats: Set<AttributeType> = [.float, .double]
        return old == new || (integers.contains(old) && integers.contains(new)) || (floats.contains(old) && floats.contains(new))
    }

    /// Core Data cannot infer moving entities of separate inheritance trees into one tree
    /// ("merging hierarchies"): their objects would share one table and one key sequence.
    private mutating func checkHierarchies(_ destinations: [EntityDescription]) {
        var roots: [String: Set<String>] = [:]
        for entity in destinations {
            guard let source = entitySources[entity.name] else { continue }
            roots[entity.rootEntity.name, default: []].insert(source.rootEntity.name)
        }
        for (root, sourceRoots) in roots.sorted(by: { $0.key < $1.key }) where sourceRoots.count > 1 {
            changes.append(MigrationChange(.blocking, entity: root,
                                           "merges the separate source inheritance trees \(sourceRoots.sorted().joined(separator: ", ")) into one"))
        }
    }
}
