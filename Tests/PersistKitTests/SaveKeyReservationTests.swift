import Foundation
import Testing
@testable import PersistKit

/// Primary keys reserved ahead (`SQLiteKeyReservations`): a store that keeps saving new objects
/// raises `Z_MAX` by a block once and leaves `Z_PRIMARYKEY` alone for the next saves; keys stay
/// distinct for every other coordinator and process, `Z_MAX` stays at or above every `Z_PK`
/// (after a kill -9 too), and a reopened store continues above it.
@Suite("Save key reservation ahead", .serialized, .timeLimit(.minutes(1)))
struct SaveKeyReservationTests {
    typealias M = ContextTestModel
    typealias S = SharingTestSupport
    typealias K = SaveKeyAllocationTests

    /// Saves `count` new beers, one per save, and returns their keys in order.
    static func saveBeers(_ count: Int, _ context: ManagedObjectContext, prefix: String = "b") throws -> [Int64] {
        try context.performAndWait {
            try (0..<count).map { index in
                let beer = M.insert("Beer", into: context, ["name": "\(prefix)\(index)"])
                try context.save()
                #expect(!beer.objectID.isTemporaryID)
                return beer.objectID.primaryKey
            }
        }
    }

    /// Keys and the largest key of the table of `entity` in the store at `path`.
    static func keys(_ path: String, table: String) throws -> [Int64] {
        try S.query(path, "SELECT Z_PK FROM \(table) ORDER BY Z_PK").map { Int64($0[0]) ?? -1 }
    }

    static func zMax(_ path: String, _ name: String) throws -> Int64 {
        try #require(try S.query(path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = '\(name)'").first.flatMap { Int64($0[0]) })
    }

    @Test func takeHandsOutTheReservedBlockInOrderAndRefusesMoreThanIsLeft() {
        var reservations = SQLiteKeyReservations()
        #expect(reservations.take(1, sequence: 3) == nil)
        reservations.reserved(sequence: 3, next: 10, last: 14)
        #expect(reservations.take(2, sequence: 3) == 10)
        // Four asked, three left: nothing is handed out, and the three stay.
        #expect(reservations.take(4, sequence: 3) == nil)
        #expect(reservations.take(3, sequence: 3) == 12)
        #expect(reservations.take(1, sequence: 3) == nil)
        #expect(reservations.take(1, sequence: 4) == nil)
        reservations.reserved(sequence: 3, next: 20, last: 21)
        reservations.forgetBlocks()
        #expect(reservations.take(1, sequence: 3) == nil)
    }

    @Test func manySavesReserveAheadOnceInAWhileAndKeepZMaxAboveEveryKey() throws {
        let (coordinator, store) = try K.sqliteCoordinator()
        let path = try #require(store.url?.path)
        let context = M.context(coordinator)
        // The first reservations take only the keys asked for, as Core Data's do.
        let first = try Self.saveBeers(SQLiteKeyReservations.exactReservations, context)
        #expect(first == Array(1...Int64(SQLiteKeyReservations.exactReservations)))
        #expect(try K.maxKey("Beer", store) == Int64(SQLiteKeyReservations.exactReservations))

        // Then a block: of the next saves, only a few touch Z_PRIMARYKEY.
        var later: [Int64] = []
        let sql = try K.statements(store) { later = try Self.saveBeers(100, context, prefix: "l") }
        let keyUpdates = sql.filter { $0.contains("Z_PRIMARYKEY") && $0.hasPrefix("UPDATE") }.count
        #expect(keyUpdates >= 1 && keyUpdates <= 6, "Z_PRIMARYKEY updates for 100 saves: \(keyUpdates)")
        #expect(later == Array(Int64(SQLiteKeyReservations.exactReservations + 1)...Int64(SQLiteKeyReservations.exactReservations + 100)))
        let written = try Self.keys(path, table: "ZBEER")
        #expect(written.count == 108 && Set(written).count == 108)
        #expect(try Self.zMax(path, "Beer") >= written.max() ?? 0)
    }

    @Test func twoCoordinatorsOnOneStoreGetDistinctKeysAndAReopenedStoreContinues() throws {
        let (coordinator, store) = try K.sqliteCoordinator()
        let url = try #require(store.url)
        let other = try M.coordinator(type: .sqlite, at: url)
        let mine = M.context(coordinator), theirs = M.context(other)
        var keys: [Int64] = []
        // Interleaved: each coordinator holds a block the other must stay clear of.
        for round in 0..<6 {
            keys += try Self.saveBeers(5, mine, prefix: "m\(round)-")
            keys += try Self.saveBeers(5, theirs, prefix: "t\(round)-")
        }
        #expect(Set(keys).count == keys.count, "every save got its own keys")
        let written = try Self.keys(url.path, table: "ZBEER")
        #expect(Set(written) == Set(keys))
        let zMax = try Self.zMax(url.path, "Beer")
        #expect(zMax >= written.max() ?? 0)

        // A new coordinator (as a restarted process) continues above Z_MAX: the blocks left
        // unused are a gap, never reused.
        let reopened = M.context(try M.coordinator(type: .sqlite, at: url))
        let next = try Self.saveBeers(3, reopened, prefix: "r")
        #expect(next == [zMax + 1, zMax + 2, zMax + 3])
        // And the first coordinators go on with keys no one else has.
        let more = try Self.saveBeers(3, mine, prefix: "m-late") + Self.saveBeers(3, theirs, prefix: "t-late")
        let all = try Self.keys(url.path, table: "ZBEER")
        #expect(all.count == keys.count + 9 && Set(all).count == all.count)
        #expect(Set(more).isDisjoint(with: Set(keys + next)))
        #expect(try Self.zMax(url.path, "Beer") >= all.max() ?? 0)
    }

