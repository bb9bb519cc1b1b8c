import Testing
@testable import PersistServer

/// `ByteStage` gives the bytes that appending each piece to the array would, whatever fits in
/// its buffer; `JSON.writeInteger(_:at:)` writes the digits `JSON.writeInteger(_:to:)` appends.
@Suite("byte stage: the bytes of appending piece by piece", .timeLimit(.minutes(1)))
struct ByteStageTests {
    @Test("integers written at a pointer are the ones appended")
    func integersAtAPointer() {
        var generator = MigrationCrashTests.SplitMix64(state: 0xB17E)
        var values: [Int64] = [0, 1, 9, 10, 11, 99, 100, 101, 999, 1_000, -1, -9, -10, -100, .max, .min, .max - 1, .min + 1]
        for _ in 0..<2_000 {
            let raw = Int64(bitPattern: generator.next())
            values += [raw, raw >> Int64(generator.next() % 63)]
        }
        for value in values {
            var appended: [UInt8] = []
            JSON.writeInteger(value, to: &appended)
            let written = [UInt8](unsafeUninitializedCapacity: JSON.maximumIntegerBytes) { buffer, count in
                // The force-unwrap cannot fail: a buffer of 20 bytes has a base address.
                count = JSON.writeInteger(value, at: buffer.baseAddress!)
            }
            #expect(written == appended, "\(value)")
            #expect(written == Array(String(value).utf8), "\(value)")
        }
    }

    @Test("pieces staged, spilled, flushed and written around the stage keep their order")
    func piecesKeepTheirOrder() {
        var generator = MigrationCrashTests.SplitMix64(state: 0x57A6E)
        for capacity in [64, 100, 2048] {
            var expected: [UInt8] = []
            var output: [UInt8] = [7]
            expected.append(7)
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
                var stage = ByteStage(buffer)
                for round in 0..<3_000 {
                    switch generator.next() % 6 {
                    case 0:
                        let value = Int64(bitPattern: generator.next()) >> Int64(generator.next() % 64)
                        stage.writeInteger(value, spill: &output)
                        JSON.writeInteger(value, to: &expected)
                    case 1:
                        let bytes = (0..<Int(generator.next() % 150)).map { UInt8(truncatingIfNeeded: $0 &+ round) }
                        stage.append(bytes, spill: &output)
                        expected += bytes
                    case 2:
                        stage.append(",\"ok\":true,", spill: &output)
                        expected += Array(",\"ok\":true,".utf8)
                    case 3:
                        stage.append(UInt8(truncatingIfNeeded: round), spill: &output)
                        expected.append(UInt8(truncatingIfNeeded: round))
                    case 4:
                        // Written straight into the output: the stage is flushed first.
                        stage.flush(into: &output)
                        JSON.writeString("s\(round)", to: &output)
                        JSON.writeString("s\(round)", to: &expected)
                    default:
                        // Dropped: what was staged since the last flush is not written.
                        stage.flush(into: &output)
                        stage.append("dropped", spill: &output)
                        stage.discard()
                    }
                }
                stage.flush(into: &output)
                #expect(stage.count == 0)
            }
            #expect(output == expected, "capacity \(capacity)")
        }
    }
}
