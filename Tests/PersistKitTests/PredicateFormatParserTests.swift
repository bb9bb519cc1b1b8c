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

@Suite("PredicateFormatGrammar")
struct PredicateFormatGrammarTests {
    func expression(_ format: String, _ arguments: [StoreValue] = []) throws -> FetchExpression {
        try FetchExpression(format: format, arguments: arguments)
    }

    @Test func literals() throws {
        #expect(try expression(#""a\"b\\c\n\t\u00e9""#) == .constant(.string("a\"b\\c\n\té")))
        #expect(try expression("'single \"quoted\"'") == .constant(.string("single \"quoted\"")))
        #expect(try expression(#""\ud83c\udf7a""#) == .constant(.string("🍺")))
        #expect(try expression("'100%%'") == .constant(.string("100%")))
        #expect(try expression("'%@'") == .constant(.string("%@")))
        #expect(try expression("42") == .constant(.integer(42)))
        #expect(try expression("-9223372036854775808") == .constant(.integer(.min)))
        #expect(try expression("1.5") == .constant(.double(1.5)))
        #expect(try expression("1e3") == .constant(.double(1000)))
        #expect(try expression("0x1F") == .constant(.integer(31)))
        #expect(try expression("0o17") == .constant(.integer(15)))
        #expect(try expression("0b101") == .constant(.integer(5)))
        #expect(try expression("TRUE") == .constant(.bool(true)))
        #expect(try expression("yes") == .constant(.bool(true)))
        #expect(try expression("No") == .constant(.bool(false)))
        #expect(try expression("NULL") == .constant(.null))
        #expect(try expression("nil") == .constant(.null))
        #expect(try expression("{1, 'a', nil}") == .constant(.array([.integer(1), .string("a"), .null])))
        #expect(try expression("{a, 1}") == .aggregate([.keyPath("a"), .constant(.integer(1))]))
        #expect(try expression("CAST(123.5, \"NSDate\")") == .constant(.date(Date(timeIntervalSinceReferenceDate: 123.5))))
        #expect(try expression("CAST('now', 'NSDate')") == .function("castObject:toType:", [.constant(.string("now")), .constant(.string("NSDate"))]))
        #expect(try expression("CAST('1.25', 'NSDecimalNumber')") == .constant(.decimal(Decimal(string: "1.25")!)))
    }

    @Test func keyPathsAndReservedWords() throws {
        #expect(try expression("#cast.#SELF") == .keyPath("cast.SELF"))
        #expect(try expression("SELF") == .evaluatedObject)
        #expect(try expression("self.name") == .keyPath("name"))
        #expect(try expression("employees.@avg.age") == .keyPath("employees.@avg.age"))
        #expect(try expression("@sum.items.price") == .keyPath("@sum.items.price"))
        #expect(try expression("$b.abv") == .member(.variable("b"), "abv"))
        #expect(try expression("items[FIRST].name") == .member(.function("objectFrom:withIndex:", [.keyPath("items"), .function("FIRST", [])]), "name"))
        #expect(try expression("items[2]") == .function("objectFrom:withIndex:", [.keyPath("items"), .constant(.integer(2))]))
        #expect(try expression("%K.@count", [.string("tags")]) == .keyPath("tags.@count"))
        #expect(try expression("moods.%K") == .function("valueForKeyPath:", [.keyPath("moods"), .unboundArgument(specifier: "%K", position: 0)]))
        #expect(try FetchPredicate(format: "#cast CONTAINS 'x'").predicateFormat == #"#cast CONTAINS "x""#)
        #expect(try FetchPredicate(format: "name contains[CD] 'x' and NOT (a = 1 or b = 2)").predicateFormat
                == #"name CONTAINS[cd] "x" AND (NOT (a == 1 OR b == 2))"#)
    }

