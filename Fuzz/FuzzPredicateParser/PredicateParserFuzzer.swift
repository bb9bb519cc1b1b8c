import Foundation
import PersistKit

/// The fuzz target of the predicate format parser (`FetchPredicate(format:)`,
/// `FetchExpression(format:)`), and of what runs on what it produces: the printer, the type
/// checker and the in-memory evaluator.
///
/// The input is the format string (UTF-8, invalid bytes replaced). Checked, besides "does not
/// crash": the printed form of a parsed predicate or expression parses again and prints the same
/// (the printer's documented guarantee), unless it is over the complexity limits (printing adds
/// parentheses). Syntax, type and evaluation errors are fine.
enum PredicateParserFuzzer {
    static func run(_ input: [UInt8]) {
        let format = String(decoding: input, as: UTF8.self)
        if let predicate = try? FetchPredicate(format: format) {
            let printed = predicate.predicateFormat
            let again: FetchPredicate
            do {
                again = try FetchPredicate(format: printed)
            } catch let error as PredicateSyntaxError where error.isTooComplex {
                // Printing adds parentheses (`a AND !!…!x` → `a AND (NOT … x)`), so a predicate
                // just under the nesting limit can print into one just over it.
                use(predicate)
                return
            } catch {
                preconditionFailure("printed predicate does not parse: \(format.debugDescription) printed as \(printed.debugDescription): \(error)")
            }
            precondition(again.predicateFormat == printed,
                         "printing is not stable: \(format.debugDescription) → \(printed.debugDescription) → \(again.predicateFormat.debugDescription)")
            use(predicate)
        } else if let expression = try? FetchExpression(format: format) {
            let printed = expression.expressionFormat
            let again: FetchExpression
            do {
                again = try FetchExpression(format: printed)
            } catch {
                preconditionFailure("printed expression does not parse: \(format.debugDescription) printed as \(printed.debugDescription): \(error)")
            }
            precondition(again.expressionFormat == printed,
                         "printing is not stable: \(format.debugDescription) → \(printed.debugDescription) → \(again.expressionFormat.debugDescription)")
            _ = PredicateTreeJSON.json(expression)
            for object in ObjectGraph.shared.beers {
                _ = try? ObjectGraph.shared.evaluator.value(of: expression, self: .object(object), variables: ObjectGraph.variables)
            }
        }
    }

    /// Type-checks `predicate` against every entity, substitutes variables, and evaluates it on
    /// every object of the graph.
    static func use(_ predicate: FetchPredicate) {
        let graph = ObjectGraph.shared
        _ = PredicateTreeJSON.json(predicate)
        for entity in graph.model.entities {
            try? predicate.typeCheck(against: entity)
        }
        let substituted = (try? predicate.withSubstitutionVariables(ObjectGraph.variables)) ?? predicate
        for object in graph.beers + graph.others {
            _ = try? graph.evaluator.evaluate(substituted, self: .object(object), variables: ObjectGraph.variables)
        }
        _ = try? graph.evaluator.evaluate(substituted, self: .string("Straße"), variables: ObjectGraph.variables)
    }
}