    @Test func aFailedSaveAfterABlockWasReservedLeavesKeysDistinctAndCovered() throws {
        let (coordinator, store) = try K.sqliteCoordinator()
        let url = try #require(store.url)
        let context = M.context(coordinator)
        // Past the exact reservations: the context's store holds a block.
        let saved = try Self.saveBeers(SQLiteKeyReservations.exactReservations + 2, context)
        let firstID = try context.performAndWait { try #require(context.registeredObjects.first { $0.objectID.primaryKey == saved[0] }).objectID }
        // Another coordinator changes the first beer, so this context's next save conflicts in
        // the store (optimistic locking) after its new object's key was taken from the block.
        let other = M.context(try M.coordinator(type: .sqlite, at: url))
        try other.performAndWait {
            let first = try #require(try other.fetch(M.request("Beer", .equal("name", .string("b0")))).first)
            first.setValue("theirs", forKey: "name")
            try other.save()
        }
        context.performAndWait {
            context.object(with: firstID).setValue("mine", forKey: "name")
            let lost = M.insert("Beer", into: context, ["name": "lost"])
            #expect(throws: PersistenceError.self) { try context.save() }
            #expect(lost.objectID.isTemporaryID, "a failed save leaves its objects with temporary IDs")
            context.rollback()
        }
        let after = try Self.saveBeers(20, context, prefix: "after")
        let written = try Self.keys(url.path, table: "ZBEER")
        #expect(written.count == saved.count + 20 && Set(written).count == written.count)
        #expect(Set(after).isSubset(of: Set(written)) && Set(after).isDisjoint(with: Set(saved)))
        #expect(try Self.zMax(url.path, "Beer") >= written.max() ?? 0)
        #expect(try S.query(url.path, "SELECT ZNAME FROM ZBEER WHERE Z_PK = \(saved[0])") == [["theirs"]])
    }

    @Test func processesSavingTogetherGetDistinctKeysAndZMaxCoversThem() throws {
        let path = try S.storePath()
        try S.run(["create", "--store", path])
        let children = try (1...2).map { worker in
            try S.Child(["stress", "--store", path, "--worker", "\(worker)", "--seconds", "1.5"])
        }
        let results = try children.map { try $0.wait(timeout: 30) }
        var inserted = 0
        for result in results {
            #expect(result["errors"] as? [String] == [], "\(result)")
            inserted += result["inserted"] as? Int ?? 0
        }
        let keys = try Self.keys(path, table: "ZITEM")
        #expect(keys.count == inserted)
        #expect(try Self.zMax(path, "Item") >= keys.max() ?? 0)
        #expect(try S.query(path, "PRAGMA integrity_check") == [["ok"]])
    }

    @Test func afterAKillZMaxCoversEveryKeyAndTheStoreContinues() throws {
        let path = try S.storePath()
        try S.run(["create", "--store", path])
        let child = try S.Child(["stress", "--store", path, "--worker", "1", "--seconds", "20"])
        // Wait until it saved enough to be past its exact reservations, then kill -9.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let count = (try? S.query(path, "SELECT COUNT(*) FROM ZITEM").first.flatMap { Int($0[0]) }) ?? 0
            if count >= 60 { break }
            usleep(20_000)
        }
        kill(child.process.processIdentifier, SIGKILL)
        child.process.waitUntilExit()
        #expect(child.process.terminationReason == .uncaughtSignal)

        let keys = try Self.keys(path, table: "ZITEM")
        #expect(keys.count >= 60)
        let zMax = try Self.zMax(path, "Item")
        #expect(zMax >= keys.max() ?? 0, "Z_MAX \(zMax) covers every key written before the kill")

        // A new process's saves continue above it.
        let coordinator = try S.coordinator(path, model: try S.model(), history: false)
        let context = M.context(coordinator)
        let fresh: [Int64] = try context.performAndWait {
            try (0..<12).map { index in
                let item = M.insert("Item", into: context, ["worker": Int64(2), "seq": Int64(index)])
                try context.save()
                return item.objectID.primaryKey
            }
        }
        #expect(fresh.allSatisfy { $0 > zMax })
        let all = try Self.keys(path, table: "ZITEM")
        #expect(all.count == keys.count + 12)
        #expect(try Self.zMax(path, "Item") >= all.max() ?? 0)
        #expect(try S.query(path, "PRAGMA integrity_check") == [["ok"]])
    }
}
