#if canImport(Glibc)
import Glibc
#endif

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

    private static let idMember: UInt8 = 1
    private static let opMember: UInt8 = 2
    private static let idsMember: UInt8 = 3

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
        var cursor = Cursor(bytes: bytes)
        return cursor.line(prefix: prefix)
    }

    private static let compactMiddle: StaticString = #","op":"get","ids":[""#
    private static let compactEnd: StaticString = #""]}"#

    /// The line as most clients write it, `{"id":<integer>,"op":"get","ids":["<prefix>p<key>"]}`
    /// without whitespace, matched by comparing whole runs of bytes; `nil` for anything else
    /// (``Cursor`` then reads the line, and decides the same for this form).
    private static func compactLine(_ bytes: UnsafeBufferPointer<UInt8>, prefix: WireObjectIDPrefix) -> SimpleGet? {
        guard let base = bytes.baseAddress, bytes.count > 8, base[0] == UInt8(ascii: "{"), base[1] == UInt8(ascii: "\""),
              base[2] == UInt8(ascii: "i"), base[3] == UInt8(ascii: "d"), base[4] == UInt8(ascii: "\""),
              base[5] == UInt8(ascii: ":") else { return nil }
        var index = 6
        /// Decimal digits from `index` without a leading zero (unless alone), up to `limit`
        /// digits; `nil` when there are none, or too many.
        func digits(limit: Int) -> Int64? {
            let start = index
            var value: Int64 = 0
            while index < bytes.count, base[index] >= UInt8(ascii: "0"), base[index] <= UInt8(ascii: "9") {
                if index - start == limit { return nil }
                value = value &* 10 &+ Int64(base[index] &- UInt8(ascii: "0"))
                index += 1
            }
            guard index > start, index - start == 1 || base[start] != UInt8(ascii: "0") else { return nil }
            return value
        }
        /// Whether `text` comes next (then skipped).
        func skip(_ text: StaticString) -> Bool {
            guard bytes.count - index >= text.utf8CodeUnitCount,
                  memcmp(base + index, text.utf8Start, text.utf8CodeUnitCount) == 0 else { return false }
            index += text.utf8CodeUnitCount
            return true
        }
        // The id: as ``SimpleRequestParser`` reads integers (18 digits at most, so no overflow).
        let negative = index < bytes.count && base[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard let magnitude = digits(limit: 18), skip(compactMiddle) else { return nil }
        let prefixCount = prefix.bytes.count
        let matches = prefix.bytes.withUnsafeBufferPointer { prefixBytes in
            // The force-unwrap cannot fail: the prefix starts `x-coredata://`.
            bytes.count - index > prefixCount && memcmp(base + index, prefixBytes.baseAddress!, prefixCount) == 0
        }
        guard matches, base[index + prefixCount] == UInt8(ascii: "p") else { return nil }
        index += prefixCount + 1
        // 18 digits at most here too (longer keys, up to Int64's, go through the cursor).
        guard let key = digits(limit: 18), skip(compactEnd), index == bytes.count else { return nil }
        return SimpleGet(id: .integer(negative ? -magnitude : magnitude), prefix: prefix, key: key,
                         order: idMember | opMember << 2 | idsMember << 4)
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

    /// A position in the line's bytes; the rules of ``SimpleRequestParser`` for what it reads.
    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// Takes `byte` when it is next.
        private mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        mutating func line(prefix: WireObjectIDPrefix) -> Outcome {
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
                    guard opIsGet() else { return .other }
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
            guard index == bytes.count, sawOp, let key else { return .other }
            return .get(SimpleGet(id: id, prefix: prefix, key: key, order: order))
        }

        /// `"id"`, `"op"` or `"ids"` as their member numbers; `nil` for any other string.
        private mutating func memberName() -> UInt8? {
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

        /// `"get"`.
        private mutating func opIsGet() -> Bool {
            let text: [UInt8] = [0x22, 0x67, 0x65, 0x74, 0x22] // "get"
            guard bytes.count - index >= text.count else { return false }
            for offset in 0..<text.count where bytes[index + offset] != text[offset] { return false }
            index += text.count
            return true
        }

        /// The request's `id`: an integer or a plain string, as ``SimpleRequestParser`` reads them.
        private mutating func idValue() -> JSON? {
            if current == UInt8(ascii: "\"") {
                index += 1
                let start = index
                while index < bytes.count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\"") {
                        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                        index += 1
                        return .string(text)
                    }
                    guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
                    index += 1
                }
                return nil
            }
            var negative = false
            if take(UInt8(ascii: "-")) { negative = true }
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

        /// What the `ids` member held.
        private enum IDs {
            case key(Int64)
            case otherPrefix
        }

        /// `["<prefix>p<key>"]`: one string, the prefix's bytes, `p`, then a key without
        /// leading zeros that fits in an `Int64`; `.otherPrefix` when the string does not start
        /// with the prefix then `p` and a digit, or its key is not of that form (the line is not
        /// read further: another prefix, or the general parser, decides); `nil` for anything else.
        private mutating func ids(prefix: WireObjectIDPrefix) -> IDs? {
            guard take(UInt8(ascii: "[")) else { return nil }
            skipWhitespace()
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            // The prefix's bytes compared in one call, then only the key is read byte by byte.
            let matches = prefix.bytes.withUnsafeBufferPointer { prefixBytes -> Bool in
                let count = prefixBytes.count
                // The force-unwraps cannot fail: both buffers hold at least `count` bytes (the
                // line is checked, and the prefix starts `x-coredata://`).
                return bytes.count - start > count && memcmp(bytes.baseAddress! + start, prefixBytes.baseAddress!, count) == 0
                    && bytes[start + count] == UInt8(ascii: "p")
            }
            guard matches else { return .otherPrefix }
            index = start + prefix.bytes.count + 1
            let digits = index
            var key: Int64 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (times, overflow) = key.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times.addingReportingOverflow(Int64(bytes[index] - UInt8(ascii: "0")))
                guard !overflow, !carry else { return .otherPrefix }
                key = sum
                index += 1
            }
            // At least one digit, no leading zeros (so `request` writes the very text back),
            // then the string's end.
            guard index > digits, index - digits == 1 || bytes[digits] != UInt8(ascii: "0"),
                  take(UInt8(ascii: "\"")) else { return .otherPrefix }
            skipWhitespace()
            guard take(UInt8(ascii: "]")) else { return nil }
            return .key(key)
        }
    }
}
