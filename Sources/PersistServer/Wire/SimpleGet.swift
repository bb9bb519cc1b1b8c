/// A `get` of one object ID, read straight from its request line's bytes when the ID starts
/// with a connection's last ``WireObjectIDPrefix``:
/// `{"id":7,"op":"get","ids":["x-coredata://<store>/<Entity>/p42"]}` (members in any order,
/// `id` optional, whitespace as JSON allows) is kept as its `id`, the prefix and the key 42,
/// without a ``JSON`` tree, the ID's `String` or a copy of the line.
///
/// It stands for exactly the ``WireRequest`` that ``WireRequest/decode(_:)`` gives for the line
/// (``request``; `SimpleGetTests` checks both on every shape): any line of another shape, and
/// any ID that is not the prefix then `p` and a key written without leading zeros, gives `nil`
/// and goes the general way.
struct SimpleGet: Sendable {
    /// The request's `id`: `.integer`, `.string`, or `.null` when the line has none.
    var id: JSON
    /// The store and entity of the object ID (its bytes before `p`).
    var prefix: WireObjectIDPrefix
    /// The object ID's primary key.
    var key: Int64
    /// The line's members in their order, two bits each from the lowest: 1 `id`, 2 `op`,
    /// 3 `ids` (0 ends), so ``request`` rebuilds the very object the parsers give.
    var order: UInt8

    fileprivate static let idMember: UInt8 = 1
    fileprivate static let opMember: UInt8 = 2
    fileprivate static let idsMember: UInt8 = 3

    /// What ``parse(_:prefix:)`` found.
    enum Outcome {
        /// A `get` of one ID under the prefix.
        case get(SimpleGet)
        /// A line, read up to its `ids`, whose first ID is not the prefix then `p` and a key
        /// (another prefix may fit; the line was not read to its end).
        case otherPrefix
        /// Anything else.
        case other
    }

    /// The request `bytes` (a line without its terminator) holds, when it is a `get` of one ID
    /// starting with `prefix`.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, prefix: WireObjectIDPrefix) -> Outcome {
        if let get = compactLine(bytes, prefix: prefix) { return .get(get) }
        var cursor = ByteCursor(bytes: bytes)
        return cursor.getLine(prefix: prefix)
    }

    private static let compactMiddle: StaticString = #","op":"get","ids":[""#
    private static let compactEnd: StaticString = #""]}"#

    /// The line as most clients write it, `{"id":<integer>,"op":"get","ids":["<prefix>p<key>"]}`
    /// without whitespace, matched by comparing whole runs of bytes; `nil` for anything else
    /// (``ByteCursor/getLine(prefix:)`` then reads the line, and decides the same for this form).
    private static func compactLine(_ bytes: UnsafeBufferPointer<UInt8>, prefix: WireObjectIDPrefix) -> SimpleGet? {
        var cursor = ByteCursor(bytes: bytes)
        guard cursor.take(#"{"id":"#), let id = cursor.integer(), cursor.take(compactMiddle), cursor.take(prefix),
              let key = cursor.digits(limit: ByteCursor.keyDigits), cursor.take(compactEnd), cursor.atEnd else { return nil }
        return SimpleGet(id: .integer(id), prefix: prefix, key: key, order: idMember | opMember << 2 | idsMember << 4)
    }

    /// The request as ``WireRequest/decode(_:)`` gives it.
    var request: WireRequest {
        var text = prefix.bytes
        text.append(UInt8(ascii: "p"))
        JSON.writeInteger(key, to: &text)
        var members: [JSON.Member] = []
        var order = self.order
        while order != 0 {
            switch order & 3 {
            case Self.idMember: members.append(JSON.Member("id", id))
            case Self.opMember: members.append(JSON.Member("op", .string("get")))
            default: members.append(JSON.Member("ids", .array([.string(String(decoding: text, as: UTF8.self))])))
            }
            order >>= 2
        }
        return WireRequest(id: id, op: "get", body: .object(members))
    }
}

