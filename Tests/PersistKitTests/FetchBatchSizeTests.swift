import Foundation
import Testing
@testable import PersistKit

@Suite("Fetch batch size and faulting")
struct FetchBatchSizeTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    private func seedNumbered(_ coordinator: PersistentStoreCoordinator, count: Int) throws {
        let context = M.context(coordinator)
        try context.performAndWait {
            for index in 0..<count {
                _ = M.insert("Beer", into: context, ["name": String(format: "Beer %02d", index), "abv": Double(index)])
            }
            try context.save()
        }
    }

    @Test(arguments: S.storeTypes)
    func onlyTheFirstBatchHasItsData(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seedNumbered(coordinator, count: 25)
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Beer", predicate: nil,
                                                      sortDescriptors: [FetchSortDescriptor(key: "name")])
            request.fetchBatchSize = 10
            var beers: [ManagedObject] = []
            let fetchStatements = try S.statements(coordinator) { beers = try context.fetch(request) }
            #expect(beers.count == 25)
            #expect(beers.allSatisfy { $0.isFault })
            #expect(beers[0..<10].allSatisfy { $0.pendingRow != nil })
            #expect(beers[10...].allSatisfy { $0.pendingRow == nil && $0.faultingBatch != nil })
            if type == .sqlite { #expect(fetchStatements == 2, "the IDs, then the first batch's rows") }

            let firstBatch = S.statements(coordinator) {
                #expect(M.names(Array(beers[0..<10])) == (0..<10).map { String(format: "Beer %02d", $0) })
            }
            let secondBatch = S.statements(coordinator) {
                #expect(beers[10].value(forKey: "abv") as? Double == 10)
                #expect(beers[11..<20].allSatisfy { !$0.isFault || $0.pendingRow != nil }, "the batch was loaded together")
                #expect(M.names(Array(beers[10..<20])) == (10..<20).map { String(format: "Beer %02d", $0) })
            }
            let lastBatch = S.statements(coordinator) {
                #expect(M.names(Array(beers[20...])).reversed() == (20..<25).map { String(format: "Beer %02d", $0) }.reversed())
            }
            if type == .sqlite {
                #expect(firstBatch == 0)
                #expect(secondBatch == 1)
                #expect(lastBatch == 1)
            }
        }
    }

    @Test(arguments: S.storeTypes)
    func batchedFetchHonoursPredicateLimitAndOffset(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seedNumbered(coordinator, count: 30)
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Beer",
                                                      predicate: .comparison(.keyPath("abv"), .greaterThanOrEqualTo, .constant(.double(5))),
                                                      sortDescriptors: [FetchSortDescriptor(key: "abv", ascending: false)])
            request.fetchBatchSize = 4
            request.fetchOffset = 2
            request.fetchLimit = 9
            let beers = try context.fetch(request)
            #expect(beers.map { $0.value(forKey: "abv") as? Double } == (19...27).reversed().map(Double.init))
        }
    }

    @Test(arguments: S.storeTypes)
    func batchedFetchWithPendingChangesLoadsEverything(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seedNumbered(coordinator, count: 5)
        let context = M.context(coordinator)
        try context.performAndWait {
            _ = M.insert("Beer", into: context, ["name": "Beer 99", "abv": 1.0])
            let request = FetchRequest<ManagedObject>(entityName: "Beer", predicate: nil, sortDescriptors: [FetchSortDescriptor(key: "name")])
            request.fetchBatchSize = 2
            let beers = try context.fetch(request)
            #expect(M.names(beers) == ["Beer 00", "Beer 01", "Beer 02", "Beer 03", "Beer 04", "Beer 99"])
        }
    }

    @Test(arguments: S.storeTypes)
    func returnsObjectsAsFaultsFalseRealizesObjects(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seedNumbered(coordinator, count: 3)
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = M.request("Beer")
            request.returnsObjectsAsFaults = false
            let beers = try context.fetch(request)
            #expect(beers.count == 3)
            #expect(beers.allSatisfy { !$0.isFault })
            let statements = S.statements(coordinator) { _ = M.names(beers) }
            if type == .sqlite { #expect(statements == 0) }
        }
    }

    @Test(arguments: S.storeTypes)
    func includesSubentitiesAndPendingChanges(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        let context = M.context(coordinator)
        try context.performAndWait {
            _ = M.insert("Juice", into: context, ["fruit": "apple", "volume": Int32(2)])
            _ = M.insert("Soda", into: context, ["sugar": 1.5, "volume": Int32(3)])
            try context.save()
            _ = M.insert("Juice", into: context, ["fruit": "pear", "volume": Int32(1)])
            let drinks = M.request("Drink", sort: [FetchSortDescriptor(key: "volume")])
            #expect(try context.fetch(drinks).map { $0.value(forKey: "volume") as? Int32 } == [1, 2, 3])
            drinks.includesPendingChanges = false
            #expect(try context.fetch(drinks).map { $0.value(forKey: "volume") as? Int32 } == [2, 3])
            drinks.includesSubentities = false
            #expect(try context.fetch(drinks).isEmpty, "Drink is abstract: all its objects are of sub-entities")
        }
    }
}
