import Foundation
import Testing
@testable import PersistKit
import PredicateDifferential

/// Power cuts through the fault-injecting VFS: a stream of saves, the power cut at a random
/// write or sync (or after the last save), then the files as a power loss could leave them
/// (every write since each file's last sync kept, lost, or torn sector by sector), reopened on
/// SQLite's default VFS. With `synchronous=FULL` every acknowledged save is there; with
/// `NORMAL` the store is some earlier save's state, whole (docs/RELIABILITY.md records how many
/// saves that loses). Never a partial save; `PRAGMA integrity_check` is `ok`.
///
/// `PERSIST_POWER_CUTS` sets the cuts per mode (20, a few seconds; `make stress`: 300, hence the
/// suite's 10-minute bound), `PERSIST_POWER_SEED` the first seed.
@Suite("Fault injection: power loss", .timeLimit(.minutes(10)))
struct FaultInjectionPowerLossTests {
    typealias M = ContextTestModel
    typealias S = SQLiteTestSupport

    static var cuts: Int { ProcessInfo.processInfo.environment["PERSIST_POWER_CUTS"].flatMap(Int.init) ?? 20 }
    static var firstSeed: UInt64 { ProcessInfo.processInfo.environment["PERSIST_POWER_SEED"].flatMap(UInt64.init) ?? 0x5EED_0002 }

    /// The saves of one stream, drawn from a seed: save s inserts brewery "s<s>" with its beers
    /// (and a tag on each), moves the ledger (a Person whose age is the last save's number) to
    /// it, and deletes brewery s-3 with its beers (cascade).
    struct Stream {
        let beersPerSave: [Int]

        init(saves: Int, random: inout SplitMix64) {
            beersPerSave = (0...saves).map { $0 == 0 ? 0 : random.int(1...8) }
        }

        var saves: Int { beersPerSave.count - 1 }

        func apply(save s: Int, to context: ManagedObjectContext, ledger: ManagedObject) {
            let brewery = M.insert("Brewery", into: context, ["name": "s\(s)", "city": "Bruges"])
            let tag = M.insert("Tag", into: context, ["name": "tag-\(s)"])
            for index in 0..<beersPerSave[s] {
                let beer = M.insert("Beer", into: context, ["name": "s\(s)-\(index)", "abv": Double(index)])
                beer.setValue(brewery, forKey: "brewery")
                beer.setValue(Set([tag]), forKey: "tags")
            }
            ledger.setValue(Int16(s), forKey: "age")
            ledger.setValue(brewery, forKey: "brewery")
            if s > 3, let old = try? context.fetch(M.request("Brewery", .equal("name", .string("s\(s - 3)")))).first {
                context.delete(old)
            }
        }

        /// The breweries (name → beer names) after save `s`.
        func breweries(after s: Int) -> [String: [String]] {
            var result: [String: [String]] = [:]
            guard s > 0 else { return result }
            for saved in max(1, s - 2)...s {
                result["s\(saved)"] = (0..<beersPerSave[saved]).map { "s\(saved)-\($0)" }.sorted()
            }
            return result
        }
    }

    /// What one cut left.
    struct Outcome {
        /// The last save that returned.
        var acknowledged = 0
        /// The save the cut failed, if any.
        var inFlight: Int?
        /// The last acknowledged save after which nothing written to the WAL was left unsynced
        /// (with synchronous=NORMAL, the WAL is synced only by a checkpoint); 0 if none.
        var lastSynced = 0
        /// The save whose state the store holds after the cut.
        var found = 0
        var image = FaultScope.ImageStats()
    }