/// The line of a ``SimpleGet``, read with ``ByteCursor``'s pieces by the rules of
/// ``SimpleRequestParser``.
private extension ByteCursor {
    /// The most digits of a key: any `Int64` key has at most 19 (``digits(limit:)`` refuses
    /// the larger ones).
    static let keyDigits = 19

    /// The whole line, members in any order.
    mutating func getLine(prefix: WireObjectIDPrefix) -> SimpleGet.Outcome {
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return .other }
        var id = JSON.null
        var key: Int64?
        var order: UInt8 = 0
        var shift: UInt8 = 0
        var sawOp = false
        while true {
            skipWhitespace()
            guard let member = memberName() else { return .other }
            // A key seen twice: the general parser refuses it, with its own message.
            for earlier in stride(from: 0, to: shift, by: 2) where (order >> earlier) & 3 == member { return .other }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return .other }
            skipWhitespace()
            switch member {
            case SimpleGet.idMember:
                guard let value = idValue() else { return .other }
                id = value
            case SimpleGet.opMember:
                guard take(#""get""#) else { return .other }
                sawOp = true
            default:
                switch ids(prefix: prefix) {
                case .key(let value)?: key = value
                case .otherPrefix?: return .otherPrefix
                case nil: return .other
                }
            }
            order |= member << shift
            shift += 2
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return .other }
            break
        }
        skipWhitespace()
        // `op` and `ids` both there; nothing after the object.
        guard atEnd, sawOp, let key else { return .other }
        return .get(SimpleGet(id: id, prefix: prefix, key: key, order: order))
    }

    /// `"id"`, `"op"` or `"ids"` as their member numbers; `nil` for any other string.
    mutating func memberName() -> UInt8? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") { index += 1 }
        guard index < bytes.count else { return nil }
        let count = index - start
        index += 1
        let first = bytes[start], second = count >= 2 ? bytes[start + 1] : 0
        switch count {
        case 2 where first == UInt8(ascii: "i") && second == UInt8(ascii: "d"): return SimpleGet.idMember
        case 2 where first == UInt8(ascii: "o") && second == UInt8(ascii: "p"): return SimpleGet.opMember
        case 3 where first == UInt8(ascii: "i") && second == UInt8(ascii: "d") && bytes[start + 2] == UInt8(ascii: "s"):
            return SimpleGet.idsMember
        default: return nil
        }
    }

    /// The request's `id`: an integer or a plain string, as ``SimpleRequestParser`` reads them.
    mutating func idValue() -> JSON? {
        if current == UInt8(ascii: "\"") { return plainString().map(JSON.string) }
        return integer().map(JSON.integer)
    }

    /// The prefix's bytes, compared in one call, then `p`, when they come next.
    mutating func take(_ prefix: WireObjectIDPrefix) -> Bool {
        let start = index
        let matches = prefix.bytes.withUnsafeBufferPointer { prefixBytes in
            // The force-unwrap cannot fail: the prefix starts `x-coredata://`.
            take(prefixBytes.baseAddress!, count: prefixBytes.count)
        }
        guard matches, take(UInt8(ascii: "p")) else {
            index = start
            return false
        }
        return true
    }

    /// What the `ids` member held.
    enum IDs {
        case key(Int64)
        case otherPrefix
    }

    /// `["<prefix>p<key>"]`: one string, the prefix's bytes, `p`, then a key without leading
    /// zeros that fits in an `Int64`; `.otherPrefix` when the string does not start with the
    /// prefix then `p`, or its key is not of that form (the line is not read further: another
    /// prefix, or the general parser, decides); `nil` for anything else.
    mutating func ids(prefix: WireObjectIDPrefix) -> IDs? {
        guard take(UInt8(ascii: "[")) else { return nil }
        skipWhitespace()
        guard take(UInt8(ascii: "\"")) else { return nil }
        // At least one digit, no leading zeros (so `request` writes the very text back), then
        // the string's end.
        guard take(prefix), let key = digits(limit: Self.keyDigits), take(UInt8(ascii: "\"")) else { return .otherPrefix }
        skipWhitespace()
        guard take(UInt8(ascii: "]")) else { return nil }
        return .key(key)
    }
}
