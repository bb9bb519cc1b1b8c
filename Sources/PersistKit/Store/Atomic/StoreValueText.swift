import Foundation

/// The text form of stored values, for the XML store: a type name and a string that reads back
/// to exactly the same value.
///
/// Doubles and dates (seconds since 2001-01-01) use Swift's shortest round-tripping form
/// (`inf`, `-inf` and `nan` included), decimals their canonical string, data base64, UUIDs their
/// canonical string, URLs their absolute string.
enum StoreValueText {
    /// The type name and text of `value`; `nil` text for ``StoreValue/null`` and objects,
    /// which have no text. Arrays are not stored values and give `nil`.
    static func encode(_ value: StoreValue) -> (type: String, text: String?)? {
        switch value {
        case .null: return ("null", nil)
        case .integer(let v): return ("integer", String(v))
        case .double(let v): return ("double", v.description)
        case .decimal(let v): return ("decimal", v.description)
        case .string(let v): return ("string", v)
        case .bool(let v): return ("bool", v ? "true" : "false")
        case .date(let v): return ("date", v.timeIntervalSinceReferenceDate.description)
        case .data(let v): return ("data", v.base64EncodedString())
        case .uuid(let v): return ("uuid", v.uuidString)
        case .url(let v): return ("url", v.absoluteString)
        case .object: return ("object", nil)
        case .array: return nil
        }
    }

    /// The value of type `type` written as `text`, or `nil` if the text is not such a value.
    /// Objects are not decoded here.
    static func decode(type: String, text: String) -> StoreValue? {
        switch type {
        case "null": return .null
        case "integer": return Int64(text).map(StoreValue.integer)
        case "double": return Double(text).map(StoreValue.double)
        case "decimal":
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { return nil }
            return .decimal(decimal)
        case "string": return .string(text)
        case "bool":
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return nil
            }
        case "date": return Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case "data": return Data(base64Encoded: text).map(StoreValue.data)
        case "uuid": return UUID(uuidString: text).map(StoreValue.uuid)
        case "url": return URL(string: text).map(StoreValue.url)
        default: return nil
        }
    }

    /// Whether `string` survives as XML character data unchanged: no control characters
    /// (XML 1.0 forbids most, and parsers rewrite `\r`), no non-characters, no leading or
    /// trailing white space. Other strings are written base64-encoded.
    static func isXMLSafe(_ string: String) -> Bool {
        if let first = string.unicodeScalars.first, first.properties.isWhitespace { return false }
        if let last = string.unicodeScalars.last, last.properties.isWhitespace { return false }
        return string.unicodeScalars.allSatisfy { scalar in
            scalar.value >= 0x20 && !(0x7F...0x9F).contains(scalar.value) && scalar.value != 0xFFFE && scalar.value != 0xFFFF
        }
    }
}
