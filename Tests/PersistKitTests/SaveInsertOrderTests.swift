import Foundation
import Testing
@testable import PersistKit

/// A save takes its inserted objects in the order they were inserted, and gives them their
/// permanent IDs, registry entries and references in one pass over them; whatever the
/// arrangement (one store or two, IDs made or not, inserted objects deleted again, a failed
/// save), every object ends up saved, registered under its permanent ID and pointed at by it.
@Suite("Save of many inserts", .timeLimit(.minutes(1)))
struct SaveInsertOrderTests {
    typealias M = ContextTestModel

    static func sqliteCoordinator(_ name: String) throws -> PersistentStoreCoordinator {
        try M.coordinator(type: .sqlite, at: try M.temporaryDirectory().appendingPathComponent(name))
    }

    /// `count` new people of class `T` in `context`, named `prefix` followed by their index.
    static func insertPeople<T: ManagedObject>(_ type: T.Type, _ count: Int, named prefix: String,
                                               into context: ManagedObjectContext) throws -> [T] {
        let entity = try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Person"])
        return (0..<count).map { index in
            let person = T(entity: entity, insertInto: context)
            person.setValue("\(prefix)\(index)", forKey: "name")
            return person
        }
    }

    @Test func newObjectsGetKeysInTheOrderTheyWereInserted() throws {
        let context = M.context(try Self.sqliteCoordinator("order.sqlite"))
        try context.performAndWait {
            let people = (0..<300).map { M.insert("Person", into: context, ["name": "p\($0)"]) }
            try context.save()
            #expect(people.map(\.objectID.primaryKey) == Array(1...300))
            #expect(context.insertedObjects.isEmpty && !context.hasChanges)
            #expect(context.registeredObjects.count == 300)
            #expect(people.allSatisfy { context.registeredObject(for: $0.objectID) === $0 && !$0.isInserted })
        }
    }

    @Test func validationErrorsOfNewObjectsComeInInsertionOrder() throws {
        let context = M.context(try Self.sqliteCoordinator("errors.sqlite"))
        try context.performAndWait {
            let breweries = (0..<20).map { _ in M.insert("Brewery", into: context) }
            let error = #expect(throws: PersistenceError.self) { try context.save() }
            #expect(error?.code == .validationMultipleErrors)
            let failing = (error?.detailedErrors ?? []).map { $0.objectID }
            #expect(failing == breweries.map(\.objectID))
            // A failed save changes nothing: still inserted, still temporary, still listed.
            #expect(breweries.allSatisfy { $0.isInserted && $0.objectID.isTemporaryID })
            #expect(context.insertedObjects == Set(breweries))
            for (index, brewery) in breweries.enumerated() { brewery.setValue("b\(index)", forKey: "name") }
            try context.save()
            #expect(breweries.map(\.objectID.primaryKey) == Array(1...20))
        }
    }

    @Test func madeTemporaryIDsHeldByReferencesAreReplacedInALargeSave() throws {
        let coordinator = try Self.sqliteCoordinator("references.sqlite")
        let context = M.context(coordinator)
        try context.performAndWait {
            // Stored objects first, so the registry holds permanent entries beside the new ones.
            for index in 0..<10 { _ = M.insert("Person", into: context, ["name": "old\(index)"]) }
            try context.save()
            let brewery = M.insert("Brewery", into: context, ["name": "Orval"])
            let temporaryID = brewery.objectID
            let beers = (0..<200).map { M.insert("Beer", into: context, ["name": "beer\($0)"]) }
            for beer in beers.prefix(50) { beer.setValue(brewery, forKey: "brewery") }
            try context.save()
            #expect(temporaryID.isTemporaryID && !brewery.objectID.isTemporaryID)
            #expect(context.registeredObject(for: brewery.objectID) === brewery)
            #expect(context.registeredObject(for: temporaryID) == nil)
            #expect(beers.prefix(50).allSatisfy { $0.primitiveValue(forKey: "brewery") == .object(brewery.objectID) })
            #expect(beers.allSatisfy { context.registeredObject(for: $0.objectID) === $0 })
            #expect(context.registeredObjects.count == 10 + 1 + 200)
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let linked = try reader.count(for: M.request("Beer", .equal("brewery.name", .string("Orval"))))
            #expect(linked == 50)
        }
    }

    @Test func newObjectsDeletedBeforeTheSaveLeaveTheRegistry() throws {
        let context = M.context(try Self.sqliteCoordinator("deleted.sqlite"))
        try context.performAndWait {
            let people = (0..<40).map { M.insert("Person", into: context, ["name": "p\($0)"]) }
            // One of them with its temporary ID made, one without.
            let gone = [people[3], people[17]]
            _ = gone[0].objectID
            for person in gone { context.delete(person) }
            #expect(context.changeCounts.inserted == 38)
            try context.save()
            let kept = people.filter { !gone.contains($0) }
            #expect(kept.map(\.objectID.primaryKey) == Array(1...38))
            #expect(context.registeredObjects == Set(kept))
            #expect(gone.allSatisfy { $0.managedObjectContext == nil })
            let stored = try context.count(for: M.request("Person"))
            #expect(stored == 38)
        }
    }

