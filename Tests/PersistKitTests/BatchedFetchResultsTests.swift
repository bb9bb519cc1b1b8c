import Foundation
import Testing
@testable import PersistKit

/// `fetchBatched(_:)`: results created one batch at a time, and released by the context when
/// nothing else holds them.
@Suite("Batched fetch results", .timeLimit(.minutes(1)))
struct BatchedFetchResultsTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    private func seed(_ coordinator: PersistentStoreCoordinator, count: Int) throws {
        let context = M.context(coordinator)
        try context.performAndWait {
            for index in 0..<count {
                _ = M.insert("Beer", into: context, ["name": String(format: "Beer %03d", index), "abv": Double(index % 50)])
            }
            try context.save()
        }
    }

    private func request(batchSize: Int) -> FetchRequest<ManagedObject> {
        let request = FetchRequest<ManagedObject>(entityName: "Beer", predicate: nil, sortDescriptors: [FetchSortDescriptor(key: "name")])
        request.fetchBatchSize = batchSize
        return request
    }

    @Test(arguments: S.storeTypes)
    func readsEveryObjectInOrderOneStoreCallPerBatch(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seed(coordinator, count: 95)
        let context = M.context(coordinator)
        try context.performAndWait {
            var results: BatchedFetchResults<ManagedObject>?
            let fetchStatements = try S.statements(coordinator) { results = try context.fetchBatched(request(batchSize: 10)) }
            let beers = try #require(results)
            #expect(beers.count == 95)
            if type == .sqlite { #expect(fetchStatements == 1, "only the IDs") }
            #expect(context.registeredObjects.isEmpty, "no object exists before it is read")
            var names: [String] = []
            let readStatements = S.statements(coordinator) {
                for beer in beers { names.append(beer.value(forKey: "name") as? String ?? "?") }
            }
            #expect(names == (0..<95).map { String(format: "Beer %03d", $0) })
            if type == .sqlite { #expect(readStatements == 10, "one statement per batch") }
        }
    }

    @Test(arguments: S.storeTypes)
    func objectsNobodyHoldsAreReleasedAfterTheLoop(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seed(coordinator, count: 100)
        let context = M.context(coordinator)
        try context.performAndWait {
            let beers = try context.fetchBatched(request(batchSize: 10))
            var kept: ManagedObject?
            var total = 0.0
            for (index, beer) in beers.enumerated() {
                total += beer.value(forKey: "abv") as? Double ?? 0
                if index == 15 { kept = beer }
                if index == 42 { beer.setValue(69.0, forKey: "abv") }
            }
            #expect(total == Double((0..<100).map { $0 % 50 }.reduce(0, +)))
            // The last batch (10), the object kept by the caller, the changed object: no more.
            let registered = context.registeredObjects
            #expect(registered.count <= 12)
            let keptObject = try #require(kept)
            #expect(registered.contains(keptObject))
            #expect(context.updatedObjects.count == 1)
            #expect(context.updatedObjects.first?.value(forKey: "abv") as? Double == 69)
            // The kept object is still the context's object for its ID.
            #expect(context.object(with: keptObject.objectID) === keptObject)
            #expect(beers[15] === keptObject)
            // A released object is read again, as a new instance with the same data.
            #expect(beers[3].value(forKey: "name") as? String == "Beer 003")
            try context.save()
        }
        let check = M.context(coordinator)
        let changed = try check.fetch(M.request("Beer", .equal("abv", .double(69))))
        #expect(M.names(changed) == ["Beer 042"])
    }

    @Test func unsavedChangesAreIncluded() throws {
        let coordinator = try S.coordinator(.sqlite)
        try seed(coordinator, count: 20)
        let context = M.context(coordinator)
        try context.performAndWait {
            _ = M.insert("Beer", into: context, ["name": "Beer 999", "abv": 1.0])
            let beers = try context.fetchBatched(request(batchSize: 5))
            #expect(beers.count == 21)
            #expect(beers.last?.value(forKey: "name") as? String == "Beer 999")
        }
    }
}
