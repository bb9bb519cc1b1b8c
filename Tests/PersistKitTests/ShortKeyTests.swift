import Foundation
import Testing
@testable import PersistKit

/// ``EntityDescription/shortKey(_:)`` reads a small string's key from its raw words; it must
/// give what reading its bytes one by one gives, for strings made every way a program makes them.
/// That read relies on the String layout of the Swift standard library on 64-bit platforms: a
/// toolchain that changes it fails these tests.
@Suite("Short property-name keys", .timeLimit(.minutes(1)))
struct ShortKeyTests {
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
        let model = ManagedObjectModel(entities: [entity])
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(type: .inMemory, at: nil)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let object = ManagedObject(entity: try #require(model.entitiesByName["Item"]), insertInto: context)
            object.setValue(Int64(5), forKey: String(format: "i%d", 0))
            object.setValue(Int64(6), forKey: String(decoding: Array("naïve".utf8), as: UTF8.self))
            #expect(object.int64(forKey: "i0") == 5)
            #expect(object.int64(forKey: "naïve") == 6)
            #expect(object.value(forKey: String("i00".dropLast())) as? Int64 == 5)
        }
    }
}
