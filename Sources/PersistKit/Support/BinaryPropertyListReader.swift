import Foundation

/// Reads a binary property list (`bplist00`) into Swift values: `String`, `Int` (also for
/// UIDs), `Double`, `Bool`, `Data`, `Date`, `[any Sendable]` (arrays and sets) and
/// `[String: any Sendable]` (a key that is not a string is described as one).
///
/// The counterpart of ``BinaryPropertyListWriter``, for the same reason: Foundation's reader
/// on Linux took about 1.9 million instructions for a store's metadata, half the cost of
/// opening a store. Every offset, count and reference is checked against the bytes before it
/// is used, nesting is limited to ``depthLimit`` and the objects visited to ``visitLimit``
/// (references may share objects, or loop): a damaged list throws
/// ``BinaryPropertyListError`` saying which byte is wrong and why, and never reads outside
/// the bytes.
struct BinaryPropertyListReader {
    /// The deepest nesting of arrays and dictionaries read.
    static let depthLimit = 128
    /// The most objects read, counting each time a shared object is reached.
    static let visitLimit = 1_000_000

    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let tableOffset: Int
    private var visits = 0

    /// The value of the binary property list `data`.
    static func value(of data: Data) throws -> any Sendable {
        var reader = try BinaryPropertyListReader(Array(data))
        return try reader.topValue()
    }

    private init(_ bytes: [UInt8]) throws {
        guard bytes.count >= 8 + 32, bytes.starts(with: "bplist00".utf8) else {
            throw BinaryPropertyListError.malformed(at: 0, "not a binary property list (no bplist00 header and 32-byte trailer)")
        }
        self.bytes = bytes
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard [1, 2, 4, 8].contains(offsetSize), [1, 2, 4, 8].contains(referenceSize) else {
            throw BinaryPropertyListError.malformed(at: trailer + 6, "offset size \(offsetSize) or reference size \(referenceSize) is not 1, 2, 4 or 8")
        }
        let count = Self.unsigned(bytes, at: trailer + 8, size: 8)
        let table = Self.unsigned(bytes, at: trailer + 24, size: 8)
        guard count >= 1, count <= UInt64(trailer), table >= 8, table <= UInt64(trailer),
              UInt64(trailer) - table >= count * UInt64(offsetSize) else {
            throw BinaryPropertyListError.malformed(at: trailer + 8, "\(count) objects with an offset table at \(table) do not fit the list's \(bytes.count) bytes")
        }
        objectCount = Int(count)
        tableOffset = Int(table)
    }

    /// The top object's value.
    private mutating func topValue() throws -> any Sendable {
        let top = Self.unsigned(bytes, at: bytes.count - 16, size: 8)
        guard top < UInt64(objectCount) else {
            throw BinaryPropertyListError.malformed(at: bytes.count - 16, "the top object \(top) is not one of the \(objectCount) objects")
        }
        return try value(ofObject: Int(top), depth: 0)
    }

