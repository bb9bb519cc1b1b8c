import Foundation
import Testing
@testable import PersistKit

@Suite("Fetch dictionary results, grouping and aggregates")
struct FetchDictionaryTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    private func request(_ properties: [Any], sort: [String] = [], groupBy: [Any]? = nil) -> FetchRequest<[String: Any]> {
        let request = FetchRequest<[String: Any]>(entityName: "Beer")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = properties
        request.propertiesToGroupBy = groupBy
        request.sortDescriptors = sort.map { FetchSortDescriptor(key: $0) }
        return request
    }

    private func context(_ type: StoreType) throws -> ManagedObjectContext {
        let coordinator = try S.coordinator(type)
        try S.seedBreweries(coordinator)
        return M.context(coordinator)
    }

    @Test(arguments: S.storeTypes)
    func attributesAndToOneKeyPaths(_ type: StoreType) throws {
        let context = try context(type)
        let rows = try context.fetch(request(["name", "ibu", "brewery.name"], sort: ["name"]))
        #expect(S.text(rows) == [
            ["name": "Achel Blond", "ibu": "30", "brewery.name": "Achel"],
            ["name": "Mystery"],
            ["name": "Orval", "ibu": "32", "brewery.name": "Orval"],
            ["name": "Petite Orval", "brewery.name": "Orval"],
            ["name": "Westmalle Dubbel", "ibu": "24", "brewery.name": "Westmalle"],
            ["name": "Westmalle Tripel", "ibu": "39", "brewery.name": "Westmalle"],
        ])
        #expect(rows[0]["ibu"] is Int16, "attribute values have the attribute's Swift type")
        let withRelationship = try context.fetch(request(["brewery"], sort: ["name"]))
        #expect(withRelationship[0]["brewery"] is ManagedObjectID, "a to-one relationship gives the destination's ID")
        #expect(withRelationship[1]["brewery"] == nil)
    }

    @Test(arguments: S.storeTypes)
    func groupedAggregates(_ type: StoreType) throws {
        let context = try context(type)
        let count = ExpressionDescription(name: "n", expression: .function("count:", [.keyPath("abv")]), resultType: .integer64)
        let total = ExpressionDescription(name: "totalIBU", expression: .function("sum:", [.keyPath("ibu")]), resultType: .integer64)
        let average = ExpressionDescription(name: "avgABV", expression: .function("average:", [.keyPath("abv")]), resultType: .double)
        let strongest = ExpressionDescription(name: "maxABV", expression: .function("max:", [.keyPath("abv")]), resultType: .double)
        let weakest = ExpressionDescription(name: "minABV", expression: .function("min:", [.keyPath("abv")]), resultType: .double)
        let grouped = request(["brewery.name", count, total, average, strongest, weakest], sort: ["brewery.name"], groupBy: ["brewery.name"])
        let rows = try context.fetch(grouped)
        #expect(S.text(rows) == [
            ["n": "1", "avgABV": "5.0", "maxABV": "5.0", "minABV": "5.0"],
            ["brewery.name": "Achel", "n": "1", "totalIBU": "30", "avgABV": "8.0", "maxABV": "8.0", "minABV": "8.0"],
            ["brewery.name": "Orval", "n": "2", "totalIBU": "32", "avgABV": "\((6.2 + 4.5) / 2)", "maxABV": "6.2", "minABV": "4.5"],
            ["brewery.name": "Westmalle", "n": "2", "totalIBU": "63", "avgABV": "8.25", "maxABV": "9.5", "minABV": "7.0"],
        ])
        #expect(rows[1]["n"] is Int64)
        #expect(rows[1]["avgABV"] is Double)

        grouped.havingPredicate = .comparison(.keyPath("n"), .greaterThan, .constant(.integer(1)))
        #expect(try context.fetch(grouped).map { $0["brewery.name"] as? String } == ["Orval", "Westmalle"])
        grouped.havingPredicate = .comparison(.keyPath("brewery.name"), .beginsWith, .constant(.string("W")))
        if type == .sqlite {
            #expect(throws: PersistenceError.self, "HAVING supports comparisons, IN and BETWEEN") { try context.fetch(grouped) }
        }
        grouped.havingPredicate = .comparison(.keyPath("avgABV"), .between, .constant(.array([.double(6), .double(9)])))
            && .comparison(.keyPath("brewery.name"), .notEqualTo, .constant(.string("Achel")))
        #expect(try context.fetch(grouped).map { $0["brewery.name"] as? String } == ["Westmalle"])
    }

    @Test(arguments: S.storeTypes)
    func groupsOrderedByAggregateWithLimit(_ type: StoreType) throws {
        let context = try context(type)
        let count = ExpressionDescription(name: "n", expression: .function("count:", [.evaluatedObject]), resultType: .integer32)
        let grouped = request(["brewery.name", count], groupBy: ["brewery.name"])
        grouped.sortDescriptors = [FetchSortDescriptor(key: "n", ascending: false), FetchSortDescriptor(key: "brewery.name", ascending: true)]
        grouped.fetchLimit = 2
        #expect(S.text(try context.fetch(grouped)) == [["brewery.name": "Orval", "n": "2"], ["brewery.name": "Westmalle", "n": "2"]])
        grouped.fetchLimit = 0
        grouped.sortDescriptors = nil
        #expect(try context.fetch(grouped).map { $0["brewery.name"] as? String } == [nil, "Achel", "Orval", "Westmalle"],
                "without sort descriptors, groups come in the order of their grouped values")
    }

    @Test(arguments: S.storeTypes)
    func aggregatesWithoutGroupingGiveOneDictionary(_ type: StoreType) throws {
        let context = try context(type)
        let count = ExpressionDescription(name: "n", expression: .function("count:", [.keyPath("name")]), resultType: .integer64)
        let total = ExpressionDescription(name: "total", expression: .function("sum:", [.keyPath("abv")]), resultType: .double)
        let all = request([count, total])
        let sum: Double = [7.0, 9.5, 6.2, 4.5, 8.0, 5.0].reduce(0, +)
        #expect(S.text(try context.fetch(all)) == [["n": "6", "total": "\(sum)"]])
        all.predicate = .comparison(.keyPath("abv"), .greaterThan, .constant(.double(100)))
        #expect(S.text(try context.fetch(all)) == [["n": "0"]], "no rows: a count of 0 and no sum, as SQL answers")
        all.predicate = .comparison(.keyPath("brewery.city"), .equalTo, .constant(.string("Malle")))
        #expect(S.text(try context.fetch(all)) == [["n": "2", "total": "16.5"]])
    }

    @Test(arguments: S.storeTypes)
    func distinctResults(_ type: StoreType) throws {
        let context = try context(type)
        let cities = request(["brewery.city"], sort: ["brewery.city"])
        #expect(try context.fetch(cities).count == 6)
        cities.returnsDistinctResults = true
        #expect(S.text(try context.fetch(cities)) == [[:], ["brewery.city": "Malle"], ["brewery.city": "Villers"]])
        cities.fetchOffset = 1
        #expect(S.text(try context.fetch(cities)) == [["brewery.city": "Malle"], ["brewery.city": "Villers"]],
                "offset and limit apply after duplicates are removed")
    }

    @Test(arguments: S.storeTypes)
    func arithmeticExpressionsPerRow(_ type: StoreType) throws {
        let context = try context(type)
        let double = ExpressionDescription(name: "twice", expression: .function("multiply:by:", [.keyPath("abv"), .constant(.integer(2))]),
                                           resultType: .double)
        let half = ExpressionDescription(name: "half", expression: .function("divide:by:", [.keyPath("ibu"), .constant(.integer(4))]),
                                         resultType: .double)
        let rows = try context.fetch(request(["name", double, half], sort: ["name"]))
        #expect(S.text(rows).prefix(2) == [["name": "Achel Blond", "twice": "16.0", "half": "7.5"], ["name": "Mystery", "twice": "10.0"]])
    }

    @Test(arguments: S.storeTypes)
    func dictionariesReflectTheStoreNotPendingChanges(_ type: StoreType) throws {
        let context = try context(type)
        try context.performAndWait {
            _ = M.insert("Beer", into: context, ["name": "Unsaved"])
            let count = ExpressionDescription(name: "n", expression: .function("count:", [.evaluatedObject]), resultType: .integer64)
            let rows = try context.fetch(request([count]))
            #expect(S.text(rows) == [["n": "6"]])
        }
    }

    @Test(arguments: S.storeTypes)
    func invalidDictionaryRequestsThrow(_ type: StoreType) throws {
        let context = try context(type)
        let count = ExpressionDescription(name: "n", expression: .function("count:", [.evaluatedObject]), resultType: .integer64)
        #expect(throws: PersistenceError.self, "a plain property with an aggregate must be grouped") {
            try context.fetch(request(["name", count]))
        }
        #expect(throws: PersistenceError.self) { try context.fetch(request(["nope"])) }
        #expect(throws: PersistenceError.self, "to-many key paths are not fetched as dictionary values") {
            try context.fetch(request(["tags"]))
        }
        #expect(throws: PersistenceError.self) { try context.fetch(request([42])) }
    }
}
