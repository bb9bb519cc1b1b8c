import Testing
@testable import PersistServer

/// `ByteStage.append(_:count:thenInteger:spill:)`, which stages a member's `"name":` and an
/// integer's digits in one step (the value writer's usual case), gives the bytes of appending
/// the name and then the digits, for short and long names, small and large integers, and
/// stages full or nearly full.
@Suite("byte stage: a name and an integer in one step, the bytes of two appends", .timeLimit(.minutes(1)))
struct ByteStageNameIntegerTests {
    @Test("names of 0 to 80 bytes, integers of every size and sign, stages of 64 bytes and more")
    func nameThenInteger() {
        var generator = MigrationCrashTests.SplitMix64(state: 0x4A3E)
        for capacity in [64, 65, 97, 1024] {
            var expected: [UInt8] = [1]
            var output: [UInt8] = [1]
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
                var stage = ByteStage(buffer)
                for round in 0..<4_000 {
                    let name = (0..<Int(generator.next() % 81)).map { UInt8(truncatingIfNeeded: $0 &+ round) }
                    let value: Int64 = switch generator.next() % 4 {
                    case 0: Int64(generator.next() % 10)
                    case 1: -Int64(generator.next() % 10)
                    case 2: Int64(bitPattern: generator.next())
                    default: Int64(bitPattern: generator.next()) >> Int64(generator.next() % 64)
                    }
                    name.withUnsafeBufferPointer { bytes in
                        // An empty array's buffer may have no base address: one byte stands in.
                        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(bytes.count, 1)) { copy in
                            for index in bytes.indices { copy[index] = bytes[index] }
                            // The force-unwrap cannot fail: a buffer of at least one byte has a base address.
                            stage.append(UnsafePointer(copy.baseAddress!), count: bytes.count, thenInteger: value, spill: &output)
                        }
                    }
                    expected += name
                    JSON.writeInteger(value, to: &expected)
                    // Now and then a byte staged alone, so the stage fills at every offset.
                    if generator.next() % 3 == 0 {
                        stage.append(UInt8(ascii: ","), spill: &output)
                        expected.append(UInt8(ascii: ","))
                    }
                }
                stage.flush(into: &output)
            }
            #expect(output == expected, "capacity \(capacity)")
        }
    }

    @Test("a padded name of 0 to 16 bytes copied as two words: the bytes of two appends, nothing past them kept")
    func paddedNameThenInteger() {
        var generator = MigrationCrashTests.SplitMix64(state: 0x9AD1)
        for capacity in [64, 65, 97, 1024] {
            var expected: [UInt8] = [1]
            var output: [UInt8] = [1]
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
                var stage = ByteStage(buffer)
                for round in 0..<4_000 {
                    let name = (0..<Int(generator.next() % 17)).map { UInt8(truncatingIfNeeded: $0 &+ round &+ 1) }
                    let value: Int64 = switch generator.next() % 3 {
                    case 0: Int64(generator.next() % 10)
                    case 1: Int64(bitPattern: generator.next())
                    default: Int64(bitPattern: generator.next()) >> Int64(generator.next() % 64)
                    }
                    // The name at the very end of its run, then the padding (0xEE here, so a
                    // byte copied past the name would show), as `WireValuePlan.names` lays it out.
                    let padded = name + Array(repeating: 0xEE, count: WireValuePlan.namePadding)
                    padded.withUnsafeBufferPointer { bytes in
                        // The force-unwrap cannot fail: `padded` holds at least 16 bytes.
                        stage.append(padded: bytes.baseAddress!, count: name.count, thenInteger: value, spill: &output)
                    }
                    expected += name
                    JSON.writeInteger(value, to: &expected)
                    if generator.next() % 3 == 0 {
                        stage.append(UInt8(ascii: ","), spill: &output)
                        expected.append(UInt8(ascii: ","))
                    }
                }
                stage.flush(into: &output)
            }
            #expect(output == expected, "capacity \(capacity)")
        }
    }
}
