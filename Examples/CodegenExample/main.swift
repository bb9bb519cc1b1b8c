import Foundation
import PersistKit

// The classes Beer, Brewery, Tag, … and BeersClasses come from Beers.model.json (a link to
// Examples/Beers.model.json), generated at build time by the PersistKitCodegen plugin.

// 1. Load the model and put the generated classes on its entities.
let modelURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Beers.model.json")
let model = try ManagedObjectModel(contentsOf: modelURL)
BeersClasses.register(in: model)

// 2. An in-memory store and a context.
let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
try coordinator.addPersistentStore(type: .inMemory, at: nil)
let context = ManagedObjectContext(concurrencyType: .privateQueue)
context.persistentStoreCoordinator = coordinator

try context.performAndWait {
    // 3. Typed properties, typed relationships and their helpers.
    let brewery = Brewery.insert(into: context)
    brewery.name = "Duvel Moortgat"
    let strong = Tag.insert(into: context)
    strong.name = "strong"
    for (name, abv) in [("Duvel", 8.5), ("Vedett", 5.2)] {
        let beer = Beer.insert(into: context)
        beer.name = name
        beer.abv = abv
        beer.uuid = UUID()
        beer.brewery = brewery
        if abv > 8 { beer.addToTags(strong) }
    }
    try context.save()

    // 4. A typed fetch request, with the generated key names in the predicate and sort.
    let request = Beer.fetchRequest()
    request.predicate = .comparison(.keyPath(Beer.Attributes.abv), .greaterThan, .constant(.double(5)))
    request.sortDescriptors = [FetchSortDescriptor(key: Beer.Attributes.name)]
    for beer in try context.fetch(request) {
        let tags = beer.tags.compactMap(\.name).sorted().joined(separator: ", ")
        print("\(beer.name ?? "") \(beer.abv ?? 0) from \(beer.brewery?.name ?? "?") [\(tags)]")
    }
    print("\(brewery.name ?? "") brews \(brewery.beers.count) beers")
}
