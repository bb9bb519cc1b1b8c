import Foundation
@testable import PersistKit

/// Shared set-up of the fetch and batch request tests: the context test model in a SQLite
/// or in-memory store, and a small brewery data set.
enum FetchTestSupport {
    typealias M = ContextTestModel

    /// The stores every fetch feature is tested against.
    static let storeTypes: [StoreType] = [.sqlite, .inMemory]

    /// A coordinator with one store of `type`; a SQLite store lives in a new temporary directory.
    static func coordinator(_ type: StoreType) throws -> PersistentStoreCoordinator {
        if type == .sqlite {
            let url = try M.temporaryDirectory().appendingPathComponent("fetch.sqlite")
            return try M.coordinator(type: .sqlite, at: url)
        }
        return try M.coordinator(type: type)
    }

    /// The IDs of the first `count` breweries by name, descending (the sources of a prefetch of
    /// `Brewery.beers`), and that relationship.
    static func lastBreweries(_ count: Int, of coordinator: PersistentStoreCoordinator) throws
        -> (sources: [ManagedObjectID], beers: RelationshipDescription) {
        guard let beers = coordinator.managedObjectModel.entitiesByName["Brewery"]?.relationshipsByName["beers"] else {
            throw PersistenceError(.managedObjectValidation, "the test model has no Brewery.beers")
        }
        let context = M.context(coordinator)
        let sources: [ManagedObjectID] = try context.performAndWait {
            Array(try context.fetch(M.request("Brewery", sort: [FetchSortDescriptor(key: "name", ascending: false)]))
                .map(\.objectID).prefix(count))
        }
        return (sources, beers)
    }

    /// The coordinator's SQLite store, if it has one.
    static func sqlite(_ coordinator: PersistentStoreCoordinator) -> SQLiteStore? {
        coordinator.persistentStores.first as? SQLiteStore
    }

    /// Statements the SQLite store ran while `body` ran; `nil` for other stores.
    static func statements(_ coordinator: PersistentStoreCoordinator, _ body: () throws -> Void) rethrows -> Int? {
        let start = sqlite(coordinator)?.statementCount
        try body()
        guard let start, let end = sqlite(coordinator)?.statementCount else { return nil }
        return end - start
    }

    /// Saves three breweries and six beers with tags:
    ///
    /// | beer | abv | ibu | brewery (city) | tags |
    /// |---|---|---|---|---|
    /// | Westmalle Dubbel | 7.0 | 24 | Westmalle (Malle) | trappist |
    /// | Westmalle Tripel | 9.5 | 39 | Westmalle (Malle) | trappist, strong |
    /// | Orval | 6.2 | 32 | Orval (Villers) | trappist |
    /// | Petite Orval | 4.5 | – | Orval (Villers) | trappist |
    /// | Achel Blond | 8.0 | 30 | Achel (–) | trappist, strong |
    /// | Mystery | 5.0 | – | – | – |
    static func seedBreweries(_ coordinator: PersistentStoreCoordinator) throws {
        let context = M.context(coordinator)
        try context.performAndWait {
            let westmalle = M.insert("Brewery", into: context, ["name": "Westmalle", "city": "Malle"])
            let orval = M.insert("Brewery", into: context, ["name": "Orval", "city": "Villers"])
            let achel = M.insert("Brewery", into: context, ["name": "Achel"])
            let trappist = M.insert("Tag", into: context, ["name": "trappist"])
            let strong = M.insert("Tag", into: context, ["name": "strong"])
            let beers: [(String, Double, Int16?, ManagedObject?, [ManagedObject])] = [
                ("Westmalle Dubbel", 7.0, 24, westmalle, [trappist]),
                ("Westmalle Tripel", 9.5, 39, westmalle, [trappist, strong]),
                ("Orval", 6.2, 32, orval, [trappist]),
                ("Petite Orval", 4.5, nil, orval, [trappist]),
                ("Achel Blond", 8.0, 30, achel, [trappist, strong]),
                ("Mystery", 5.0, nil, nil, []),
            ]
            for (name, abv, ibu, brewery, tags) in beers {
                let beer = M.insert("Beer", into: context, ["name": name, "abv": abv, "ibu": ibu, "brewery": brewery])
                for tag in tags { beer.addObject(tag, forKey: "tags") }
            }
            try context.save()
        }
    }

    /// Dictionaries as text, for exact comparison: `["abv": "7.0", "name": "Orval"]`.
    static func text(_ rows: [[String: Any]]) -> [[String: String]] {
        rows.map { $0.mapValues { String(describing: $0) } }
    }
}
