import Foundation
import Testing
@testable import PersistKit

/// A SQLite store's write plans: one per entity for the store's life, the one found last
/// answered without the lock, whichever entities alternate.
@Suite("Write plans by entity")
struct WritePlanCacheTests {
    typealias M = ContextTestModel

    @Test func eachEntityHasOnePlanWhateverTheOrderOfLookups() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("plans.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let model = coordinator.managedObjectModel
        let brewery = try #require(model.entitiesByName["Brewery"]), beer = try #require(model.entitiesByName["Beer"])
        let breweryPlan = try store.writePlan(for: brewery)
        #expect(breweryPlan.entity === brewery)
        #expect(try store.writePlan(for: brewery) === breweryPlan)
        let beerPlan = try store.writePlan(for: beer)
        #expect(beerPlan.entity === beer && beerPlan !== breweryPlan)
        #expect(try store.writePlan(for: brewery) === breweryPlan)
        #expect(try store.writePlan(for: beer) === beerPlan)
        #expect(breweryPlan.columns.insertSQL.contains("\"ZBREWERY\""))
        #expect(beerPlan.columns.insertSQL.contains("\"ZBEER\""))
        // An entity the store does not hold: an error, and the last plan stays.
        let stranger = EntityDescription(name: "Stranger", properties: [AttributeDescription(name: "name", type: .string)])
        _ = ManagedObjectModel(entities: [stranger])
        #expect(throws: PersistenceError.self) { try store.writePlan(for: stranger) }
        #expect(try store.writePlan(for: beer) === beerPlan)
    }
}
