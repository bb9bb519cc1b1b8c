import Foundation
import Testing
@testable import PersistKit

/// A resolver over a dictionary of objects, for evaluator tests.
struct DictionaryResolver: PredicateObjectResolver {
    var objects: [ManagedObjectID: [String: EvaluatedValue]] = [:]
    func value(forKey key: String, of object: ManagedObjectID) throws -> EvaluatedValue {
        guard let value = objects[object]?[key] else { throw PersistenceError.predicate("no key \(key)", key: key) }
        return value
    }
}

@Suite("PredicateEvaluator")
struct PredicateEvaluatorTests {
    let fixture: BrewingModel
    let duvel: ManagedObjectID
    let orval: ManagedObjectID
    let moortgat: ManagedObjectID
    let empty: ManagedObjectID
    let trappist: ManagedObjectID
    let strong: ManagedObjectID
    let evaluator: PredicateEvaluator<DictionaryResolver>
    static let date = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    init() throws {
        fixture = try BrewingModel()
        duvel = ManagedObjectID(entity: fixture.beer, storeIdentifier: "S", primaryKey: 1)
        orval = ManagedObjectID(entity: fixture.beer, storeIdentifier: "S", primaryKey: 2)
        moortgat = ManagedObjectID(entity: fixture.brewery, storeIdentifier: "S", primaryKey: 1)
        empty = ManagedObjectID(entity: fixture.brewery, storeIdentifier: "S", primaryKey: 2)
        trappist = ManagedObjectID(entity: fixture.tag, storeIdentifier: "S", primaryKey: 1)
        strong = ManagedObjectID(entity: fixture.tag, storeIdentifier: "S", primaryKey: 2)
        var resolver = DictionaryResolver()
        resolver.objects[duvel] = [
            "name": .value(.string("Duvel")), "abv": .value(.double(8.5)), "ibu": .value(.integer(32)),
            "brewedOn": .value(.date(Self.date)), "price": .value(.decimal(Decimal(string: "3.20")!)),
            "code": .value(.uuid(Self.uuid)), "label": .value(.data(Data([1, 2, 3]))),
            "isSour": .value(.bool(false)), "brewery": .value(.object(moortgat)), "tags": .objects([strong]),
        ]
        resolver.objects[orval] = [
            "name": .value(.string("Orval Crème Brûlée")), "abv": .value(.double(6.2)), "ibu": .value(.null),
            "brewedOn": .value(.null), "price": .value(.null), "code": .value(.null), "label": .value(.null),
            "isSour": .value(.bool(true)), "brewery": .value(.null), "tags": .objects([trappist, strong]),
        ]
        resolver.objects[moortgat] = ["name": .value(.string("Moortgat")), "beers": .objects([duvel, orval])]
        resolver.objects[empty] = ["name": .value(.null), "beers": .objects([])]
        resolver.objects[trappist] = ["name": .value(.string("trappist")), "beers": .objects([orval])]
        resolver.objects[strong] = ["name": .value(.string("strong")), "beers": .objects([duvel, orval])]
        evaluator = PredicateEvaluator(resolver: resolver, now: Date(timeIntervalSinceReferenceDate: 800_000_000))
    }

    func check(_ predicate: FetchPredicate, _ object: ManagedObjectID) throws -> Bool {
        try evaluator.evaluate(predicate, on: object)
    }

    func cmp(_ key: String, _ op: ComparisonPredicate.Operator, _ value: StoreValue,
             modifier: ComparisonPredicate.Modifier = .direct, options: ComparisonPredicate.Options = []) -> FetchPredicate {
        .comparison(.keyPath(key), op, .constant(value), modifier: modifier, options: options)
    }

