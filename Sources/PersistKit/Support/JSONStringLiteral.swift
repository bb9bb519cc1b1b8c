/// Writes a Swift string as a JSON string literal: the one escaping routine PersistKit's JSON
/// writers (model files, predicate trees) and persistd's wire encoder share.
///
/// Quotes, backslashes and control characters are escaped (`\n`, `\r`, `\t`, else `\u00XX`);
/// every other scalar, including non-ASCII, is written as it is (JSON text is UTF-8).
public enum JSONStringLiteral {
    /// Appends `value` as a JSON string literal, quotes included, to `text`.
    public static func append(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    /// `value` as a JSON string literal, quotes included.
    public static func literal(_ value: String) -> String {
        var text = ""
        append(value, to: &text)
        return text
    }
}
