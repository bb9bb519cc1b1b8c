import Foundation
import Testing
@testable import PersistKit

/// Prefetched rows handed over one by one with their source's index
/// (``PersistentStore/prefetchDestinations(of:relationship:expect:each:)``), and rows of every
/// width decoded in slot order.
@Suite("Prefetch row stream")
struct PrefetchRowStreamTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// `breweries` breweries "Brewery 000"…, then their beers round-robin, so the beers of one
    /// brewery are not neighbours in the table: "Brewery 000 #0", "Brewery 001 #0", ….
    private func seedInterleaved(_ coordinator: PersistentStoreCoordinator, breweries: Int, beersEach: Int) throws {
        let context = M.context(coordinator)
        try context.performAndWait {
            let all = (0..<breweries).map { M.insert("Brewery", into: context, ["name": String(format: "Brewery %03d", $0)]) }
            try context.save()
            for round in 0..<beersEach {
                for (index, brewery) in all.enumerated() {
                    _ = M.insert("Beer", into: context, ["name": String(format: "Brewery %03d #%d", index, round), "brewery": brewery])
                }
                try context.save()
            }
        }
    }

    @Test(arguments: S.storeTypes, [80, 5])
    func interleavedMembersGoToTheirOwnSources(_ type: StoreType, fetched: Int) throws {
        let coordinator = try S.coordinator(type)
        try seedInterleaved(coordinator, breweries: 80, beersEach: 3)
        let context = M.context(coordinator)
        try context.performAndWait {
            // All 80 breweries (a scan of the beers), or 5 of them (reads by key list).
            let request = M.request("Brewery", .comparison(.keyPath("name"), .lessThan,
                                                           .constant(.string(String(format: "Brewery %03d", fetched)))),
                                    sort: [FetchSortDescriptor(key: "name")])
            request.relationshipKeyPathsForPrefetching = ["beers"]
            var walked = 0
            let statements = try S.statements(coordinator) {
                let breweries = try context.fetch(request)
                #expect(breweries.count == fetched)
                for brewery in breweries {
                    let name = try #require(brewery.value(forKey: "name") as? String)
                    let beers = M.names(brewery.value(forKey: "beers")).sorted()
                    #expect(beers == (0..<3).map { "\(name) #\($0)" })
                    walked += 1
                }
            }
            #expect(walked == fetched)
            if type == .sqlite { #expect(statements == 2, "the breweries, then all their beers") }
        }
    }

    @Test(arguments: S.storeTypes, [80, 5])
    func theStreamHandsEachRowToItsSourcesIndex(_ type: StoreType, sourceCount: Int) throws {
        let coordinator = try S.coordinator(type)
        try seedInterleaved(coordinator, breweries: 80, beersEach: 3)
        let store = try #require(coordinator.persistentStores.first)
        let (sources, beers) = try S.lastBreweries(sourceCount, of: coordinator)
        let expected = try store.prefetchDestinations(of: sources, relationship: beers)
        var streamed: [Int: [RowSnapshot]] = [:]
        var expectations: [Int] = []
        try store.prefetchDestinations(of: sources, relationship: beers, expect: { count in
            #expect(streamed.isEmpty, "told before any row")
            expectations.append(count)
        }) { index, row in
            streamed[index, default: []].append(row)
        }
        #expect(expectations.count <= 1)
        #expect(streamed.count == sourceCount)
        for (index, source) in sources.enumerated() {
            #expect(streamed[index] == expected[source], "the rows of source \(index), in order")
            #expect(streamed[index]?.count == 3)
        }
        let total = streamed.values.reduce(0) { $0 + $1.count }
        if let told = expectations.first { #expect(told >= total) }
    }

    /// A model with one entity `Wide` of `width` attributes: integers, and a string and a
    /// double among them from width 3 on.
    private func wideModel(_ width: Int) -> ManagedObjectModel {
        let properties: [PropertyDescription] = (0..<width).map { index in
            switch index {
            case 1 where width >= 3: AttributeDescription(name: "a\(index)", type: .string)
            case width - 1 where width >= 3: AttributeDescription(name: "a\(index)", type: .double)
            default: AttributeDescription(name: "a\(index)", type: .integer64)
            }
        }
        return ManagedObjectModel(entities: [EntityDescription(name: "Wide", properties: properties)])
    }

    @Test(arguments: [1, 2, 3, 11, 12, 13, 20])
    func rowsOfEveryWidthDecodeInSlotOrder(_ width: Int) throws {
        let url = try M.temporaryDirectory().appendingPathComponent("wide.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url, model: wideModel(width))
        func value(_ object: Int, _ index: Int) -> Any? {
            if index == 2 && object == 1 { return nil } // one NULL among the values
            if index == 1 && width >= 3 { return "s\(object)-\(index)" }
            if index == width - 1 && width >= 3 { return Double(object) + 0.5 }
            return Int64(object * 100 + index)
        }
        let writer = M.context(coordinator)
        try writer.performAndWait {
            for object in 0..<4 {
                _ = M.insert("Wide", into: writer, Dictionary(uniqueKeysWithValues: (0..<width).map { ("a\($0)", value(object, $0)) }))
            }
            try writer.save()
        }
        let context = M.context(coordinator)
        try context.performAndWait {
            let objects = try context.fetch(M.request("Wide", sort: [FetchSortDescriptor(key: "a0")]))
            #expect(objects.count == 4)
            for (object, fetched) in objects.enumerated() {
                for index in 0..<width {
                    let got = fetched.value(forKey: "a\(index)")
                    switch value(object, index) {
                    case nil: #expect(got == nil, "a\(index) of object \(object)")
                    case let int as Int64: #expect(got as? Int64 == int, "a\(index) of object \(object)")
                    case let string as String: #expect(got as? String == string, "a\(index) of object \(object)")
                    case let double as Double: #expect(got as? Double == double, "a\(index) of object \(object)")
                    default: Issue.record("unexpected value kind")
                    }
                }
            }
        }
    }
}
