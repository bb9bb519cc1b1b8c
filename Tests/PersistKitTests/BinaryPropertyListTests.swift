import Foundation
import Testing
@testable import PersistKit

/// The binary property list writer and reader store metadata goes through: lists Foundation
/// reads as written, Foundation's lists read alike, the real corpus stores' `Z_PLIST`s, and
/// damaged lists refused with an error rather than read past their end.
@Suite("Binary property lists")
struct BinaryPropertyListTests {
    /// A value as text that Foundation's reading (numbers as `NSNumber`) and ours (`Int`,
    /// `Double`) give alike: numbers as `NSNumber` describes them, dictionaries sorted by key.
    static func canonical(_ value: Any) -> String {
        switch value {
        case let bool as Bool where type(of: value) == Bool.self: return "b:\(bool)"
        case let string as String: return "s:\(string)"
        case let data as Data: return "x:" + data.map { String(format: "%02x", $0) }.joined()
        case let date as Date: return "t:\(date.timeIntervalSinceReferenceDate)"
        case let int as any BinaryInteger: return "n:\(NSNumber(value: Int64(truncatingIfNeeded: int)))"
        case let double as Double where type(of: value) == Double.self: return "n:\(NSNumber(value: double))"
        case let float as Float where type(of: value) == Float.self: return "n:\(NSNumber(value: Double(float)))"
        case let number as NSNumber: return "n:\(number)"
        case let dictionary as [String: Any]:
            return "{" + dictionary.keys.sorted().map { "\($0)=\(canonical(dictionary[$0]!))" }.joined(separator: ",") + "}"
        case let array as [Any]: return "[" + array.map(canonical).joined(separator: ",") + "]"
        default: return "?\(type(of: value))"
        }
    }

