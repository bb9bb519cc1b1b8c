import Foundation
import Testing
@testable import PersistKit

/// `setValue(_:forKey:)` takes values of exactly an attribute's own Swift type (and integers of
/// the common widths) on a path without dynamic casts; it must store and refuse exactly what
/// the general path does, for every plain attribute type.
@Suite("setValue typed path", .timeLimit(.minutes(1)))
struct SetValueTypedPathTests {
    static func model() -> ManagedObjectModel {
        let entity = EntityDescription(name: "Sample", properties: [
            AttributeDescription(name: "i16", type: .integer16),
            AttributeDescription(name: "i32", type: .integer32),
            AttributeDescription(name: "i64", type: .integer64),
            AttributeDescription(name: "dbl", type: .double),
            AttributeDescription(name: "flt", type: .float),
            AttributeDescription(name: "dec", type: .decimal),
            AttributeDescription(name: "str", type: .string),
            AttributeDescription(name: "flag", type: .boolean),
            AttributeDescription(name: "day", type: .date),
            AttributeDescription(name: "blob", type: .binaryData),
            AttributeDescription(name: "uid", type: .uuid),
            AttributeDescription(name: "link", type: .uri),
        ])
        return ManagedObjectModel(entities: [entity])
    }

    static func sample(_ context: ManagedObjectContext) throws -> ManagedObject {
        let entity = try #require(context.persistentStoreCoordinator?.managedObjectModel.entitiesByName["Sample"])
        return ManagedObject(entity: entity, insertInto: context)
    }

    @Test func eachTypeIsStoredAsTheGeneralPathStoresIt() throws {
        let context = ContextTestModel.context(try ContextTestModel.coordinator(model: Self.model()))
        try context.performAndWait {
            let object = try Self.sample(context)
            let day = Date(timeIntervalSince1970: 1_700_000_000)
            let uid = try #require(UUID(uuidString: "F1E2D3C4-B5A6-4978-8695-A4B3C2D1E0F9"))
            let link = try #require(URL(string: "https://example.com/a?b=c"))
            let cases: [(String, Any, StoreValue)] = [
                ("i16", Int16(-12), .integer(-12)), ("i16", Int32(300), .integer(300)), ("i16", Int(7), .integer(7)),
                ("i32", Int32(70_000), .integer(70_000)), ("i32", Int16(5), .integer(5)),
                ("i64", Int64.min, .integer(.min)), ("i64", Int(42), .integer(42)),
                ("i64", UInt8(9), .integer(9)), // a width the typed path leaves to the general one
                ("dbl", 2.5, .double(2.5)), ("dbl", Float(1.5), .double(1.5)), ("dbl", Int64(3), .double(3)),
                ("flt", Float(0.25), .double(0.25)), ("flt", 0.75, .double(0.75)),
                ("dec", Decimal(string: "12.34") ?? 0, .decimal(Decimal(string: "12.34") ?? 0)), ("dec", 2.0, .decimal(2)),
                ("str", "Orval", .string("Orval")), ("flag", true, .bool(true)), ("flag", false, .bool(false)),
                ("day", day, .date(day)), ("blob", Data([1, 2, 3]), .data(Data([1, 2, 3]))),
                ("uid", uid, .uuid(uid)), ("link", link, .url(link)),
            ]
            for (key, value, expected) in cases {
                try object.setCheckedValue(value, forKey: key)
                #expect(object.primitiveValue(forKey: key) == expected, "\(key) = \(value)")
            }
            #expect(object.value(forKey: "str") as? String == "Orval")
            #expect(object.value(forKey: "flag") as? Bool == false)
            #expect(object.value(forKey: "uid") as? UUID == uid)
            #expect(object.value(forKey: "flt") as? Float == 0.75)
        }
    }

    @Test func wrongTypesAndOutOfRangeValuesAreRefusedAsBefore() throws {
        let context = ContextTestModel.context(try ContextTestModel.coordinator(model: Self.model()))
        try context.performAndWait {
            let object = try Self.sample(context)
            try object.setCheckedValue("kept", forKey: "str")
            try object.setCheckedValue(Int16(1), forKey: "i16")
            let refused: [(String, Any)] = [
                ("str", 5), ("str", true), ("flag", "yes"), ("day", "2024-01-01"), ("uid", "not a UUID"),
                ("blob", "bytes"), ("link", 3.5), ("i16", Int32(40_000)), ("i16", Int64(-40_000)), ("i32", Int64(Int64(Int32.max) + 1)),
                ("dbl", "2.5"),
            ]
            for (key, value) in refused {
                #expect(throws: PersistenceError.self, "\(key) = \(value)") { try object.setCheckedValue(value, forKey: key) }
            }
            #expect(object.primitiveValue(forKey: "str") == .string("kept"), "a refused value changes nothing")
            #expect(object.primitiveValue(forKey: "i16") == .integer(1))
            // Optionals and nil take the general path.
            try object.setCheckedValue(Optional("wrapped") as Any, forKey: "str")
            #expect(object.primitiveValue(forKey: "str") == .string("wrapped"))
            try object.setCheckedValue(nil, forKey: "str")
            #expect(object.primitiveValue(forKey: "str") == .null)
            #expect(throws: PersistenceError.self) { try object.setCheckedValue(1, forKey: "missing") }
        }
    }

    @Test func typedValuesOnSavedObjectsAreTrackedAsChanges() throws {
        let url = try ContextTestModel.temporaryDirectory().appendingPathComponent("typed.sqlite")
        let context = ContextTestModel.context(try ContextTestModel.coordinator(type: .sqlite, at: url, model: Self.model()))
        try context.performAndWait {
            let object = try Self.sample(context)
            object.setValue("first", forKey: "str")
            object.setValue(1.5, forKey: "dbl")
            try context.save()
            object.setValue("first", forKey: "str")
            #expect(!context.hasChanges, "the same value is no change")
            object.setValue("second", forKey: "str")
            object.setValue(true, forKey: "flag")
            #expect(context.updatedObjects == [object])
            #expect(Set(object.changedValues().keys) == ["str", "flag"])
            try context.save()
            #expect(object.committedValues(forKeys: ["str", "flag"])["str"] as? String == "second")
        }
    }
}
