import Foundation
import PersistKit

/// How an attribute appears in a generated class: its Swift type and how it is read.
///
/// - Numbers and `Bool` with `usesScalarValueType`: the non-optional scalar (`Int16`, `Int32`,
///   `Int64`, `Double`, `Float`, `Decimal`, `Bool`); a missing value reads as `0`/`false`.
/// - Every other attribute: an optional (`Int64?`, `String?`, `Date?`, `Data?`, `UUID?`,
///   `URL?`, `Decimal?`), whatever the model's `isOptional` says, because a required value is
///   still `nil` until it is set (validation runs at save).
/// - Transformable: the Swift type its `attributeValueClassName` names when that is one of
///   ``transformableTypes``, otherwise `Any?`. `Undefined`: `Any?`. `Object ID`: `ManagedObjectID?`.
///
/// A plain attribute is read with PersistKit's typed getter for its type (`int64(_:)`,
/// `string(_:)`, … through an ``AttributeKey`` the class keeps), narrowed to `Int16`, `Int32` or `Float` where the getter gives a
/// wider type; the others with `value(forKey:)` and a cast.
struct AttributeSwiftType: Equatable {
    /// The type without the optional marker (`Int64`, `[String: Any]`); `Any` for untyped values.
    var base: String
    /// Whether the property is optional.
    var isOptional: Bool
    /// The value a missing scalar reads as (`0`, `false`); `nil` for optionals.
    var fallback: String?
    /// The name of the typed getter that reads the attribute (`int64`, `string`); `nil` for
    /// one read with `value(forKey:)` and a cast (transformable, undefined, object ID).
    var typedGetter: String?
    /// The conversion of the typed getter's value to ``base``, a closure body over `$0`
    /// (`Int16(truncatingIfNeeded: $0)`, `Float($0)`); `nil` when the getter gives ``base``.
    var narrowing: String?
    /// The conversion of a ``base`` value to what the typed setter takes (`Int64($0)`,
    /// `Double($0)`); `nil` when the setter takes ``base``.
    var widening: String?

    /// The declared type: `Int64`, `String?`, `Any?`.
    var declared: String { isOptional ? base + "?" : base }

    /// Value class names of transformable attributes that map to a Swift type the default JSON
    /// transformer (or a registered one) can give back; module prefixes are ignored.
    static let transformableTypes: [String: String] = [
        "String": "String", "NSString": "String",
        "[String]": "[String]",
        "Array": "[Any]", "NSArray": "[Any]", "[Any]": "[Any]",
        "Dictionary": "[String: Any]", "NSDictionary": "[String: Any]", "[String: Any]": "[String: Any]",
        "[String: String]": "[String: String]",
        "Data": "Data", "NSData": "Data",
    ]

    /// The Swift type of `attribute`, with Foundation and PersistKit names qualified as `plan` needs.
    init(_ attribute: AttributeDescription, plan: ModelPlan) {
        let scalar = attribute.usesScalarValueType
        func number(_ name: String, _ zero: String) -> (String, Bool, String?) {
            scalar ? (plan.qualified(name), false, zero) : (plan.qualified(name), true, nil)
        }
        let result: (String, Bool, String?)
        switch attribute.attributeType {
        case .integer16: result = number("Int16", "0")
        case .integer32: result = number("Int32", "0")
        case .integer64: result = number("Int64", "0")
        case .double: result = number("Double", "0")
        case .float: result = number("Float", "0")
        case .decimal: result = number("Decimal", "0")
        case .boolean: result = number("Bool", "false")
        case .string: result = (plan.qualified("String"), true, nil)
        case .date: result = (plan.qualified("Date"), true, nil)
        case .binaryData: result = (plan.qualified("Data"), true, nil)
        case .uuid: result = (plan.qualified("UUID"), true, nil)
        case .uri: result = (plan.qualified("URL"), true, nil)
        case .objectID: result = (plan.qualified("ManagedObjectID"), true, nil)
        case .undefined: result = ("Any", true, nil)
        case .transformable:
            result = (Self.transformableType(attribute.attributeValueClassName, plan: plan) ?? "Any", true, nil)
        }
        (base, isOptional, fallback) = result
        switch attribute.attributeType {
        // Integers are range-checked when set, so narrowing keeps the value, as `value(forKey:)`
        // does for these types.
        case .integer16, .integer32:
            (typedGetter, narrowing, widening) = ("int64", "\(base)(truncatingIfNeeded: $0)", "\(plan.qualified("Int64"))($0)")
        case .integer64: typedGetter = "int64"
        case .double: typedGetter = "double"
        case .float: (typedGetter, narrowing, widening) = ("double", "\(base)($0)", "\(plan.qualified("Double"))($0)")
        case .decimal: typedGetter = "decimal"
        case .boolean: typedGetter = "bool"
        case .string: typedGetter = "string"
        case .date: typedGetter = "date"
        case .binaryData: typedGetter = "data"
        case .uuid: typedGetter = "uuid"
        case .uri: typedGetter = "url"
        case .objectID, .undefined, .transformable: typedGetter = nil
        }
    }

    /// The Swift type for a transformable attribute's value class name, or `nil` for `Any`.
    static func transformableType(_ className: String?, plan: ModelPlan) -> String? {
        guard var name = className?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { return nil }
        if !name.hasPrefix("["), let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
        guard let type = transformableTypes[name] else { return nil }
        // Qualify the names inside, in case a generated class shadows them.
        return type
            .replacingOccurrences(of: "String", with: plan.qualified("String"))
            .replacingOccurrences(of: "Data", with: plan.qualified("Data"))
    }

    /// Whether the attribute is read with a typed getter, which takes an ``AttributeKey`` the
    /// class keeps (``getter(key:attributeKey:)``).
    var usesAttributeKey: Bool { base != "Any" && typedGetter != nil }

    /// The typed setter of the attribute (`setInt64`, `setString`): the typed getter's
    /// counterpart (``ManagedObject/setInt64(_:for:)``, …); `nil` when it has no typed getter.
    var typedSetter: String? {
        guard let typedGetter else { return nil }
        switch typedGetter {
        case "uuid": return "setUUID"
        case "url": return "setURL"
        default: return "set" + typedGetter.prefix(1).uppercased() + typedGetter.dropFirst()
        }
    }

    /// The setter statement for the attribute whose key literal is `key`: a typed setter
    /// writes through `attributeKey` when given, anything else goes through `setValue(_:forKey:)`.
    func setter(key: String, attributeKey: String? = nil) -> String {
        guard let attributeKey, usesAttributeKey, let typedSetter else { return "setValue(newValue, forKey: \(key))" }
        let value: String
        switch (widening, isOptional) {
        case (nil, _): value = "newValue"
        case (let widening?, false): value = widening.replacingOccurrences(of: "$0", with: "newValue")
        case (let widening?, true): value = "newValue.map { \(widening) }"
        }
        return "\(typedSetter)(\(value), for: \(attributeKey))"
    }

    /// The getter expression for the attribute whose key literal is `key`; a typed getter reads
    /// through `attributeKey`, the expression of the class's ``AttributeKey`` for it, when given.
    func getter(key: String, attributeKey: String? = nil) -> String {
        if base == "Any" { return "value(forKey: \(key))" }
        let read: String
        if let typedGetter {
            read = "\(typedGetter)(\(attributeKey ?? "forKey: \(key)"))" + (narrowing.map { ".map { \($0) }" } ?? "")
        } else {
            read = "value(forKey: \(key)) as? \(base)"
        }
        return fallback.map { "\(read) ?? \($0)" } ?? read
    }
}