    @Test func numbersCompareAcrossTypes() throws {
        #expect(try check(cmp("abv", .greaterThan, .integer(8)), duvel))
        #expect(try check(cmp("abv", .equalTo, .decimal(Decimal(string: "8.5")!)), duvel))
        #expect(try check(cmp("ibu", .equalTo, .double(32.0)), duvel))
        #expect(try !check(cmp("ibu", .equalTo, .double(32.5)), duvel))
        #expect(try check(cmp("ibu", .lessThan, .double(32.5)), duvel))
        #expect(try check(cmp("ibu", .lessThanOrEqualTo, .integer(32)), duvel))
        #expect(try check(cmp("ibu", .greaterThanOrEqualTo, .decimal(32)), duvel))
        #expect(try check(cmp("price", .lessThan, .double(3.21)), duvel))
        #expect(try check(cmp("isSour", .equalTo, .integer(1)), orval))
        #expect(try check(cmp("isSour", .equalTo, .bool(false)), duvel))
        #expect(try check(cmp("abv", .notEqualTo, .integer(8)), duvel))
        #expect(try check(cmp("abv", .between, .array([.integer(8), .double(8.5)])), duvel))
        #expect(try !check(cmp("abv", .between, .array([.integer(9), .integer(10)])), duvel))
        #expect(try check(cmp("ibu", .in, .array([.integer(1), .double(32)])), duvel))
        #expect(try !check(cmp("ibu", .in, .array([])), duvel))
    }

    @Test func exactIntegerDoubleComparison() {
        #expect(StoreValueComparison.compareNumbers(.integer(Int64.max), .double(9_223_372_036_854_775_807.0)) == .orderedAscending)
        #expect(StoreValueComparison.compareNumbers(.integer(-3), .double(-2.5)) == .orderedAscending)
        #expect(StoreValueComparison.compareNumbers(.integer(-2), .double(-2.5)) == .orderedDescending)
        #expect(StoreValueComparison.compareNumbers(.integer(5), .double(.infinity)) == .orderedAscending)
        #expect(StoreValueComparison.isEqual(.double(.nan), .double(.nan)) == false)
    }

    @Test func nilSemantics() throws {
        #expect(try check(cmp("ibu", .equalTo, .null), orval))
        #expect(try !check(cmp("ibu", .notEqualTo, .null), orval))
        #expect(try check(cmp("ibu", .notEqualTo, .integer(3)), orval))
        #expect(try !check(cmp("ibu", .lessThan, .integer(3)), orval))
        #expect(try !check(cmp("ibu", .greaterThanOrEqualTo, .integer(3)), orval))
        #expect(try !check(cmp("ibu", .lessThanOrEqualTo, .null), orval))
        #expect(try !check(cmp("abv", .greaterThan, .null), duvel))
        #expect(try !check(cmp("ibu", .between, .array([.integer(0), .integer(9)])), orval))
        #expect(try !check(cmp("name", .beginsWith, .string("O")), empty))
        #expect(try check(cmp("brewery.name", .equalTo, .null), orval))
        #expect(try !check(cmp("brewery", .equalTo, .null), duvel))
        #expect(try check(cmp("brewery", .equalTo, .null), orval))
    }

    @Test func stringOperators() throws {
        #expect(try check(cmp("name", .beginsWith, .string("Du")), duvel))
        #expect(try !check(cmp("name", .beginsWith, .string("du")), duvel))
        #expect(try check(cmp("name", .beginsWith, .string("du"), options: .caseInsensitive), duvel))
        #expect(try check(cmp("name", .endsWith, .string("vel")), duvel))
        #expect(try check(cmp("name", .contains, .string("uve")), duvel))
        #expect(try !check(cmp("name", .contains, .string("")), duvel))
        #expect(try check(cmp("name", .in, .string("The Duvel Glass")), duvel))
        #expect(try !check(cmp("name", .in, .string("the duvel glass")), duvel))
        #expect(try check(cmp("name", .in, .string("the duvel glass"), options: .caseInsensitive), duvel))
        #expect(try check(cmp("name", .lessThan, .string("E")), duvel))
        #expect(try check(cmp("name", .lessThan, .string("a")), duvel), "code point order: D < a")
        #expect(try check(cmp("name", .lessThan, .string("a"), options: .caseInsensitive), duvel) == false)
        #expect(try check(cmp("name", .greaterThan, .string("a"), options: .caseInsensitive), duvel))
    }

