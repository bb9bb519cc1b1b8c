import Foundation
import Testing
@testable import PersistKit

/// `setValue(_:forKey:)` and `setCheckedValue(_:forKey:)` take `Int64` and `Int` on a fast path
/// (no dynamic cast); it must accept and refuse exactly what the general path does.
@Suite("setValue fast path", .timeLimit(.minutes(1)))
struct SetValueFastPathTests {
    typealias M = ContextTestModel

    @Test func integersAreCheckedAgainstTheAttributesRange() throws {
        let context = M.context(try M.coordinator())
        try context.performAndWait {
            let beer = M.insert("Beer", into: context, ["name": "Rochefort 8"])
            // ibu is Integer 16.
            try beer.setCheckedValue(Int64(32), forKey: "ibu")
            #expect(beer.value(forKey: "ibu") as? Int16 == 32)
            try beer.setCheckedValue(Int(-7), forKey: "ibu")
            #expect(beer.primitiveValue(forKey: "ibu") == .integer(-7))
            try beer.setCheckedValue(Int32(40), forKey: "ibu")
            #expect(beer.primitiveValue(forKey: "ibu") == .integer(40))
            for tooLarge: Any in [Int64(100_000), Int(40_000), Int64.max] {
                #expect {
                    try beer.setCheckedValue(tooLarge, forKey: "ibu")
                } throws: { error in
                    guard let error = error as? PersistenceError else { return false }
                    return error.code == .validationInvalidType && error.key == "ibu" && error.message.contains("Integer 16")
                }
            }
            #expect(beer.primitiveValue(forKey: "ibu") == .integer(40), "a refused value changes nothing")
            // An integer for a Double attribute converts; for a String attribute it is refused.
            try beer.setCheckedValue(Int64(7), forKey: "abv")
            #expect(beer.primitiveValue(forKey: "abv") == .double(7))
            #expect(throws: PersistenceError.self) { try beer.setCheckedValue(Int64(7), forKey: "name") }
            #expect(beer.value(forKey: "name") as? String == "Rochefort 8")
            // Optional integers and nil go the general way.
            try beer.setCheckedValue(Optional(Int64(12)) as Any, forKey: "ibu")
            #expect(beer.primitiveValue(forKey: "ibu") == .integer(12))
            try beer.setCheckedValue(nil, forKey: "ibu")
            #expect(beer.primitiveValue(forKey: "ibu") == .null)
        }
    }

    @Test func integersOnSavedObjectsAreTrackedAsChanges() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("set.sqlite")
        let context = M.context(try M.coordinator(type: .sqlite, at: url))
        try context.performAndWait {
            let beer = M.insert("Beer", into: context, ["name": "Westvleteren 12", "ibu": Int64(38)])
            try context.save()
            beer.setValue(Int64(38), forKey: "ibu")
            #expect(!context.hasChanges, "the same value is no change")
            beer.setValue(Int(40), forKey: "ibu")
            #expect(context.updatedObjects == [beer])
            #expect(beer.changedValues()["ibu"] as? Int16 == 40)
            try context.save()
            #expect(beer.committedValues(forKeys: ["ibu"])["ibu"] as? Int16 == 40)
        }
    }
}
