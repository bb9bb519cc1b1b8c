/// Parses the common shape of a request line — one flat object whose values are integers,
/// plain strings, or arrays of those, as in `{"id":7,"op":"get","ids":["x-coredata://…/p1"]}`
/// — straight from the line's bytes, into the same ``JSON`` value ``JSONParser`` gives.
///
/// Anything else (escapes, non-ASCII bytes, numbers with a fraction or exponent or more than 18
/// digits, booleans, nulls, nested objects, duplicate keys, any syntax error) gives `nil`, and
/// the line goes to ``JSONParser``, which parses it in full or reports exactly what is wrong.
/// So a line this parser accepts is one ``JSONParser`` accepts with an equal value (the tests
/// check both on every shape), and the error replies stay the general parser's.
enum SimpleRequestParser {
    /// The value of `line`, or `nil` when the line is not of the simple shape.
    static func parse(_ line: [UInt8]) -> JSON? {
        line.withUnsafeBufferPointer { bytes in
            var cursor = Cursor(bytes: bytes)
            return cursor.object()
        }
    }

    /// A position in the line's bytes.
    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        /// The byte at `index`, or `nil` at the end.
        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// The whole line: one object, whitespace around it.
        mutating func object() -> JSON? {
            skipWhitespace()
            guard current == UInt8(ascii: "{") else { return nil }
            index += 1
            var members: [JSON.Member] = []
            members.reserveCapacity(4)
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipWhitespace()
                    guard let key = string() else { return nil }
                    // Duplicate keys: the general parser refuses them, with its own message.
                    if members.contains(where: { $0.key == key }) { return nil }
                    skipWhitespace()
                    guard current == UInt8(ascii: ":") else { return nil }
                    index += 1
                    skipWhitespace()
                    guard let value = value() else { return nil }
                    members.append(JSON.Member(key, value))
                    skipWhitespace()
                    guard let byte = current else { return nil }
                    index += 1
                    if byte == UInt8(ascii: ",") { continue }
                    if byte == UInt8(ascii: "}") { break }
                    return nil
                }
            }
            skipWhitespace()
            return index == bytes.count ? .object(members) : nil
        }

        /// A member's value: a scalar, or an array of scalars.
        private mutating func value() -> JSON? {
            guard current == UInt8(ascii: "[") else { return scalar() }
            index += 1
            var elements: [JSON] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                guard let element = scalar() else { return nil }
                elements.append(element)
                skipWhitespace()
                guard let byte = current else { return nil }
                index += 1
                if byte == UInt8(ascii: ",") { continue }
                if byte == UInt8(ascii: "]") { return .array(elements) }
                return nil
            }
        }

        /// A plain string or an integer.
        private mutating func scalar() -> JSON? {
            guard let byte = current else { return nil }
            if byte == UInt8(ascii: "\"") { return string().map(JSON.string) }
            return integer()
        }

        /// A string of printable ASCII without escapes (`nil` for any other).
        private mutating func string() -> String? {
            guard current == UInt8(ascii: "\"") else { return nil }
            index += 1
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }

        /// `-`? then `0` or up to 18 digits not starting with `0`, not followed by a fraction
        /// or an exponent (`nil` for any other number: the general parser decides those).
        private mutating func integer() -> JSON? {
            var negative = false
            if current == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            let start = index
            var magnitude: Int64 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                // 18 digits always fit in an Int64; longer numbers go to the general parser.
                if index - start == 18 { return nil }
                magnitude = magnitude * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            let count = index - start
            guard count > 0, count == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            if let byte = current, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return nil }
            return .integer(negative ? -magnitude : magnitude)
        }
    }
}