    @Test func insertsSplitBetweenTwoSQLiteStoresAreEachWrittenAndRegistered() throws {
        let directory = try M.temporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: SoleStoreSaveTests.configuredModel())
        let beerStore = try coordinator.addPersistentStore(type: .sqlite, configuration: "Beers", at: directory.appendingPathComponent("beers.sqlite"))
        let peopleStore = try coordinator.addPersistentStore(type: .sqlite, configuration: "People", at: directory.appendingPathComponent("people.sqlite"))
        let context = M.context(coordinator)
        try context.performAndWait {
            var beers: [ManagedObject] = []
            var people: [ManagedObject] = []
            for index in 0..<30 {
                beers.append(M.insert("Beer", into: context, ["name": "beer\(index)"]))
                people.append(M.insert("Person", into: context, ["name": "person\(index)"]))
            }
            try context.save()
            #expect(beers.map(\.objectID.primaryKey) == Array(1...30))
            #expect(people.map(\.objectID.primaryKey) == Array(1...30))
            #expect(beers.allSatisfy { $0.objectID.storeIdentifier == beerStore.identifier })
            #expect(people.allSatisfy { $0.objectID.storeIdentifier == peopleStore.identifier })
            #expect((beers + people).allSatisfy { context.registeredObject(for: $0.objectID) === $0 })
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let beerCount = try reader.count(for: M.request("Beer"))
            let personCount = try reader.count(for: M.request("Person"))
            #expect(beerCount == 30 && personCount == 30)
        }
    }

    @Test func saveHooksRunForSubclassesAmongPlainObjects() throws {
        let context = M.context(try Self.sqliteCoordinator("hooks.sqlite"))
        try context.performAndWait {
            let entity = try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Person"])
            var counted: [CountingSaveHooks] = []
            for index in 0..<30 {
                if index % 10 == 9 {
                    let person = CountingSaveHooks(entity: entity, insertInto: context)
                    person.setValue("c\(index)", forKey: "name")
                    counted.append(person)
                } else {
                    _ = M.insert("Person", into: context, ["name": "p\(index)"])
                }
            }
            try context.save()
            #expect(counted.map(\.willSaveCalls) == [1, 1, 1])
            #expect(counted.map(\.didSaveCalls) == [1, 1, 1])
            // Updated objects get their hooks too.
            counted[0].setValue("renamed", forKey: "name")
            try context.save()
            #expect(counted.map(\.willSaveCalls) == [2, 1, 1])
            #expect(counted.map(\.didSaveCalls) == [2, 1, 1])
            let stored = try context.count(for: M.request("Person"))
            #expect(stored == 30)
        }
    }

    @Test func aClassThatUsesNoSaveHooksIsNotCalledAndItsObjectsAreSavedAlike() throws {
        #expect(!ManagedObject.usesSaveHooks && CountingSaveHooks.usesSaveHooks && !SkippedSaveHooks.usesSaveHooks)
        let context = M.context(try Self.sqliteCoordinator("nohooks.sqlite"))
        try context.performAndWait {
            // New objects of the class alone (the save makes no pass for hooks), then beside
            // objects whose class uses them.
            let skipped = try Self.insertPeople(SkippedSaveHooks.self, 4, named: "s", into: context)
            try context.save()
            let counted = try Self.insertPeople(CountingSaveHooks.self, 1, named: "c", into: context)[0]
            skipped[0].setValue("renamed", forKey: "name")
            let late = try Self.insertPeople(SkippedSaveHooks.self, 1, named: "late", into: context)[0]
            try context.save()
            context.delete(skipped[1])
            try context.save()
            #expect((skipped + [late]).allSatisfy { $0.willSaveCalls == 0 && $0.didSaveCalls == 0 })
            #expect(counted.willSaveCalls == 1 && counted.didSaveCalls == 1)
            #expect(!context.hasChanges && skipped.allSatisfy { !$0.objectID.isTemporaryID })
            let names = try context.fetch(M.request("Person")).compactMap { $0.value(forKey: "name") as? String }
            #expect(names.sorted() == ["c0", "late0", "renamed", "s2", "s3"])
        }
    }

    @Test func anObjectInsertedByWillSaveDoesNotChangeTheSavedList() throws {
        let context = M.context(try Self.sqliteCoordinator("willsave.sqlite"))
        try context.performAndWait {
            let people = try Self.insertPeople(InsertingOnWillSave.self, 5, named: "p", into: context)
            try context.save()
            #expect(people.map(\.objectID.primaryKey) == Array(1...5))
            #expect(people.allSatisfy { context.registeredObject(for: $0.objectID) === $0 })
        }
    }
}

/// A person that counts the calls of its save hooks.
final class CountingSaveHooks: ManagedObject {
    var willSaveCalls = 0
    var didSaveCalls = 0
    override func willSave() { willSaveCalls += 1 }
    override func didSave() { didSaveCalls += 1 }
}

/// A person that counts the calls of its save hooks but says it uses none
/// (``ManagedObject/usesSaveHooks``): a save does not call them.
final class SkippedSaveHooks: ManagedObject {
    override class var usesSaveHooks: Bool { false }
    var willSaveCalls = 0
    var didSaveCalls = 0
    override func willSave() { willSaveCalls += 1 }
    override func didSave() { didSaveCalls += 1 }
}

/// A person whose `willSave()` inserts another object once, while the save holds its list of
/// inserted objects.
final class InsertingOnWillSave: ManagedObject {
    override func willSave() {
        guard let context = managedObjectContext, value(forKey: "name") as? String == "p0" else { return }
        let extra = ManagedObject(entity: entity, insertInto: context)
        extra.setValue("extra", forKey: "name")
    }
}