    @Test func unicodeCaseAndDiacritics() throws {
        #expect(try !check(cmp("name", .contains, .string("creme brulee")), orval))
        #expect(try !check(cmp("name", .contains, .string("creme brulee"), options: .caseInsensitive), orval))
        #expect(try !check(cmp("name", .contains, .string("creme brulee"), options: .diacriticInsensitive), orval))
        #expect(try check(cmp("name", .contains, .string("Creme Brulee"), options: .diacriticInsensitive), orval))
        #expect(try check(cmp("name", .contains, .string("CREME BRULEE"), options: [.caseInsensitive, .diacriticInsensitive]), orval))
        #expect(try check(cmp("name", .equalTo, .string("orval crème brûlée"), options: .caseInsensitive), orval))
        #expect(try check(cmp("name", .endsWith, .string("BRÛLÉE"), options: .caseInsensitive), orval))
        // Decomposed é (e + U+0301) equals precomposed é.
        #expect(try check(cmp("name", .endsWith, .string("Bru\u{302}le\u{301}e")), orval))
        #expect(try PredicateComparison.compare(.string("STRASSE"), .equalTo, .string("straße"), options: .caseInsensitive))
    }

    @Test func likeAndMatches() throws {
        #expect(try check(cmp("name", .like, .string("D*l")), duvel))
        #expect(try check(cmp("name", .like, .string("D?vel")), duvel))
        #expect(try !check(cmp("name", .like, .string("D?el")), duvel))
        #expect(try !check(cmp("name", .like, .string("duv*")), duvel))
        #expect(try check(cmp("name", .like, .string("duv*"), options: .caseInsensitive), duvel))
        #expect(try check(cmp("name", .like, .string("*(c*"), options: .caseInsensitive) , duvel) == false)
        #expect(try PredicateComparison.compare(.string("a*b"), .like, .string("a\\*b")))
        #expect(try !PredicateComparison.compare(.string("axb"), .like, .string("a\\*b")))
        #expect(try PredicateComparison.compare(.string("a.b"), .like, .string("a.b")))
        #expect(try !PredicateComparison.compare(.string("axb"), .like, .string("a.b")))
        #expect(try check(cmp("name", .matches, .string("D[a-z]+")), duvel))
        #expect(try !check(cmp("name", .matches, .string("D[a-z]")), duvel), "MATCHES is whole-string")
        #expect(try !check(cmp("name", .matches, .string("d[a-z]+")), duvel))
        #expect(try check(cmp("name", .matches, .string("d[a-z]+"), options: .caseInsensitive), duvel))
        #expect(try check(cmp("name", .matches, .string(".*Creme.*"), options: .diacriticInsensitive), orval))
        #expect(throws: PersistenceError.self) { try check(cmp("name", .matches, .string("(")), duvel) }
    }

    @Test func datesUUIDsDataAndObjects() throws {
        #expect(try check(cmp("brewedOn", .equalTo, .date(Self.date)), duvel))
        #expect(try check(cmp("brewedOn", .lessThan, .date(Self.date.addingTimeInterval(0.001))), duvel))
        #expect(try !check(cmp("brewedOn", .greaterThan, .date(Self.date)), duvel))
        #expect(try check(cmp("code", .equalTo, .uuid(Self.uuid)), duvel))
        #expect(try !check(cmp("code", .equalTo, .uuid(UUID())), duvel))
        #expect(try check(cmp("label", .equalTo, .data(Data([1, 2, 3]))), duvel))
        #expect(try check(cmp("brewery", .equalTo, .object(moortgat)), duvel))
        #expect(try !check(cmp("brewery", .equalTo, .object(empty)), duvel))
        #expect(try check(.comparison(.evaluatedObject, .equalTo, .constant(.object(duvel))), duvel))
        #expect(try check(.comparison(.evaluatedObject, .in, .keyPath("brewery.beers")), duvel))
        #expect(try check(cmp("beers", .contains, .object(orval)), moortgat))
        #expect(try !check(cmp("beers", .contains, .object(orval)), empty))
    }

