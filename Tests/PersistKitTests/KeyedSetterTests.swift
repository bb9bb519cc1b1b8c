import Foundation
import Testing
@testable import PersistKit

/// The setters through an ``AttributeKey`` (`setInt64(_:for:)` … `setURL(_:for:)`, which
/// generated classes write with) store what `setValue(_:forKey:)` stores for the same value
/// and name, track changes as it does, and hand what they do not store themselves (a value the
/// attribute converts, a non-plain property) to it.
@Suite("Keyed setters", .timeLimit(.minutes(1)))
struct KeyedSetterTests {
    /// One key per attribute of the sample entity, as a generated class keeps its keys.
    static let keys = Dictionary(uniqueKeysWithValues: ["i16", "i32", "i64", "dbl", "flt", "dec", "str", "flag", "day", "blob", "uid", "link"]
        .map { ($0, AttributeKey($0)) })

    static func key(_ name: String) -> AttributeKey {
        // Force-unwrap: every name used below is in `keys`.
        keys[name]!
    }

    /// Sets every attribute of `object` through the keyed setters, to `values` (`nil` where
    /// a value is missing).
    static func setKeyed(_ object: ManagedObject, _ values: [String: Any]) {
        object.setInt64((values["i16"] as? Int16).map { Int64($0) }, for: key("i16"))
        object.setInt64((values["i32"] as? Int32).map { Int64($0) }, for: key("i32"))
        object.setInt64(values["i64"] as? Int64, for: key("i64"))
        object.setDouble(values["dbl"] as? Double, for: key("dbl"))
        object.setDouble((values["flt"] as? Float).map { Double($0) }, for: key("flt"))
        object.setDecimal(values["dec"] as? Decimal, for: key("dec"))
        object.setString(values["str"] as? String, for: key("str"))
        object.setBool(values["flag"] as? Bool, for: key("flag"))
        object.setDate(values["day"] as? Date, for: key("day"))
        object.setData(values["blob"] as? Data, for: key("blob"))
        object.setUUID(values["uid"] as? UUID, for: key("uid"))
        object.setURL(values["link"] as? URL, for: key("link"))
    }

    /// Sets the same attributes by name, each with the Swift type its keyed setter takes.
    static func setNamed(_ object: ManagedObject, _ values: [String: Any]) {
        object.setValue((values["i16"] as? Int16).map { Int64($0) }, forKey: "i16")
        object.setValue((values["i32"] as? Int32).map { Int64($0) }, forKey: "i32")
        object.setValue(values["i64"] as? Int64, forKey: "i64")
        object.setValue(values["dbl"] as? Double, forKey: "dbl")
        object.setValue((values["flt"] as? Float).map { Double($0) }, forKey: "flt")
        object.setValue(values["dec"] as? Decimal, forKey: "dec")
        object.setValue(values["str"] as? String, forKey: "str")
        object.setValue(values["flag"] as? Bool, forKey: "flag")
        object.setValue(values["day"] as? Date, forKey: "day")
        object.setValue(values["blob"] as? Data, forKey: "blob")
        object.setValue(values["uid"] as? UUID, forKey: "uid")
        object.setValue(values["link"] as? URL, forKey: "link")
    }

    static var full: [String: Any] { [
        "i16": Int16(-12_345), "i32": Int32.min, "i64": Int64.max, "dbl": -2.5, "flt": Float(0.25),
        "dec": Decimal(string: "12345.6789") ?? 0, "str": "full", "flag": true,
        "day": Date(timeIntervalSince1970: 1_700_000_000.25), "blob": Data([0, 1, 254, 255]),
        "uid": UUID(uuidString: "F1E2D3C4-B5A6-4978-8695-A4B3C2D1E0F9") ?? UUID(),
        "link": URL(string: "https://example.com/a?b=c#d") ?? URL(fileURLWithPath: "/"),
    ] }

    static var other: [String: Any] { [
        "i16": Int16(7), "i32": Int32(70_000), "i64": Int64(-1), "dbl": 1e300, "flt": Float(-0.5),
        "dec": Decimal(2), "str": "other", "flag": false, "day": Date(timeIntervalSince1970: 0),
        "blob": Data(), "uid": UUID(uuidString: "00000000-0000-4000-8000-000000000001") ?? UUID(),
        "link": URL(string: "file:///tmp/x") ?? URL(fileURLWithPath: "/"),
    ] }

    /// The stored values of `object`, slot by slot.
    static func slots(_ object: ManagedObject) -> [StoreValue] {
        object.entity.slots.map { object.primitiveValue(forKey: $0.name) }
    }

