import Foundation
import Testing
@testable import PersistKit

@Suite("Fetch relationship prefetching")
struct FetchPrefetchTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// `breweries` breweries named "Brewery 000"…, each with `beersEach` beers "Brewery 000 #0"….
    private func seedMany(_ coordinator: PersistentStoreCoordinator, breweries: Int, beersEach: Int) throws {
        let context = M.context(coordinator)
        try context.performAndWait {
            for b in 0..<breweries {
                let brewery = M.insert("Brewery", into: context, ["name": String(format: "Brewery %03d", b)])
                for i in 0..<beersEach {
                    _ = M.insert("Beer", into: context, ["name": String(format: "Brewery %03d #%d", b, i), "abv": Double(i), "brewery": brewery])
                }
            }
            try context.save()
        }
    }

    @Test(arguments: S.storeTypes)
    func toManyPrefetchRunsOneQueryNotOnePerParent(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seedMany(coordinator, breweries: 100, beersEach: 3)
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = M.request("Brewery", sort: [FetchSortDescriptor(key: "name")])
            request.relationshipKeyPathsForPrefetching = ["beers"]
            var total = 0.0
            var names: [String] = []
            let statements = try S.statements(coordinator) {
                let breweries = try context.fetch(request)
                #expect(breweries.count == 100)
                for brewery in breweries {
                    let beers = (brewery.value(forKey: "beers") as? Set<ManagedObject>) ?? []
                    for beer in beers { total += beer.value(forKey: "abv") as? Double ?? 0 }
                    names += M.names(beers as Any?)
                }
            }
            #expect(total == 300)
            #expect(names.count == 300)
            #expect(names.first == "Brewery 000 #0")
            #expect(names.last == "Brewery 099 #2")
            if type == .sqlite { #expect(statements == 2, "the breweries, then all their beers") }
        }
    }

    @Test func withoutPrefetchTheSameWalkRunsOneQueryPerParent() throws {
        let coordinator = try S.coordinator(.sqlite)
        try seedMany(coordinator, breweries: 20, beersEach: 2)
        let context = M.context(coordinator)
        try context.performAndWait {
            let statements = try S.statements(coordinator) {
                for brewery in try context.fetch(M.request("Brewery")) {
                    for beer in (brewery.value(forKey: "beers") as? Set<ManagedObject>) ?? [] { _ = beer.value(forKey: "abv") }
                }
            }
            #expect(statements == 1 + 20 + 40, "one fetch, one membership query per brewery, one row query per beer")
        }
    }

    @Test(arguments: S.storeTypes)
    func toOneAndNestedPrefetch(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try S.seedBreweries(coordinator)
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = M.request("Beer", sort: [FetchSortDescriptor(key: "name")])
            request.relationshipKeyPathsForPrefetching = ["brewery", "brewery.beers"]
            var seen: [String] = []
            let statements = try S.statements(coordinator) {
                for beer in try context.fetch(request) {
                    let brewery = beer.value(forKey: "brewery") as? ManagedObject
                    let siblings = M.names(brewery?.value(forKey: "beers"))
                    seen.append("\(M.names([beer])[0]) @ \(brewery?.value(forKey: "name") as? String ?? "-"): \(siblings.joined(separator: ", "))")
                }
            }
            #expect(seen == [
                "Achel Blond @ Achel: Achel Blond",
                "Mystery @ -: ",
                "Orval @ Orval: Orval, Petite Orval",
                "Petite Orval @ Orval: Orval, Petite Orval",
                "Westmalle Dubbel @ Westmalle: Westmalle Dubbel, Westmalle Tripel",
                "Westmalle Tripel @ Westmalle: Westmalle Dubbel, Westmalle Tripel",
            ])
            if type == .sqlite { #expect(statements == 3, "beers, their breweries, the breweries' beers") }
        }
    }

    @Test(arguments: S.storeTypes)
    func manyToManyPrefetchLoadsMembershipsAndRows(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try S.seedBreweries(coordinator)
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = M.request("Beer", sort: [FetchSortDescriptor(key: "name")])
            request.relationshipKeyPathsForPrefetching = ["tags"]
            let beers = try context.fetch(request)
            let tagsState = beers.map { $0.toMany["tags"]?.committed?.count }
            #expect(tagsState == [2, 0, 1, 1, 1, 2], "memberships are loaded, empty ones too")
            let statements = S.statements(coordinator) {
                #expect(beers.map { M.names($0.value(forKey: "tags")).joined(separator: "+") }
                        == ["strong+trappist", "", "trappist", "trappist", "trappist", "strong+trappist"])
            }
            if type == .sqlite { #expect(statements == 0) }
        }
    }

    @Test(arguments: S.storeTypes)
    func prefetchingAnUnknownKeyPathThrows(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try S.seedBreweries(coordinator)
        let context = M.context(coordinator)
        let request = M.request("Beer")
        request.relationshipKeyPathsForPrefetching = ["brewery.nothing"]
        #expect(throws: PersistenceError.self) { try context.fetch(request) }
    }
}
