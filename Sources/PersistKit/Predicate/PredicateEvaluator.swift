import Foundation

/// Evaluates a ``FetchPredicate`` against objects in memory, with `NSPredicate`'s semantics.
///
/// Objects are read through a ``PredicateObjectResolver``, so the same evaluator runs over a
/// context's managed objects and over an atomic store's rows. Key paths go through to-one
/// relationships; a key path through a to-many relationship yields a collection, compared with
/// `ANY`/`ALL` (``ComparisonPredicate/Modifier``) or reduced with `@count`, `@sum`, `@avg`,
/// `@min` and `@max`. See Apple's "Predicate Format String Syntax" and
/// `NSComparisonPredicate` for the semantics followed.
///
/// ```swift
/// let evaluator = PredicateEvaluator(resolver: rows)
/// let strong = try evaluator.evaluate(.comparison(.keyPath("abv"), .greaterThan, .constant(.double(8))), on: beerID)
/// ```
public struct PredicateEvaluator<Resolver: PredicateObjectResolver> {
    /// Where object values are read from.
    public var resolver: Resolver
    /// Values of `$NAME` variables not bound by a subquery.
    public var variables: [String: StoreValue]
    /// The time `now()` returns; fixed for one evaluator so every object sees the same instant.
    public var now: Date

    /// Creates an evaluator reading objects through `resolver`.
    public init(resolver: Resolver, variables: [String: StoreValue] = [:], now: Date = Date()) {
        self.resolver = resolver
        self.variables = variables
        self.now = now
    }

    /// Whether `object` satisfies `predicate`.
    public func evaluate(_ predicate: FetchPredicate, on object: ManagedObjectID) throws -> Bool {
        try evaluate(predicate, self: .object(object), variables: variables)
    }

    /// Whether the value `object` (an object, or any value for `SELF`) satisfies `predicate`.
    public func evaluate(_ predicate: FetchPredicate, self object: StoreValue, variables: [String: StoreValue]) throws -> Bool {
        switch predicate {
        case .alwaysTrue:
            return true
        case .alwaysFalse:
            return false
        case .compound(let compound):
            switch compound.type {
            case .and:
                for sub in compound.subpredicates where try !evaluate(sub, self: object, variables: variables) { return false }
                return true
            case .or:
                for sub in compound.subpredicates where try evaluate(sub, self: object, variables: variables) { return true }
                return false
            case .not:
                guard compound.subpredicates.count == 1 else {
                    throw PersistenceError.predicate("NOT needs exactly one subpredicate, not \(compound.subpredicates.count)")
                }
                return try !evaluate(compound.subpredicates[0], self: object, variables: variables)
            }
        case .comparison(let comparison):
            let left = try value(of: comparison.left, self: object, variables: variables)
            let right = try value(of: comparison.right, self: object, variables: variables)
            return try PredicateComparison.compare(left, comparison.operator, right,
                                                  modifier: comparison.modifier, options: comparison.options)
        }
    }