    @Test func toManyModifiers() throws {
        #expect(try check(cmp("beers.abv", .greaterThan, .integer(8), modifier: .any), moortgat))
        #expect(try !check(cmp("beers.abv", .greaterThan, .integer(8), modifier: .all), moortgat))
        #expect(try check(cmp("beers.abv", .greaterThan, .integer(6), modifier: .all), moortgat))
        #expect(try !check(cmp("beers.abv", .greaterThan, .integer(6), modifier: .any), empty))
        #expect(try check(cmp("beers.abv", .greaterThan, .integer(6), modifier: .all), empty), "ALL holds for an empty set")
        #expect(try check(!cmp("beers.abv", .greaterThan, .integer(9), modifier: .any), moortgat), "NONE")
        #expect(try check(!cmp("beers.abv", .greaterThan, .integer(9), modifier: .any), empty))
        #expect(try check(cmp("tags.name", .equalTo, .string("TRAPPIST"), modifier: .any, options: .caseInsensitive), orval))
        #expect(try !check(cmp("tags.name", .equalTo, .string("trappist"), modifier: .any), duvel))
        #expect(try check(cmp("tags.name", .in, .array([.string("strong"), .string("x")]), modifier: .any), duvel))
        #expect(try check(cmp("beers.tags.name", .equalTo, .string("trappist"), modifier: .any), moortgat), "through two to-manys")
        #expect(try check(cmp("brewery.beers.name", .beginsWith, .string("Orv"), modifier: .any), duvel))
    }

    @Test func collectionOperators() throws {
        #expect(try check(cmp("beers.@count", .equalTo, .integer(2)), moortgat))
        #expect(try check(cmp("beers.@count", .equalTo, .integer(0)), empty))
        #expect(try check(cmp("tags.@count", .greaterThan, .integer(1)), orval))
        #expect(try evaluator.value(at: "beers.abv.@sum", from: .object(moortgat)) == .double(14.7))
        #expect(try evaluator.value(at: "beers.abv.@avg", from: .object(moortgat)) == .double(7.35))
        #expect(try evaluator.value(at: "beers.abv.@max", from: .object(moortgat)) == .double(8.5))
        #expect(try evaluator.value(at: "beers.abv.@min", from: .object(moortgat)) == .double(6.2))
        #expect(try evaluator.value(at: "beers.ibu.@sum", from: .object(moortgat)) == .integer(32), "nil skipped")
        #expect(try evaluator.value(at: "beers.abv.@sum", from: .object(empty)) == .integer(0))
        #expect(try evaluator.value(at: "beers.abv.@avg", from: .object(empty)) == .null)
        #expect(try evaluator.value(at: "beers.abv.@max", from: .object(empty)) == .null)
        #expect(throws: PersistenceError.self) { try evaluator.value(at: "nope", from: .object(moortgat)) }
    }

    @Test func subqueryAndVariables() throws {
        let strongBeers = FetchExpression.subquery(
            collection: .keyPath("beers"), variable: "b",
            predicate: .comparison(.member(.variable("b"), "abv"), .greaterThan, .constant(.integer(8))))
        #expect(try check(.comparison(.member(strongBeers, "@count"), .equalTo, .constant(.integer(1))), moortgat))
        #expect(try check(.comparison(.function("count:", [strongBeers]), .equalTo, .constant(.integer(0))), empty))
        let tagged = FetchExpression.subquery(
            collection: .keyPath("beers"), variable: "b",
            predicate: .comparison(.keyPath("$b.tags.name"), .equalTo, .constant(.string("trappist")), modifier: .any))
        #expect(try evaluator.value(of: tagged, self: .object(moortgat), variables: [:]) == .array([.object(orval)]))
        let bound = PredicateEvaluator(resolver: evaluator.resolver, variables: ["LIMIT": .integer(8)])
        #expect(try bound.evaluate(.comparison(.keyPath("abv"), .greaterThan, .variable("LIMIT")), on: duvel))
        #expect(throws: PersistenceError.self) { try check(.comparison(.keyPath("abv"), .greaterThan, .variable("MISSING")), duvel) }
    }

