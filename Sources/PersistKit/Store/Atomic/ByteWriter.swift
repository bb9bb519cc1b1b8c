import Foundation

/// Appends little-endian integers, length-prefixed strings and bytes to a buffer.
struct ByteWriter {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    mutating func f64(_ value: Double) { u64(value.bitPattern) }
    /// A count or length, which must fit 32 bits.
    mutating func count(_ value: Int) throws {
        guard let small = UInt32(exactly: value) else {
            throw PersistenceError(.persistentStoreSave, "A length of \(value) does not fit the binary store format")
        }
        u32(small)
    }
    /// A `u32` length, then the bytes.
    mutating func blob<Bytes: Collection>(_ value: Bytes) throws where Bytes.Element == UInt8 {
        try count(value.count)
        bytes.append(contentsOf: value)
    }
    /// A `u32` length, then UTF-8.
    mutating func string(_ value: String) throws { try blob(Array(value.utf8)) }
    mutating func raw(_ value: [UInt8]) { bytes.append(contentsOf: value) }
}
