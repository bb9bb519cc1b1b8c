extension JSON {
    /// The value as compact JSON text on one line: no whitespace, members in order, strings
    /// escaped as RFC 8259 requires (and `\u2028`/`\u2029` too, so the text is safe everywhere),
    /// integers exact, doubles in Swift's shortest round-trip form (always with a `.` or an
    /// exponent, so they read back as doubles), non-finite doubles as `null`.
    public var encoded: String {
        String(decoding: encodedBytes, as: UTF8.self)
    }

    /// The value as compact JSON, UTF-8 (the bytes of ``encoded``).
    public var encodedBytes: [UInt8] {
        var bytes: [UInt8] = []
        write(to: &bytes)
        return bytes
    }

    /// Appends the value's compact JSON (see ``encoded``) to `bytes`: the wire writer, with no
    /// intermediate `String`.
    func write(to bytes: inout [UInt8]) {
        switch self {
        case .null: Self.append("null", to: &bytes)
        case .bool(let value): Self.append(value ? "true" : "false", to: &bytes)
        case .integer(let value): Self.writeInteger(value, to: &bytes)
        case .double(let value):
            if !value.isFinite {
                Self.append("null", to: &bytes)
            } else {
                bytes.append(contentsOf: value.description.utf8)
            }
        case .string(let value): Self.writeString(value, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            Self.writeMembers(members, to: &bytes)
        }
    }

    /// `{"key":value,…}` for `members`.
    static func writeMembers(_ members: [Member], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        for (index, member) in members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            writeString(member.key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            member.value.write(to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    @inline(__always) static func append(_ text: StaticString, to bytes: inout [UInt8]) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// The decimal digits of `value` (as `String(value)` writes them), appended to `bytes`.
    static func writeInteger(_ value: Int64, to bytes: inout [UInt8]) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        // Written by writeInteger(_:at:) into a stack buffer, then appended.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0) // 24 bytes: room for a sign and 19 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            let start = buffer.bindMemory(to: UInt8.self)
            // Force-unwrap: the buffer of a 24-byte tuple has a base address.
            let count = writeInteger(value, at: start.baseAddress!)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: start[..<count]))
        }
    }

    /// The most bytes ``writeInteger(_:at:)`` writes: a sign and 19 digits.
    static let maximumIntegerBytes = 20

    /// Writes the decimal digits of `value` (the bytes ``writeInteger(_:to:)`` appends) at
    /// `pointer`, which has room for ``maximumIntegerBytes``; returns how many it wrote.
    static func writeInteger(_ value: Int64, at pointer: UnsafeMutablePointer<UInt8>) -> Int {
        if value >= 0 && value < 10 {
            pointer[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value)
            return 1
        }
        var written = 0
        if value < 0 {
            pointer[0] = UInt8(ascii: "-")
            written = 1
        }
        // Counted first, then written in place from the last digit back (no stack buffer and
        // no copy of it: a `memcpy` call cost more than the digits of a short key).
        var magnitude = value.magnitude
        let count = digitCount(of: magnitude)
        var end = pointer + written + count
        let pairs = digitPairs.utf8Start
        while magnitude >= 100 {
            let pair = Int(truncatingIfNeeded: magnitude % 100) &* 2
            magnitude /= 100
            end -= 2
            end[0] = pairs[pair]
            end[1] = pairs[pair &+ 1]
        }
        if magnitude >= 10 {
            let pair = Int(truncatingIfNeeded: magnitude) &* 2
            end -= 2
            end[0] = pairs[pair]
            end[1] = pairs[pair &+ 1]
        } else {
            end -= 1
            end[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
        }
        return written &+ count
    }

    /// How many decimal digits `magnitude` has (1 to 20).
    @inline(__always)
    private static func digitCount(of magnitude: UInt64) -> Int {
        var count = 1
        var bound: UInt64 = 10
        while magnitude >= bound {
            count &+= 1
            // 10^19 is the last power of ten below 2^64: every larger magnitude has 20 digits.
            if count == 20 { break }
            bound &*= 10
        }
        return count
    }

    /// `00`, `01`, … `99`: the two digits of `n` at offset `2 * n`.
    private static let digitPairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// A JSON string literal for `value`, escaping byte by byte: `"` and `\`, control
    /// characters (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u00xx`), and U+2028/U+2029.
    static func writeString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            func flush(_ bytes: inout [UInt8]) {
                if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            }
            while index < utf8.count {
                let byte = utf8[index]
                let escape: StaticString?
                var width = 1
                switch byte {
                case UInt8(ascii: "\""): escape = "\\\""
                case UInt8(ascii: "\\"): escape = "\\\\"
                case UInt8(ascii: "\n"): escape = "\\n"
                case UInt8(ascii: "\r"): escape = "\\r"
                case UInt8(ascii: "\t"): escape = "\\t"
                case 0x08: escape = "\\b"
                case 0x0C: escape = "\\f"
                case 0xE2 where index + 2 < utf8.count && utf8[index + 1] == 0x80 && (utf8[index + 2] == 0xA8 || utf8[index + 2] == 0xA9):
                    escape = utf8[index + 2] == 0xA8 ? "\\u2028" : "\\u2029"
                    width = 3
                case 0..<0x20:
                    flush(&bytes)
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    append("\\u00", to: &bytes)
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                    index += 1
                    runStart = index
                    continue
                default: escape = nil
                }
                if let escape {
                    flush(&bytes)
                    append(escape, to: &bytes)
                    index += width
                    runStart = index
                } else {
                    index += 1
                }
            }
            flush(&bytes)
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
