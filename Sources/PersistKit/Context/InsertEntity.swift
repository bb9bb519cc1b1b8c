/// The entity a root context found for a generated class's `insert(into:)`, with the settings
/// generation it was found under (see ``ManagedObjectContext/entityForInsert(of:named:)``).
///
/// Finding it takes the context's settings lock for the coordinator, looks the entity's name
/// up in the model's dictionary (hashing the name) and compares its class: about 880
/// instructions an insert, 5 % of an object inserted and saved (workload 1, callgrind). While
/// the generation is unchanged the coordinator is the same, and so is its model, whose
/// entities and their classes are fixed once a coordinator uses it.
struct InsertEntity {
    /// The class the entity was found for.
    let type: ObjectIdentifier
    /// The context's settings generation then.
    let settingsGeneration: UInt
    /// The entity.
    let entity: EntityDescription
}

extension ManagedObjectContext {
    /// The entity named `name` of this context's model, which must have `type` as its class:
    /// what `TypedManagedObject.insert(into:)` creates an object of. Traps, naming the problem,
    /// when the context has no coordinator, the model has no such entity, or the entity has
    /// another class. A root context keeps the last entity found (``InsertEntity``).
    func entityForInsert(of type: ManagedObject.Type, named name: String) -> EntityDescription {
        onQueue {
            let generation = settingsGeneration.load(ordering: .acquiring)
            if let found = insertEntity, found.type == ObjectIdentifier(type), found.settingsGeneration == generation {
                return found.entity
            }
            // One trip through the settings lock for both (a root context has no parent).
            let (parent, ownCoordinator) = settings.withLock { ($0.parent, $0.coordinator) }
            guard let model = (ownCoordinator ?? parent?.persistentStoreCoordinator)?.managedObjectModel else {
                preconditionFailure("\(type).insert(into:): the context has no persistent store coordinator")
            }
            guard let entity = model.entitiesByName[name] else {
                preconditionFailure("\(type).insert(into:): the context's model has no entity \(name)")
            }
            precondition(entity.managedObjectClass == type,
                         "\(type).insert(into:): entity \(name) has the class \(entity.managedObjectClass), not \(type); register the generated classes on the model before using it")
            // A child's coordinator is its parent's, which may change without this context's
            // generation moving: only a root context keeps what it found.
            if parent == nil { insertEntity = InsertEntity(type: ObjectIdentifier(type), settingsGeneration: generation, entity: entity) }
            return entity
        }
    }
}
