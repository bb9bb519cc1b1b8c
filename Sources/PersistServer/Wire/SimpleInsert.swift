/// An `insert` whose values are integers and plain strings, kept as its request line's bytes:
/// `{"id":8,"op":"insert","entity":"Item","values":{"i0":0,"name":"Duvel"}}` (the four
/// members in any order, `id` optional, whitespace as JSON allows). The session sets the
/// values into the new object's slots straight from the bytes (``Session/simpleInsertedObject(_:)``),
/// without the ``JSON`` tree, the member names' `String`s or the decoded values' list that
/// ``WireRequest/decode(_:)`` and ``Session/decodeValues(_:entity:)`` make for any other line.
///
/// The shape is a part of ``SimpleRequestParser``'s: a line this type accepts is one that
/// parser accepts, so ``body`` gives the very value the general parser gives for the line
/// (`SimpleInsertTests` checks both on every shape). Any other line (another member, a
/// `values` member that is not an integer or a plain string, a key seen twice, a syntax
/// error) gives `nil` and goes the general way, which also reports its errors.
struct SimpleInsert: Sendable {
    /// The request line, without its terminator.
    let line: [UInt8]
    /// The entity's name: bytes of ``line``, its quotes left out.
    let entityName: Range<Int>
    /// The members of the `values` object, in their order.
    let values: [Value]

    /// A member of the `values` object.
    struct Value: Sendable {
        /// Its key: bytes of the line, quotes left out.
        var key: Range<Int>
        /// Its value.
        var scalar: Scalar
    }

    /// A value of the `values` object.
    enum Scalar: Sendable {
        /// An integer (at most 18 digits, as ``ByteCursor/integer()`` reads them).
        case integer(Int64)
        /// A plain string: bytes of the line, quotes left out.
        case string(Range<Int>)
    }

    /// The request's `id` and the insert, when `line` is of this shape.
    static func parse(_ line: [UInt8]) -> (id: JSON, insert: SimpleInsert)? {
        line.withUnsafeBufferPointer { bytes -> (id: JSON, insert: SimpleInsert)? in
            var cursor = ByteCursor(bytes: bytes)
            guard let (id, entity, values) = cursor.insertLine() else { return nil }
            return (id, SimpleInsert(line: line, entityName: entity, values: values))
        }
    }

    /// The request object, as ``JSONParser`` gives it for the line.
    var body: JSON {
        // The force-unwrap cannot fail: `parse(_:)` took the line, and its shape is a part of
        // the one `SimpleRequestParser` takes.
        SimpleRequestParser.parse(line)!
    }

    /// The entity's name.
    var entity: String {
        line.withUnsafeBufferPointer { ByteCursor(bytes: $0).text(entityName) }
    }
}

/// The line of a ``SimpleInsert``, read with ``ByteCursor``'s pieces by the rules of
/// ``SimpleRequestParser``.
private extension ByteCursor {
    /// The whole line: its `id` (`.null` when absent), the entity name's bytes and the
    /// `values` object's members.
    mutating func insertLine() -> (JSON, Range<Int>, [SimpleInsert.Value])? {
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var id = JSON.null
        var entity: Range<Int>?
        var values: [SimpleInsert.Value]?
        var sawID = false, sawOp = false
        while true {
            skipWhitespace()
            guard let name = plainStringRange() else { return nil }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            // Each member once: a repeat goes to the general parser, which refuses it.
            switch (name.count, bytes[name.lowerBound]) {
            case (2, UInt8(ascii: "i")) where bytes[name.lowerBound + 1] == UInt8(ascii: "d") && !sawID:
                if current == UInt8(ascii: "\"") {
                    guard let text = plainString() else { return nil }
                    id = .string(text)
                } else {
                    guard let number = integer() else { return nil }
                    id = .integer(number)
                }
                sawID = true
            case (2, UInt8(ascii: "o")) where bytes[name.lowerBound + 1] == UInt8(ascii: "p") && !sawOp:
                guard take(#""insert""#) else { return nil }
                sawOp = true
            case (6, _) where entity == nil && matches(name, "entity"):
                guard let range = plainStringRange() else { return nil }
                entity = range
            case (6, _) where values == nil && matches(name, "values"):
                guard let members = valuesObject() else { return nil }
                values = members
            default:
                return nil
            }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            break
        }
        skipWhitespace()
        guard atEnd, sawOp, let entity, let values else { return nil }
        return (id, entity, values)
    }

    /// Whether the bytes of `range` are `text`.
    func matches(_ range: Range<Int>, _ text: StaticString) -> Bool {
        var copy = ByteCursor(bytes: bytes, index: range.lowerBound)
        return range.count == text.utf8CodeUnitCount && copy.take(text)
    }

    /// `{` then members whose values are integers or plain strings, each key once, then `}`:
    /// the members.
    mutating func valuesObject() -> [SimpleInsert.Value]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var members: [SimpleInsert.Value] = []
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return members }
        members.reserveCapacity(16)
        var seenKeys = SeenKeys()
        while true {
            skipWhitespace()
            guard let key = plainStringRange() else { return nil }
            if seenKeys.note(bytes[key]), members.contains(where: { bytes[$0.key].elementsEqual(bytes[key]) }) { return nil }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            guard let scalar = insertScalar() else { return nil }
            members.append(SimpleInsert.Value(key: key, scalar: scalar))
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            return members
        }
    }

    /// An integer or a plain string.
    mutating func insertScalar() -> SimpleInsert.Scalar? {
        if current == UInt8(ascii: "\"") { return plainStringRange().map(SimpleInsert.Scalar.string) }
        return integer().map(SimpleInsert.Scalar.integer)
    }
}
