import Dispatch
import Foundation
@testable import PersistKit
import Synchronization
import Testing

/// Runs of one slab read and copied on other threads while the fetch that fills the slab goes
/// on (the argument `SlotValues`' `Sendable` conformance rests on), and single-row reads on many
/// threads sharing their connection's slab. `make test` runs these under the thread sanitizer
/// too (its filter takes every suite named `…Concurrency…`); the tallies are kept under
/// PersistKit's `Locked`, whose pthread form that build uses, as the sanitizer does not see the
/// ordering `Synchronization.Mutex` gives.
@Suite("Slot slabs: runs read on other threads while their slab fills")
struct SlotSlabConcurrencyTests {
    typealias M = ContextTestModel

    /// A SQLite store holding `count` beers, named "Beer <ibu>" with ibu 0 to `count - 1`.
    static func store(beers count: Int) throws -> (PersistentStoreCoordinator, SQLiteStore, EntityDescription) {
        let url = try M.temporaryDirectory().appendingPathComponent("slabs.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            for ibu in 0..<count { _ = M.insert("Beer", into: context, ["name": "Beer \(ibu)", "ibu": Int16(ibu)]) }
            try context.save()
        }
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        return (coordinator, store, M.entity("Beer", in: context))
    }

    /// Whether `values` are a beer's own: its name names its ibu.
    static func consistent(_ values: SlotValues, name: Int, ibu: Int) -> Bool {
        guard case .integer(let number) = values[ibu] else { return false }
        return values[name] == .string("Beer \(number)")
    }

    @Test func rowsHandedToOtherThreadsDuringTheFetchReadAndCopyTheirValues() throws {
        let (_, store, beer) = try Self.store(beers: 600)
        let name = try #require(beer.slotIndex(of: "name")), ibu = try #require(beer.slotIndex(of: "ibu"))
        let group = DispatchGroup()
        let results = Locked((good: 0, bad: 0))
        try store.fetch(StoreFetchRequest(entity: beer)) { row in
            let values = row.values
            group.enter()
            DispatchQueue.global().async {
                var copy = values
                // A write copies the run out of the slab the fetch is still filling.
                copy[name] = .string("changed")
                let good = Self.consistent(values, name: name, ibu: ibu) && copy[name] == .string("changed")
                    && copy[ibu] == values[ibu]
                results.withLock { good ? ($0.good += 1) : ($0.bad += 1) }
                group.leave()
            }
        }
        group.wait()
        let (good, bad) = results.withLock { $0 }
        #expect(good == 600)
        #expect(bad == 0)
    }

    @Test func singleRowReadsOnManyThreadsShareTheirConnectionsSlab() throws {
        let (coordinator, store, beer) = try Self.store(beers: 200)
        let name = try #require(beer.slotIndex(of: "name")), ibu = try #require(beer.slotIndex(of: "ibu"))
        let ids = try M.context(coordinator).performAndWait {
            try M.context(coordinator).fetch(M.request("Beer")).map(\.objectID)
        }
        #expect(ids.count == 200)
        // Rows kept across threads: each thread reads rows another may have decoded into the
        // same slab, and copies some of them.
        let kept = Locked<[SlotValues]>([])
        let bad = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for step in 0..<400 {
                let id = ids[(thread * 37 + step * 11) % ids.count]
                guard let row = try? store.row(for: id) else {
                    bad.add(1, ordering: .relaxed)
                    continue
                }
                if !Self.consistent(row.values, name: name, ibu: ibu) { bad.add(1, ordering: .relaxed) }
                let older = kept.withLock { kept -> SlotValues? in
                    kept.append(row.values)
                    return kept.count > 1 ? kept[(step * 7) % (kept.count - 1)] : nil
                }
                if let older {
                    var copy = older
                    copy[name] = .null
                    if !Self.consistent(older, name: name, ibu: ibu) || copy[name] != .null { bad.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(bad.load(ordering: .relaxed) == 0)
        #expect(kept.withLock { $0.count } == 8 * 400)
    }
}
