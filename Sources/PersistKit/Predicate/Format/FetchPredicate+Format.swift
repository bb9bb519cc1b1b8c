import Foundation

extension FetchPredicate {
    /// Parses a predicate format string, as `NSPredicate(format:argumentArray:)` does.
    ///
    /// ```swift
    /// let p = try FetchPredicate(format: "name BEGINSWITH[cd] %@ AND ANY beers.abv > %d", arguments: [.string("d"), .integer(8)])
    /// p.predicateFormat   // name BEGINSWITH[cd] "d" AND ANY beers.abv > 8
    /// ```
    ///
    /// `%@` takes the next argument as a constant; `%K` the next argument, which must be a
    /// ``StoreValue/string(_:)``, as a key path; `%d %i %ld %lld %u %f %lf %s` and the other
    /// `printf` conversions take numbers and strings; `%2$@` names an argument by position.
    /// A specifier with no argument becomes ``FetchExpression/unboundArgument(specifier:position:)``;
    /// more arguments than specifiers is an error. The grammar is in `docs/predicates.md`.
    ///
    /// - Throws: ``PredicateSyntaxError`` with the offset and what was expected.
    public init(format: String, arguments: [StoreValue] = []) throws {
        var parser = try PredicateParser(format: format, arguments: arguments)
        self = try parser.parsePredicateFormat()
    }

    /// The predicate in canonical format syntax; parsing it gives back the same predicate
    /// (for every predicate without object constants that the parser produces).
    public var predicateFormat: String {
        var printer = PredicatePrinter()
        return printer.predicate(self)
    }

    /// The predicate with each `$NAME` variable replaced by the constant `variables[NAME]`
    /// (`NSPredicate.withSubstitutionVariables(_:)`). Variables bound by a `SUBQUERY` are left alone.
    ///
    /// - Throws: ``PersistenceError`` naming the first variable with no value.
    public func withSubstitutionVariables(_ variables: [String: StoreValue]) throws -> FetchPredicate {
        try PredicateSubstitution(variables: variables).predicate(self, bound: [])
    }
}

extension FetchExpression {
    /// Parses an expression format string, as `NSExpression(format:argumentArray:)` does
    /// (`"abv * 2"`, `"SUBQUERY(beers, $b, $b.abv > 8).@count"`). Arguments as for
    /// ``FetchPredicate/init(format:arguments:)``.
    ///
    /// - Throws: ``PredicateSyntaxError``.
    public init(format: String, arguments: [StoreValue] = []) throws {
        var parser = try PredicateParser(format: format, arguments: arguments)
        self = try parser.parseExpressionFormat()
    }

    /// The expression in canonical format syntax (`NSExpression.description`).
    public var expressionFormat: String {
        var printer = PredicatePrinter()
        return printer.expression(self)
    }
}

/// Replaces `$NAME` variables with constants, leaving subquery variables alone.
struct PredicateSubstitution {
    let variables: [String: StoreValue]

    func predicate(_ predicate: FetchPredicate, bound: Set<String>) throws -> FetchPredicate {
        switch predicate {
        case .alwaysTrue, .alwaysFalse:
            return predicate
        case .comparison(var comparison):
            comparison.left = try expression(comparison.left, bound: bound)
            comparison.right = try expression(comparison.right, bound: bound)
            return .comparison(comparison)
        case .compound(var compound):
            compound.subpredicates = try compound.subpredicates.map { try self.predicate($0, bound: bound) }
            return .compound(compound)
        }
    }

    func expression(_ expression: FetchExpression, bound: Set<String>) throws -> FetchExpression {
        switch expression {
        case .constant, .evaluatedObject, .keyPath, .unboundArgument:
            return expression
        case .variable(let name):
            if bound.contains(name) { return expression }
            guard let value = variables[name] else {
                throw PersistenceError(.persistentStoreOperation, "the substitution variable $\(name) has no value", key: "$" + name)
            }
            return .constant(value)
        case .member(let base, let path):
            return .member(try self.expression(base, bound: bound), path)
        case .function(let name, let arguments):
            return .function(name, try arguments.map { try self.expression($0, bound: bound) })
        case .aggregate(let elements):
            return PredicateParser.aggregate(try elements.map { try self.expression($0, bound: bound) })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(collection: try self.expression(collection, bound: bound), variable: variable,
                             predicate: try self.predicate(predicate, bound: bound.union([variable])))
        case .conditional(let condition, let then, let otherwise):
            return .conditional(try predicate(condition, bound: bound), try self.expression(then, bound: bound),
                                try self.expression(otherwise, bound: bound))
        }
    }
}