    /// A value with every kind the writer takes, counts on both sides of the marker's four bits,
    /// and integers of every width.
    static func sample() -> [String: any Sendable] {
        let integers: [any Sendable] = [0, 1, 255, 256, 65_535, 65_536, 4_294_967_295, 4_294_967_296, Int.max, -1, -300, Int.min]
        return [
            "NSStoreType": "SQLite",
            "empty string": "",
            "fourteen chars": "abcdefghijklmn",
            "fifteen chars!!": "abcdefghijklmno",
            "non-ASCII": "Grüße, 東京 🍺",
            "integers": integers,
            "int32": Int32(-7),
            "uint8": UInt8(200),
            "reals": [2.5, -0.125, 1e-3, 1e300] as [any Sendable],
            "float": Float(0.5),
            "flags": [true, false] as [any Sendable],
            "dates": [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -86_400.5)] as [any Sendable],
            "data": ["": Data(), "short": Data([1, 2, 3]), "long": Data((0..<300).map { UInt8($0 & 0xFF) })] as [String: any Sendable],
            "nested": ["a": [[] as [any Sendable], [:] as [String: any Sendable], ["deeper": [1, "two"] as [any Sendable]]] as [any Sendable]] as [String: any Sendable],
        ]
    }

    @Test func writtenListsReadBackAndAsFoundationReadsThem() throws {
        let value = Self.sample()
        let data = try BinaryPropertyListWriter.data(value)
        #expect(data.starts(with: Array("bplist00".utf8)))
        let ours = try BinaryPropertyListReader.value(of: data)
        let foundation = try PropertyListSerialization.propertyList(from: data, format: nil)
        #expect(Self.canonical(ours) == Self.canonical(value))
        #expect(Self.canonical(foundation) == Self.canonical(value))
        // Typed as metadata readers expect them.
        let dictionary = try #require(ours as? [String: any Sendable])
        #expect(dictionary["int32"] as? Int == -7)
        #expect((dictionary["flags"] as? [any Sendable])?.first as? Bool == true)
        #expect(dictionary["non-ASCII"] as? String == "Grüße, 東京 🍺")
        // The same value gives the same bytes (keys are written sorted).
        #expect(try BinaryPropertyListWriter.data(value) == data)
    }

    @Test func foundationsListsReadAsFoundationReadsThem() throws {
        let value = SQLiteMetadata.foundationValue(Self.sample())
        let data = try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0)
        let ours = try BinaryPropertyListReader.value(of: data)
        let foundation = try PropertyListSerialization.propertyList(from: data, format: nil)
        #expect(Self.canonical(ours) == Self.canonical(foundation))
    }

    @Test func largeListsUseWiderReferencesAndOffsets() throws {
        // 400 objects need two-byte references; 70,000 bytes of data four-byte offsets.
        let strings: [any Sendable] = (0..<400).map { "string \($0)" }
        let value: [String: any Sendable] = ["strings": strings, "blob": Data(repeating: 7, count: 70_000), "last": "end"]
        let data = try BinaryPropertyListWriter.data(value)
        let trailer = data.count - 32
        #expect(data[data.startIndex + trailer + 7] == 2)
        #expect(data[data.startIndex + trailer + 6] == 4)
        let ours = try BinaryPropertyListReader.value(of: data)
        #expect(Self.canonical(ours) == Self.canonical(value))
        #expect(Self.canonical(try PropertyListSerialization.propertyList(from: data, format: nil)) == Self.canonical(value))
    }

    @Test func valuesWithoutAListFormAreRefusedWithTheirPath() throws {
        struct Opaque: Sendable {}
        let value: [String: any Sendable] = ["outer": ["inner": [1, Opaque()] as [any Sendable]] as [String: any Sendable]]
        do {
            _ = try BinaryPropertyListWriter.data(value)
            Issue.record("a value with no property list form was written")
        } catch let error as BinaryPropertyListError {
            #expect(error.location == "outer.inner[1]")
            #expect(error.reason.contains("Opaque"))
        }
    }

    @Test func metadataOutsideTheWritersAndReadersReachGoesThroughFoundation() throws {
        // An NSNumber is left to Foundation's writer (cast to Bool, a 1 would become true).
        var metadata = SQLiteMetadata(uuid: "U", versionHashes: ["E": Data(repeating: 1, count: 32)], versionIdentifiers: [])
        metadata.plist["number"] = NSNumber(value: 1)
        #expect(throws: BinaryPropertyListError.self) { try BinaryPropertyListWriter.data(metadata.plist) }
        let written = try metadata.plistData()
        let read = try SQLiteMetadata(uuid: "U", plistData: written)
        #expect(read.plist["number"] as? Int == 1)
        #expect(!(read.plist["number"] is Bool))
        // An XML property list is read by Foundation's reader.
        let xml = try PropertyListSerialization.data(fromPropertyList: SQLiteMetadata.foundationValue(metadata.plist), format: .xml, options: 0)
        #expect(throws: BinaryPropertyListError.self) { try BinaryPropertyListReader.value(of: xml) }
        let fromXML = try SQLiteMetadata(uuid: "U", plistData: xml)
        #expect(fromXML.plist["NSStoreType"] as? String == "SQLite")
        #expect((fromXML.plist["NSStoreModelVersionHashes"] as? [String: any Sendable])?["E"] as? Data == Data(repeating: 1, count: 32))
    }

    @Test func damagedListsAreRefusedNotReadPastTheirEnd() throws {
        let data = try BinaryPropertyListWriter.data(Self.sample())
        let bytes = Array(data)
        // Every shorter prefix loses the trailer or points past the bytes.
        for length in [0, 7, 8, 39, bytes.count / 2, bytes.count - 1] {
            #expect(throws: BinaryPropertyListError.self) { try BinaryPropertyListReader.value(of: Data(bytes.prefix(length))) }
        }
        // Every byte changed to values that break sizes and references: read or refused, never a crash.
        for index in bytes.indices {
            for replacement: UInt8 in [0x00, 0x0F, 0x5F, 0xAF, 0xDF, 0xFF] {
                var damaged = bytes
                damaged[index] = replacement
                _ = try? BinaryPropertyListReader.value(of: Data(damaged))
            }
        }
        // A trailer whose offset table lies past the end.
        var table = bytes
        table[table.count - 1] = 0xFF
        #expect(throws: BinaryPropertyListError.self) { try BinaryPropertyListReader.value(of: Data(table)) }
    }

    /// A list of `arrays` arrays, each holding `width` references to the next (the last empty).
    static func chain(arrays: Int, width: Int) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for index in 0..<arrays {
            offsets.append(bytes.count)
            let next = index + 1 < arrays ? index + 1 : 0
            let count = index + 1 < arrays ? width : 0
            bytes.append(0xA0 | UInt8(count))
            bytes.append(contentsOf: Array(repeating: UInt8(next), count: count))
        }
        let table = bytes.count
        bytes.append(contentsOf: offsets.map { UInt8($0) })
        bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, 1, 1])
        for field in [arrays, 0, table] { bytes.append(contentsOf: (0..<8).map { UInt8(truncatingIfNeeded: UInt64(field) >> (56 - 8 * UInt64($0))) }) }
        return Data(bytes)
    }

    @Test func loopsAndSharedObjectsAreBounded() throws {
        // A chain read normally, then one whose arrays each hold the next one twice: 2^30 visits.
        #expect(Self.canonical(try BinaryPropertyListReader.value(of: Self.chain(arrays: 3, width: 1))) == "[[[]]]")
        do {
            _ = try BinaryPropertyListReader.value(of: Self.chain(arrays: 30, width: 2))
            Issue.record("shared references were followed without a bound")
        } catch let error as BinaryPropertyListError {
            #expect(error.reason.contains("objects reached"))
        }
        // An array that holds itself.
        var looping = Array("bplist00".utf8) + [0xA1, 0x00]
        looping += [8] + [0, 0, 0, 0, 0, 0, 1, 1]
        for field in [1, 0, 10] { looping += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(field) >> (56 - 8 * UInt64($0))) } }
        do {
            _ = try BinaryPropertyListReader.value(of: Data(looping))
            Issue.record("a looping list was read")
        } catch let error as BinaryPropertyListError {
            #expect(error.reason.contains("nested more than"))
        }
    }

    @Test func corpusStoresMetadataReadsAsFoundationReadsIt() throws {
        guard let corpus = SQLiteTestSupport.corpusDirectory() else { print("BinaryPropertyListTests: corpus not found; skipping"); return }
        for (directory, name, _) in try RealStoreTests.cases(corpus) {
            let connection = try SQLiteConnection(path: directory.appendingPathComponent("\(name).sqlite").path, flags: [.readOnly])
            defer { try? connection.close() }
            let data = try {
                let statement = try connection.prepare(#"SELECT "Z_PLIST" FROM "Z_METADATA""#)
                #expect(try statement.step())
                return statement.data(0)
            }()
            #expect(data.starts(with: Array("bplist00".utf8)))
            let ours = try BinaryPropertyListReader.value(of: data)
            let foundation = try PropertyListSerialization.propertyList(from: data, format: nil)
            #expect(Self.canonical(ours) == Self.canonical(foundation), "\(name)")
            #expect((ours as? [String: any Sendable])?["NSStoreModelVersionHashes"] is [String: any Sendable])
        }
    }
}
