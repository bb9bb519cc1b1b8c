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
            var cursor = ByteCursor(bytes: bytes)
            return cursor.object()
        }
    }
}

/// The shape ``SimpleRequestParser`` reads, over ``ByteCursor``'s pieces.
private extension ByteCursor {
    /// The whole line: one object, whitespace around it.
    mutating func object() -> JSON? {
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var members: [JSON.Member] = []
        members.reserveCapacity(4)
        skipWhitespace()
        if !take(UInt8(ascii: "}")) {
            while true {
                skipWhitespace()
                guard let key = plainString() else { return nil }
                // Duplicate keys: the general parser refuses them, with its own message.
                if members.contains(where: { $0.key == key }) { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                guard let value = value() else { return nil }
                members.append(JSON.Member(key, value))
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                if take(UInt8(ascii: "}")) { break }
                return nil
            }
        }
        skipWhitespace()
        return atEnd ? .object(members) : nil
    }

    /// A member's value: a scalar, or an array of scalars.
    mutating func value() -> JSON? {
        guard take(UInt8(ascii: "[")) else { return scalar() }
        var elements: [JSON] = []
        skipWhitespace()
        if take(UInt8(ascii: "]")) { return .array(elements) }
        while true {
            skipWhitespace()
            guard let element = scalar() else { return nil }
            elements.append(element)
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            if take(UInt8(ascii: "]")) { return .array(elements) }
            return nil
        }
    }

    /// A plain string or an integer.
    mutating func scalar() -> JSON? {
        if current == UInt8(ascii: "\"") { return plainString().map(JSON.string) }
        return integer().map(JSON.integer)
    }
}
