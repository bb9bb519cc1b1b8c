import Foundation
import PersistKit

/// A few objects for the parser fuzzer to evaluate predicates on: beers (every attribute type)
/// with a brewery and tags, read through a ``PredicateObjectResolver``.
final class ObjectGraph: PredicateObjectResolver, Sendable {
    /// Built once per process.
    static let shared = ObjectGraph()
    /// Values of `$NAME` variables.
    static let variables: [String: StoreValue] = ["x": .integer(3), "name": .string("Ale"), "list": .array([.integer(1), .string("a")])]

    let model: ManagedObjectModel
    let beers: [ManagedObjectID]
    /// The brewery and the tags.
    let others: [ManagedObjectID]
    private let values: [ManagedObjectID: [String: EvaluatedValue]]

    var evaluator: PredicateEvaluator<ObjectGraph> { PredicateEvaluator(resolver: self, now: Date(timeIntervalSinceReferenceDate: 0)) }

    private init() {
        let beer = EntityDescription(name: "Beer", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "abv", type: .double),
            AttributeDescription(name: "ibu", type: .integer16), AttributeDescription(name: "count", type: .integer64),
            AttributeDescription(name: "price", type: .decimal), AttributeDescription(name: "brewedOn", type: .date),
            AttributeDescription(name: "isFavorite", type: .boolean), AttributeDescription(name: "label", type: .binaryData),
            AttributeDescription(name: "uuid", type: .uuid), AttributeDescription(name: "website", type: .uri),
            RelationshipDescription(name: "brewery", destination: "Brewery", inverse: "beers"),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "beers"),
        ])
        let brewery = EntityDescription(name: "Brewery", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "founded", type: .integer32),
            RelationshipDescription(name: "beers", destination: "Beer", toMany: true, inverse: "brewery"),
        ])
        let tag = EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "beers", destination: "Beer", toMany: true, inverse: "tags"),
        ])
        model = ManagedObjectModel(entities: [beer, brewery, tag])
        do {
            try model.freeze()
        } catch {
            fatalError("the fuzz model is invalid: \(error)")
        }
        func id(_ entity: EntityDescription, _ key: Int64) -> ManagedObjectID {
            ManagedObjectID(entity: entity, storeIdentifier: "fuzz", primaryKey: key)
        }
        let beers = (1...3).map { id(beer, Int64($0)) }
        let theBrewery = id(brewery, 1)
        let tags = (1...2).map { id(tag, Int64($0)) }
        var values: [ManagedObjectID: [String: EvaluatedValue]] = [:]
        let names: [StoreValue] = [.string("Ale"), .string("straße"), .null]
        for (index, object) in beers.enumerated() {
            values[object] = [
                "name": .value(names[index]), "abv": .value(index == 2 ? .null : .double(Double(index) * 2.5 + 0.5)),
                "ibu": .value(.integer(Int64(index * 20))), "count": .value(.integer(index == 1 ? Int64.max : Int64.min + 1)),
                "price": .value(.decimal(Decimal(string: "3.50") ?? 0)), "brewedOn": .value(.date(Date(timeIntervalSinceReferenceDate: Double(index) * 86_400))),
                "isFavorite": .value(.bool(index == 0)), "label": .value(.data(Data([0, 1, UInt8(index)]))),
                "uuid": .value(.uuid(UUID(uuid: (UInt8(index), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)))),
                "website": .value(index == 0 ? .url(URL(fileURLWithPath: "/beer")) : .null),
                "brewery": .value(index == 2 ? .null : .object(theBrewery)),
                "tags": .objects(index == 0 ? tags : [tags[1]]),
            ]
        }
        values[theBrewery] = ["name": .value(.string("Brew")), "founded": .value(.integer(1850)), "beers": .objects(Array(beers.prefix(2)))]
        values[tags[0]] = ["name": .value(.string("dark")), "beers": .objects([beers[0]])]
        values[tags[1]] = ["name": .value(.string("")), "beers": .objects(beers)]
        self.beers = beers
        self.others = [theBrewery] + tags
        self.values = values
    }

    /// Thrown for a key the object's entity does not have.
    struct UnknownKey: Error {
        let key: String
        let entity: String
    }

    func value(forKey key: String, of object: ManagedObjectID) throws -> EvaluatedValue {
        guard let value = values[object]?[key] else { throw UnknownKey(key: key, entity: object.entity.name) }
        return value
    }
}
