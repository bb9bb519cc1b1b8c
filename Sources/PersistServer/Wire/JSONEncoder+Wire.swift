extension JSON {
    /// The value as compact JSON text on one line: no whitespace, members in order, strings
    /// escaped as RFC 8259 requires (and `\u2028`/`\u2029` too, so the text is safe everywhere),
    /// integers exact, doubles in Swift's shortest round-trip form (always with a `.` or an
    /// exponent, so they read back as doubles), non-finite doubles as `null`.
    public var encoded: String {
        var text = ""
        write(to: &text)
        return text
    }

    /// The value as compact JSON, UTF-8.
    public var encodedBytes: [UInt8] { Array(encoded.utf8) }

    func write(to text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .integer(let value): text += String(value)
        case .double(let value):
            if !value.isFinite {
                text += "null"
            } else {
                text += "\(value)"
            }
        case .string(let value): Self.writeString(value, to: &text)
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                element.write(to: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { text += "," }
                Self.writeString(member.key, to: &text)
                text += ":"
                member.value.write(to: &text)
            }
            text += "}"
        }
    }

    /// A JSON string literal for `value`.
    static func writeString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case "\u{2028}": text += "\\u2028"
            case "\u{2029}": text += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }
}
