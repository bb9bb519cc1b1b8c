import Foundation
import Testing
@testable import PersistKit

/// ``EntityDescription/shortKey(_:)`` reads a small string's key from its raw words; it must
/// give what reading its bytes one by one gives, for strings made every way a program makes them.
/// That read relies on the String layout of the Swift standard library on 64-bit platforms: a
/// toolchain that changes it fails these tests.
@Suite("Short property-name keys", .timeLimit(.minutes(1)))
struct ShortKeyTests {
    /// A model of `entities` alone, and a context on an in-memory store of it.
    private static func inMemory(_ entities: EntityDescription...) throws -> (ManagedObjectModel, ManagedObjectContext) {
        let model = ManagedObjectModel(entities: entities)
        return (model, ContextTestModel.context(try ContextTestModel.coordinator(model: model)))
    }

    @Test func rawWordsGiveTheBytewiseKey() {
        var names: [String] = ["", "a", "i0", "name", "abcdefg", "abcdefgh", "abcdefghijklmno", "abcdefghijklmnop",
                               "é", "naïve", "日本", "日本語", "😀", "a😀b", String(repeating: "x", count: 40)]
        names += (0..<64).map { "i\($0)" }
        names += (0..<16).map { String(repeating: "z", count: $0) }
        names += ["abcdefghij".dropLast(3), "abcdefghij".dropFirst(4), "abc".dropLast(1)].map { String($0) }
        var shrunk = "abcdefghijkl"
        while !shrunk.isEmpty {
            shrunk.removeLast()
            names.append(shrunk)
        }
        var grown = ""
        for character in "abcdefghijklmnopq" {
            grown.append(character)
            names.append(grown)
        }
        names.append(NSString(string: "c0").replacingOccurrences(of: "0", with: "1"))
        names.append(String(decoding: Array("ibu".utf8), as: UTF8.self))
        names.append(String(format: "i%d", 7))
        names.append(("abcdefghijklmnopqrstuvwxyz" as String).lowercased().prefix(5).description)
        for name in names {
            #expect(EntityDescription.shortKey(name) == EntityDescription.loopedShortKey(name), "\(name)")
        }
        // Distinct short names, distinct keys; long names have none.
        let short = Set(names.filter { $0.utf8.count <= 7 })
        #expect(Set(short.compactMap(EntityDescription.shortKey)).count == short.count)
        #expect(EntityDescription.shortKey("abcdefgh") == nil)
    }

    @Test func gettersFindPropertiesByAnyStringForm() throws {
        let entity = EntityDescription(name: "Item", properties: [
            AttributeDescription(name: "i0", type: .integer64),
            AttributeDescription(name: "naïve", type: .integer64),
        ])
        let (model, context) = try Self.inMemory(entity)
        try context.performAndWait {
            let object = ManagedObject(entity: try #require(model.entitiesByName["Item"]), insertInto: context)
            object.setValue(Int64(5), forKey: String(format: "i%d", 0))
            object.setValue(Int64(6), forKey: String(decoding: Array("naïve".utf8), as: UTF8.self))
            #expect(object.int64(forKey: "i0") == 5)
            #expect(object.int64(forKey: "naïve") == 6)
            #expect(object.value(forKey: String("i00".dropLast())) as? Int64 == 5)
        }
    }

    /// Every short name is found at its index, and no other short key is found, for name sets
    /// of every size a model has, mixed with long names (which the table leaves out).
    @Test func tableFindsEveryShortNameAndNothingElse() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
        func randomName(length: Int) -> String {
            String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
        }
        var sets: [[String]] = [["i0"], (0..<10).map { "i\($0)" }, (0..<100).map { "c\($0)" },
                                ["name", "abv", "ibu", "brewedAt", "brewery", "style", "isFavorite", "x"]]
        for size in [2, 5, 17, 24, 25, 60, 200] {
            var names = Set<String>()
            while names.count < size { names.insert(randomName(length: Int.random(in: 1...12, using: &generator))) }
            sets.append(Array(names))
        }
        for names in sets {
            let keys = names.map { EntityDescription.shortKey($0) ?? 0 }
            guard keys.contains(where: { $0 != 0 }) else {
                #expect(ShortKeyTable(keys: keys) == nil, "no short name among \(names): no table")
                continue
            }
            let table = try #require(ShortKeyTable(keys: keys), "\(names.count) names")
            for (index, name) in names.enumerated() {
                guard let key = EntityDescription.shortKey(name) else { continue }
                #expect(table.index(of: key) == index, "\(name) among \(names.count) names")
            }
            let present = Set(keys)
            var absent = 0
            while absent < 500 {
                let name = randomName(length: Int.random(in: 1...7, using: &generator))
                let key = try #require(EntityDescription.shortKey(name))
                if present.contains(key) { continue }
                absent += 1
                #expect(table.index(of: key) == nil, "\(name) is not among \(names.count) names")
            }
        }
        #expect(ShortKeyTable(keys: []) == nil)
        #expect(ShortKeyTable(keys: [0, 0]) == nil, "only long names: no table")
    }

