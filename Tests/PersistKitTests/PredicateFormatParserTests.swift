import Foundation
import Testing
@testable import PersistKit

@Suite("PredicateFormatParser")
struct PredicateFormatParserTests {
    func parse(_ format: String, _ arguments: [StoreValue] = []) throws -> FetchPredicate {
        try FetchPredicate(format: format, arguments: arguments)
    }

    func canonical(_ format: String, _ arguments: [StoreValue] = []) throws -> String {
        try parse(format, arguments).predicateFormat
    }

    @Test func comparisonsWithArguments() throws {
        #expect(try parse("name == %@", [.string("Duvel")]) == .comparison(.keyPath("name"), .equalTo, .constant(.string("Duvel"))))
        #expect(try parse("%K >= %d", [.string("abv"), .integer(8)]) == .comparison(.keyPath("abv"), .greaterThanOrEqualTo, .constant(.integer(8))))
        #expect(try parse("abv > %f", [.integer(8)]) == .comparison(.keyPath("abv"), .greaterThan, .constant(.double(8))))
        #expect(try parse("a = %2$@ AND b = %1$@", [.integer(1), .integer(2)])
                == (.comparison(.keyPath("a"), .equalTo, .constant(.integer(2))) && .comparison(.keyPath("b"), .equalTo, .constant(.integer(1)))))
        #expect(try canonical("name BEGINSWITH[cd] %@", [.string("x")]) == #"name BEGINSWITH[cd] "x""#)
        #expect(try canonical("any beers.abv > 8") == "ANY beers.abv > 8")
        #expect(try canonical("NONE beers.abv > 8") == "NOT ANY beers.abv > 8")
        #expect(try canonical("SUBQUERY(beers, $b, $b.abv > 8).@count > 2") == "SUBQUERY(beers, $b, $b.abv > 8).@count > 2")
    }

    @Test func unboundArguments() throws {
        #expect(try parse("%K == %@") == .comparison(.unboundArgument(specifier: "%K", position: 0), .equalTo,
                                                     .unboundArgument(specifier: "%@", position: 1)))
        #expect(try canonical("a == %@ AND b == %d", [.integer(1)]) == "a == 1 AND b == %2$d")
        #expect(try parse("a == %2$d", []) == .comparison(.keyPath("a"), .equalTo, .unboundArgument(specifier: "%d", position: 1)))
    }

    @Test func precedence() throws {
        let a = FetchPredicate.equal("a", .integer(1)), b = FetchPredicate.equal("b", .integer(2)), c = FetchPredicate.equal("c", .integer(3))
        #expect(try parse("a = 1 OR b = 2 AND c = 3") == (a || (b && c)))
        #expect(try parse("NOT a = 1 AND b = 2") == (!a && b))
        #expect(try parse("a = 1 AND b = 2 AND c = 3") == ((a && b) && c))
        #expect(try canonical("a = 1 AND b = 2 AND c = 3") == "(a == 1 AND b == 2) AND c == 3")
        #expect(try canonical("(a + 1) * 2 > 2 ** 3 ** 2") == "(a + 1) * 2 > 2 ** 3 ** 2")
        #expect(try canonical("1 * -1 < -a") == "1 * -1 < 0 - a")
    }

    @Test func syntaxErrors() throws {
        #expect(throws: PredicateSyntaxError(offset: 5, message: #"expected a comparison operator after "name", found "!""#,
                                             expected: "a comparison operator", format: "name ! 'x'")) { try parse("name ! 'x'") }
        #expect(throws: PredicateSyntaxError(offset: 7, message: "expected an expression, found the end of the format",
                                             expected: "an expression", format: "name + ")) { try parse("name + ") }
        #expect(throws: PredicateSyntaxError(offset: 10, message: "2 arguments were given but the format uses 1", format: "name == %@")) {
            try parse("name == %@", [.integer(1), .integer(2)])
        }
    }
}
