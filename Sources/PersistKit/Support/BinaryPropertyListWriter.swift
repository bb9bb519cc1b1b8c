import Foundation

/// Writes Swift values as a binary property list (`bplist00`), the format of a Core Data
/// store's `Z_METADATA.Z_PLIST`.
///
/// Foundation's `PropertyListSerialization` on Linux takes about 2.4 million instructions for
/// a store's metadata (callgrind): it checks the list through bridged `NSDictionary` calls and
/// copies its output into `Data` a byte at a time, which made writing the plist half the cost
/// of creating a store. This writer handles the values store metadata holds: strings,
/// integers, floating-point numbers, booleans, data, dates, arrays and dictionaries with
/// string keys. It throws ``BinaryPropertyListError`` for anything else, and its caller then
/// uses Foundation's writer.
///
/// Each value is its own object (no object is shared); dictionary keys are written sorted, so
/// the same value always gives the same bytes.
struct BinaryPropertyListWriter {
    /// An object of the list: a scalar already encoded, or a container's references.
    private enum Entry {
        case scalar([UInt8])
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    private var entries: [Entry] = []

    /// The binary property list of `value`.
    static func data(_ value: any Sendable) throws -> Data {
        var writer = BinaryPropertyListWriter()
        let top = try writer.add(value, path: "")
        return writer.encoded(top: top)
    }

    /// Adds `value` (and what it contains) as entries; returns its index.
    ///
    /// Booleans and floating-point numbers are matched by their exact type: an `NSNumber`
    /// would also cast to `Bool` or `Double` (a `1` becoming `true`), so it is left to
    /// Foundation's writer, which knows what it holds.
    private mutating func add(_ value: any Sendable, path: String) throws -> Int {
        let entry: Entry
        switch value {
        case let string as String:
            entry = .scalar(Self.string(string))
        case let bool as Bool where type(of: value) == Bool.self:
            entry = .scalar([bool ? 0x09 : 0x08])
        case let data as Data:
            var bytes = Self.marker(0x4, count: data.count)
            bytes.append(contentsOf: data)
            entry = .scalar(bytes)
        case let date as Date:
            entry = .scalar([0x33] + Self.bigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8))
        case let integer as any BinaryInteger:
            guard let int = Int64(exactly: integer) else {
                throw BinaryPropertyListError.unsupported(at: path, "the integer \(integer) does not fit 64 bits")
            }
            entry = .scalar(Self.integer(int))
        case let real as Double where type(of: value) == Double.self:
            entry = .scalar([0x23] + Self.bigEndian(real.bitPattern, size: 8))
        case let real as Float where type(of: value) == Float.self:
            entry = .scalar([0x23] + Self.bigEndian(Double(real).bitPattern, size: 8))
        case let dictionary as [String: any Sendable]:
            var keys: [Int] = [], values: [Int] = []
            keys.reserveCapacity(dictionary.count)
            values.reserveCapacity(dictionary.count)
            for (name, member) in dictionary.sorted(by: { $0.key < $1.key }) {
                keys.append(try add(name, path: path))
                values.append(try add(member, path: path.isEmpty ? name : path + "." + name))
            }
            entries.append(.dictionary(keys: keys, values: values))
            return entries.count - 1
        case let array as [any Sendable]:
            var members: [Int] = []
            members.reserveCapacity(array.count)
            for (index, element) in array.enumerated() { members.append(try add(element, path: path + "[\(index)]")) }
            entries.append(.array(members))
            return entries.count - 1
        default:
            throw BinaryPropertyListError.unsupported(at: path, "a value of type \(type(of: value)) has no property list form here")
        }
        entries.append(entry)
        return entries.count - 1
    }

    /// The list's bytes, `top` being its top object.
    private func encoded(top: Int) -> Data {
        let referenceSize = Self.byteCount(for: UInt64(entries.count))
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        offsets.reserveCapacity(entries.count)
        for entry in entries {
            offsets.append(bytes.count)
            switch entry {
            case .scalar(let encoded):
                bytes.append(contentsOf: encoded)
            case .array(let members):
                bytes.append(contentsOf: Self.marker(0xA, count: members.count))
                for member in members { bytes.append(contentsOf: Self.bigEndian(UInt64(member), size: referenceSize)) }
            case .dictionary(let keys, let values):
                bytes.append(contentsOf: Self.marker(0xD, count: keys.count))
                for key in keys { bytes.append(contentsOf: Self.bigEndian(UInt64(key), size: referenceSize)) }
                for value in values { bytes.append(contentsOf: Self.bigEndian(UInt64(value), size: referenceSize)) }
            }
        }
        let tableOffset = bytes.count
        let offsetSize = Self.byteCount(for: UInt64(tableOffset))
        for offset in offsets { bytes.append(contentsOf: Self.bigEndian(UInt64(offset), size: offsetSize)) }
        // The trailer: six unused bytes, the two sizes, then the object count, the top object
        // and where the offset table starts, eight bytes each.
        bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)])
        bytes.append(contentsOf: Self.bigEndian(UInt64(entries.count), size: 8))
        bytes.append(contentsOf: Self.bigEndian(UInt64(top), size: 8))
        bytes.append(contentsOf: Self.bigEndian(UInt64(tableOffset), size: 8))
        return Data(bytes)
    }

    /// The fewest of 1, 2, 4 and 8 bytes that hold `value`.
    private static func byteCount(for value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }

    /// The low `size` bytes of `value`, most significant first.
    private static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - $0))) }
    }

    /// An integer object: 1, 2 or 4 bytes (unsigned) for a small nonnegative value, else 8
    /// (signed), as Core Foundation writes them.
    private static func integer(_ value: Int64) -> [UInt8] {
        let size = value < 0 ? 8 : byteCount(for: UInt64(value))
        let power: UInt8 = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3
        return [0x10 | power] + bigEndian(UInt64(bitPattern: value), size: size)
    }

    /// A marker byte of type `type` for `count` elements (bytes, characters, members), with an
    /// integer object after it when the count does not fit the marker's four bits.
    private static func marker(_ type: UInt8, count: Int) -> [UInt8] {
        count < 15 ? [type << 4 | UInt8(count)] : [type << 4 | 0xF] + integer(Int64(count))
    }

    /// A string object: ASCII when every character is, else UTF-16, big-endian.
    private static func string(_ string: String) -> [UInt8] {
        let utf8 = string.utf8
        if utf8.allSatisfy({ $0 < 0x80 }) { return marker(0x5, count: utf8.count) + utf8 }
        let units = Array(string.utf16)
        var bytes = marker(0x6, count: units.count)
        bytes.reserveCapacity(bytes.count + 2 * units.count)
        for unit in units { bytes.append(UInt8(unit >> 8)); bytes.append(UInt8(truncatingIfNeeded: unit)) }
        return bytes
    }
}
