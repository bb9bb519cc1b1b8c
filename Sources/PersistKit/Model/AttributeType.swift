import Foundation

/// The type of an attribute's value, one case per Core Data attribute type.
///
/// The corresponding Core Data type is `NSAttributeDescription.AttributeType`
/// (`NSAttributeType` in Objective-C).
public enum AttributeType: String, Sendable, Hashable, CaseIterable, Codable {
    /// A 16-bit signed integer (`Integer 16`).
    case integer16
    /// A 32-bit signed integer (`Integer 32`).
    case integer32
    /// A 64-bit signed integer (`Integer 64`).
    case integer64
    /// An arbitrary-precision decimal number (`Decimal`).
    case decimal
    /// A 64-bit floating point number (`Double`).
    case double
    /// A 32-bit floating point number (`Float`).
    case float
    /// A Unicode string (`String`).
    case string
    /// A Boolean (`Boolean`).
    case boolean
    /// A point in time (`Date`), stored as seconds since 2001-01-01 00:00:00 UTC.
    case date
    /// Raw bytes (`Binary Data`).
    case binaryData
    /// A UUID (`UUID`).
    case uuid
    /// A URL (`URI`).
    case uri
    /// A value stored as bytes through a named ``AttributeValueTransformer`` (`Transformable`).
    case transformable
    /// A value that is never stored (`Undefined`); only valid for transient attributes.
    case undefined
    /// The object ID of another object (`Object ID`); only valid for transient attributes
    /// and in fetched results.
    case objectID

    /// The name Xcode writes in a `.xcdatamodel` file's `attributeType` attribute.
    public var xcodeName: String {
        switch self {
        case .integer16: return "Integer 16"
        case .integer32: return "Integer 32"
        case .integer64: return "Integer 64"
        case .decimal: return "Decimal"
        case .double: return "Double"
        case .float: return "Float"
        case .string: return "String"
        case .boolean: return "Boolean"
        case .date: return "Date"
        case .binaryData: return "Binary"
        case .uuid: return "UUID"
        case .uri: return "URI"
        case .transformable: return "Transformable"
        case .undefined: return "Undefined"
        case .objectID: return "ObjectID"
        }
    }

    /// The attribute type Xcode names `name` in a `.xcdatamodel` file, or `nil` if unknown.
    public init?(xcodeName name: String) {
        guard let type = AttributeType.allCases.first(where: { $0.xcodeName == name }) else { return nil }
        self = type
    }

    /// Whether values of this type are integers.
    public var isInteger: Bool {
        self == .integer16 || self == .integer32 || self == .integer64
    }

    /// Whether values of this type are numbers (integers, floating point or decimal).
    public var isNumeric: Bool {
        isInteger || self == .double || self == .float || self == .decimal
    }

    /// The smallest and largest value an integer type holds, or `nil` for other types.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: return Int64(Int16.min)...Int64(Int16.max)
        case .integer32: return Int64(Int32.min)...Int64(Int32.max)
        case .integer64: return Int64.min...Int64.max
        default: return nil
        }
    }
}
