import Foundation
import Testing
@testable import PersistKit

/// The typed getters (`int64(forKey:)` … `url(forKey:)`, which generated classes read with)
/// give what `value(forKey:)` gives, cast to their type, for every plain attribute type, after
/// a save and a fetch from each kind of store, and `nil` where there is no value.
@Suite("Typed value getters", .timeLimit(.minutes(1)))
struct TypedValueGetterTests {
    static let day = Date(timeIntervalSince1970: 1_700_000_000.25)
    static let uid = UUID(uuidString: "F1E2D3C4-B5A6-4978-8695-A4B3C2D1E0F9")
    static let link = URL(string: "https://example.com/a?b=c#d")
    static let amount = Decimal(string: "12345.6789")

    @Test(arguments: [StoreType.inMemory, .sqlite, .xml, .binary])
    func gettersAgreeWithValueForKeyAfterAFetch(_ type: StoreType) throws {
        let directory = try ContextTestModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = type == .inMemory ? nil : directory.appendingPathComponent("store")
        let model = SetValueTypedPathTests.model()
        let written = try ContextTestModel.coordinator(type: type, at: url, model: model)
        let writer = ContextTestModel.context(written)
        let values: [String: Any] = [
            "i16": Int16(-12_345), "i32": Int32.min, "i64": Int64.max, "dbl": -2.5, "flt": Float(0.25),
            "dec": try #require(Self.amount), "str": "full", "flag": true, "day": Self.day,
            "blob": Data([0, 1, 254, 255]), "uid": try #require(Self.uid), "link": try #require(Self.link),
        ]
        try writer.performAndWait {
            let full = try SetValueTypedPathTests.sample(writer)
            for (key, value) in values { full.setValue(value, forKey: key) }
            _ = try SetValueTypedPathTests.sample(writer)
            try writer.save()
        }
        // A file store is opened again by a new coordinator, so the values come from the file.
        let reader = ContextTestModel.context(type == .inMemory ? written : try ContextTestModel.coordinator(type: type, at: url, model: model))
        try reader.performAndWait {
            let objects = try reader.fetch(FetchRequest<ManagedObject>(entityName: "Sample"))
            #expect(objects.count == 2)
            let full = try #require(objects.first { $0.string(forKey: "str") == "full" })
            let empty = try #require(objects.first { $0.string(forKey: "str") == nil })
            #expect(full.int64(forKey: "i16") == -12_345 && full.value(forKey: "i16") as? Int16 == -12_345)
            #expect(full.int64(forKey: "i32") == Int64(Int32.min) && full.value(forKey: "i32") as? Int32 == .min)
            #expect(full.int64(forKey: "i64") == .max && full.value(forKey: "i64") as? Int64 == .max)
            #expect(full.double(forKey: "dbl") == -2.5 && full.value(forKey: "dbl") as? Double == -2.5)
            #expect(full.double(forKey: "flt") == 0.25 && full.value(forKey: "flt") as? Float == 0.25)
            #expect(full.decimal(forKey: "dec") == Self.amount && full.value(forKey: "dec") as? Decimal == Self.amount)
            #expect(full.bool(forKey: "flag") == true && full.value(forKey: "flag") as? Bool == true)
            #expect(full.date(forKey: "day") == Self.day && full.value(forKey: "day") as? Date == Self.day)
            #expect(full.data(forKey: "blob") == Data([0, 1, 254, 255]) && full.value(forKey: "blob") as? Data == Data([0, 1, 254, 255]))
            #expect(full.uuid(forKey: "uid") == Self.uid && full.value(forKey: "uid") as? UUID == Self.uid)
            #expect(full.url(forKey: "link") == Self.link && full.value(forKey: "link") as? URL == Self.link)
            // Every getter of an object without values gives nil, as value(forKey:) does.
            for key in ["i16", "i32", "i64"] { #expect(empty.int64(forKey: key) == nil && empty.value(forKey: key) == nil) }
            for key in ["dbl", "flt"] { #expect(empty.double(forKey: key) == nil && empty.value(forKey: key) == nil) }
            #expect(empty.decimal(forKey: "dec") == nil && empty.bool(forKey: "flag") == nil)
            #expect(empty.date(forKey: "day") == nil && empty.data(forKey: "blob") == nil)
            #expect(empty.uuid(forKey: "uid") == nil && empty.url(forKey: "link") == nil)
            // The getters through an `AttributeKey` give the same, read twice (found by name,
            // then by the slot the key kept).
            for _ in 0..<2 {
                for object in [full, empty] {
                    for key in ["i16", "i32", "i64"] { #expect(object.int64(Self.keys[key]!) == object.int64(forKey: key)) }
                    for key in ["dbl", "flt"] { #expect(object.double(Self.keys[key]!) == object.double(forKey: key)) }
                    #expect(object.decimal(Self.keys["dec"]!) == object.decimal(forKey: "dec"))
                    #expect(object.string(Self.keys["str"]!) == object.string(forKey: "str"))
                    #expect(object.bool(Self.keys["flag"]!) == object.bool(forKey: "flag"))
                    #expect(object.date(Self.keys["day"]!) == object.date(forKey: "day"))
                    #expect(object.data(Self.keys["blob"]!) == object.data(forKey: "blob"))
                    #expect(object.uuid(Self.keys["uid"]!) == object.uuid(forKey: "uid"))
                    #expect(object.url(Self.keys["link"]!) == object.url(forKey: "link"))
                }
            }
        }
    }

    /// One key per attribute of the sample entity, shared by every test and store type, as a
    /// generated class's keys are shared by all its objects.
    static let keys = Dictionary(uniqueKeysWithValues: ["i16", "i32", "i64", "dbl", "flt", "dec", "str", "flag", "day", "blob", "uid", "link"]
        .map { ($0, AttributeKey($0)) })

    /// A key read in objects of entities (and models) whose slot for its name differs finds the
    /// right slot in each, however the reads alternate.
    @Test func oneKeyAcrossEntitiesWithOtherSlots() throws {
        let first = EntityDescription(name: "First", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "rank", type: .integer64),
        ])
        let second = EntityDescription(name: "Second", properties: [
            AttributeDescription(name: "note", type: .string), AttributeDescription(name: "extra", type: .integer64),
            AttributeDescription(name: "rank", type: .integer64),
        ])
        let third = EntityDescription(name: "First", properties: [
            AttributeDescription(name: "other", type: .boolean), AttributeDescription(name: "rank", type: .integer64),
        ])
        let rank = AttributeKey("rank")
        let contexts = [
            ContextTestModel.context(try ContextTestModel.coordinator(model: ManagedObjectModel(entities: [first, second]))),
            ContextTestModel.context(try ContextTestModel.coordinator(model: ManagedObjectModel(entities: [third]))),
        ]
        var objects: [ManagedObject] = []
        for (context, names) in zip(contexts, [["First", "Second"], ["First"]]) {
            context.performAndWait {
                for (index, name) in names.enumerated() {
                    // The model's own entity of that name (the two models each have a "First").
                    let entity = context.persistentStoreCoordinator!.managedObjectModel.entitiesByName[name]!
                    let object = ManagedObject(entity: entity, insertInto: context)
                    object.setValue(Int64(100 * objects.count + index), forKey: "rank")
                    objects.append(object)
                }
            }
        }
        for round in 0..<3 {
            for (position, object) in objects.enumerated() where (position + round) % 2 == 0 || round == 2 {
                let (read, expected) = object.managedObjectContext!.performAndWait { (object.int64(rank), object.int64(forKey: "rank")) }
                #expect(read == expected && read != nil, "round \(round), \(object.entity.name)")
            }
        }
    }

    @Test func gettersFireTheFault() throws {
        let coordinator = try ContextTestModel.coordinator(model: SetValueTypedPathTests.model())
        let writer = ContextTestModel.context(coordinator)
        let id = try writer.performAndWait {
            let object = try SetValueTypedPathTests.sample(writer)
            object.setValue(Self.day, forKey: "day")
            try writer.save()
            return object.objectID
        }
        let reader = ContextTestModel.context(coordinator)
        reader.performAndWait {
            let object = reader.object(with: id)
            #expect(object.isFault)
            #expect(object.date(forKey: "day") == Self.day)
            #expect(!object.isFault)
        }
    }
}