    /// New objects, then saved objects changed to other values, back to their saved values,
    /// and to `nil`: after each step, the object set through keys holds what the object set by
    /// name holds, with the same changes, and a save and a fetch give the same rows.
    @Test(arguments: [StoreType.inMemory, .sqlite])
    func keyedSettersStoreWhatSetValueStores(_ type: StoreType) throws {
        let directory = try ContextTestModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = type == .inMemory ? nil : directory.appendingPathComponent("store")
        let coordinator = try ContextTestModel.coordinator(type: type, at: url, model: SetValueTypedPathTests.model())
        let context = ContextTestModel.context(coordinator)
        try context.performAndWait {
            let keyed = try SetValueTypedPathTests.sample(context)
            let named = try SetValueTypedPathTests.sample(context)
            func expectSame(_ step: String) {
                #expect(Self.slots(keyed) == Self.slots(named), "\(step)")
                #expect(keyed.hasChanges == named.hasChanges, "\(step)")
                #expect(Set(keyed.changedValues().keys) == Set(named.changedValues().keys), "\(step)")
            }
            Self.setKeyed(keyed, Self.full)
            Self.setNamed(named, Self.full)
            expectSame("inserted")
            #expect(keyed.int64(forKey: "i16") == -12_345 && keyed.double(forKey: "flt") == 0.25 && keyed.string(forKey: "str") == "full")
            try context.save()

            Self.setKeyed(keyed, Self.other)
            Self.setNamed(named, Self.other)
            expectSame("changed")
            #expect(keyed.changedValues().count == 12)

            Self.setKeyed(keyed, Self.full)
            Self.setNamed(named, Self.full)
            expectSame("changed back")
            #expect(!keyed.hasChanges)

            Self.setKeyed(keyed, [:])
            Self.setNamed(named, [:])
            expectSame("set to nil")
            let allNull = Self.slots(keyed).allSatisfy(\.isNull)
            #expect(allNull)
            Self.setKeyed(keyed, Self.other)
            Self.setNamed(named, Self.other)
            try context.save()
        }
        let reader = ContextTestModel.context(type == .inMemory ? coordinator
            : try ContextTestModel.coordinator(type: type, at: url, model: SetValueTypedPathTests.model()))
        try reader.performAndWait {
            let objects = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Sample"))
            #expect(objects.count == 2)
            #expect(objects.count == 2 && Self.slots(objects[0]) == Self.slots(objects[1]))
            #expect(objects.first?.string(forKey: "str") == "other")
        }
    }

    /// A value the attribute converts, rather than stores as it is, goes through
    /// `setValue(_:forKey:)`: an integer into a Double attribute, a Double or an integer into a
    /// Decimal.
    @Test func convertedValuesTakeTheGeneralPath() throws {
        let context = ContextTestModel.context(try ContextTestModel.coordinator(model: SetValueTypedPathTests.model()))
        try context.performAndWait {
            let object = try SetValueTypedPathTests.sample(context)
            object.setInt64(3, for: Self.key("dbl"))
            #expect(object.primitiveValue(forKey: "dbl") == .double(3))
            object.setDouble(2, for: Self.key("dec"))
            #expect(object.primitiveValue(forKey: "dec") == .decimal(2))
            let named = try SetValueTypedPathTests.sample(context)
            object.setInt64(5, for: Self.key("dec"))
            named.setValue(Int64(5), forKey: "dec")
            #expect(object.primitiveValue(forKey: "dec") == named.primitiveValue(forKey: "dec"))
        }
    }

    /// A key set in objects of entities whose slot, and type, for its name differ writes the
    /// right slot of each, converted as that entity's attribute takes it, however the writes
    /// alternate.
    @Test func oneKeyAcrossEntitiesWithOtherSlots() throws {
        let first = EntityDescription(name: "First", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "rank", type: .integer64),
        ])
        let second = EntityDescription(name: "Second", properties: [
            AttributeDescription(name: "note", type: .string), AttributeDescription(name: "extra", type: .integer16),
            AttributeDescription(name: "rank", type: .double),
        ])
        let rank = AttributeKey("rank")
        let context = ContextTestModel.context(try ContextTestModel.coordinator(model: ManagedObjectModel(entities: [first, second])))
        try context.performAndWait {
            let model = context.persistentStoreCoordinator?.managedObjectModel
            let entities = try [#require(model?.entitiesByName["First"]), #require(model?.entitiesByName["Second"])]
            let objects = (0..<4).map { ManagedObject(entity: entities[$0 % 2], insertInto: context) }
            for round in 0..<3 {
                for (position, object) in objects.enumerated() where (position + round) % 2 == 0 || round == 2 {
                    let value = Int64(100 * round + position)
                    object.setInt64(value, for: rank)
                    let expected: StoreValue = object.entity.name == "First" ? .integer(value) : .double(Double(value))
                    #expect(object.primitiveValue(forKey: "rank") == expected, "round \(round), \(object.entity.name)")
                    let untouched = object.entity.name == "First" ? ["name"] : ["note", "extra"]
                    for name in untouched { #expect(object.primitiveValue(forKey: name) == .null) }
                }
            }
        }
    }
}
