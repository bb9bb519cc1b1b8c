/// Parses the common shape of a request line — one object whose values are integers, plain
/// strings, arrays of those, or objects of those (one level down), as in
/// `{"id":7,"op":"get","ids":["x-coredata://…/p1"]}` or
/// `{"id":8,"op":"insert","entity":"Item","values":{"i0":0,"name":"Duvel"}}` — straight from
/// the line's bytes, into the same ``JSON`` value ``JSONParser`` gives.
///
/// Anything else (escapes, non-ASCII bytes, numbers with a fraction or exponent or more than 18
/// digits, booleans, nulls, objects nested deeper, duplicate keys, any syntax error) gives `nil`, and
/// the line goes to ``JSONParser``, which parses it in full or reports exactly what is wrong.
/// So a line this parser accepts is one ``JSONParser`` accepts with an equal value (the tests
/// check both on every shape), and the error replies stay the general parser's.
enum SimpleRequestParser {
    /// The value of `line`, or `nil` when the line is not of the simple shape.
    static func parse(_ line: [UInt8]) -> JSON? {
        line.withUnsafeBufferPointer { bytes in
            var cursor = ByteCursor(bytes: bytes)
            guard let value = cursor.object(nested: false) else { return nil }
            cursor.skipWhitespace()
            // (`JSON` is a nil literal itself, `.null`: the decline is spelled out.)
            guard cursor.atEnd else { return JSON?.none }
            return value
        }
    }
}

/// The shape ``SimpleRequestParser`` reads, over ``ByteCursor``'s pieces.
private extension ByteCursor {
    /// An object, whitespace before it: the whole line's (`nested` false), whose members may be
    /// objects themselves, or a member's (`nested` true), whose members may not.
    mutating func object(nested: Bool) -> JSON? {
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var members: [JSON.Member] = []
        members.reserveCapacity(nested ? 16 : 4)
        var seenKeys = SeenKeys()
        skipWhitespace()
        if !take(UInt8(ascii: "}")) {
            while true {
                skipWhitespace()
                guard let range = plainStringRange() else { return nil }
                let key = text(range)
                // Duplicate keys: the general parser refuses them, with its own message.
                if seenKeys.note(bytes[range]), members.contains(where: { $0.key == key }) { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                // A member's object, at the top level only (an insert's or update's `values`).
                let value = !nested && current == UInt8(ascii: "{") ? object(nested: true) : value()
                guard let value else { return nil }
                members.append(JSON.Member(key, value))
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                if take(UInt8(ascii: "}")) { break }
                return nil
            }
        }
        return .object(members)
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
