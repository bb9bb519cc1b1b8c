import Testing
@testable import PersistServer

/// `JSON.writeInteger` (digit pairs from a table) writes exactly the digits `String(value)`
/// gives, at every length, both signs and the extremes.
@Suite("integers in replies: the digits String(value) gives", .timeLimit(.minutes(1)))
struct IntegerWriterTests {
    /// The bytes `writeInteger` appends after `prefix`.
    static func written(_ value: Int64, after prefix: [UInt8] = []) -> [UInt8] {
        var bytes = prefix
        JSON.writeInteger(value, to: &bytes)
        return bytes
    }

    @Test("every length and sign, powers of ten and their neighbours, the extremes")
    func digitsMatchString() {
        var values: [Int64] = [0, 1, 9, 10, 11, 42, 99, 100, 101, 999, 1000, 12345, Int64.max, Int64.min, Int64.min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, power / 2 + 7]
        }
        values += values.map { $0 == Int64.min ? Int64.max : -$0 }
        for value in values {
            #expect(Self.written(value) == Array(String(value).utf8), "\(value)")
        }
    }

    @Test("every value below 10,000 and a spread of larger ones, appended after existing bytes")
    func appendsAfterExistingBytes() {
        let prefix = Array("{\"version\":".utf8)
        var values = Array(Int64(-10_000)...10_000)
        var value: Int64 = 7
        while value < Int64.max / 3 {
            values.append(value)
            value = value * 3 + 1
        }
        let wrong = values.filter { Self.written($0, after: prefix) != prefix + Array(String($0).utf8) }
        #expect(wrong.isEmpty, "written differently: \(wrong.prefix(10))")
    }
}
