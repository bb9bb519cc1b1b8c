import Foundation
import Testing
@testable import PersistKit

/// Loads of one object by ID (`existingObject(with:)`, a fault firing): the store's one-row
/// path, the registry probed once per new object, and a context's own calls running inline
/// inside its blocks.
@Suite("Single-object loads", .timeLimit(.minutes(1)))
struct SingleObjectLoadTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// A SQLite coordinator seeded with the brewery data set, and the beers' IDs sorted by name.
    private func seeded() throws -> (PersistentStoreCoordinator, [ManagedObjectID]) {
        let url = try M.temporaryDirectory().appendingPathComponent("single.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        try S.seedBreweries(coordinator)
        let reader = M.context(coordinator)
        let ids = try reader.performAndWait {
            try reader.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")])).map(\.objectID)
        }
        return (coordinator, ids)
    }

    @Test func eachLoadIsOneSelectByPrimaryKeyAndARepeatedIDIsNotReadAgain() throws {
        let (coordinator, ids) = try seeded()
        let store = try #require(S.sqlite(coordinator))
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        let context = M.context(coordinator)
        let statements = try S.statements(coordinator) {
            try context.performAndWait {
                var first: [ManagedObject] = []
                for id in ids { first.append(try context.existingObject(with: id)) }
                // Uniquing: the same instances, already loaded, with no further read.
                for (index, id) in ids.enumerated() {
                    let again = try context.existingObject(with: id)
                    #expect(again === first[index])
                }
                #expect(first.map { $0.string(forKey: "name") ?? "" }
                        == ["Achel Blond", "Mystery", "Orval", "Petite Orval", "Westmalle Dubbel", "Westmalle Tripel"])
                #expect(first.allSatisfy { !$0.isFault })
            }
        }
        #expect(statements == ids.count)
        let sql = seen.withLock { $0 }
        #expect(sql.count == ids.count)
        #expect(sql.allSatisfy { $0.hasPrefix("SELECT") && $0.hasSuffix("WHERE \"t0\".\"Z_PK\" = ?") })
        #expect(Set(sql).count == 1, "one statement text for every load of one entity")
    }

    @Test func aMissingRowThrowsAndRegistersNothing() throws {
        let (coordinator, ids) = try seeded()
        let context = M.context(coordinator)
        let missing = ManagedObjectID(entity: ids[0].entity, storeIdentifier: ids[0].storeIdentifier ?? "", primaryKey: 9_999)
        context.performAndWait {
            #expect(throws: PersistenceError.self) { try context.existingObject(with: missing) }
            #expect(context.registeredObjects.isEmpty)
            // A fault for it fires into an object with no values, as before.
            let fault = context.object(with: missing)
            #expect(fault.isFault)
            #expect(fault.value(forKey: "name") == nil)
            #expect(context.registeredObjects.count == 1)
        }
    }

    @Test func loadsOfSeveralEntitiesKeepTheirOwnStatementsAndRows() throws {
        let (coordinator, ids) = try seeded()
        let context = M.context(coordinator)
        try context.performAndWait {
            let beer = try context.existingObject(with: ids[2]) // Orval
            let breweryID = try #require((beer.value(forKey: "brewery") as? ManagedObject)?.objectID)
            let reader = M.context(coordinator)
            try reader.performAndWait {
                // Alternating entities on one connection: each load reads its own table.
                for _ in 0..<3 {
                    let brewery = try reader.existingObject(with: breweryID)
                    #expect(brewery.string(forKey: "name") == "Orval")
                    reader.reset()
                    let beer = try reader.existingObject(with: ids[2])
                    #expect(beer.string(forKey: "name") == "Orval")
                    reader.reset()
                }
            }
        }
    }

    @Test func aRowOfAnotherEntityOfTheSameTableIsNoAnswer() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("drinks.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let writer = M.context(coordinator)
        let juiceID = try writer.performAndWait {
            let juice = M.insert("Juice", into: writer, ["fruit": "apple", "volume": 33])
            try writer.save()
            return juice.objectID
        }
        let soda = try #require(coordinator.managedObjectModel.entitiesByName["Soda"])
        let asSoda = ManagedObjectID(entity: soda, storeIdentifier: juiceID.storeIdentifier ?? "", primaryKey: juiceID.primaryKey)
        let context = M.context(coordinator)
        try context.performAndWait {
            // The row is a juice's: not an answer for a soda of the same key.
            #expect(throws: PersistenceError.self) { try context.existingObject(with: asSoda) }
            let juice = try context.existingObject(with: juiceID)
            #expect(juice.entity.name == "Juice")
            #expect(juice.string(forKey: "fruit") == "apple")
        }
    }

    @Test func theStoreClosesCleanlyAfterSingleObjectLoads() throws {
        let (coordinator, ids) = try seeded()
        let context = M.context(coordinator)
        try context.performAndWait {
            for id in ids { _ = try context.existingObject(with: id) }
        }
        let store = try #require(coordinator.persistentStores.first)
        try coordinator.remove(store)
        let later = M.context(coordinator)
        later.performAndWait {
            // No store holds the ID any more: the fault fires into an object with no values.
            #expect(later.object(with: ids[0]).value(forKey: "name") == nil)
        }
    }

    @Test func objectWithAFetchAndAFaultShareOneInstancePerID() throws {
        let (coordinator, ids) = try seeded()
        let context = M.context(coordinator)
        try context.performAndWait {
            let fault = context.object(with: ids[3])
            #expect(fault.isFault)
            #expect(context.object(with: ids[3]) === fault)
            let fetched = try context.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
            #expect(fetched[3] === fault)
            #expect(fault.string(forKey: "name") == "Petite Orval")
            #expect(context.registeredObjects.filter { $0.entity.name == "Beer" }.count == ids.count)
            let loaded = try context.existingObject(with: ids[3])
            #expect(loaded === fault)
        }
    }

    @Test func aContextsCallsRunInlineInItsOwnBlocksAndAcrossNestedBlocks() async throws {
        let (coordinator, ids) = try seeded()
        let first = M.context(coordinator)
        let second = M.context(coordinator)
        try first.performAndWait {
            let beer = try first.existingObject(with: ids[0])
            try second.performAndWait {
                // Inside the second context's block, its own calls run inline.
                let other = try second.existingObject(with: ids[0])
                #expect(other !== beer)
                #expect(second.registeredObjects.count == 1)
            }
            // Back in the first context's block, its calls run inline again.
            #expect(first.registeredObjects.count == 1)
            let again = try first.existingObject(with: ids[0])
            #expect(again === beer)
        }
        let name = try await first.perform {
            try first.existingObject(with: ids[1]).string(forKey: "name") ?? ""
        }
        #expect(name == "Mystery")
        // From outside any block, each call hops onto the context's queue.
        #expect(first.registeredObjects.count == 2)
    }

    @Test func aCallFromCodeItsBlockRunsSynchronouslyOnAnotherQueueRunsInline() throws {
        let (coordinator, ids) = try seeded()
        let context = M.context(coordinator)
        let other = DispatchQueue(label: "SingleObjectLoadTests.other")
        try context.performAndWait {
            let beer = try context.existingObject(with: ids[0])
            // The context's queue is held by this block: the call runs here instead of waiting.
            let again = try other.sync { try context.existingObject(with: ids[0]) }
            #expect(again === beer)
        }
    }

    @Test func aChildContextLoadsOneObjectFromItsParentsCurrentValues() throws {
        let (coordinator, ids) = try seeded()
        let parent = M.context(coordinator)
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        try parent.performAndWait {
            try parent.existingObject(with: ids[4]).setValue("Dubbel, renamed", forKey: "name")
        }
        try child.performAndWait {
            let renamed = try child.existingObject(with: ids[4])
            #expect(renamed.string(forKey: "name") == "Dubbel, renamed")
            #expect(child.object(with: ids[5]).string(forKey: "name") == "Westmalle Tripel")
        }
    }
}
