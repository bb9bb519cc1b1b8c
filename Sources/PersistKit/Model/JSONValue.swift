import Foundation

/// A JSON value, as the model loader reads it and the model writer prints it.
///
/// Decoding keeps the JSON types apart (`true` is not `1`, `2` is not `2.5`), so that
/// attribute values can be checked against their attribute type. Printing is deterministic:
/// keys sorted by their UTF-8 bytes, two-space indentation, numbers in Swift's shortest
/// round-trip form, so the same value always prints to the same bytes.
enum JSONValue: Sendable, Hashable {
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
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Parses a JSON document; throws a ``ModelError`` naming `file` when it is not valid JSON.
    static func parse(_ data: Data, file: String?) throws -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch let error as DecodingError {
            let detail: String
            switch error {
            case .dataCorrupted(let context): detail = context.debugDescription
            default: detail = "\(error)"
            }
            throw ModelError(file: file, "not valid JSON: \(detail)")
        }
    }

    /// The name of this value's JSON type, for error messages.
    var typeName: String {
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

    /// The document as pretty-printed UTF-8 with sorted keys and a final newline.
    func prettyPrinted() -> Data {
        var text = ""
        write(to: &text, indent: 0)
        text += "\n"
        return Data(text.utf8)
    }

    private func write(to text: inout String, indent: Int) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .integer(let value): text += String(value)
        case .double(let value):
            // Non-finite numbers have no JSON form; the writers never produce them.
            text += value.isFinite ? String(value) : "null"
        case .string(let value): JSONValue.writeString(value, to: &text)
        case .array(let values):
            if values.isEmpty { text += "[]"; return }
            text += "[\n"
            for (index, value) in values.enumerated() {
                text += String(repeating: " ", count: indent + 2)
                value.write(to: &text, indent: indent + 2)
                text += index == values.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "]"
        case .object(let members):
            if members.isEmpty { text += "{}"; return }
            text += "{\n"
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                text += String(repeating: " ", count: indent + 2)
                JSONValue.writeString(key, to: &text)
                text += ": "
                // The key comes from `members.keys`, so the lookup cannot fail.
                members[key]!.write(to: &text, indent: indent + 2)
                text += index == keys.count - 1 ? "\n" : ",\n"
            }
            text += String(repeating: " ", count: indent) + "}"
        }
    }

    private static func writeString(_ value: String, to text: inout String) {
        JSONStringLiteral.append(value, to: &text)
    }
}

extension JSONValue: Decodable {
    /// Decodes any JSON value, keeping booleans, integers and other numbers apart.
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

extension JSONValue {
    /// The value as it would appear in a JSON model file, for error messages.
    var textForMessage: String {
        switch self {
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        default: return typeName
        }
    }
}
