extension FetchPredicate {
    /// The predicate with each key path that `replacement` answers replaced by the expression
    /// it returns; used to let a `HAVING` predicate name aggregates and grouped values.
    func replacingKeyPaths(_ replacement: (String) -> FetchExpression?) -> FetchPredicate {
        switch self {
        case .alwaysTrue, .alwaysFalse:
            return self
        case .compound(var compound):
            compound.subpredicates = compound.subpredicates.map { $0.replacingKeyPaths(replacement) }
            return .compound(compound)
        case .comparison(var comparison):
            comparison.left = comparison.left.replacingKeyPaths(replacement)
            comparison.right = comparison.right.replacingKeyPaths(replacement)
            return .comparison(comparison)
        }
    }
}

extension FetchExpression {
    /// The expression with each key path that `replacement` answers replaced.
    func replacingKeyPaths(_ replacement: (String) -> FetchExpression?) -> FetchExpression {
        switch self {
        case .keyPath(let path):
            return replacement(path) ?? self
        case .member(let base, let path):
            return .member(base.replacingKeyPaths(replacement), path)
        case .function(let name, let arguments):
            return .function(name, arguments.map { $0.replacingKeyPaths(replacement) })
        case .aggregate(let elements):
            return .aggregate(elements.map { $0.replacingKeyPaths(replacement) })
        case .conditional(let condition, let then, let otherwise):
            return .conditional(condition.replacingKeyPaths(replacement), then.replacingKeyPaths(replacement),
                                otherwise.replacingKeyPaths(replacement))
        case .constant, .evaluatedObject, .variable, .subquery, .unboundArgument:
            return self
        }
    }
}
