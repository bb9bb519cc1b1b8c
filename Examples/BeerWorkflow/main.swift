import Foundation
import PersistKit

// 1. The managed object model: a beer has one brewery, a brewery many beers. The classes
// Brewery and Beer are generated from Workflow.model.json by the PersistKitCodegen plugin
// at build time (docs/codegen.md); register them on the model's entities.
func makeModel() throws -> ManagedObjectModel {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Workflow.model.json")
    let model = try ManagedObjectModel(contentsOf: file)
    WorkflowClasses.register(in: model)
    return model
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: BeerWorkflow create|update|container PATH")
    exit(2)
}
let path = URL(fileURLWithPath: arguments[2])

switch arguments[1] {
case "create":
    // 2. A coordinator with a SQLite store, migrating automatically.
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeModel())
    try coordinator.addPersistentStore(
        type: .sqlite, configuration: nil, at: path,
        options: StoreOptions(migratePersistentStoresAutomatically: true, inferMappingModelAutomatically: true))

    // 3. Insert a brewery and two beers, relate them, save.
    let context = ManagedObjectContext(concurrencyType: .mainQueue)
    context.persistentStoreCoordinator = coordinator
    let duvel = Brewery(context: context)
    duvel.name = "Duvel Moortgat"
    for (name, abv) in [("Duvel", 8.5), ("Vedett", 5.2)] {
        let beer = Beer(context: context)
        beer.name = name
        beer.abv = abv
        beer.brewery = duvel
    }
    print("hasChanges before save: \(context.hasChanges)")
    try context.save()
    print("hasChanges after save: \(context.hasChanges)")
    print("beers of \(duvel.name ?? ""): \(duvel.beers.count)")

case "update":
    // 4. In a new process: fetch with a predicate and sort descriptors, update one, delete one.
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeModel())
    try coordinator.addPersistentStore(type: .sqlite, configuration: nil, at: path,
                                       options: StoreOptions())
    let context = ManagedObjectContext(concurrencyType: .privateQueue)
    context.persistentStoreCoordinator = coordinator
    try context.performAndWait {
        let request = FetchRequest<Beer>(entityName: "Beer")
        request.predicate = .comparison(.keyPath("brewery.name"), .equalTo, .constant(.string("Duvel Moortgat")))
        request.sortDescriptors = [FetchSortDescriptor(key: "abv", ascending: false)]
        let beers = try context.fetch(request)
        print("fetched: " + beers.map { "\($0.name ?? "") \($0.abv)" }.joined(separator: ", "))
        beers.first?.abv += 0.1
        print("hasChanges after update: \(context.hasChanges)")
        if let vedett = beers.first(where: { $0.name == "Vedett" }) { context.delete(vedett) }
        try context.save()
        print("hasChanges after save: \(context.hasChanges)")
    }

case "container":
    // 5. The same through a container: view context, background context, background task.
    let container = PersistentContainer(name: "Beers", managedObjectModel: try makeModel())
    container.persistentStoreDescriptions = [PersistentStoreDescription(url: path.appendingPathComponent("Beers.sqlite"))]
    var failure: (any Error)?
    container.loadPersistentStores { _, error in failure = error }
    if let failure { throw failure }

    let background = container.newBackgroundContext()
    try background.performAndWait {
        let brewery = Brewery(context: background)
        brewery.name = "Westmalle"
        let beer = Beer(context: background)
        beer.name = "Tripel"
        beer.abv = 9.5
        beer.brewery = brewery
        try background.save()
    }
    let done = DispatchSemaphore(value: 0)
    container.performBackgroundTask { context in
        let beer = Beer(context: context)
        beer.name = "Dubbel"
        beer.abv = 7
        try? context.save()
        done.signal()
    }
    done.wait()
    let request = FetchRequest<Beer>(entityName: "Beer")
    request.sortDescriptors = [FetchSortDescriptor(key: "name")]
    let names = try container.viewContext.fetch(request).map { $0.name ?? "" }
    print("view context sees: \(names.joined(separator: ", "))")

default:
    print("unknown command \(arguments[1])")
    exit(2)
}
