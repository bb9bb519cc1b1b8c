import Foundation
import Testing
@testable import PersistKit

@Suite("PredicateFormatTypeCheck")
struct PredicateFormatTypeCheckTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func entity(_ name: String) throws -> EntityDescription {
        let model = try ManagedObjectModel(contentsOf: Self.packageRoot.appendingPathComponent("Examples/Beers.model.json"))
        try model.freeze()
        return try #require(model.entitiesByName[name])
    }

    func check(_ format: String, _ arguments: [StoreValue] = [], on entityName: String = "Beer") throws -> String? {
        let model = try ManagedObjectModel(contentsOf: Self.packageRoot.appendingPathComponent("Examples/Beers.model.json"))
        try model.freeze()
        let entity = try #require(model.entitiesByName[entityName])
        do {
            try FetchPredicate(format: format, arguments: arguments).typeCheck(against: entity)
            return nil
        } catch let error as PredicateTypeError {
            #expect(error.entityName == entityName)
            return error.description
        }
    }

    @Test func validPredicates() throws {
        for format in ["name BEGINSWITH[cd] 'd' AND abv > 8", "ANY tags.name == 'trappist'", "tags.@count > 1",
                       "brewery.name == 'Westmalle' OR brewery == nil", "brewedOn > CAST(0.0, 'NSDate')", "abv BETWEEN {5, 9}",
                       "name IN {'a', 'b'}", "SUBQUERY(tags, $t, $t.name == 'x').@count > 0", "ibu + 1 > abv * 2",
                       "isFavorite", "%K == %@", "uuid == %@", "name == $NAME", "NONE tags.name == 'x'", "ALL tags.name != 'x'"] {
            #expect(try check(format) == nil, "\(format)")
        }
        #expect(try check("brewedOn < %@", [.date(Date(timeIntervalSinceReferenceDate: 0))]) == nil)
        #expect(try check("ANY beers.abv > 8 AND beers.@avg.abv > 5 AND beers.abv.@max < 12", on: "Brewery") == nil)
    }

    @Test func rejectedPredicates() throws {
        #expect(try check("nmae == 'x'") == #"predicate type error in "nmae == "x"": entity Beer has no property nmae (key path nmae)"#)
        #expect(try check("brewery.town == 'x'")
                == #"predicate type error in "brewery.town == "x"": entity Brewery has no property town (key path brewery.town)"#)
        #expect(try check("name > %@", [.date(Date(timeIntervalSinceReferenceDate: 0))])
                == #"predicate type error in "name > CAST(0.0, "NSDate")": CAST(0.0, "NSDate") is a date, which cannot be compared with a string"#)
        #expect(try check("abv BEGINSWITH 'x'")
                == #"predicate type error in "abv BEGINSWITH "x"": BEGINSWITH compares strings, but abv is a number"#)
        #expect(try check("tags.name == 'x'")
                == #"predicate type error in "tags.name == "x"": the to-many key path tags.name yields a collection; compare it with ANY, ALL or NONE, or reduce it with @count, @sum, @avg, @min or @max"#)
        #expect(try check("name == {'a', 'b'}")
                == #"predicate type error in "name == {"a", "b"}": name is a string, which cannot be compared with a collection with ==; use IN or BETWEEN"#)
        #expect(try check("abv IN {1, 'x'}")
                == #"predicate type error in "abv IN {1, "x"}": "x" is a string, which cannot be compared with a number"#)
        #expect(try check("SUBQUERY(tags, $t, $t.colour == 'x').@count > 0")
                == #"predicate type error in "$t.colour == "x"": entity Tag has no property colour (key path $t.colour)"#)
        #expect(try check("name.@count > 1")
                == #"predicate type error in "name.@count > 1": @count in name.@count needs a to-many relationship before it"#)
    }
}

@Suite("PredicateFormatEvaluation")
struct PredicateFormatEvaluationTests {
    struct NoObjects: PredicateObjectResolver {
        func value(forKey key: String, of object: ManagedObjectID) throws -> EvaluatedValue {
            throw PersistenceError.predicate("no objects", key: key)
        }
    }

    func evaluate(_ format: String, _ value: StoreValue) throws -> Bool {
        try PredicateEvaluator(resolver: NoObjects()).evaluate(FetchPredicate(format: format), self: value, variables: [:])
    }

    @Test func parsedPredicatesEvaluate() throws {
        let numbers = StoreValue.array([.integer(3), .integer(5), .integer(7)])
        #expect(try evaluate("SELF[FIRST] == 3 AND SELF[LAST] == 7 AND SELF[SIZE] == 3 AND SELF[1] == 5", numbers))
        #expect(try evaluate("SELF.@sum == 15 AND SELF.@count == 3 AND SELF.@max == 7", numbers))
        #expect(try evaluate("ANY SELF > 6 AND ALL SELF > 2 AND NONE SELF > 7", numbers))
        #expect(try evaluate("(SELF & 4) != 0 AND (SELF | 1) == 7 AND (SELF ^ 1) == 7", .integer(6)))
        #expect(try evaluate("SELF + 2 * 3 ** 2 == 24 AND -SELF == -6", .integer(6)))
        #expect(try evaluate("SELF BEGINSWITH[cd] 'DU' AND SELF LIKE 'd?vel' AND TERNARY(SELF == 'duvel', 1, 0) == 1", .string("duvel")))
        #expect(try evaluate("SUBQUERY(SELF, $x, $x >= 5).@count == 2", numbers))
        #expect(try evaluate("SELF", .bool(true)))
    }
}
