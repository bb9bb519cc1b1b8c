#if canImport(Glibc)
import Glibc
#endif

/// A position in a request line's bytes, and the pieces of JSON the line readers
/// (``SimpleRequestParser``, ``SimpleGet``) read from it the same way: whitespace, single bytes,
/// runs of bytes, plain strings and integers. Each step leaves ``index`` after what it read,
/// or reports that what comes next is not of its form.
struct ByteCursor {
    /// The line, without its terminator.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    var index = 0

    /// The most digits ``integer()`` reads: 18 always fit in an `Int64`; longer numbers go to
    /// the general parser.
    static let integerDigits = 18

    /// The byte at ``index``, or `nil` at the end.
    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// Whether the line is read to its end.
    var atEnd: Bool { index == bytes.count }

    /// Skips JSON whitespace.
    @inline(__always) mutating func skipWhitespace() {
        // Compact JSON has none: one comparison for the common case.
        while index < bytes.count, bytes[index] <= 0x20 {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Takes `byte` when it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        index += 1
        return true
    }

    /// Takes `count` bytes at `text` when they come next, compared in one call.
    mutating func take(_ text: UnsafePointer<UInt8>, count: Int) -> Bool {
        // The force-unwrap cannot fail: a buffer holding more than `count` (≥ 0) bytes past
        // `index` has a base address.
        guard bytes.count - index >= count, count == 0 || memcmp(bytes.baseAddress! + index, text, count) == 0 else { return false }
        index += count
        return true
    }

    /// Takes `text` when it comes next.
    mutating func take(_ text: StaticString) -> Bool {
        take(text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// A string of printable ASCII without escapes, its quotes taken (`nil` for any other).
    mutating func plainString() -> String? {
        plainStringRange().map(text)
    }

    /// Where the text of a string of printable ASCII without escapes lies in ``bytes`` (its
    /// quotes taken, not included); `nil` for any other, with ``index`` left anywhere.
    mutating func plainStringRange() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return start..<(index - 1)
            }
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// The bytes of `range` as a `String` (printable ASCII, as ``plainStringRange()`` found them).
    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// The keys of an object read so far, one of 128 bits each, picked by a hash of the key's
    /// bytes (FNV-1a's, folded): a key whose bit is clear is new, and only the others are
    /// compared with the keys before them (unequal Strings take Swift's slow comparison:
    /// comparing each key with every earlier one cost about 1,000 instructions for an insert
    /// of ten values).
    struct SeenKeys {
        private var bits: (UInt64, UInt64) = (0, 0)

        /// Notes `key`, and says whether a key with its bit was noted before (the same key,
        /// or another with the same bit).
        @inline(__always) mutating func note(_ key: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in key { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            let bit = (hash ^ hash >> 32) & 127
            let mask: UInt64 = 1 << (bit & 63)
            if bit < 64 {
                defer { bits.0 |= mask }
                return bits.0 & mask != 0
            }
            defer { bits.1 |= mask }
            return bits.1 & mask != 0
        }
    }

    /// Decimal digits: `0`, or up to `limit` digits not starting with `0` whose value fits in
    /// an `Int64`; `nil` when there are none, more, a leading zero, or an overflow.
    @inline(__always) mutating func digits(limit: Int) -> Int64? {
        guard let base = bytes.baseAddress else { return nil }
        let start = index
        var end = start
        var value: UInt64 = 0
        while end < bytes.count {
            let digit = base[end] &- UInt8(ascii: "0")
            if digit > 9 { break }
            let count = end &- start
            if count == limit { return nil }
            if count < 18 {
                // 18 digits always fit in an `Int64`: no overflow check before the 19th.
                value = value &* 10 &+ UInt64(digit)
            } else {
                let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times.addingReportingOverflow(UInt64(digit))
                guard !overflow, !carry, sum <= UInt64(Int64.max) else { return nil }
                value = sum
            }
            end &+= 1
        }
        guard end > start, end - start == 1 || base[start] != UInt8(ascii: "0") else { return nil }
        index = end
        return Int64(value)
    }

    /// `-`? then ``digits(limit:)`` of at most ``integerDigits``, not followed by a fraction or
    /// an exponent (`nil` for any other number: the general parser decides those).
    @inline(__always) mutating func integer() -> Int64? {
        let negative = take(UInt8(ascii: "-"))
        guard let magnitude = digits(limit: Self.integerDigits) else { return nil }
        if let byte = current, byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return nil }
        return negative ? -magnitude : magnitude
    }
}
