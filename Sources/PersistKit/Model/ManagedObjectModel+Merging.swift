import Foundation

extension ManagedObjectModel {
    /// A new model holding the entities of all `models`, resolved and validated.
    ///
    /// The corresponding Core Data method is `NSManagedObjectModel.mergedModel(from:)`.
    /// Entities are copied, so the models merged are left unchanged. Configurations with the
    /// same name are joined; version identifiers are united. Relationships may point at
    /// entities of another model in the list.
    ///
    /// - Throws: ``ModelError`` when two models define an entity with the same name (the
    ///   message names both sources), or when the merged model is not valid.
    public static func mergedModel(from models: [ManagedObjectModel]) throws -> ManagedObjectModel {
        var sourceOfEntity: [String: String] = [:]
        var entities: [EntityDescription] = []
        var configurations: [String: [String]] = [:]
        var versionIdentifiers: Set<String> = []
        for (index, model) in models.enumerated() {
            let source = model.sourceURL?.path ?? "model \(index + 1) (not loaded from a file)"
            for entity in model.entities {
                if let first = sourceOfEntity[entity.name] {
                    throw ModelError(entity: entity.name, "entity \(entity.name) is defined in both \(first) and \(source)")
                }
                sourceOfEntity[entity.name] = source
                entities.append(entity.unlinkedCopy())
            }
            for (name, members) in model.configurations {
                configurations[name, default: []].append(contentsOf: members.filter { !(configurations[name] ?? []).contains($0) })
            }
            versionIdentifiers.formUnion(model.versionIdentifiers)
        }
        let merged = ManagedObjectModel(entities: entities)
        merged.configurations = configurations
        merged.versionIdentifiers = versionIdentifiers
        try merged.resolveAndValidate()
        return merged
    }
}
