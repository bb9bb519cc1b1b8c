import Foundation
import Testing
@testable import PersistKit

/// A save through a coordinator whose only store holds every entity and gives keys inside its
/// save transaction (one SQLite store) skips the pass that looks for objects needing keys
/// before the write; any other arrangement of stores still gets keys first where a store
/// needs them, and a store that does not hold an entity still fails the save.
@Suite("Save through a sole store", .timeLimit(.minutes(1)))
struct SoleStoreSaveTests {
    typealias M = ContextTestModel

    /// The model, with the "Beers" configuration holding breweries, beers and tags, and the
    /// "People" configuration holding people.
    static func configuredModel() -> ManagedObjectModel {
        let model = M.make()
        model.configurations = ["Beers": ["Brewery", "Beer", "Tag"], "People": ["Person"]]
        return model
    }

    @Test func soleStoreIsFoundOnlyWhenItHoldsEveryEntity() throws {
        let directory = try M.temporaryDirectory()
        let single = try M.coordinator(type: .sqlite, at: directory.appendingPathComponent("single.sqlite"))
        let only = try #require(single.persistentStores.first)
        #expect(single.soleStoreForEveryEntity() === only)

        let defaultConfiguration = PersistentStoreCoordinator(managedObjectModel: Self.configuredModel())
        let byDefault = try defaultConfiguration.addPersistentStore(type: .sqlite, configuration: "Default",
                                                                    at: directory.appendingPathComponent("default.sqlite"))
        #expect(defaultConfiguration.soleStoreForEveryEntity() === byDefault)

        let configured = PersistentStoreCoordinator(managedObjectModel: Self.configuredModel())
        _ = try configured.addPersistentStore(type: .sqlite, configuration: "Beers", at: directory.appendingPathComponent("beers.sqlite"))
        #expect(configured.soleStoreForEveryEntity() == nil)

        let two = try M.coordinator(type: .sqlite, at: directory.appendingPathComponent("first.sqlite"))
        _ = try two.addPersistentStore(type: .inMemory, at: nil)
        #expect(two.soleStoreForEveryEntity() == nil)
        #expect(PersistentStoreCoordinator(managedObjectModel: M.make()).soleStoreForEveryEntity() == nil)
    }

    @Test func savesThroughASoleSQLiteStoreGiveEveryNewObjectAPermanentID() throws {
        let coordinator = try M.coordinator(type: .sqlite, at: try M.temporaryDirectory().appendingPathComponent("sole.sqlite"))
        let context = M.context(coordinator)
        try context.performAndWait {
            let brewery = M.insert("Brewery", into: context, ["name": "Westvleteren"])
            let beers = (0..<3).map { M.insert("Beer", into: context, ["name": "XII \($0)"]) }
            for beer in beers { beer.setValue(brewery, forKey: "brewery") }
            try context.save()
            #expect(!brewery.objectID.isTemporaryID && brewery.objectID.primaryKey == 1)
            // Keys follow the order the save meets the objects in, which Core Data leaves open.
            #expect(Set(beers.map(\.objectID.primaryKey)) == [1, 2, 3] && beers.allSatisfy { !$0.objectID.isTemporaryID })
            #expect(beers.allSatisfy { $0.primitiveValue(forKey: "brewery") == .object(brewery.objectID) })
            #expect(!context.hasChanges)
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let beers = try reader.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
            #expect(M.names(beers) == ["XII 0", "XII 1", "XII 2"])
            #expect(beers.allSatisfy { ($0.value(forKey: "brewery") as? ManagedObject)?.value(forKey: "name") as? String == "Westvleteren" })
        }
    }

    @Test func objectsOfAnEntityNoStoreHoldsFailTheSaveAndStayUnsaved() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.configuredModel())
        let store = try coordinator.addPersistentStore(type: .sqlite, configuration: "Beers",
                                                       at: try M.temporaryDirectory().appendingPathComponent("beers.sqlite"))
        let context = M.context(coordinator)
        try context.performAndWait {
            let beer = M.insert("Beer", into: context, ["name": "Orval"])
            let person = M.insert("Person", into: context, ["name": "Ann"])
            #expect(throws: PersistenceError.self) { try context.save() }
            #expect(beer.isInserted && person.isInserted && context.hasChanges)
            #expect(beer.objectID.isTemporaryID && person.objectID.isTemporaryID)
            context.delete(person)
            try context.save()
            #expect(!beer.objectID.isTemporaryID)
        }
        let reader = M.context(coordinator)
        #expect(try reader.performAndWait { try reader.count(for: M.request("Beer")) } == 1)
        #expect(try SaveKeyAllocationTests.maxKey("Beer", try #require(store as? SQLiteStore)) == 1)
    }

    @Test func aSQLiteStoreBesideAnotherStoreStillGetsEveryObjectWritten() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.configuredModel())
        _ = try coordinator.addPersistentStore(type: .sqlite, configuration: "Beers",
                                               at: try M.temporaryDirectory().appendingPathComponent("beers.sqlite"))
        let people = try coordinator.addPersistentStore(type: .inMemory, configuration: "People", at: nil)
        let context = M.context(coordinator)
        try context.performAndWait {
            let beer = M.insert("Beer", into: context, ["name": "Rochefort 8"])
            let person = M.insert("Person", into: context, ["name": "Bea"])
            try context.save()
            #expect(!beer.objectID.isTemporaryID && !person.objectID.isTemporaryID)
            #expect(person.objectID.storeIdentifier == people.identifier)
        }
        let reader = M.context(coordinator)
        let (beerNames, personNames) = try reader.performAndWait {
            (M.names(try reader.fetch(M.request("Beer"))), M.names(try reader.fetch(M.request("Person"))))
        }
        #expect(beerNames == ["Rochefort 8"])
        #expect(personNames == ["Bea"])
    }
}