    /// Runs one stream with a power cut, reopens the crash image and checks it is exactly the
    /// state after some save `found`, with `acknowledged` ≤ `found` when `durable`.
    ///
    /// `checkpointPages` is SQLite's `wal_autocheckpoint`: the default 1,000 pages is never
    /// reached by a stream, a small one checkpoints every few saves.
    static func cut(seed: UInt64, synchronous: String, checkpointPages: Int, loss: FaultScope.PowerLoss) throws -> Outcome {
        var random = SplitMix64(state: seed)
        let directory = try M.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let live = directory.appendingPathComponent("live", isDirectory: true)
        let image = directory.appendingPathComponent("image", isDirectory: true)
        try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: image, withIntermediateDirectories: true)
        let url = live.appendingPathComponent("store.sqlite")
        let wal = live.appendingPathComponent("store.sqlite-wal")
        let stream = Stream(saves: random.int(3...12), random: &random)
        var outcome = Outcome()
        do {
            let scope = try FaultScope(directory: live)
            let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
            var options = StoreOptions(sqlitePragmas: ["synchronous": synchronous, "wal_autocheckpoint": "\(checkpointPages)"])
            options.sqliteVFSName = FaultScope.vfsName
            let store = try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
            defer { try? coordinator.remove(store) }
            let context = M.context(coordinator)
            let ledger = M.insert("Person", into: context, ["name": "ledger", "age": Int16(0)])
            try context.save()
            // A save is 20 to 40 writes and syncs: cut anywhere in the stream, or after it.
            scope.armPowerCut(at: random.int(1...(35 * stream.saves)))
            for s in 1...stream.saves {
                stream.apply(save: s, to: context, ledger: ledger)
                do {
                    try context.save()
                    outcome.acknowledged = s
                    // The WAL makes a commit durable (the database file's writes between
                    // checkpoints need no sync: the WAL keeps those pages until one has).
                    if scope.unsyncedWrites(wal) == 0 { outcome.lastSynced = s }
                    // FULL: a save is acknowledged only once everything it wrote is synced.
                    if synchronous.uppercased() == "FULL" { #expect(outcome.lastSynced == s, "save \(s) acknowledged unsynced") }
                } catch {
                    #expect(scope.isPoweredOff, "save \(s) failed with the power on: \(error)")
                    outcome.inFlight = s
                    break
                }
            }
            if !scope.isPoweredOff { scope.armPowerCut(at: 0) }
            outcome.image = try scope.crashImage(ofStore: url, into: image, seed: random.next(), loss)
        }

        let coordinator = PersistentStoreCoordinator(managedObjectModel: M.make())
        let imageURL = image.appendingPathComponent("store.sqlite")
        let store = try coordinator.addPersistentStore(type: .sqlite, at: imageURL)
        defer { try? coordinator.remove(store) }
        #expect(try S.query(imageURL, "PRAGMA integrity_check") == [["ok"]])
        let context = M.context(coordinator)
        let ledgers = try context.fetch(M.request("Person"))
        #expect(ledgers.count <= 1)
        let found = Int(ledgers.first?.value(forKey: "age") as? Int16 ?? 0)
        outcome.found = found
        #expect(found <= (outcome.inFlight ?? outcome.acknowledged), "save \(found) is there, but was never made (seed \(seed))")
        if synchronous.uppercased() == "FULL" {
            #expect(found >= outcome.acknowledged, "acknowledged save \(outcome.acknowledged) lost; found \(found) (seed \(seed))")
        } else {
            #expect(found >= outcome.lastSynced, "save \(outcome.lastSynced), synced, lost; found \(found) (seed \(seed))")
        }
        // Exactly the state after save `found`: nothing of a later save, nothing missing of it.
        var breweries: [String: [String]] = [:]
        for brewery in try context.fetch(M.request("Brewery")) {
            breweries[brewery.value(forKey: "name") as? String ?? "?"] = M.names(brewery.value(forKey: "beers"))
        }
        #expect(breweries == stream.breweries(after: found), "not the state after save \(found) (seed \(seed))")
        let beers = try context.count(for: M.request("Beer"))
        #expect(beers == stream.breweries(after: found).values.map(\.count).reduce(0, +), "seed \(seed)")
        if found > 0 {
            #expect((ledgers.first?.value(forKey: "brewery") as? ManagedObject)?.value(forKey: "name") as? String == "s\(found)")
            for tag in try context.fetch(M.request("Tag")) {
                let name = tag.value(forKey: "name") as? String ?? "?"
                let saved = Int(name.dropFirst("tag-".count)) ?? -1
                #expect(saved >= 1 && saved <= found, "tag \(name) of a save never made (seed \(seed))")
                if saved >= max(1, found - 2) {
                    #expect(M.names(tag.value(forKey: "beers")) == (0..<stream.beersPerSave[saved]).map { "s\(saved)-\($0)" }.sorted())
                }
            }
        }
        return outcome
    }

    @Test("synchronous=FULL: no acknowledged save is lost to a power cut, none is partial")
    func fullSync() throws {
        var torn = 0
        var unsyncedWrites = 0
        for round in 0..<Self.cuts {
            let outcome = try Self.cut(seed: Self.firstSeed &+ UInt64(round), synchronous: "FULL",
                                       checkpointPages: round % 2 == 0 ? 1000 : 8, loss: round % 4 == 3 ? .dropAll : .random)
            #expect(outcome.found >= outcome.acknowledged)
            torn += outcome.image.torn
            unsyncedWrites += outcome.image.kept + outcome.image.dropped + outcome.image.torn
        }
        print("power loss, synchronous=FULL: \(Self.cuts) cuts, \(unsyncedWrites) unsynced writes at the cuts, \(torn) torn; no acknowledged save lost")
    }

    @Test("synchronous=NORMAL: a power cut may lose the last saves, never part of one")
    func normalSync() throws {
        // By checkpoint interval: acknowledged saves, lost saves, cuts that lost some, most lost at one cut.
        var tally: [Int: (acknowledged: Int, lost: Int, cutsLosing: Int, most: Int)] = [:]
        for round in 0..<Self.cuts {
            let pages = round % 2 == 0 ? 1000 : 8
            let outcome = try Self.cut(seed: Self.firstSeed &+ 1_000_000 &+ UInt64(round), synchronous: "NORMAL",
                                       checkpointPages: pages, loss: round % 4 == 3 ? .dropAll : .random)
            let lost = max(0, outcome.acknowledged - outcome.found)
            // Never more than the saves since the last sync (a checkpoint's).
            #expect(lost <= outcome.acknowledged - outcome.lastSynced)
            var entry = tally[pages] ?? (0, 0, 0, 0)
            entry.acknowledged += outcome.acknowledged
            entry.lost += lost
            entry.cutsLosing += lost > 0 ? 1 : 0
            entry.most = max(entry.most, lost)
            tally[pages] = entry
        }
        // The cuts do lose unsynced saves: the harness is not blind to a loss.
        if Self.cuts >= 4 { #expect((tally[1000]?.lost ?? 0) > 0) }
        for (pages, entry) in tally.sorted(by: { $0.key > $1.key }) {
            print("power loss, synchronous=NORMAL, wal_autocheckpoint=\(pages): \((Self.cuts + (pages == 1000 ? 1 : 0)) / 2) cuts, "
                  + "\(entry.acknowledged) acknowledged saves, \(entry.lost) lost, \(entry.cutsLosing) cuts lost some "
                  + "(at most \(entry.most)); none partial, none from before the last sync")
        }
    }
}
