import Foundation
import Testing
@testable import PersistKit
import PredicateDifferential

/// The registry's hash table answers every lookup as a dictionary would, through growth,
/// removals (which shift entries back, or, many at once, mark slots and rebuild), re-filing
/// and emptying, for keys in runs (as a fetch
/// files them) and keys at random, of several entities and stores.
@Suite("Object table", .timeLimit(.minutes(1)))
struct ObjectTableTests {
    typealias M = ContextTestModel

    /// Objects to file (the table holds them unretained; the array keeps them alive).
    private static func objects(_ count: Int) throws -> [ManagedObject] {
        let entity = try #require(M.make().entitiesByName["Person"])
        return (0..<count).map { _ in ManagedObject(entity: entity, insertInto: nil) }
    }

    /// Checks that `table` holds exactly `model`.
    private func check(_ table: borrowing ObjectTable, against model: [ObjectKey: Unmanaged<ManagedObject>],
                       probes: [ObjectKey], _ comment: Comment) {
        #expect(table.count == model.count, comment)
        for (key, object) in model where table[key]?.toOpaque() != object.toOpaque() {
            Issue.record("\(comment): \(key) not found or holds another object")
            return
        }
        for key in probes where model[key] == nil && table[key] != nil {
            Issue.record("\(comment): \(key) found after its removal")
            return
        }
        var seen = 0
        table.forEach { key, object in
            if model[key]?.toOpaque() == object.toOpaque() { seen += 1 }
        }
        #expect(seen == model.count, comment)
        #expect(table.keyList.count == model.count && table.values.count == model.count, comment)
    }

    @Test(arguments: [1, 2, 3])
    func agreesWithADictionary(seed: UInt64) throws {
        let pool = try Self.objects(64)
        // Seeded, so a failing sequence of operations repeats.
        var generator = SplitMix64(state: seed)
        let entityA = ObjectIdentifier(pool[0]), entityB = ObjectIdentifier(pool[1])
        // Keys in runs of consecutive primary keys for two entities, two stores and temporary
        // keys (which share primary keys across the three), plus random ones.
        var universe: [ObjectKey] = []
        for entity in [entityA, entityB] {
            for store: UInt in [0, 0x1000, 0x2000] {
                for primaryKey in Int64(1)...400 { universe.append(ObjectKey(entityIdentity: entity, primaryKey: primaryKey, storeBits: store)) }
            }
        }
        for _ in 0..<600 {
            universe.append(ObjectKey(entityIdentity: entityA, primaryKey: Int64(generator.int(-1_000_000...1_000_000)),
                                      storeBits: 0x1000))
        }
        var table = ObjectTable()
        var model: [ObjectKey: Unmanaged<ManagedObject>] = [:]
        for step in 0..<20_000 {
            let key = generator.pick(universe)
            let object = Unmanaged.passUnretained(generator.pick(pool))
            switch generator.int(0..<11) {
            case 0..<4:
                let old = table.updateValue(object, forKey: key)
                #expect(old?.toOpaque() == model.updateValue(object, forKey: key)?.toOpaque(), "step \(step): updateValue")
            case 4..<6:
                let got = table.value(forKey: key, orInsert: { object })
                let expected = model[key] ?? object
                model[key] = expected
                #expect(got.toOpaque() == expected.toOpaque(), "step \(step): value(forKey:orInsert:)")
            case 6..<9:
                let removed = table.removeValue(forKey: key)
                #expect(removed?.toOpaque() == model.removeValue(forKey: key)?.toOpaque(), "step \(step): removeValue")
            case 9:
                #expect(table[key]?.toOpaque() == model[key]?.toOpaque(), "step \(step): lookup")
            default:
                // Many keys at once: a run of the universe (sometimes past the table's
                // threshold for marking removed slots and rebuilding), random keys, and one
                // key twice (found the first time only).
                let start = generator.int(0..<universe.count)
                var keys = Array(universe[start..<Swift.min(universe.count, start + generator.int(0...700))])
                for _ in 0..<generator.int(0...20) { keys.append(generator.pick(universe)) }
                if let first = keys.first { keys.append(first) }
                let removed = table.removeValues(forKeys: keys)
                #expect(removed.count == keys.count, "step \(step): removeValues")
                for (index, key) in keys.enumerated() where removed[index]?.toOpaque() != model.removeValue(forKey: key)?.toOpaque() {
                    Issue.record("step \(step): removeValues of \(keys.count) keys, key \(index) (\(key))")
                    break
                }
                check(table, against: model, probes: keys, "after removeValues at step \(step)")
            }
            if step % 2_000 == 1_999 { check(table, against: model, probes: universe, "after step \(step)") }
        }
        // Removing every key in runs, then refilling after emptying with and without its storage.
        for key in universe {
            let removed = table.removeValue(forKey: key)
            #expect(removed?.toOpaque() == model.removeValue(forKey: key)?.toOpaque())
        }
        check(table, against: model, probes: universe, "emptied by removals")
        for keepingCapacity in [true, false] {
            for (index, key) in universe.prefix(1_000).enumerated() {
                table.updateValue(Unmanaged.passUnretained(pool[index % pool.count]), forKey: key)
                model[key] = Unmanaged.passUnretained(pool[index % pool.count])
            }
            check(table, against: model, probes: universe, "refilled")
            let capacity = table.capacity
            table.removeAll(keepingCapacity: keepingCapacity)
            model.removeAll()
            #expect(table.count == 0 && table[universe[0]] == nil)
            #expect(keepingCapacity ? table.capacity == capacity : table.capacity == 0)
        }
    }

