import Foundation
import Testing
@testable import PersistKit

/// ``SlotSet``: the set of an object's changed slots, bits below 64 and a set above, behaves as
/// a set of integers in ascending order; an entity past 64 slots tracks changes on both sides.
@Suite("Slot sets")
struct SlotSetTests {
    @Test func insertsRemovesAndIteratesInAscendingOrderOnBothSides() {
        var set = SlotSet()
        #expect(set.isEmpty && set.count == 0 && Array(set).isEmpty)
        // Mutating calls outside #expect (the macro takes its operand as a constant).
        let added = [70, 3, 63, 64, 0, 3, 70].map { set.insert($0) }
        #expect(added == [true, true, true, true, true, false, false])
        #expect(Array(set) == [0, 3, 63, 64, 70])
        #expect(set.count == 5)
        #expect(set.contains(63) && set.contains(64) && !set.contains(62) && !set.contains(65) && !set.contains(-1))
        let removed = [63, 63, 70, 71].map { set.remove($0) }
        #expect(removed == [63, nil, 70, nil])
        #expect(Array(set) == [0, 3, 64])
        #expect(set == SlotSet([64, 3, 0]))
        #expect(set != [0, 3])
        #expect(!set.isEmpty)
        for slot in [0, 3, 64] { set.remove(slot) }
        #expect(set.isEmpty && set == [])
    }

    @Test func anEntityPastSixtyFourSlotsTracksChangesOnBothSides() throws {
        let url = try ContextTestModel.temporaryDirectory().appendingPathComponent("Wide.sqlite")
        let wide = EntityDescription(name: "Wide", properties: (0..<80).map { AttributeDescription(name: "a\($0)", type: .integer64) })
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [wide]))
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ContextTestModel.context(coordinator)
        let object = ContextTestModel.insert("Wide", into: context, ["a0": Int64(0)])
        try context.save()

        context.performAndWait {
            object.setValue(Int64(3), forKey: "a3")
            object.setValue(Int64(70), forKey: "a70")
            #expect(Set(object.changedValues().keys) == ["a3", "a70"])
            object.setValue(nil, forKey: "a70")
            #expect(Set(object.changedValues().keys) == ["a3"])
            object.setValue(Int64(71), forKey: "a71")
        }
        try context.save()
        let reader = ContextTestModel.context(coordinator)
        let saved = try #require(try reader.fetch(FetchRequest<ManagedObject>(entityName: "Wide")).first)
        #expect(saved.value(forKey: "a3") as? Int64 == 3)
        #expect(saved.value(forKey: "a70") == nil)
        #expect(saved.value(forKey: "a71") as? Int64 == 71)
        #expect(context.performAndWait { object.changedValues().isEmpty })
    }
}