    /// The value of object `index`, nested `depth` containers deep.
    private mutating func value(ofObject index: Int, depth: Int) throws -> any Sendable {
        visits += 1
        guard visits <= Self.visitLimit else {
            throw BinaryPropertyListError.malformed(at: tableOffset, "more than \(Self.visitLimit) objects reached (shared or looping references)")
        }
        let start = Self.unsigned(bytes, at: tableOffset + index * offsetSize, size: offsetSize)
        guard start >= 8, start < UInt64(tableOffset) else {
            throw BinaryPropertyListError.malformed(at: tableOffset + index * offsetSize, "object \(index) starts at \(start), outside the objects")
        }
        let offset = Int(start)
        let marker = bytes[offset]
        let info = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return false
            case 0x09: return true
            default: throw BinaryPropertyListError.malformed(at: offset, "marker \(marker) (null or fill) has no value here")
            }
        case 0x1:
            return try integer(at: offset)
        case 0x2:
            let size = 1 << info
            try need(size, after: offset)
            switch size {
            case 4: return Double(Float(bitPattern: UInt32(Self.unsigned(bytes, at: offset + 1, size: 4))))
            case 8: return Double(bitPattern: Self.unsigned(bytes, at: offset + 1, size: 8))
            default: throw BinaryPropertyListError.malformed(at: offset, "a real of \(size) bytes")
            }
        case 0x3:
            guard marker == 0x33 else { throw BinaryPropertyListError.malformed(at: offset, "date marker \(marker) is not 0x33") }
            try need(8, after: offset)
            return Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.unsigned(bytes, at: offset + 1, size: 8)))
        case 0x4:
            let (count, start) = try length(at: offset)
            try need(count, after: start - 1)
            return Data(bytes[start..<start + count])
        case 0x5, 0x7:
            // ASCII (0x5) or UTF-8 (0x7), one byte a count.
            let (count, start) = try length(at: offset)
            try need(count, after: start - 1)
            return String(decoding: bytes[start..<start + count], as: UTF8.self)
        case 0x6:
            let (count, start) = try length(at: offset)
            try need(2 * count, after: start - 1)
            let units = (0..<count).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
            return String(decoding: units, as: UTF16.self)
        case 0x8:
            guard info < 8 else { throw BinaryPropertyListError.malformed(at: offset, "a UID of \(info + 1) bytes") }
            try need(info + 1, after: offset)
            let uid = Self.unsigned(bytes, at: offset + 1, size: info + 1)
            guard uid <= UInt64(Int.max) else { throw BinaryPropertyListError.malformed(at: offset, "a UID beyond 63 bits") }
            return Int(uid)
        case 0xA, 0xB, 0xC:
            let references = try self.references(at: offset, depth: depth, factor: 1)
            var array: [any Sendable] = []
            array.reserveCapacity(references.count)
            for reference in references { array.append(try value(ofObject: reference, depth: depth + 1)) }
            return array
        case 0xD:
            let references = try self.references(at: offset, depth: depth, factor: 2)
            let count = references.count / 2
            var dictionary: [String: any Sendable] = [:]
            dictionary.reserveCapacity(count)
            for pair in 0..<count {
                let key = try value(ofObject: references[pair], depth: depth + 1)
                dictionary[key as? String ?? String(describing: key)] = try value(ofObject: references[count + pair], depth: depth + 1)
            }
            return dictionary
        default:
            throw BinaryPropertyListError.malformed(at: offset, "unknown object marker \(marker)")
        }
    }

    /// The integer object at `offset`: 1, 2 or 4 bytes unsigned, 8 signed, or 16 whose value
    /// fits 64 bits.
    private func integer(at offset: Int) throws -> Int {
        let size = 1 << Int(bytes[offset] & 0x0F)
        try need(size, after: offset)
        switch size {
        case 1, 2, 4: return Int(Self.unsigned(bytes, at: offset + 1, size: size))
        case 8: return Int(Int64(bitPattern: Self.unsigned(bytes, at: offset + 1, size: 8)))
        case 16:
            let high = Self.unsigned(bytes, at: offset + 1, size: 8), low = Self.unsigned(bytes, at: offset + 9, size: 8)
            // The high half only extends the sign of the low one when the value fits 64 bits.
            guard (high == 0 && low >> 63 == 0) || (high == UInt64.max && low >> 63 == 1) else {
                throw BinaryPropertyListError.malformed(at: offset, "a 128-bit integer beyond 64 bits")
            }
            return Int(Int64(bitPattern: low))
        default:
            throw BinaryPropertyListError.malformed(at: offset, "an integer of \(size) bytes")
        }
    }

    /// The element count of the object at `offset` and where its elements start: the marker's
    /// low four bits, or (when they are all set) the integer object after the marker.
    private func length(at offset: Int) throws -> (count: Int, start: Int) {
        let info = Int(bytes[offset] & 0x0F)
        if info != 0x0F { return (info, offset + 1) }
        try need(1, after: offset)
        let countOffset = offset + 1
        guard bytes[countOffset] >> 4 == 0x1 else {
            throw BinaryPropertyListError.malformed(at: countOffset, "a count that is not an integer object")
        }
        let count = try integer(at: countOffset)
        guard count >= 0, count <= bytes.count else {
            throw BinaryPropertyListError.malformed(at: countOffset, "a count of \(count) in a list of \(bytes.count) bytes")
        }
        return (count, countOffset + 1 + (1 << Int(bytes[countOffset] & 0x0F)))
    }

    /// The object references of the container at `offset`: `factor` per element (two for a
    /// dictionary's keys and values), each checked to name an object.
    private func references(at offset: Int, depth: Int, factor: Int) throws -> [Int] {
        guard depth < Self.depthLimit else {
            throw BinaryPropertyListError.malformed(at: offset, "containers nested more than \(Self.depthLimit) deep")
        }
        let (count, start) = try length(at: offset)
        let total = count * factor
        try need(total * referenceSize, after: start - 1)
        return try (0..<total).map { position in
            let reference = Self.unsigned(bytes, at: start + position * referenceSize, size: referenceSize)
            guard reference < UInt64(objectCount) else {
                throw BinaryPropertyListError.malformed(at: start + position * referenceSize, "reference \(reference) to one of \(objectCount) objects")
            }
            return Int(reference)
        }
    }

    /// Checks that `count` bytes follow the byte at `offset`, before the offset table.
    private func need(_ count: Int, after offset: Int) throws {
        guard count >= 0, count <= tableOffset - offset - 1 else {
            throw BinaryPropertyListError.malformed(at: offset, "\(count) bytes needed after it, past the end of the objects")
        }
    }

    /// The unsigned big-endian integer of the `size` bytes at `offset` (checked by the caller).
    private static func unsigned(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<offset + size { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
