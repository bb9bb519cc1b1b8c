import Foundation

/// Turns the value of a transformable attribute into bytes for the store, and back.
///
/// Core Data uses `ValueTransformer` subclasses registered by name; Foundation on Linux has no
/// `ValueTransformer`, so PersistKit has this protocol and a registry
/// (``AttributeValueTransformers``). An attribute names its transformer with
/// ``AttributeDescription/valueTransformerName``; with no name, ``JSONAttributeValueTransformer``
/// is used.
public protocol AttributeValueTransformer: Sendable {
    /// The bytes to store for `value`; throws if the value cannot be represented.
    func transformedValue(_ value: Any) throws -> Data
    /// The value the bytes `data` stand for.
    func reverseTransformedValue(_ data: Data) throws -> Any
}

/// The default transformer: values that `JSONSerialization` accepts (strings, numbers, booleans,
/// arrays and dictionaries of them), stored as UTF-8 JSON.
public struct JSONAttributeValueTransformer: AttributeValueTransformer {
    /// Creates the JSON transformer.
    public init() {}

    /// Encodes `value` as JSON.
    public func transformedValue(_ value: Any) throws -> Data {
        guard JSONSerialization.isValidJSONObject([value]) else {
            throw PersistenceError(.validationInvalidType, "value of type \(type(of: value)) cannot be stored as JSON")
        }
        return try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys])
    }

    /// Decodes JSON.
    public func reverseTransformedValue(_ data: Data) throws -> Any {
        try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }
}

/// Passes `Data` through unchanged: used for transformers a model names but this process has
/// not registered (such as Apple's `NSSecureUnarchiveFromData`), so their bytes survive intact.
public struct DataPassthroughValueTransformer: AttributeValueTransformer {
    /// Creates the pass-through transformer.
    public init() {}

    /// Returns `value` if it is `Data`; throws otherwise.
    public func transformedValue(_ value: Any) throws -> Data {
        guard let data = value as? Data else {
            throw PersistenceError(.validationInvalidType, "this attribute's transformer is not registered; only Data values can be stored")
        }
        return data
    }

    /// Returns the bytes as they are.
    public func reverseTransformedValue(_ data: Data) throws -> Any { data }
}

/// The registry of named ``AttributeValueTransformer``s (`ValueTransformer.setValueTransformer(_:forName:)`).
public enum AttributeValueTransformers {
    private static let registry = Locked<[String: any AttributeValueTransformer]>([:])

    /// Registers `transformer` under `name`, replacing any earlier one.
    public static func register(_ transformer: any AttributeValueTransformer, forName name: String) {
        registry.withLock { $0[name] = transformer }
    }

    /// The transformer for an attribute: its named one if registered, JSON when it names none,
    /// and a pass-through of raw `Data` when it names one that is not registered.
    public static func transformer(for attribute: AttributeDescription) -> any AttributeValueTransformer {
        guard let name = attribute.valueTransformerName, !name.isEmpty else { return JSONAttributeValueTransformer() }
        if let registered = registry.withLock({ $0[name] }) { return registered }
        return DataPassthroughValueTransformer()
    }
}
