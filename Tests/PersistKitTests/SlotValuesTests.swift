import Foundation
@testable import PersistKit
import Testing

/// `SlotValues` behaves as an array of `StoreValue`s would, whether its values are storage of
/// their own or a run of a slab that a fetch decoded many rows into: reading, writing (a
/// shared run is copied first, its neighbours untouched), growing, comparing; and the values
/// that hold references are released when the last run of their storage goes.
@Suite("Slot values")
struct SlotValuesTests {
    /// Rows of `width` integers from one slab maker, row `r` holding `r * 100 + slot`.
    static func integerRows(_ rows: Int, width: Int) -> [SlotValues] {
        let slab = SlotSlab()
        return (0..<rows).map { row in
            slab.row(count: width) { base in
                for slot in 0..<width { (base + slot).initialize(to: .integer(Int64(row * 100 + slot))) }
                return false
            }
        }
    }

    @Test func slabRowsReadBackAndShareStorage() {
        let rows = Self.integerRows(40, width: 3)
        for (row, values) in rows.enumerated() {
            #expect(Array(values) == (0..<3).map { .integer(Int64(row * 100 + $0)) })
        }
        // Slabs double in rows: 1, 2, 4, 8, 16, … so 40 rows take 6 slabs, not 40 allocations.
        let storages = Set(rows.map { ObjectIdentifier($0.storage!) })
        #expect(storages.count == 6)
        #expect(rows[1].storage === rows[2].storage)

        // With at most 4 rows a slab: 1, 2, 4, 4, 4, 4 and 1 row for 20 rows.
        let capped = SlotSlab(maximumRows: 4)
        let cappedRows = (0..<20).map { row in
            capped.row(count: 2) { base in
                base.initialize(to: .integer(Int64(row)))
                (base + 1).initialize(to: .null)
                return false
            }
        }
        #expect(Set(cappedRows.map { ObjectIdentifier($0.storage!) }).count == 7)
        #expect(cappedRows.enumerated().allSatisfy { $0.element[0] == .integer(Int64($0.offset)) })
    }

    @Test func anyNullReadsOnlyTheGivenPositionsInRange() {
        let own: SlotValues = [.integer(1), .null, .string("x"), .null]
        #expect(own.anyNull(at: [1]))
        #expect(own.anyNull(at: [0, 3]))
        #expect(!own.anyNull(at: [0, 2]))
        #expect(!own.anyNull(at: []))
        // Positions beyond the values (or negative) are not values, so not null.
        #expect(!own.anyNull(at: [0, 4, 99, -1]))
        #expect(!SlotValues().anyNull(at: [0, 1]))
        // A run of a slab: its neighbours' values are not its own.
        let slab = SlotSlab()
        let first = slab.row(count: 2) { base in
            base.initialize(to: .integer(1)); (base + 1).initialize(to: .integer(2)); return false
        }
        let second = slab.row(count: 2) { base in
            base.initialize(to: .null); (base + 1).initialize(to: .integer(3)); return false
        }
        #expect(!first.anyNull(at: [0, 1, 2]))
        #expect(second.anyNull(at: [0]) && !second.anyNull(at: [1]))
    }

    /// Writing a value over another, trivial or not (the subscript's setter): a shared run is
    /// copied first, a reference written in marks the storage as holding references, and a
    /// reference written over is released.
    @Test func replacingAValueCopiesASharedRunAndReleasesWhatItOverwrites() {
        let entity = EntityDescription(name: "E", properties: [AttributeDescription(name: "a", type: .integer64)])
        var values = SlotValues(repeating: .null, count: 3)
        let shared = values
        values[0] = .integer(5)
        values[2] = .bool(true)
        #expect(Array(values) == [.integer(5), .null, .bool(true)])
        #expect(Array(shared) == [.null, .null, .null])
        #expect(values.storage !== shared.storage)
        #expect(values.storage?.headerAddress.pointee.holdsReferences == false)

        weak var weakID: ManagedObjectID?
        do {
            let id = ManagedObjectID(entity: entity, storeIdentifier: "S", primaryKey: 9)
            weakID = id
            values[1] = .object(id)
        }
        #expect(values.storage?.headerAddress.pointee.holdsReferences == true)
        #expect(weakID != nil && values[1] == .object(weakID!))
        // Trivial over a reference: the reference is let go of.
        values[1] = .integer(6)
        #expect(weakID == nil)
        values[1] = .string("s")
        values[1] = .string("t")
        #expect(Array(values) == [.integer(5), .string("t"), .bool(true)])
    }

    @Test func writingASharedRunCopiesItAndLeavesTheOthers() {
        var rows = Self.integerRows(4, width: 2)
        let before = rows.map(Array.init)
        let shared = rows[2].storage
        rows[2][1] = .string("changed")
        #expect(rows[2].storage !== shared)
        #expect(Array(rows[2]) == [.integer(200), .string("changed")])
        for index in [0, 1, 3] { #expect(Array(rows[index]) == before[index]) }
        // A copy shares until written, as an array does.
        var copy = rows[2]
        #expect(copy.storage === rows[2].storage)
        copy[0] = .null
        #expect(rows[2][0] == .integer(200))
        #expect(copy == [.null, .string("changed")])
    }

    @Test func collectionOperationsMatchAnArray() {
        var values: SlotValues = [.integer(1), .string("two")]
        var array: [StoreValue] = [.integer(1), .string("two")]
        for step in 0..<20 {
            values.append(.integer(Int64(step)))
            array.append(.integer(Int64(step)))
        }
        #expect(Array(values) == array)
        values.replaceSubrange(1..<3, with: [.bool(true)])
        array.replaceSubrange(1..<3, with: [.bool(true)])
        #expect(Array(values) == array)
        values.removeLast()
        array.removeLast()
        #expect(Array(values) == array)
        #expect(values == SlotValues(array))
        #expect(values.hashValue == SlotValues(array).hashValue)
        #expect(values != SlotValues(array.dropLast()))
        #expect(SlotValues(repeating: .null, count: 3) == [.null, .null, .null])
        #expect(SlotValues().isEmpty && SlotValues([]).isEmpty)
        #expect(values.description == array.description)
    }

    /// Values holding references are released with the last run of their storage: a slab
    /// holding an object ID in one row keeps it while that row lives and lets it go after.
    @Test func referencesAreReleasedWithTheLastRun() {
        let entity = EntityDescription(name: "E", properties: [AttributeDescription(name: "a", type: .integer64)])
        weak var weakID: ManagedObjectID?
        var kept: SlotValues?
        do {
            let slab = SlotSlab()
            let id = ManagedObjectID(entity: entity, storeIdentifier: "S", primaryKey: 7)
            weakID = id
            // The first slab has room for one row, the second for two: `first` and `kept`.
            _ = slab.row(count: 1) { base in
                base.initialize(to: .null)
                return false
            }
            let first = slab.row(count: 1) { base in
                base.initialize(to: .object(id))
                return true
            }
            kept = slab.row(count: 1) { base in
                base.initialize(to: .integer(1))
                return false
            }
            #expect(first.storage === kept?.storage)
        }
        // The slab holding the ID lives on in `kept`'s run.
        #expect(weakID != nil)
        kept = nil
        #expect(weakID == nil)

        // The same for a reference written into values of their own.
        weak var written: ManagedObjectID?
        do {
            var own = SlotValues(repeating: .integer(0), count: 2)
            let id = ManagedObjectID(entity: entity, storeIdentifier: "S", primaryKey: 8)
            written = id
            own[1] = .object(id)
            #expect(written != nil)
        }
        #expect(written == nil)
    }
}
