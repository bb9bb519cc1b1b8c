import Foundation
import Testing
@testable import PersistKit

@Suite("SQLitePredicateCompiler")
struct SQLitePredicateCompilerTests {
    typealias S = SQLiteTestSupport

    /// A store with breweries and beers to query.
    func makeStore() throws -> (SQLiteStore, ManagedObjectModel) {
        let model = try S.makeModel()
        let store = try SQLiteStore(model: model, configurationName: nil, url: try S.temporaryDirectory().appendingPathComponent("p.sqlite"), options: StoreOptions())
        let (brewery, beer) = (model.entitiesByName["Brewery"]!, model.entitiesByName["Beer"]!)
        var request = StoreSaveRequest()
        request.inserted = [
            S.row(store, brewery, 1, ["name": .string("Westmalle"), "city": .string("Malle")]),
            S.row(store, brewery, 2, ["name": .string("Rochefort")]),
            S.row(store, beer, 1, ["name": .string("Dubbel"), "abv": .double(7), "brewery": .object(S.id(store, brewery, 1))]),
            S.row(store, beer, 2, ["name": .string("Tripel"), "abv": .double(9.5), "brewery": .object(S.id(store, brewery, 1))]),
            S.row(store, beer, 3, ["name": .string("10"), "abv": .double(11.3), "brewery": .object(S.id(store, brewery, 2))]),
            S.row(store, beer, 4, ["name": .string("100%_pure*"), "abv": .double(0)]),
            S.row(store, beer, 5, ["name": .string("dubbel light")]),
        ]
        try store.save(request)
        return (store, model)
    }

    func names(_ store: SQLiteStore, _ model: ManagedObjectModel, _ predicate: FetchPredicate?, sort: [FetchSortDescriptor] = [FetchSortDescriptor(key: "name")]) throws -> [String] {
        try store.fetch(StoreFetchRequest(entity: model.entitiesByName["Beer"]!, predicate: predicate, sortDescriptors: sort)).map {
            if case .string(let name) = S.value($0, "name") { return name }
            return "?"
        }
    }

    @Test func comparisonsAndCompounds() throws {
        let (store, model) = try makeStore()
        defer { try? store.close() }
        let abv = FetchExpression.keyPath("abv")
        #expect(try names(store, model, .comparison(abv, .greaterThan, .constant(.double(8)))) == ["10", "Tripel"])
        #expect(try names(store, model, .comparison(.constant(.double(8)), .lessThan, abv)) == ["10", "Tripel"])
        #expect(try names(store, model, .comparison(abv, .between, .constant(.array([.double(7), .double(9.5)])))) == ["Dubbel", "Tripel"])
        #expect(try names(store, model, .comparison(abv, .in, .constant(.array([.double(7), .null])))) == ["Dubbel", "dubbel light"])
        #expect(try names(store, model, .equal("abv", .null)) == ["dubbel light"])
        #expect(try names(store, model, .comparison(abv, .notEqualTo, .constant(.double(7)))) == ["10", "100%_pure*", "Tripel", "dubbel light"])
        #expect(try names(store, model, .comparison(abv, .lessThan, .constant(.double(8))) && !.equal("name", .string("Dubbel"))) == ["100%_pure*"])
        #expect(try names(store, model, .equal("name", .string("Dubbel")) || .alwaysFalse) == ["Dubbel"])
        #expect(try names(store, model, .alwaysTrue).count == 5)
        #expect(try names(store, model, .equal("name", .string("DUBBEL")), sort: []) == [])
        #expect(try names(store, model, .comparison(.keyPath("name"), .equalTo, .constant(.string("DUBBEL")), options: .caseInsensitive)) == ["Dubbel"])
    }

    @Test func stringOperatorsEscapeWildcardsAndAreCaseSensitive() throws {
        let (store, model) = try makeStore()
        defer { try? store.close() }
        let name = FetchExpression.keyPath("name")
        #expect(try names(store, model, .comparison(name, .beginsWith, .constant(.string("Dub")))) == ["Dubbel"])
        #expect(try names(store, model, .comparison(name, .beginsWith, .constant(.string("dub")), options: .caseInsensitive)) == ["Dubbel", "dubbel light"])
        #expect(try names(store, model, .comparison(name, .contains, .constant(.string("%_")))) == ["100%_pure*"])
        #expect(try names(store, model, .comparison(name, .contains, .constant(.string("%_")), options: .caseInsensitive)) == ["100%_pure*"])
        #expect(try names(store, model, .comparison(name, .endsWith, .constant(.string("*")))) == ["100%_pure*"])
        #expect(try names(store, model, .comparison(name, .contains, .constant(.string("0")))) == ["10", "100%_pure*"])
        #expect(try names(store, model, .comparison(name, .like, .constant(.string("?ubbel*")))) == ["Dubbel", "dubbel light"])
        #expect(try names(store, model, .comparison(name, .like, .constant(.string("*\\*")))) == ["100%_pure*"])
    }

