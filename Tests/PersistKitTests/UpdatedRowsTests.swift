import Foundation
import Testing
@testable import PersistKit

/// A save of updated objects only keeps the rows it wrote as their saved state (their version
/// raised) instead of making each row again, and shares an object's committed values with its
/// current ones when its entity has no transient attribute. Whichever way the rows come, the
/// saved state, the notifications and the merges must be those of the row the store holds.
@Suite("Rows of a save of updates", .serialized, .timeLimit(.minutes(1)))
struct UpdatedRowsTests {
    typealias M = ContextTestModel

    /// The saved changes the didSave notification of `body`'s save carries.
    static func savedChanges(of context: ManagedObjectContext, _ body: () throws -> Void) rethrows -> SavedChanges? {
        let recorder = SaveNotificationTests.Recorder(context)
        defer { recorder.stop() }
        try body()
        let note = recorder.take().first { $0.name == ManagedObjectContext.didSaveObjectIDsNotification }
        return note?.userInfo?[ManagedObjectContext.savedChangesKey] as? SavedChanges
    }

    /// The stored `Z_OPT` and `ZNAME` of every beer, by name, read by a context of its own.
    static func stored(_ url: URL) throws -> [String: (version: Int64, abv: Double)] {
        let reader = M.context(try M.coordinator(type: .sqlite, at: url))
        return try reader.performAndWait {
            var rows: [String: (Int64, Double)] = [:]
            for beer in try reader.fetch(M.request("Beer")) {
                rows[beer.value(forKey: "name") as? String ?? ""] = (beer.storeVersion, beer.value(forKey: "abv") as? Double ?? -1)
            }
            return rows
        }
    }

    @Test func aSaveOfUpdatesCommitsTheRowsItWrote() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("updates.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        let sibling = M.context(coordinator)
        sibling.automaticallyMergesChangesFromParent = true
        let names = ["A", "B", "C"]
        let beers = try context.performAndWait {
            let beers = names.map { M.insert("Beer", into: context, ["name": $0, "abv": 5.0]) }
            try context.save()
            return beers
        }
        // The sibling holds B, to see the merge.
        let siblingB = try sibling.performAndWait { try sibling.existingObject(with: beers[1].objectID) }

        for round in 1...3 {
            let abv = 5.0 + Double(round)
            let changes = try context.performAndWait {
                try Self.savedChanges(of: context) {
                    beers[0].setValue(abv, forKey: "abv")
                    beers[1].setValue(abv, forKey: "abv")
                    // A transient change goes with the save but is not stored.
                    beers[1].setValue("note \(round)", forKey: "note")
                    try context.save()
                }
            }
            let rows = try #require(changes).updated
            // One row per updated object, in no particular order: each with the new version
            // and the values stored, the transient one empty.
            #expect(rows.count == 2)
            #expect(Set(rows.map(\.objectID)) == [beers[0].objectID, beers[1].objectID])
            let abvSlot = try #require(beers[0].entity.slotIndex(of: "abv"))
            let noteSlot = try #require(beers[0].entity.slotIndex(of: "note"))
            for row in rows {
                #expect(row.version == Int64(1 + round))
                #expect(row.values[abvSlot] == .double(abv))
                #expect(row.values[noteSlot] == .null)
            }
            context.performAndWait {
                #expect(!context.hasChanges)
                #expect(beers[0].storeVersion == Int64(1 + round))
                #expect(beers[0].committedValues(forKeys: ["abv"])["abv"] as? Double == abv)
                // The transient value stays with the object, not with its saved state.
                #expect(beers[1].value(forKey: "note") as? String == "note \(round)")
                #expect(beers[1].committedValues(forKeys: nil)["note"] == nil)
                // The saved state is the stored row: the transient slot empty in it, its
                // other values the object's own.
                #expect(beers[1].committed?.values[noteSlot] == .null)
                #expect(beers[1].committed?.values[abvSlot] == .double(abv))
            }
            let stored = try Self.stored(url)
            #expect(stored["A"]?.version == Int64(1 + round) && stored["A"]?.abv == abv)
            #expect(stored["B"]?.version == Int64(1 + round) && stored["B"]?.abv == abv)
            #expect(stored["C"]?.version == 1 && stored["C"]?.abv == 5.0)
        }
        // A change after the saves, undone: the value the last save stored comes back, so
        // the saved state kept its own values when the object's changed.
        context.performAndWait {
            beers[0].setValue(42.0, forKey: "abv")
            #expect(beers[0].committedValues(forKeys: ["abv"])["abv"] as? Double == 8.0)
            context.rollback()
            #expect(beers[0].value(forKey: "abv") as? Double == 8.0)
        }
        // The sibling merged each save.
        var merged = false
        for _ in 0..<500 where !merged {
            merged = sibling.performAndWait { siblingB.value(forKey: "abv") as? Double == 8.0 && siblingB.storeVersion == 4 }
            if !merged { usleep(2_000) }
        }
        #expect(merged)
    }

    @Test func aSaveOfInsertsAndUpdatesMakesTheUpdatedRowsAfterTheKeys() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("mixed.sqlite")
        let context = M.context(try M.coordinator(type: .sqlite, at: url))
        let (beer, changes) = try context.performAndWait {
            let beer = M.insert("Beer", into: context, ["name": "Old"])
            try context.save()
            // The updated object names a new one, whose temporary ID the save replaces.
            let brewery = M.insert("Brewery", into: context, ["name": "New"])
            let changes = try Self.savedChanges(of: context) {
                beer.setValue(brewery, forKey: "brewery")
                try context.save()
            }
            return (beer, changes)
        }
        let row = try #require(changes?.updated.first)
        let brewerySlot = try #require(beer.entity.slotIndex(of: "brewery"))
        guard case .object(let breweryID) = row.values[brewerySlot] else {
            Issue.record("the updated row names no brewery: \(row.values[brewerySlot])")
            return
        }
        #expect(!breweryID.isTemporaryID)
        #expect(row.version == 2)
        context.performAndWait {
            #expect(breweryID == (beer.value(forKey: "brewery") as? ManagedObject)?.objectID)
        }
    }
}
