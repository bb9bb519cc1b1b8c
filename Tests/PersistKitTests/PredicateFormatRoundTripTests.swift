import Foundation
import PredicateDifferential
import Testing
@testable import PersistKit

/// `FetchPredicate(format: p.predicateFormat) == p` for generated trees of the shapes the
/// parser produces.
@Suite("PredicateFormatRoundTrip")
struct PredicateFormatRoundTripTests {
    typealias Generator = SplitMix64

    static let keys = ["name", "abv", "brewery.name", "beers.@count", "tags.name", "cast", "size", "first", "employees.@avg.age", "g.@max.self"]

    // The force-unwrapped literals below are valid UUID, URL and decimal strings.
    static func constant(_ g: inout Generator) -> StoreValue {
        switch g.int(0..<11) {
        case 0: return .null
        case 1: return .integer(Int64(g.int(-1000..<1000)))
        case 2: return .integer(g.pick([Int64.min, Int64.max, 0]))
        case 3: return .double(g.pick([1.5, -0.25, 1e20, 3.0, 1e-7, -1e300]))
        case 4: return .string(g.pick(["", "x", "a\"b", "back\\slash", "tab\tline\n", "100%", "%%@", "%@", "é🍺", "\u{1}"]))
        case 5: return .bool(g.int(0..<2) == 0)
        case 6: return .date(Date(timeIntervalSinceReferenceDate: g.pick([0, 123.5, -1e9, 7e8])))
        case 7: return .decimal(g.pick([Decimal(string: "3.50")!, Decimal(12), Decimal(string: "-0.001")!]))
        case 8: return .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
        case 9: return .url(URL(string: "https://example.com/a?b=c")!)
        default: return .array([.integer(1), .string("a"), .null])
        }
    }

    static func expression(_ g: inout Generator, depth: Int) -> FetchExpression {
        let leaf = depth <= 0
        switch g.int(0..<(leaf ? 4 : 12)) {
        case 0: return .constant(constant(&g))
        case 1: return .keyPath(g.pick(keys))
        case 2: return .variable(g.pick(["x", "LIMIT"]))
        case 3: return g.int(0..<4) == 0 ? .evaluatedObject : .keyPath(g.pick(keys))
        case 4:
            let op = g.pick(["add:to:", "from:subtract:", "multiply:by:", "divide:by:", "raise:toPower:",
                             "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:"])
            return .function(op, [expression(&g, depth: depth - 1), expression(&g, depth: depth - 1)])
        case 5: return .function(g.pick(["lowercase:", "sum:", "abs:"]), [expression(&g, depth: depth - 1)])
        case 6: return .function("now", [])
        case 7:
            let index: FetchExpression = g.int(0..<2) == 0 ? .function(g.pick(["FIRST", "LAST", "SIZE"]), []) : .constant(.integer(Int64(g.int(0..<5))))
            return .function("objectFrom:withIndex:", [.keyPath(g.pick(keys)), index])
        case 8: return .member(.subquery(collection: .keyPath("beers"), variable: "b",
                                         predicate: predicate(&g, depth: depth - 1)), "@count")
        case 9: return .conditional(predicate(&g, depth: depth - 1), expression(&g, depth: depth - 1), expression(&g, depth: depth - 1))
        case 10: return .aggregate([.keyPath("a"), .constant(constant(&g))])
        default: return .member(.variable("b"), g.pick(["abv", "tags.name"]))
        }
    }

    static func predicate(_ g: inout Generator, depth: Int) -> FetchPredicate {
        switch g.int(0..<(depth <= 0 ? 3 : 7)) {
        case 0: return g.int(0..<2) == 0 ? .alwaysTrue : .alwaysFalse
        case 1, 2, 3:
            let op = g.pick(ComparisonPredicate.Operator.allCases)
            let options = ComparisonPredicate.Options(rawValue: g.int(0..<16))
            let modifier = g.pick([ComparisonPredicate.Modifier.direct, .direct, .any, .all])
            return .comparison(expression(&g, depth: depth - 1), op, expression(&g, depth: depth - 1), modifier: modifier, options: options)
        case 4: return predicate(&g, depth: depth - 1) && predicate(&g, depth: depth - 1)
        case 5: return predicate(&g, depth: depth - 1) || predicate(&g, depth: depth - 1)
        default: return !predicate(&g, depth: depth - 1)
        }
    }

    @Test func generatedTreesRoundTrip() throws {
        var g = Generator(state: 2026)
        for _ in 0..<3000 {
            let p = Self.predicate(&g, depth: 4)
            let format = p.predicateFormat
            let parsed = try FetchPredicate(format: format)
            #expect(parsed == p, "\(format)")
            #expect(parsed.predicateFormat == format)
            // The tree JSON is valid JSON.
            let json = PredicateTreeJSON.json(p)
            #expect((try? JSONSerialization.jsonObject(with: Data(json.utf8))) != nil, "\(json)")
        }
    }

    @Test func unboundArgumentPositionsRoundTrip() throws {
        let p = try FetchPredicate(format: "%3$@ == %K AND %@ IN %1$@ AND $x.%K > %d", arguments: [])
        #expect(try FetchPredicate(format: p.predicateFormat) == p)
        #expect(p.predicateFormat == "(%3$@ == %K AND %@ IN %1$@) AND $x.%K > %d")
        let partly = try FetchPredicate(format: "a == %@ AND %K == %@", arguments: [.integer(1)])
        #expect(partly.predicateFormat == "a == 1 AND %2$K == %3$@")
        #expect(try FetchPredicate(format: partly.predicateFormat) == partly)
    }
}
