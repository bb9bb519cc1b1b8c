import Foundation

/// Conversions between attribute values (defaults, minimums, maximums) and their written
/// forms: JSON values in our model format, and strings in Xcode's `.xcdatamodel` files.
///
/// Each conversion returns `nil` when the text is not a value of the attribute type; the
/// loaders turn that into a ``ModelError`` naming the entity and property.
enum AttributeValueCoding {
    /// How a minimum or maximum applies to an attribute type: to the value itself
    /// (numbers, dates), to a length (strings, binary data), or not at all.
    enum BoundKind {
        case value
        case length
        case none
    }

    /// What a minimum or maximum of `type` constrains.
    static func boundKind(of type: AttributeType) -> BoundKind {
        switch type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .date: return .value
        case .string, .binaryData, .transformable: return .length
        case .boolean, .uuid, .uri, .undefined, .objectID: return .none
        }
    }

    // MARK: - JSON

    /// The value of `type` written as `json` in our model format, or `nil` if it is not one.
    static func value(fromJSON json: JSONValue, type: AttributeType) -> StoreValue? {
        if case .null = json { return .null }
        switch type {
        case .integer16, .integer32, .integer64:
            guard case .integer(let v) = json, type.integerRange?.contains(v) ?? false else { return nil }
            return .integer(v)
        case .double, .float:
            switch json {
            case .integer(let v): return .double(Double(v))
            case .double(let v): return .double(v)
            default: return nil
            }
        case .decimal:
            switch json {
            case .integer(let v): return .decimal(Decimal(v))
            // Swift prints a double in its shortest round-trip form, so 4.5 becomes exactly 4.5.
            case .double(let v): return decimal(from: String(v)).map(StoreValue.decimal)
            case .string(let s): return decimal(from: s).map(StoreValue.decimal)
            default: return nil
            }
        case .string:
            guard case .string(let s) = json else { return nil }
            return .string(s)
        case .boolean:
            guard case .bool(let b) = json else { return nil }
            return .bool(b)
        case .date:
            guard case .string(let s) = json, let date = iso8601Date(from: s) else { return nil }
            return .date(date)
        case .binaryData:
            guard case .string(let s) = json, let data = Data(base64Encoded: s) else { return nil }
            return .data(data)
        case .uuid:
            guard case .string(let s) = json, let uuid = UUID(uuidString: s) else { return nil }
            return .uuid(uuid)
        case .uri:
            guard case .string(let s) = json, let url = URL(string: s) else { return nil }
            return .url(url)
        case .transformable, .undefined, .objectID:
            return nil
        }
    }

    /// The minimum or maximum of `type` written as `json`, or `nil` if it is not one.
    static func bound(fromJSON json: JSONValue, type: AttributeType) -> StoreValue? {
        switch boundKind(of: type) {
        case .value: return value(fromJSON: json, type: type)
        case .length:
            guard case .integer(let v) = json, v >= 0 else { return nil }
            return .integer(v)
        case .none: return nil
        }
    }

    /// The JSON form of an attribute value in our model format.
    static func json(for value: StoreValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .integer(let v): return .integer(v)
        case .double(let v): return v.isFinite ? .double(v) : .null
        // Written as a string so that no digit is lost to a binary floating point number.
        case .decimal(let v): return .string(decimalText(v))
        case .string(let v): return .string(v)
        case .bool(let v): return .bool(v)
        case .date(let v): return .string(iso8601Text(v))
        case .data(let v): return .string(v.base64EncodedString())
        case .uuid(let v): return .string(v.uuidString)
        case .url(let v): return .string(v.absoluteString)
        case .object(let v): return .string("\(v)")
        case .array(let v): return .array(v.map(json(for:)))
        }
    }

    // MARK: - Xcode

    /// The value of `type` written as `text` in a `.xcdatamodel` file's `defaultValueString`,
    /// `minValueString` or `maxValueString`, or `nil` if it is not one.
    ///
    /// Xcode is lenient and these conversions follow what appears in real model files:
    /// integers accept `YES`/`NO` (1/0) and integral decimals (`0.0`); booleans accept
    /// `YES`/`NO`, `true`/`false` and numbers (non-zero is true).
    static func value(fromXcode text: String, type: AttributeType) -> StoreValue? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16, .integer32, .integer64:
            let v: Int64
            if let parsed = Int64(trimmed) {
                v = parsed
            } else if trimmed == "YES" || trimmed == "NO" {
                v = trimmed == "YES" ? 1 : 0
            } else if let d = Double(trimmed), d.rounded() == d, abs(d) < 9.2e18 {
                v = Int64(d)
            } else {
                return nil
            }
            return type.integerRange?.contains(v) ?? false ? .integer(v) : nil
        case .double, .float:
            return Double(trimmed).flatMap { $0.isFinite ? .double($0) : nil }
        case .decimal:
            return decimal(from: trimmed).map(StoreValue.decimal)
        case .string:
            return .string(text)
        case .boolean:
            switch trimmed.lowercased() {
            case "yes", "true": return .bool(true)
            case "no", "false": return .bool(false)
            default: return Double(trimmed).map { .bool($0 != 0) }
            }
        case .date:
            return xcodeDate(from: trimmed).map(StoreValue.date)
        case .binaryData:
            return Data(base64Encoded: trimmed).map(StoreValue.data)
        case .uuid:
            return UUID(uuidString: trimmed).map(StoreValue.uuid)
        case .uri:
            return URL(string: trimmed).map(StoreValue.url)
        case .transformable, .undefined, .objectID:
            return nil
        }
    }

    /// A minimum or maximum of `type` written as `text` in a `.xcdatamodel` file.
    static func bound(fromXcode text: String, type: AttributeType) -> StoreValue? {
        switch boundKind(of: type) {
        case .value: return value(fromXcode: text, type: type)
        case .length:
            guard let v = Int64(text.trimmingCharacters(in: .whitespaces)), v >= 0 else { return nil }
            return .integer(v)
        case .none: return nil
        }
    }

    /// A date written as seconds since 2001-01-01 00:00:00 UTC (`defaultDateTimeInterval`).
    static func date(fromReferenceInterval text: String) -> Date? {
        guard let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds.isFinite else { return nil }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    // MARK: - Text forms

    /// Parses a decimal number written in full (`-12.50`, `3e2`); `nil` for anything else,
    /// including text that merely starts with a number.
    static func decimal(from text: String) -> Decimal? {
        guard text.wholeMatch(of: /[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?/) != nil else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }

    /// A decimal in plain notation (`-4.5`).
    static func decimalText(_ value: Decimal) -> String {
        value.description
    }

    /// Parses an ISO 8601 date and time with a time zone, with or without fractional seconds.
    static func iso8601Date(from text: String) -> Date? {
        try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }

    /// Formats a date as ISO 8601 in UTC, with milliseconds only when it has a fraction.
    static func iso8601Text(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        let whole = seconds.rounded(.down) == seconds
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: !whole))
    }

    /// Parses a date as Xcode writes it in `defaultValueString` (`2013-04-23 12:00:00 +0000`),
    /// a time zone-less form (read as UTC), or ISO 8601.
    static func xcodeDate(from text: String) -> Date? {
        if let date = iso8601Date(from: text) { return date }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        for format in ["yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
