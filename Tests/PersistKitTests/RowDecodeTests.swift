import Foundation
@testable import PersistKit
import Testing

/// Rows read back from a SQLite store hold what was saved, slot by slot, whatever the row's
/// width and the mix of types: the row decoder takes a short path for nonzero integers and
/// sends everything else (0, NULL, other types, to-one relationships) to the general decoder,
/// and it writes rows of up to 12 slots as array literals and wider ones another way.
@Suite("Row decoding")
struct RowDecodeTests {
    typealias M = ContextTestModel

    /// The attribute types the rows cycle through.
    static let types: [AttributeType] = [.integer64, .integer16, .string, .integer32, .double, .boolean, .date, .binaryData]

    /// A model of `Owner` and `Row`: `key` first, then `width - 1` attributes of the types in
    /// turn, and a to-one `owner`.
    static func model(width: Int) -> ManagedObjectModel {
        let owner = EntityDescription(name: "Owner", properties: [AttributeDescription(name: "name", type: .string)])
        var properties: [PropertyDescription] = [AttributeDescription(name: "key", type: .integer64)]
        for index in 1..<max(width, 1) {
            properties.append(AttributeDescription(name: "a\(index)", type: types[index % types.count]))
        }
        properties.append(RelationshipDescription(name: "owner", destination: "Owner", inverse: "rows"))
        owner.properties.append(RelationshipDescription(name: "rows", destination: "Row", toMany: true, inverse: "owner"))
        return ManagedObjectModel(entities: [owner, EntityDescription(name: "Row", properties: properties)])
    }

    /// The value row `row` holds in attribute `index`: nil, a zero, a negative or a positive
    /// value in turn (an empty string and data for zero, `false` for a boolean).
    static func value(row: Int, index: Int) -> Any? {
        let kind = (row + index) % 4
        if kind == 0 { return nil }
        let magnitude = Int64(row * 1_000 + index)
        switch types[index % types.count] {
        case .integer16: return kind == 1 ? Int16(0) : kind == 2 ? Int16.min + Int16(row) : Int16(magnitude % 30_000)
        case .integer32: return kind == 1 ? Int32(0) : kind == 2 ? -Int32(magnitude) : Int32.max - Int32(row)
        case .integer64: return kind == 1 ? Int64(0) : kind == 2 ? Int64.min + magnitude : Int64.max - magnitude
        case .double: return kind == 1 ? 0.0 : kind == 2 ? -Double(magnitude) / 8 : Double(magnitude) * 1.5
        case .string: return kind == 1 ? "" : "text \(magnitude)"
        case .boolean: return kind != 1
        case .date: return Date(timeIntervalSinceReferenceDate: kind == 1 ? 0 : Double(magnitude) * (kind == 2 ? -60 : 60))
        default: return kind == 1 ? Data() : Data([UInt8(row % 256), UInt8(index % 256), 7])
        }
    }

    /// `read` equals `written`, compared as the attribute's Swift type.
    static func same(_ read: Any?, _ written: Any?) -> Bool {
        switch (read, written) {
        case (nil, nil): return true
        case let (read as Int16, written as Int16): return read == written
        case let (read as Int32, written as Int32): return read == written
        case let (read as Int64, written as Int64): return read == written
        case let (read as Double, written as Double): return read == written
        case let (read as String, written as String): return read == written
        case let (read as Bool, written as Bool): return read == written
        case let (read as Date, written as Date): return read == written
        case let (read as Data, written as Data): return read == written
        default: return false
        }
    }

    @Test("each slot of a fetched row and of a row read by ID holds what was saved",
          arguments: [1, 2, 3, 9, 11, 12, 13, 30])
    func rowsReadBackAsSaved(width: Int) throws {
        let directory = try M.temporaryDirectory()
        let coordinator = try M.coordinator(type: .sqlite, at: directory.appendingPathComponent("rows.sqlite"), model: Self.model(width: width))
        let rowCount = 12
        let writer = M.context(coordinator)
        try writer.performAndWait {
            let owner = M.insert("Owner", into: writer, ["name": "owner"])
            for row in 0..<rowCount {
                let object = M.insert("Row", into: writer, ["key": Int64(row)])
                for index in 1..<max(width, 1) { object.setValue(Self.value(row: row, index: index), forKey: "a\(index)") }
                // Every other row has an owner: a to-one of a key, and a NULL one.
                if row % 2 == 0 { object.setValue(owner, forKey: "owner") }
            }
            try writer.save()
        }
        func check(_ object: ManagedObject, _ how: String) {
            guard let key = object.value(forKey: "key") as? Int64 else {
                Issue.record("\(how): a row without its key")
                return
            }
            let row = Int(key)
            for index in 1..<max(width, 1) {
                let read = object.value(forKey: "a\(index)"), written = Self.value(row: row, index: index)
                #expect(Self.same(read, written), "\(how), width \(width), row \(row), a\(index): read \(String(describing: read)), saved \(String(describing: written))")
            }
            let owner = object.value(forKey: "owner") as? ManagedObject
            #expect((owner?.value(forKey: "name") as? String) == (row % 2 == 0 ? "owner" : nil), "\(how), row \(row): owner")
        }
        let reader = M.context(coordinator)
        let ids = try reader.performAndWait {
            let objects = try reader.fetch(M.request("Row", sort: [FetchSortDescriptor(key: "key", ascending: true)]))
            #expect(objects.count == rowCount)
            for object in objects { check(object, "fetched") }
            return objects.map(\.objectID)
        }
        let byID = M.context(coordinator)
        try byID.performAndWait {
            for id in ids { check(try byID.existingObject(with: id), "read by ID") }
        }
    }
}