    /// The value of `expression` for the object `object`; collections are ``StoreValue/array(_:)``.
    public func value(of expression: FetchExpression, self object: StoreValue, variables: [String: StoreValue]) throws -> StoreValue {
        switch expression {
        case .constant(let value):
            return value
        case .evaluatedObject:
            return object
        case .keyPath(let path):
            if path.hasPrefix("$") {
                let parts = path.dropFirst().split(separator: ".", maxSplits: 1)
                let base = try variable(String(parts.first ?? ""), in: variables)
                return parts.count > 1 ? try value(at: String(parts[1]), from: base) : base
            }
            return try value(at: path, from: object)
        case .member(let base, let path):
            return try value(at: path, from: value(of: base, self: object, variables: variables))
        case .variable(let name):
            return try variable(name, in: variables)
        case .function("objectFrom:withIndex:", let arguments)
            where arguments.count == 2 && PredicateFunctions.indexSymbol(arguments[1]) != nil:
            // `items[FIRST]`, `items[LAST]`, `items[SIZE]`.
            let collection = try value(of: arguments[0], self: object, variables: variables)
            return try PredicateFunctions.element(of: collection, symbol: PredicateFunctions.indexSymbol(arguments[1]) ?? "")
        case .function(let name, let arguments):
            let values = try arguments.map { try value(of: $0, self: object, variables: variables) }
            return try PredicateFunctions.apply(function: name, to: values, now: now)
        case .aggregate(let elements):
            return .array(try elements.map { try value(of: $0, self: object, variables: variables) })
        case .subquery(let collection, let name, let predicate):
            let elements = PredicateFunctions.elements(of: try value(of: collection, self: object, variables: variables))
            var kept: [StoreValue] = []
            var bound = variables
            for element in elements {
                bound[name] = element
                if try evaluate(predicate, self: object, variables: bound) { kept.append(element) }
            }
            return .array(kept)
        case .conditional(let condition, let then, let otherwise):
            return try evaluate(condition, self: object, variables: variables)
                ? value(of: then, self: object, variables: variables)
                : value(of: otherwise, self: object, variables: variables)
        case .unboundArgument(let specifier, let position):
            throw PersistenceError.predicate("format argument \(position + 1) (\(specifier)) has no value")
        }
    }

    /// The value at the dotted key path `path` from `base`. Through a collection the path maps
    /// over the elements (flattening nested collections); through `nil` it yields `nil`.
    public func value(at path: String, from base: StoreValue) throws -> StoreValue {
        var current = base
        let components = path.split(separator: ".", omittingEmptySubsequences: false)
        for (position, component) in components.enumerated() {
            let key = String(component)
            if key.isEmpty { throw PersistenceError.predicate("the key path \(path) has an empty component", key: path) }
            if key.hasPrefix("@"), key != "@count", position < components.count - 1 {
                // Foundation's order, `employees.@avg.age`: the operator applies to the rest of the path.
                let rest = components[(position + 1)...].joined(separator: ".")
                return try PredicateFunctions.collectionOperator(key, on: value(at: rest, from: current))
            }
            if key.hasPrefix("@") {
                // Key-value coding's form: `beers.@avg.abv` applies `@avg` to the `abv` of each
                // element; `beers.abv.@avg` (the operator last) is accepted too.
                if position + 1 < components.count {
                    let rest = components[(position + 1)...].joined(separator: ".")
                    var values: [StoreValue] = []
                    for element in PredicateFunctions.elements(of: current) {
                        let value = try value(at: rest, from: element)
                        if case .array(let nested) = value { values.append(contentsOf: nested) } else { values.append(value) }
                    }
                    return try PredicateFunctions.collectionOperator(key, on: current.isNull ? .null : .array(values))
                }
                current = try PredicateFunctions.collectionOperator(key, on: current)
            } else if key == "SELF" || key == "self" {
                continue
            } else {
                current = try value(forKey: key, of: current)
            }
        }
        return current
    }

    private func value(forKey key: String, of base: StoreValue) throws -> StoreValue {
        switch base {
        case .null:
            return .null
        case .object(let id):
            return try resolver.value(forKey: key, of: id).storeValue
        case .array(let elements):
            var result: [StoreValue] = []
            for element in elements {
                let value = try value(forKey: key, of: element)
                if case .array(let nested) = value { result.append(contentsOf: nested) } else { result.append(value) }
            }
            return .array(result)
        default:
            throw PersistenceError.predicate("the key \(key) cannot be read from the value \(base), which is not an object", key: key)
        }
    }

    private func variable(_ name: String, in variables: [String: StoreValue]) throws -> StoreValue {
        guard let value = variables[name] else {
            throw PersistenceError.predicate("the variable $\(name) is not bound", key: "$" + name)
        }
        return value
    }
}

/// An evaluator is as sendable as the resolver it reads through.
extension PredicateEvaluator: Sendable where Resolver: Sendable {}
