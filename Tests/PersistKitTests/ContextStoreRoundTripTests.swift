import Foundation
import Testing
@testable import PersistKit

/// Every store type, through contexts: save every attribute type and relationship shape,
/// reopen the file in a new coordinator, and read back equal contents.
@Suite("Context round trips through every store type")
struct ContextStoreRoundTripTests {
    static func model() -> ManagedObjectModel {
        let types: [AttributeType] = [.integer16, .integer32, .integer64, .decimal, .double, .float, .string,
                                      .boolean, .date, .binaryData, .uuid, .uri, .transformable]
        let sample = EntityDescription(name: "Sample", properties: types.map { AttributeDescription(name: "\($0.rawValue)Value", type: $0) } + [
            RelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: "sample", isOrdered: true),
        ])
        let item = EntityDescription(name: "Item", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "sample", destination: "Sample", inverse: "items"),
        ])
        return ManagedObjectModel(entities: [sample, item])
    }

    static let date = Date(timeIntervalSinceReferenceDate: 786_123_456.125)
    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static var values: [String: Any] { [
        "integer16Value": Int16.min, "integer32Value": Int32.max, "integer64Value": Int64.min,
        "decimalValue": Decimal(string: "1234567890.125")!, "doubleValue": -0.1, "floatValue": Float(3.25),
        "stringValue": "Straße · 東京 · 🍺", "booleanValue": true, "dateValue": date,
        "binaryDataValue": Data([0, 1, 2, 255]), "uuidValue": uuid, "uriValue": URL(string: "https://example.org/a?b=c")!,
        "transformableValue": ["hops": 3, "malts": ["pale", "crystal"]] as [String: Any],
    ] }

    /// The attributes whose values SQLite binds as text or blobs (copied into the bindings).
    static let textAndBlobKeys: Set<String> = ["decimalValue", "stringValue", "binaryDataValue", "uriValue", "transformableValue"]

    @Test(arguments: ["SQLite", "XML", "Binary"])
    func reopenedStoreHasEqualContents(typeName: String) throws {
        let type = StoreType(rawValue: typeName)
        let directory = try ContextTestModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.\(typeName.lowercased())")

        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model())
            try coordinator.addPersistentStore(type: type, at: url)
            let context = ContextTestModel.context(coordinator)
            let sample = ContextTestModel.insert("Sample", into: context, Self.values)
            let empty = ContextTestModel.insert("Sample", into: context)
            _ = empty
            let items = ["c", "a", "b"].map { ContextTestModel.insert("Item", into: context, ["name": $0]) }
            sample.setValue(items, forKey: "items")
            try context.save()
        }

        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model())
        try coordinator.addPersistentStore(type: type, at: url)
        let context = ContextTestModel.context(coordinator)
        let samples = try context.fetch(ContextTestModel.request("Sample"))
        #expect(samples.count == 2)
        let full = try #require(samples.first { $0.value(forKey: "stringValue") != nil })
        let empty = try #require(samples.first { $0.value(forKey: "stringValue") == nil })
        #expect(full.value(forKey: "integer16Value") as? Int16 == Int16.min)
        #expect(full.value(forKey: "integer32Value") as? Int32 == Int32.max)
        #expect(full.value(forKey: "integer64Value") as? Int64 == Int64.min)
        #expect(full.value(forKey: "decimalValue") as? Decimal == Decimal(string: "1234567890.125")!)
        #expect(full.value(forKey: "doubleValue") as? Double == -0.1)
        #expect(full.value(forKey: "floatValue") as? Float == 3.25)
        #expect(full.value(forKey: "stringValue") as? String == "Straße · 東京 · 🍺")
        #expect(full.value(forKey: "booleanValue") as? Bool == true)
        #expect(full.value(forKey: "dateValue") as? Date == Self.date)
        #expect(full.value(forKey: "binaryDataValue") as? Data == Data([0, 1, 2, 255]))
        #expect(full.value(forKey: "uuidValue") as? UUID == Self.uuid)
        #expect(full.value(forKey: "uriValue") as? URL == URL(string: "https://example.org/a?b=c")!)
        let transformed = try #require(full.value(forKey: "transformableValue") as? [String: Any])
        #expect(transformed["hops"] as? Int == 3)
        #expect(transformed["malts"] as? [String] == ["pale", "crystal"])
        let ordered = try #require(full.value(forKey: "items") as? [ManagedObject])
        #expect(ordered.map { $0.value(forKey: "name") as? String } == ["c", "a", "b"])
        for key in Self.values.keys { #expect(empty.value(forKey: key) == nil, "\(key) stays nil") }
        #expect((empty.value(forKey: "items") as? [ManagedObject])?.isEmpty == true)
    }

    /// A SQLite store keeps the values bound to its prepared `INSERT` from one save to the next
    /// when they hold no text or blob (each row binds every column): a save of an object with
    /// no values, after a save of one with every such value, stores nulls, and the earlier row
    /// keeps its values.
    @Test(arguments: [false, true])
    func aSaveAfterOneWithValuesStoresNullsWhereItsObjectHasNone(withTextAndBlobs: Bool) throws {
        let directory = try ContextTestModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: Self.model())
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ContextTestModel.context(coordinator)
        let (fullID, emptyID) = try context.performAndWait {
            let entity = try #require(coordinator.managedObjectModel.entitiesByName["Sample"])
            let full = ManagedObject(entity: entity, insertInto: context)
            for (key, value) in Self.values where withTextAndBlobs || !Self.textAndBlobKeys.contains(key) {
                full.setValue(value, forKey: key)
            }
            try context.save()
            let empty = ManagedObject(entity: entity, insertInto: context)
            try context.save()
            return (full.objectID, empty.objectID)
        }
        let reader = PersistentStoreCoordinator(managedObjectModel: Self.model())
        try reader.addPersistentStore(type: .sqlite, at: url)
        let readContext = ContextTestModel.context(reader)
        try readContext.performAndWait {
            let empty = try readContext.existingObject(with: try #require(reader.managedObjectID(forURIRepresentation: emptyID.uriRepresentation())))
            for key in Self.values.keys { #expect(empty.value(forKey: key) == nil, "\(key) is null in the second row") }
            let full = try readContext.existingObject(with: try #require(reader.managedObjectID(forURIRepresentation: fullID.uriRepresentation())))
            #expect(full.value(forKey: "integer64Value") as? Int64 == Int64.min)
            #expect(full.value(forKey: "dateValue") as? Date == Self.date)
            #expect(full.value(forKey: "uuidValue") as? UUID == Self.uuid)
            #expect(full.value(forKey: "stringValue") as? String == (withTextAndBlobs ? "Straße · 東京 · 🍺" : nil))
        }
    }
}