    @Test func toOneKeyPathsObjectsAndSorting() throws {
        let (store, model) = try makeStore()
        defer { try? store.close() }
        let brewery = model.entitiesByName["Brewery"]!
        let westmalle = S.id(store, brewery, 1)
        #expect(try names(store, model, .equal("brewery", .object(westmalle))) == ["Dubbel", "Tripel"])
        #expect(try names(store, model, .equal("brewery", .null)) == ["100%_pure*", "dubbel light"])
        #expect(try names(store, model, .comparison(.keyPath("brewery"), .notEqualTo, .constant(.object(westmalle)))) == ["10", "100%_pure*", "dubbel light"])
        #expect(try names(store, model, .equal("brewery.name", .string("Rochefort"))) == ["10"])
        #expect(try names(store, model, .equal("brewery.city", .null)) == ["10", "100%_pure*", "dubbel light"])
        let sorted = try names(store, model, .comparison(.keyPath("brewery"), .notEqualTo, .constant(.null)),
                               sort: [FetchSortDescriptor(key: "brewery.name"), FetchSortDescriptor(key: "abv", ascending: false)])
        #expect(sorted == ["10", "Tripel", "Dubbel"])
        #expect(try names(store, model, nil, sort: [FetchSortDescriptor(key: "name", comparison: .caseInsensitiveCompare)])
                == ["10", "100%_pure*", "Dubbel", "dubbel light", "Tripel"])
        let page = try store.fetch(StoreFetchRequest(entity: model.entitiesByName["Beer"]!, sortDescriptors: [FetchSortDescriptor(key: "name")], fetchLimit: 2, fetchOffset: 1))
        #expect(page.map { S.value($0, "name") } == [.string("100%_pure*"), .string("Dubbel")])
        #expect(try store.count(StoreFetchRequest(entity: model.entitiesByName["Beer"]!, fetchOffset: 3)) == 2)
    }

    @Test func generatesBoundParametersAndJoins() throws {
        let (store, model) = try makeStore()
        defer { try? store.close() }
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        _ = try store.fetch(StoreFetchRequest(entity: model.entitiesByName["Beer"]!,
                                              predicate: .equal("brewery.name", .string("x'; DROP TABLE ZBEER; --")),
                                              sortDescriptors: [FetchSortDescriptor(key: "abv", ascending: false)]))
        let sql = try #require(seen.withLock { $0.last })
        #expect(sql.hasSuffix(#"FROM "ZBEER" AS "t0" LEFT JOIN "ZBREWERY" AS "t1" ON "t1"."Z_PK" = "t0"."ZBREWERY" WHERE "t1"."ZNAME" = ? ORDER BY "t0"."ZABV" DESC, "t0"."Z_PK""#))
        #expect(!sql.contains("DROP"))
    }

    @Test func unsupportedConstructsThrowClearErrors() throws {
        let (store, model) = try makeStore()
        defer { try? store.close() }
        let cases: [(FetchPredicate, String)] = [
            (.comparison(.keyPath("tags"), .equalTo, .constant(.array([]))), "collection"),
            (.comparison(.function("modulus:by:", [.keyPath("ibu"), .constant(.integer(2))]), .equalTo, .constant(.integer(0))), "modulus:by:"),
            (.comparison(.variable("x"), .equalTo, .constant(.integer(0))), "$x"),
            (.comparison(.keyPath("brewery"), .contains, .constant(.integer(0))), "IN and CONTAINS"),
            (.comparison(.keyPath("name.@sum"), .equalTo, .constant(.integer(0))), "@sum"),
        ]
        for (predicate, construct) in cases {
            #expect { _ = try names(store, model, predicate) } throws: {
                guard let error = $0 as? PersistenceError else { return false }
                return error.message.contains(construct) && error.message.contains("not support")
            }
        }
    }
}
