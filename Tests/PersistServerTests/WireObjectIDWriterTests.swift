import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// `WireObjectWriter.writeID` writes the JSON string of `WireObjectID.format(id)` for every ID,
/// whichever store and entity the ID before it named (it reuses the last prefix it wrote when
/// the store and entity are the same).
@Suite("Object IDs written into replies")
struct WireObjectIDWriterTests {
    @Test func everyIDAsItsFormattedString() throws {
        let beer = EntityDescription(name: "Beer", properties: [AttributeDescription(name: "name", type: .string)])
        let brewery = EntityDescription(name: "Brewery", properties: [AttributeDescription(name: "name", type: .string)])
        let other = EntityDescription(name: "Beer", properties: [AttributeDescription(name: "abv", type: .double)])
        try ManagedObjectModel(entities: [beer, brewery]).freeze()
        try ManagedObjectModel(entities: [other]).freeze()
        // Two plain stores, one whose identifier needs percent-encoding, and temporary IDs.
        let stores = ["0F8A3C52-6B1E-4D0A-9C3B-5A7E2D1F4B60", "A1B2C3D4-0000-4000-8000-000000000001", "store one/ü"]
        var ids: [ManagedObjectID] = []
        for store in stores {
            for entity in [beer, brewery, other] {
                for key: Int64 in [1, 9, 10, 123_456_789, .max] {
                    ids.append(ManagedObjectID(entity: entity, storeIdentifier: store, primaryKey: key))
                }
            }
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        let temporary = context.performAndWait { ManagedObject(entity: beer, insertInto: nil).objectID }
        ids.append(temporary)
        // Each ID after every other, so each is written after a prefix of another store or entity.
        for first in ids {
            for second in ids {
                for id in [first, second, second] {
                    var written: [UInt8] = Array("[".utf8)
                    WireObjectWriter.writeID(id, to: &written)
                    var expected: [UInt8] = Array("[".utf8)
                    JSON.writeString(WireObjectID.format(id), to: &expected)
                    #expect(written == expected, "\(WireObjectID.format(id)) after \(WireObjectID.format(first))")
                }
            }
        }
    }
}
