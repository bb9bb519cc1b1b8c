import Foundation
@testable import PersistKit
import PredicateDifferential

/// The model the context tests share: breweries and beers (one-to-many), tags (many-to-many),
/// passports (one-to-one), an abstract Drink with two sub-entities, and validation rules.
enum ContextTestModel {
    static func make() -> ManagedObjectModel {
        let brewery = EntityDescription(name: "Brewery", properties: [
            AttributeDescription(name: "name", type: .string, isOptional: false),
            AttributeDescription(name: "city", type: .string),
            RelationshipDescription(name: "beers", destination: "Beer", toMany: true, inverse: "brewery", deleteRule: .cascade),
            RelationshipDescription(name: "owner", destination: "Person", inverse: "brewery", deleteRule: .deny),
        ])
        let abv = AttributeDescription(name: "abv", type: .double, defaultValue: .double(5))
        abv.minValue = .double(0)
        abv.maxValue = .double(70)
        let code = AttributeDescription(name: "code", type: .string)
        code.regularExpression = "[A-Z]{3}-[0-9]+"
        let beer = EntityDescription(name: "Beer", properties: [
            AttributeDescription(name: "name", type: .string, isOptional: false),
            abv,
            AttributeDescription(name: "ibu", type: .integer16),
            AttributeDescription(name: "brewedOn", type: .date),
            code,
            AttributeDescription(name: "note", type: .string),
            RelationshipDescription(name: "brewery", destination: "Brewery", inverse: "beers", deleteRule: .nullify),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "beers"),
        ])
        (beer.properties[5] as? AttributeDescription)?.isTransient = true
        let tagName = AttributeDescription(name: "name", type: .string, isOptional: false)
        tagName.maxValue = .integer(12)
        let tag = EntityDescription(name: "Tag", properties: [
            tagName,
            RelationshipDescription(name: "beers", destination: "Beer", toMany: true, inverse: "tags"),
        ])
        tag.uniquenessConstraints = [["name"]]
        let person = EntityDescription(name: "Person", properties: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "age", type: .integer16),
            RelationshipDescription(name: "brewery", destination: "Brewery", inverse: "owner", deleteRule: .nullify),
        ])
        let drink = EntityDescription(name: "Drink", properties: [AttributeDescription(name: "volume", type: .integer32)])
        drink.isAbstract = true
        let juice = EntityDescription(name: "Juice", properties: [AttributeDescription(name: "fruit", type: .string)])
        let soda = EntityDescription(name: "Soda", properties: [AttributeDescription(name: "sugar", type: .double)])
        drink.subentities = [juice, soda]
        return ManagedObjectModel(entities: [brewery, beer, tag, person, drink, juice, soda])
    }

    /// A coordinator with one store of `type` (in memory unless told otherwise).
    static func coordinator(type: StoreType = .inMemory, at url: URL? = nil, model: ManagedObjectModel = make()) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: type, at: url)
        return coordinator
    }

    static func context(_ coordinator: PersistentStoreCoordinator, _ type: ManagedObjectContext.ConcurrencyType = .privateQueue) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: type)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// The entity `name` of the model of `context`'s coordinator, or of its parent's (a child
    /// context has no coordinator of its own).
    static func entity(_ name: String, in context: ManagedObjectContext) -> EntityDescription {
        guard let entity = context.persistentStoreCoordinator?.managedObjectModel.entitiesByName[name]
            ?? context.parent?.persistentStoreCoordinator?.managedObjectModel.entitiesByName[name] else {
            preconditionFailure("no entity \(name)")
        }
        return entity
    }

    static func insert(_ entity: String, into context: ManagedObjectContext, _ values: [String: Any?] = [:]) -> ManagedObject {
        let object = ManagedObject(entity: self.entity(entity, in: context), insertInto: context)
        for (key, value) in values { object.setValue(value, forKey: key) }
        return object
    }

    static func request(_ entity: String, _ predicate: FetchPredicate? = nil, sort: [FetchSortDescriptor]? = nil) -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: entity)
        request.predicate = predicate
        request.sortDescriptors = sort
        return request
    }

    static func names(_ objects: [ManagedObject]) -> [String] {
        objects.map { $0.value(forKey: "name") as? String ?? "<nil>" }
    }

    static func names(_ objects: Any?) -> [String] {
        let list: [ManagedObject] = (objects as? Set<ManagedObject>).map(Array.init) ?? (objects as? [ManagedObject]) ?? []
        return list.map { $0.value(forKey: "name") as? String ?? "<nil>" }.sorted()
    }

    /// `count` new objects of an entity of their own, in no context: for tests of the lists a
    /// context keeps its objects in.
    static func unregisteredObjects(_ count: Int) -> [ManagedObject] {
        let entity = EntityDescription(name: "Thing", properties: [AttributeDescription(name: "n", type: .integer64)])
        return (0..<count).map { _ in ManagedObject(entity: entity, insertInto: nil) }
    }

    static func temporaryDirectory() throws -> URL {
        try ScratchDirectory.make(prefix: "persistkit")
    }
}
