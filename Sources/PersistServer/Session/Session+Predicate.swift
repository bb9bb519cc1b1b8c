import PersistKit

extension Session {
    /// The predicate `"predicate"` holds, with `"arguments"` filled in (an array for
    /// `%@`/`%K`, an object for `$VARIABLES`), checked against `entity`.
    func predicate(_ fields: RequestFields, entity: EntityDescription) throws(WireError) -> FetchPredicate? {
        guard let format = try fields.string("predicate") else {
            if fields.has("arguments") { throw WireError(.badRequest, "\(fields.op): \"arguments\" without \"predicate\"") }
            return nil
        }
        return try parsePredicate(format, arguments: fields.body["arguments"], op: fields.op, entity: entity)
    }

    /// Parses a predicate format string with its arguments; type-checks it against `entity` when given.
    ///
    /// - Throws: `predicate_syntax` with `offset` (a character offset in the format) and
    ///   `expected`; `unknown_property` or `type_mismatch` when it does not fit the entity;
    ///   `bad_request` for a missing `$VARIABLE` or a `%@` without its argument.
    func parsePredicate(_ format: String, arguments: JSON?, op: String, entity: EntityDescription?) throws(WireError) -> FetchPredicate {
        var positional: [StoreValue] = []
        var variables: [String: StoreValue]?
        switch arguments {
        case nil, .null?:
            break
        case .array(let elements)?:
            for element in elements { positional.append(try WireStoreValue.argument(element, coordinator: state.coordinator)) }
        case .object(let members)?:
            var values: [String: StoreValue] = [:]
            for member in members { values[member.key] = try WireStoreValue.argument(member.value, coordinator: state.coordinator) }
            variables = values
        case let other?:
            throw WireError(.badRequest, "\(op): \"arguments\" must be an array (for %@, %K) or an object (for $VARIABLES), not \(other.typeName)")
        }
        var predicate: FetchPredicate
        do {
            predicate = try FetchPredicate(format: format, arguments: positional)
            if let variables { predicate = try predicate.withSubstitutionVariables(variables) }
        } catch let error as PredicateSyntaxError {
            var details = [JSON.Member("offset", .integer(Int64(error.offset)))]
            if let expected = error.expected { details.append(JSON.Member("expected", .string(expected))) }
            details.append(JSON.Member("predicate", .string(format)))
            throw WireError(error.isTooComplex ? .predicateTooComplex : .predicateSyntax, error.message, details: details)
        } catch let error as PersistenceError {
            throw WireError(.badRequest, "\(op): \(error.message)", details: [JSON.Member("predicate", .string(format))])
        } catch {
            throw WireError(.badRequest, "\(op): \(error)", details: [JSON.Member("predicate", .string(format))])
        }
        if Self.hasUnboundArgument(predicate) {
            throw WireError(.badRequest, "\(op): the predicate has more %@/%K specifiers than arguments",
                            details: [JSON.Member("predicate", .string(format))])
        }
        if let entity {
            do {
                try predicate.typeCheck(against: entity)
            } catch let error as PredicateTypeError {
                let code: WireError.Code = error.message.contains("has no property") ? .unknownProperty : .typeMismatch
                var details = [JSON.Member("entity", .string(error.entityName))]
                if let keyPath = error.keyPath { details.append(JSON.Member("key", .string(keyPath))) }
                details.append(JSON.Member("comparison", .string(error.comparison)))
                throw WireError(code, error.message, details: details)
            } catch {
                throw WireError(.typeMismatch, "\(error)")
            }
        }
        return predicate
    }

    static func hasUnboundArgument(_ predicate: FetchPredicate) -> Bool {
        switch predicate {
        case .alwaysTrue, .alwaysFalse: return false
        case .compound(let compound): return compound.subpredicates.contains(where: hasUnboundArgument)
        case .comparison(let comparison): return hasUnboundArgument(comparison.left) || hasUnboundArgument(comparison.right)
        }
    }

    static func hasUnboundArgument(_ expression: FetchExpression) -> Bool {
        switch expression {
        case .unboundArgument: return true
        case .function(_, let arguments), .aggregate(let arguments): return arguments.contains(where: hasUnboundArgument)
        case .member(let base, _): return hasUnboundArgument(base)
        case .subquery(let collection, _, let predicate): return hasUnboundArgument(collection) || hasUnboundArgument(predicate)
        case .conditional(let predicate, let then, let otherwise):
            return hasUnboundArgument(predicate) || hasUnboundArgument(then) || hasUnboundArgument(otherwise)
        default: return false
        }
    }
}