    @Test func ternaryAndFunctions() throws {
        let label = FetchExpression.conditional(cmp("abv", .greaterThan, .integer(8)), .constant(.string("strong")), .constant(.string("light")))
        #expect(try evaluator.value(of: label, self: .object(duvel), variables: [:]) == .string("strong"))
        #expect(try evaluator.value(of: label, self: .object(orval), variables: [:]) == .string("light"))
        func f(_ name: String, _ args: StoreValue...) throws -> StoreValue {
            try evaluator.value(of: .function(name, args.map(FetchExpression.constant)), self: .null, variables: [:])
        }
        #expect(try f("add:to:", .integer(2), .integer(3)) == .integer(5))
        #expect(try f("add:to:", .integer(2), .double(0.5)) == .double(2.5))
        #expect(try f("add:to:", .integer(Int64.max), .integer(1)) == .double(9_223_372_036_854_775_808.0))
        #expect(try f("from:subtract:", .integer(2), .integer(3)) == .integer(-1))
        #expect(try f("multiply:by:", .decimal(Decimal(string: "1.1")!), .integer(3)) == .decimal(Decimal(string: "3.3")!))
        #expect(try f("divide:by:", .integer(7), .integer(2)) == .double(3.5))
        #expect(try f("modulus:by:", .integer(7), .integer(2)) == .integer(1))
        #expect(try f("raise:toPower:", .integer(2), .integer(10)) == .double(1024))
        #expect(try f("add:to:", .null, .integer(1)) == .null)
        #expect(try f("now") == .date(Date(timeIntervalSinceReferenceDate: 800_000_000)))
        #expect(try f("from:subtract:", .date(Date(timeIntervalSinceReferenceDate: 100)), .integer(40)) == .date(Date(timeIntervalSinceReferenceDate: 60)))
        #expect(try f("uppercase:", .string("é")) == .string("É"))
        #expect(try f("max:", .array([.integer(1), .integer(9), .integer(3)])) == .integer(9))
        #expect(throws: PersistenceError.self) { try f("nosuch:", .integer(1)) }
        #expect(try check(.comparison(.keyPath("brewedOn"), .lessThan, .function("now", [])), duvel))
    }

    @Test func compoundPredicates() throws {
        #expect(try check(.alwaysTrue, duvel))
        #expect(try !check(.alwaysFalse, duvel))
        #expect(try check(cmp("abv", .greaterThan, .integer(8)) && cmp("name", .equalTo, .string("Duvel")), duvel))
        #expect(try !check(cmp("abv", .greaterThan, .integer(9)) && cmp("name", .equalTo, .string("Duvel")), duvel))
        #expect(try check(cmp("abv", .greaterThan, .integer(9)) || cmp("name", .equalTo, .string("Duvel")), duvel))
        #expect(try check(CompoundPredicate.and([]), duvel))
        #expect(try !check(CompoundPredicate.or([]), duvel))
    }

    @Test func sortOrder() {
        let c = StoreValueComparison.self
        #expect(c.compare(.null, .integer(0)) == .orderedAscending)
        #expect(c.compare(.null, .null) == .orderedSame)
        #expect(c.compare(.string("B"), .string("a")) == .orderedAscending)
        #expect(c.compare(.string("B"), .string("a"), using: .caseInsensitiveCompare) == .orderedDescending)
        #expect(c.compare(.string("file10"), .string("File9"), using: .localizedStandardCompare) == .orderedDescending)
        #expect(c.compare(.string("éclair"), .string("Eclipse"), using: .localizedStandardCompare) == .orderedAscending)
        #expect(c.compare(.integer(2), .double(1.5)) == .orderedDescending)
        #expect(c.compare(.decimal(1), .integer(1)) == .orderedSame)
        #expect(c.compare(.data(Data([1])), .data(Data([1, 0]))) == .orderedAscending)
    }
}
