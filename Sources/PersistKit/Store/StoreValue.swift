import Foundation

/// One attribute or to-one relationship value, as contexts and stores exchange it.
///
/// Rows are arrays of `StoreValue` laid out by ``EntityDescription/slots``, so a row is one
/// flat allocation rather than a dictionary. Predicates use the same type for constants.
public enum StoreValue: Sendable, Hashable {
    /// No value (`nil`, SQL `NULL`).
    case null
    /// Any integer attribute type, and booleans stored as 0 or 1 by SQL stores.
    case integer(Int64)
    /// `Double` and `Float` attributes.
    case double(Double)
    /// `Decimal` attributes.
    case decimal(Decimal)
    /// `String` attributes.
    case string(String)
    /// `Boolean` attributes.
    case bool(Bool)
    /// `Date` attributes.
    case date(Date)
    /// `Binary Data` attributes, and transformable attributes after transformation.
    case data(Data)
    /// `UUID` attributes.
    case uuid(UUID)
    /// `URI` attributes.
    case url(URL)
    /// A to-one relationship's destination, or an object in a predicate.
    case object(ManagedObjectID)
    /// A collection in a predicate (`IN {1, 2}`, `BETWEEN {1, 5}`).
    case array([StoreValue])

    /// Whether the value holds no reference: ``null``, an integer, a floating-point number, a
    /// decimal, a Boolean, a date or a UUID. Storage that holds only such values is freed
    /// without destroying them one by one.
    var holdsNoReference: Bool {
        @inline(__always) get {
            switch self {
            case .null, .integer, .double, .decimal, .bool, .date, .uuid: return true
            case .string, .data, .url, .object, .array: return false
            }
        }
    }

    /// Whether this is ``null``.
    @inlinable public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value as a Swift value: `Int64`, `Double`, `Decimal`, `String`, `Bool`, `Date`,
    /// `Data`, `UUID`, `URL`, ``ManagedObjectID``, `[Any?]`, or `nil` for ``null``.
    public var anyValue: Any? {
        switch self {
        case .null: return nil
        case .integer(let v): return v
        case .double(let v): return v
        case .decimal(let v): return v
        case .string(let v): return v
        case .bool(let v): return v
        case .date(let v): return v
        case .data(let v): return v
        case .uuid(let v): return v
        case .url(let v): return v
        case .object(let v): return v
        case .array(let v): return v.map(\.anyValue)
        }
    }
}