    /// An entity with no short name has no table: long names are found, short ones are not.
    @Test func entityWithOnlyLongNamesFindsThemAndNoShortName() throws {
        let entity = EntityDescription(name: "Long", properties: [
            AttributeDescription(name: "quantity", type: .integer64),
            AttributeDescription(name: "description2", type: .string),
        ])
        let (model, context) = try Self.inMemory(entity)
        try context.performAndWait {
            let long = try #require(model.entitiesByName["Long"])
            #expect(long._shortKeyTable == nil)
            #expect(long.plainAttribute(for: "qty") == nil)
            #expect(long.accessor(for: "q") == nil)
            let object = ManagedObject(entity: long, insertInto: context)
            object.setValue(Int64(7), forKey: "quantity")
            object.setValue("seven", forKey: "description2")
            #expect(object.int64(forKey: "quantity") == 7)
            #expect(object.value(forKey: "description2") as? String == "seven")
        }
    }

    /// In an entity of more than 24 properties a long name is found by hashing: each
    /// property's own accessor, a relationship's too, and nothing for another name.
    @Test func wideEntityFindsEachLongNamedPropertysAccessor() throws {
        let target = EntityDescription(name: "Target", properties: [
            RelationshipDescription(name: "sourcesOfThisTarget", destination: "Wide", toMany: true, inverse: "targetOfThisSource"),
        ])
        let attributes = (0..<30).map { AttributeDescription(name: "longAttributeName\($0)", type: .integer64) }
        let wide = EntityDescription(name: "Wide", properties: attributes + [
            RelationshipDescription(name: "targetOfThisSource", destination: "Target", inverse: "sourcesOfThisTarget", deleteRule: .nullify),
        ])
        let (model, context) = try Self.inMemory(wide, target)
        try context.performAndWait {
            let frozen = try #require(model.entitiesByName["Wide"])
            for property in frozen.properties {
                #expect(frozen.accessor(for: property.name)?.property === property, "\(property.name)")
            }
            #expect(frozen.accessor(for: "longAttributeName30") == nil)
            let object = ManagedObject(entity: frozen, insertInto: context)
            let other = ManagedObject(entity: try #require(model.entitiesByName["Target"]), insertInto: context)
            object.setValue(other, forKey: "targetOfThisSource")
            object.setValue(Int64(29), forKey: "longAttributeName29")
            #expect(object.value(forKey: "targetOfThisSource") as? ManagedObject === other)
            #expect((other.value(forKey: "sourcesOfThisTarget") as? Set<ManagedObject>)?.contains(object) == true)
            #expect(object.int64(forKey: "longAttributeName29") == 29)
        }
    }

    /// An entity of more than 24 properties (which the getters once looked up by hashing the
    /// name) reads and writes each short-named attribute in its own slot through the table.
    @Test func wideEntityReadsEachShortNamedAttributeFromItsOwnSlot() throws {
        let names = (0..<40).map { "a\($0)" } + ["aLongerName0", "aLongerName1"]
        let entity = EntityDescription(name: "Wide", properties: names.map { AttributeDescription(name: $0, type: .integer64) })
        let (model, context) = try Self.inMemory(entity)
        try context.performAndWait {
            let wide = try #require(model.entitiesByName["Wide"])
            #expect(wide._shortKeyTable != nil)
            let object = ManagedObject(entity: wide, insertInto: context)
            for (index, name) in names.enumerated() { object.setValue(Int64(index * 3), forKey: name) }
            for (index, name) in names.enumerated() {
                #expect(object.int64(forKey: name) == Int64(index * 3), "\(name)")
                #expect(object.value(forKey: name) as? Int64 == Int64(index * 3), "\(name)")
            }
            #expect(wide.plainAttribute(for: "a40") == nil)
            #expect(wide.accessor(for: "b1") == nil)
        }
    }
}
