import Foundation

extension ManagedObjectModel {
    /// Checks that an attribute's minimum and maximum suit its type and form a range.
    func validateBounds(of attribute: AttributeDescription, in entity: EntityDescription, file: String?) throws {
        func fail(_ message: String) -> ModelError {
            ModelError(file: file, entity: entity.name, property: attribute.name, message)
        }
        let type = attribute.attributeType
        for (word, bound) in [("minimum", attribute.minValue), ("maximum", attribute.maxValue)] {
            guard let bound, !bound.isNull else { continue }
            switch AttributeValueCoding.boundKind(of: type) {
            case .none:
                throw fail("a \(word) is not allowed for type \(type.xcodeName)")
            case .length:
                guard case .integer(let length) = bound, length >= 0 else {
                    throw fail("\(word) \(AttributeValueCoding.json(for: bound).textForMessage) is not a valid length (a non-negative integer)")
                }
            case .value:
                guard type.accepts(bound) else {
                    throw fail("\(word) \(AttributeValueCoding.json(for: bound).textForMessage) is not a valid \(type.xcodeName)")
                }
            }
        }
        if let min = attribute.minValue, let max = attribute.maxValue, let ascending = Self.isAscending(min, max), !ascending {
            throw fail("minimum \(AttributeValueCoding.json(for: min).textForMessage) is greater than maximum \(AttributeValueCoding.json(for: max).textForMessage)")
        }
    }

    /// Whether `a <= b`, or `nil` when the two values cannot be compared.
    static func isAscending(_ a: StoreValue, _ b: StoreValue) -> Bool? {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x <= y
        case (.double(let x), .double(let y)): return x <= y
        case (.decimal(let x), .decimal(let y)): return x <= y
        case (.date(let x), .date(let y)): return x <= y
        default: return nil
        }
    }
}
