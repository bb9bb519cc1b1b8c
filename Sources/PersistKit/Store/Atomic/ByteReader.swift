import Foundation

/// Reads what ``ByteWriter`` writes, checking every length against the bytes left; errors
/// name the offset and what was being read.
struct ByteReader {
    let bytes: [UInt8]
    /// Where the next read starts.
    private(set) var offset: Int
    /// Makes an error for a malformed file, given a message.
    let fail: (String) -> PersistenceError

    init(_ bytes: [UInt8], offset: Int = 0, fail: @escaping (String) -> PersistenceError) {
        self.bytes = bytes
        self.offset = offset
        self.fail = fail
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset == bytes.count }

    mutating func take(_ count: Int, _ what: String) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - offset else {
            throw fail("the file is truncated at offset \(offset): \(what) needs \(count) bytes, \(bytes.count - offset) are left")
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8(_ what: String) throws -> UInt8 { try take(1, what).first ?? 0 }
    mutating func u32(_ what: String) throws -> UInt32 {
        try take(4, what).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
    mutating func u64(_ what: String) throws -> UInt64 {
        try take(8, what).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
    mutating func i64(_ what: String) throws -> Int64 { Int64(bitPattern: try u64(what)) }
    mutating func f64(_ what: String) throws -> Double { Double(bitPattern: try u64(what)) }
    mutating func count(_ what: String) throws -> Int { Int(try u32(what)) }
    mutating func blob(_ what: String) throws -> ArraySlice<UInt8> {
        let length = try count("the length of " + what)
        return try take(length, what)
    }
    mutating func string(_ what: String) throws -> String {
        let start = offset
        let utf8 = try blob(what)
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw fail("\(what) at offset \(start) is not valid UTF-8")
        }
        return string
    }
}
