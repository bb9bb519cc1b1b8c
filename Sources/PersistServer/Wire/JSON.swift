/// A JSON value as the wire protocol carries it.
///
/// Keeps JSON's types apart (`2` is ``integer(_:)``, `2.0` and `2.5` are ``double(_:)``, `true`
/// is not `1`) so that values can be checked against attribute types exactly, and keeps the
/// members of an object in order so that encoding is deterministic: the same value always
/// gives the same bytes.
public enum JSON: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object, its members in order.
    case object([Member])

    /// One member of an object.
    public struct Member: Sendable, Hashable {
        /// The member's name.
        public var key: String
        /// The member's value.
        public var value: JSON
        /// Creates a member.
        public init(_ key: String, _ value: JSON) {
            self.key = key
            self.value = value
        }
    }

    /// An object from `(key, value)` pairs, in their order.
    public static func object(_ pairs: KeyValuePairs<String, JSON>) -> JSON {
        .object(pairs.map { Member($0.key, $0.value) })
    }

    /// The value of the last member named `key`, when this is an object.
    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// The object's members, or `nil` if this is not an object.
    public var members: [Member]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The string, or `nil` if this is not a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The array, or `nil` if this is not an array.
    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The name of the value's JSON type, for error messages: `a string`, `an integer`, ….
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer: return "an integer"
        case .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
