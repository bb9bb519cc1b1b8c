import Foundation
@testable import PersistKit

/// A small brewing model for the evaluator and atomic store tests:
/// Brewery (name, beers ↔ Beer.brewery, ordered lineup), Beer (every attribute type),
/// Tag (many-to-many with Beer) and abstract Container with Bottle and Can.
struct BrewingModel {
    let model: ManagedObjectModel
    var beer: EntityDescription { model.entitiesByName["Beer"]! }
    var brewery: EntityDescription { model.entitiesByName["Brewery"]! }
    var tag: EntityDescription { model.entitiesByName["Tag"]! }
    var container: EntityDescription { model.entitiesByName["Container"]! }
    var bottle: EntityDescription { model.entitiesByName["Bottle"]! }
    var can: EntityDescription { model.entitiesByName["Can"]! }

    init() throws {
        let beer = EntityDescription(name: "Beer", properties: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "abv", type: .double),
            AttributeDescription(name: "ibu", type: .integer16),
            AttributeDescription(name: "brewedOn", type: .date),
            AttributeDescription(name: "price", type: .decimal),
            AttributeDescription(name: "code", type: .uuid),
            AttributeDescription(name: "label", type: .binaryData),
            AttributeDescription(name: "homepage", type: .uri),
            AttributeDescription(name: "isSour", type: .boolean),
            AttributeDescription(name: "serial", type: .integer64),
            RelationshipDescription(name: "brewery", destination: "Brewery", inverse: "beers"),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "beers"),
        ])
        let brewery = EntityDescription(name: "Brewery", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "beers", destination: "Beer", toMany: true, inverse: "brewery"),
            RelationshipDescription(name: "lineup", destination: "Beer", toMany: true, isOrdered: true),
        ])
        let tag = EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "beers", destination: "Beer", toMany: true, inverse: "tags"),
        ])
        let container = EntityDescription(name: "Container", properties: [
            AttributeDescription(name: "volume", type: .double),
        ])
        container.isAbstract = true
        let bottle = EntityDescription(name: "Bottle", properties: [AttributeDescription(name: "color", type: .string)])
        bottle.superentityName = "Container"
        let can = EntityDescription(name: "Can", properties: [AttributeDescription(name: "isTall", type: .boolean)])
        can.superentityName = "Container"
        model = ManagedObjectModel(entities: [beer, brewery, tag, container, bottle, can])
        try model.freeze()
    }

    /// A row of `entity` with the named values, every other slot `nil`.
    func row(_ id: ManagedObjectID, version: Int64 = 0, _ values: [String: StoreValue]) -> RowSnapshot {
        RowSnapshot(objectID: id, version: version, values: id.entity.slots.map { values[$0.name] ?? .null })
    }
}