    @Test func aRunOfKeysFillsNeighbouringSlotsAndGrowsOnce() throws {
        let pool = try Self.objects(1)
        var table = ObjectTable()
        table.reserveCapacity(100_000)
        let capacity = table.capacity
        #expect(capacity >= 100_000)
        let entity = ObjectIdentifier(pool[0])
        for primaryKey in Int64(1)...100_000 {
            table.updateValue(Unmanaged.passUnretained(pool[0]), forKey: ObjectKey(entityIdentity: entity, primaryKey: primaryKey, storeBits: 8))
        }
        #expect(table.count == 100_000 && table.capacity == capacity, "reserved room is enough")
        // Consecutive keys of one block of eight mostly sit in consecutive slots (a hash that
        // scatters every key puts almost none there).
        let order = table.keyList
        let neighbours = zip(order, order.dropFirst()).filter { $1.primaryKey == $0.primaryKey + 1 && $1.primaryKey % 8 != 0 }.count
        #expect(neighbours > 100_000 / 8 * 7 / 2, "\(neighbours) of 87,500 pairs are neighbours")
    }

    /// Keys that share their last three bits (every eighth, every 64th) are spread over the
    /// places of their groups: they are all found, removed and found again, and the table
    /// stays within the size a run of keys needs.
    @Test(arguments: [8, 64])
    func keysSharingTheirLastBitsSpreadOverEveryPlace(every stride: Int64) throws {
        let pool = try Self.objects(1)
        let entity = ObjectIdentifier(pool[0])
        let object = Unmanaged.passUnretained(pool[0])
        let keys = (Int64(1)...50_000).map { ObjectKey(entityIdentity: entity, primaryKey: $0 * stride, storeBits: 8) }
        var table = ObjectTable()
        for key in keys { table.updateValue(object, forKey: key) }
        #expect(table.count == keys.count)
        // A run of 50,000 keys needs 131,072 slots (81,920 entries); one place filling up
        // first would have doubled it at least twice.
        #expect(table.capacity <= 81_920 * 2, "capacity \(table.capacity)")
        let missing = keys.filter { table[$0]?.toOpaque() != object.toOpaque() }
        #expect(missing.isEmpty, "\(missing.count) keys not found")
        for key in keys where key.primaryKey % (2 * stride) == 0 { table.removeValue(forKey: key) }
        #expect(table.count == keys.count / 2)
        let wrong = keys.filter { (table[$0] != nil) != ($0.primaryKey % (2 * stride) != 0) }
        #expect(wrong.isEmpty, "\(wrong.count) keys found after removal or lost")
    }

    /// When every slot of a key's place is taken, a lookup of another key of that place ends
    /// (not found), a removal there keeps the rest, and filing the key grows the table.
    @Test func aFullPlaceEndsLookupsAndGrowsTheTable() throws {
        let pool = try Self.objects(4)
        let entity = ObjectIdentifier(pool[0])
        // Three keys of one place in the first storage (16 slots: two per place).
        let candidates = (Int64(1)...10_000).map { ObjectKey(entityIdentity: entity, primaryKey: $0, storeBits: 8) }
        let byPlace = Dictionary(grouping: candidates) { ObjectTable.home($0, mask: 15) & 7 }
        let same = try #require(byPlace.values.first { $0.count >= 3 })
        var table = ObjectTable()
        table.updateValue(Unmanaged.passUnretained(pool[0]), forKey: same[0])
        table.updateValue(Unmanaged.passUnretained(pool[1]), forKey: same[1])
        #expect(table.capacity == 10, "still the first storage")
        // The place is full: the probe for a third key goes round it once and stops.
        #expect(table[same[2]] == nil)
        #expect(table.removeValue(forKey: same[2]) == nil)
        #expect(table.removeValue(forKey: same[0])?.toOpaque() == Unmanaged.passUnretained(pool[0]).toOpaque())
        #expect(table[same[1]]?.toOpaque() == Unmanaged.passUnretained(pool[1]).toOpaque())
        table.updateValue(Unmanaged.passUnretained(pool[0]), forKey: same[0])
        #expect(table.capacity == 10)
        // Filing the third key grows the table, though three entries fit sixteen slots.
        table.updateValue(Unmanaged.passUnretained(pool[2]), forKey: same[2])
        #expect(table.capacity > 10)
        #expect(table.count == 3)
        for (index, key) in same.prefix(3).enumerated() {
            #expect(table[key]?.toOpaque() == Unmanaged.passUnretained(pool[index]).toOpaque())
        }
    }
}
