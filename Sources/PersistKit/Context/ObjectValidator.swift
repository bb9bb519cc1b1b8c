import Foundation

/// The model's validation rules, applied to objects at save: required values, ranges,
/// lengths, patterns, relationship counts and deny delete rules.
enum ObjectValidator {
    /// The error for one attribute value, or `nil` if it is valid (not counting "required").
    static func check(_ value: StoreValue, attribute: AttributeDescription, objectID: ManagedObjectID) -> PersistenceError? {
        // Most attributes have no bounds and no pattern: nothing to check, nothing to build.
        if attribute.minValue == nil && attribute.maxValue == nil && attribute.regularExpression == nil { return nil }
        // The message is built only for a value that breaks a rule.
        func error(_ code: PersistenceError.Code, _ message: String) -> PersistenceError {
            PersistenceError(code, "\(objectID.entity.name).\(attribute.name) \(message)", objectID: objectID, key: attribute.name)
        }
        switch value {
        case .null:
            return nil
        case .integer, .double, .decimal:
            guard let number = numeric(value) else { return nil }
            if let min = attribute.minValue.flatMap(numeric), number < min {
                return error(.validationNumberTooSmall, "is \(display(value)), less than the minimum \(display(attribute.minValue ?? .null))")
            }
            if let max = attribute.maxValue.flatMap(numeric), number > max {
                return error(.validationNumberTooLarge, "is \(display(value)), more than the maximum \(display(attribute.maxValue ?? .null))")
            }
        case .date(let date):
            if case .date(let min)? = attribute.minValue, date < min {
                return error(.validationDateTooSoon, "is \(date), before the minimum \(min)")
            }
            if case .date(let max)? = attribute.maxValue, date > max {
                return error(.validationDateTooLate, "is \(date), after the maximum \(max)")
            }
        case .string(let string):
            let length = string.count
            if let min = attribute.minValue.flatMap(numeric), Decimal(length) < min {
                return error(.validationStringTooShort, "has \(length) characters, fewer than the minimum \(min)")
            }
            if let max = attribute.maxValue.flatMap(numeric), Decimal(length) > max {
                return error(.validationStringTooLong, "has \(length) characters, more than the maximum \(max)")
            }
            if let pattern = attribute.regularExpression, !pattern.isEmpty, !wholeMatch(string, pattern: pattern) {
                return error(.validationStringPatternMatching, "\"\(string)\" does not match the pattern \(pattern)")
            }
        case .data(let data) where attribute.attributeType == .binaryData:
            if let min = attribute.minValue.flatMap(numeric), Decimal(data.count) < min {
                return error(.validationStringTooShort, "has \(data.count) bytes, fewer than the minimum \(min)")
            }
            if let max = attribute.maxValue.flatMap(numeric), Decimal(data.count) > max {
                return error(.validationStringTooLong, "has \(data.count) bytes, more than the maximum \(max)")
            }
        default:
            break
        }
        return nil
    }

    private static func numeric(_ value: StoreValue) -> Decimal? {
        switch value {
        case .integer(let v): return Decimal(v)
        case .double(let v): return v.isFinite ? Decimal(v) : nil
        case .decimal(let v): return v
        default: return nil
        }
    }

    private static func display(_ value: StoreValue) -> String {
        value.anyValue.map { "\($0)" } ?? "nil"
    }

    private static func wholeMatch(_ string: String, pattern: String) -> Bool {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return false }
        let range = NSRange(string.startIndex..., in: string)
        guard let match = regex.firstMatch(in: string, options: [.anchored], range: range) else { return false }
        return match.range == range
    }
}

extension ManagedObject {
    /// Every model rule this object breaks, as errors naming the object and key.
    func modelValidationErrors() -> [PersistenceError] {
        willAccessValue()
        // The rules borrowed from the entity, not retained for the checks.
        return entity.withRules { rules in modelValidationErrors(rules) }
    }

    /// ``modelValidationErrors()`` by `rules`, the entity's.
    private func modelValidationErrors(_ rules: EntityRules) -> [PersistenceError] {
        var errors: [PersistenceError] = []
        if let required = rules.onlyRequiredSlots {
            // Only required slots to check: a valid object (the common case) is found so with
            // one read of its values in place; an invalid one gets its errors from the loop below.
            if !values.anyNull(at: required) { return [] }
        }
        for rule in rules.slots where rule.index < values.count {
            let value = values[rule.index]
            if rule.isRequired && value.isNull {
                errors.append(PersistenceError(.validationMissingMandatoryProperty,
                                               "\(entity.name).\(rule.property.name) is required",
                                               objectID: objectID, key: rule.property.name))
                continue
            }
            if let attribute = rule.checked, let error = ObjectValidator.check(value, attribute: attribute, objectID: objectID) {
                errors.append(error)
            }
        }
        for relationship in rules.toMany {
            let count = toManyMembers(relationship).count
            if count == 0 && !relationship.isOptional {
                errors.append(PersistenceError(.validationMissingMandatoryProperty,
                                               "\(entity.name).\(relationship.name) is required and has no objects",
                                               objectID: objectID, key: relationship.name))
            } else if count > 0 && count < relationship.minCount {
                errors.append(PersistenceError(.validationRelationshipLacksMinimumCount,
                                               "\(entity.name).\(relationship.name) has \(count) objects, fewer than the minimum \(relationship.minCount)",
                                               objectID: objectID, key: relationship.name))
            } else if relationship.maxCount > 0 && count > relationship.maxCount {
                errors.append(PersistenceError(.validationRelationshipExceedsMaximumCount,
                                               "\(entity.name).\(relationship.name) has \(count) objects, more than the maximum \(relationship.maxCount)",
                                               objectID: objectID, key: relationship.name))
            }
        }
        return errors
    }

    /// Throws the object's model validation errors, one or several.
    func validateAgainstModel() throws {
        let errors = modelValidationErrors()
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 {
            throw PersistenceError(.validationMultipleErrors, "\(errors.count) validation errors on \(entity.name)",
                                   objectID: objectID, detailedErrors: errors)
        }
    }

    /// Throws if a deny delete rule forbids deleting this object.
    func validateDeleteRules() throws {
        // Asked of the entity's rules first: walking its properties cast each one.
        guard entity.withRules({ $0.hasDenyRule }) else { return }
        for case let relationship as RelationshipDescription in entity.allProperties where relationship.deleteRule == .deny {
            let hasDestinations = relationship.isToMany
                ? !toManyMembers(relationship).isEmpty
                : toOneID(relationship) != nil
            if hasDestinations {
                throw PersistenceError(.validationRelationshipDeniedDelete,
                                       "\(entity.name) cannot be deleted while \(relationship.name) is not empty (deny rule)",
                                       objectID: objectID, key: relationship.name)
            }
        }
    }
}