    @Test func functionsAndArithmetic() throws {
        #expect(try expression("now()") == .function("now", []))
        #expect(try expression("sum({1, 2})") == .function("sum:", [.constant(.array([.integer(1), .integer(2)]))]))
        #expect(try expression("lowercase(name)") == .function("lowercase:", [.keyPath("name")]))
        #expect(try expression("modulus:by:(10, 3)") == .function("modulus:by:", [.constant(.integer(10)), .constant(.integer(3))]))
        #expect(try expression("FUNCTION(SELF, 'distance:', 2)") == .function("FUNCTION", [.evaluatedObject, .constant(.string("distance:")), .constant(.integer(2))]))
        #expect(try expression("TERNARY(a > 1, 'x', 'y')") == .conditional(.comparison(.keyPath("a"), .greaterThan, .constant(.integer(1))),
                                                                        .constant(.string("x")), .constant(.string("y"))))
        #expect(try expression("1 + 2 * 3") == .function("add:to:", [.constant(.integer(1)), .function("multiply:by:", [.constant(.integer(2)), .constant(.integer(3))])]))
        #expect(try expression("-a") == .function("from:subtract:", [.constant(.integer(0)), .keyPath("a")]))
        #expect(try expression("a & 4 | 1") == .function("bitwiseOr:with:", [.function("bitwiseAnd:with:", [.keyPath("a"), .constant(.integer(4))]), .constant(.integer(1))]))
        for format in ["now()", "sum({1, 2})", "lowercase(name)", "modulus:by:(10, 3)", "FUNCTION(SELF, \"distance:\", 2)",
                       "TERNARY(a > 1, \"x\", \"y\")", "(a + 1) * 2", "2 ** 3 ** 2", "(2 ** 3) ** 2", "(-2) ** 2", "a - (b - c)",
                       "items[LAST]", "(a + b).name", "SUBQUERY(beers, $b, $b.abv > 8).@count"] {
            #expect(try expression(format).expressionFormat == format)
        }
    }

    @Test func substitution() throws {
        let template = try FetchPredicate(format: "name == $NAME AND SUBQUERY(beers, $b, $b.abv > $MIN).@count > 0")
        #expect(try template.withSubstitutionVariables(["NAME": .string("x"), "MIN": .integer(8)]).predicateFormat
                == #"name == "x" AND SUBQUERY(beers, $b, $b.abv > 8).@count > 0"#)
        #expect(throws: PersistenceError.self) { try template.withSubstitutionVariables(["NAME": .string("x")]) }
        do {
            _ = try template.withSubstitutionVariables(["NAME": .string("x")])
        } catch let error as PersistenceError {
            #expect(error.key == "$MIN")
            #expect(error.message == "the substitution variable $MIN has no value")
        }
    }

    func syntaxError(_ format: String, _ arguments: [StoreValue] = []) -> PredicateSyntaxError? {
        do { _ = try FetchPredicate(format: format, arguments: arguments); return nil } catch { return error as? PredicateSyntaxError }
    }

    @Test func errors() throws {
        #expect(syntaxError("name == 'abc")?.description == "predicate syntax error at offset 8: the string starting here is not closed with '")
        #expect(syntaxError("a == 1)")?.description == #"predicate syntax error at offset 6: unbalanced ")": no "(" opens it"#)
        #expect(syntaxError("a ==[x] 1")?.description == #"predicate syntax error at offset 5: unknown comparison option "x" (known: c, d, n, l)"#)
        #expect(syntaxError("a == ?")?.offset == 5)
        #expect(syntaxError("a == %z")?.description == #"predicate syntax error at offset 5: unknown format specifier "%z""#)
        #expect(syntaxError("%K == 1", [.integer(3)])?.description == "predicate syntax error at offset 0: argument 1 for %K must be a string naming a key path, not 3")
        #expect(syntaxError("%K == 1", [.string("a b")])?.description == #"predicate syntax error at offset 0: argument 1 for %K, "a b", is not a key path (keys separated by dots)"#)
        #expect(syntaxError("a == %d", [.string("x")])?.expected == "an integer")
        #expect(syntaxError("ANYKEY == 1")?.message == "ANYKEY is not supported (it needs dictionary values, which stores do not hold)")
        #expect(syntaxError("a UTI-CONFORMS-TO 'public.data'")?.offset == 2)
        #expect(syntaxError("a == AND")?.description == "predicate syntax error at offset 5: expected an expression, found the keyword AND (write #AND to use it as a key)")
        #expect(syntaxError("a := 1")?.offset == 2)
        #expect(syntaxError("a == 99999999999999999999")?.description == "predicate syntax error at offset 5: the integer 99999999999999999999 is too large (the largest is 18446744073709551615)")
        #expect(syntaxError("SUBQUERY(beers, b, b.abv > 1).@count > 0")?.expected == "a variable")
    }
}

@Suite("PredicateFormatLimits")
struct PredicateFormatLimitsTests {
    @Test func deepNestingIsAnErrorNotACrash() throws {
        let shallow = String(repeating: "(", count: 40) + "a == 1" + String(repeating: ")", count: 40)
        #expect(try FetchPredicate(format: shallow) == .equal("a", .integer(1)))
        for format in [String(repeating: "(", count: 10_000) + "a == 1", String(repeating: "NOT ", count: 10_000) + "a == 1",
                       "a == " + String(repeating: "-", count: 10_000) + "b", "a == " + String(repeating: "{", count: 10_000)] {
            #expect(throws: PredicateSyntaxError.self) { try FetchPredicate(format: format) }
            do { _ = try FetchPredicate(format: format) } catch let error as PredicateSyntaxError {
                #expect(error.message == "the format is nested more than 128 levels deep")
            }
        }
    }
}
