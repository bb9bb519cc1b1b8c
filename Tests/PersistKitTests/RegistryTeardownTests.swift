import Foundation
import Testing
@testable import PersistKit

/// Large registries are emptied in address order (reset, a context going away) and a fetched
/// fault keeps its row in its committed state: the objects keep Core Data's behaviour either way.
@Suite("Registry teardown and fault rows", .timeLimit(.minutes(1)))
struct RegistryTeardownTests {
    typealias M = ContextTestModel

    /// More people than the registry's ordered-teardown threshold, so its ordered path runs.
    private static let count = ManagedObjectContext.orderedTeardownThreshold + 500

    /// A SQLite coordinator holding `count` people "P00000"… aged 0…99.
    private func seededCoordinator(count: Int = Self.count) throws -> PersistentStoreCoordinator {
        let url = try M.temporaryDirectory().appendingPathComponent("teardown.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            for i in 0..<count {
                _ = M.insert("Person", into: context, ["name": String(format: "P%05d", i), "age": Int16(i % 100)])
            }
            try context.save()
        }
        return coordinator
    }

    private func peopleByName(_ context: ManagedObjectContext) throws -> [ManagedObject] {
        try context.fetch(M.request("Person", sort: [FetchSortDescriptor(key: "name")]))
    }

    @Test func resetOfALargeRegistryDetachesEveryObjectAndFetchingAgainRegistersNewOnes() throws {
        let coordinator = try seededCoordinator()
        let context = M.context(coordinator)
        try context.performAndWait {
            let people = try peopleByName(context)
            #expect(people.count == Self.count)
            // Every third one realized; the others stay faults with their rows at hand.
            for index in stride(from: 0, to: people.count, by: 3) { _ = people[index].value(forKey: "name") }
            context.reset()
            #expect(context.registeredObjects.isEmpty)
            let detached = people.allSatisfy { $0.managedObjectContext == nil }
            #expect(detached)
            // A realized object keeps its values; a fault that left the context has none.
            #expect(people[3].value(forKey: "name") as? String == "P00003")
            #expect(people[1].value(forKey: "name") == nil)
            let again = try peopleByName(context)
            #expect(again.count == Self.count)
            let allNew = zip(people, again).allSatisfy { $0 !== $1 }
            #expect(allNew)
            #expect(again[1].value(forKey: "name") as? String == "P00001")
            #expect(again[1].int64(forKey: "age") == 1)
            #expect(context.registeredObjects.count == Self.count)
        }
    }

    @Test func objectsHeldPastTheirContextKeepTheirValuesAndLoseTheirContext() throws {
        let coordinator = try seededCoordinator()
        var held: [ManagedObject] = []
        weak var gone: ManagedObjectContext?
        do {
            let context = M.context(coordinator)
            gone = context
            try context.performAndWait {
                let people = try peopleByName(context)
                for person in people { _ = person.value(forKey: "age") }
                held = Array(people.prefix(10)) + Array(people.suffix(10))
            }
        }
        #expect(gone == nil)
        #expect(held.count == 20)
        let detached = held.allSatisfy { $0.managedObjectContext == nil && !$0.isFault }
        #expect(detached)
        #expect(held[0].value(forKey: "name") as? String == "P00000")
        #expect(held[19].value(forKey: "name") as? String == String(format: "P%05d", Self.count - 1))
    }

    @Test func aFetchedFaultTakesAMergedRowWithItsVersion() throws {
        let coordinator = try seededCoordinator(count: 20)
        let reader = M.context(coordinator)
        let writer = M.context(coordinator)
        let people = try reader.performAndWait { try peopleByName(reader) }
        let target = people[5]
        #expect(reader.performAndWait { target.isFault })
        nonisolated(unsafe) var saved: Notification?
        let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification,
                                                              object: writer, queue: nil) { saved = $0 }
        defer { NotificationCenter.default.removeObserver(observer) }
        try writer.performAndWait {
            let person = try writer.existingObject(with: target.objectID)
            person.setValue("Renamed", forKey: "name")
            try writer.save()
        }
        let notification = try #require(saved)
        reader.performAndWait {
            reader.mergeChanges(fromContextDidSave: notification)
            #expect(target.isFault)
            #expect(target.value(forKey: "name") as? String == "Renamed")
            #expect(target.storeVersion == 2)
            #expect(target.committedValues(forKeys: ["name"])["name"] as? String == "Renamed")
            #expect(!target.hasChanges)
            // Its neighbours still fill from the rows fetched with them.
            #expect(people[4].value(forKey: "name") as? String == "P00004")
            #expect(people[4].storeVersion == 1)
        }
    }

    @Test func aFetchedFaultChangedThenSavedStartsFromItsFetchedVersion() throws {
        let coordinator = try seededCoordinator(count: 20)
        let context = M.context(coordinator)
        try context.performAndWait {
            let people = try peopleByName(context)
            #expect(people[7].isFault)
            people[7].setValue(Int16(42), forKey: "age")
            #expect(people[7].committedValues(forKeys: ["age"])["age"] as? Int16 == 7)
            #expect(people[7].storeVersion == 1)
            try context.save()
            #expect(people[7].storeVersion == 2)
            // A refreshed object becomes a fault without a row and reads the store again.
            context.refresh(people[7], mergeChanges: false)
            #expect(people[7].isFault)
            #expect(people[7].int64(forKey: "age") == 42)
            #expect(people[7].storeVersion == 2)
        }
        let other = M.context(coordinator)
        try other.performAndWait {
            let people = try peopleByName(other)
            #expect(people[7].int64(forKey: "age") == 42)
        }
    }

    @Test func pageOrderIsAPermutationOrderedByPage() throws {
        let model = M.make()
        let entity = try #require(model.entitiesByName["Person"])
        var objects = (0..<10_000).map { _ in ManagedObject(entity: entity, insertInto: nil) }
        // Some objects far from the others, then shuffled: the order must not rely on the input's.
        let far = (0..<50).map { _ -> ManagedObject in
            _ = [UInt8](repeating: 0, count: 1 << 16)
            return ManagedObject(entity: entity, insertInto: nil)
        }
        objects += far
        objects.shuffle()
        for sample in [objects, Array(objects.prefix(2)), Array(far.prefix(3)), []] {
            let ordered = ManagedObjectContext.inPageOrder(sample.map { Unmanaged.passUnretained($0) })
            #expect(ordered.count == sample.count)
            #expect(Set(ordered.map { $0.toOpaque() }) == Set(sample.map { Unmanaged.passUnretained($0).toOpaque() }))
            let pages = ordered.map { UInt(bitPattern: $0.toOpaque()) >> 12 }
            #expect(pages == pages.sorted())
        }
    }
}
