import Foundation
import Testing
@testable import PersistKit

/// A SQLite store gives new objects their primary keys inside the save's own transaction:
/// one transaction per save, and a save that fails uses up no key and leaves its objects with
/// their temporary IDs (so saving again writes them).
@Suite("Save key allocation", .timeLimit(.minutes(1)))
struct SaveKeyAllocationTests {
    typealias M = ContextTestModel

    static func sqliteCoordinator() throws -> (PersistentStoreCoordinator, SQLiteStore) {
        let url = try M.temporaryDirectory().appendingPathComponent("keys.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        return (coordinator, store)
    }

    /// `Z_MAX` of the root entity `name` in `Z_PRIMARYKEY`.
    static func maxKey(_ name: String, _ store: SQLiteStore) throws -> Int64? {
        try store.withConnection(.sqlite, "reading Z_MAX") { connection in
            try connection.int64("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_NAME\" = ?", [.string(name)])
        }
    }

    /// The SQL the store ran while `body` ran.
    static func statements(_ store: SQLiteStore, _ body: () throws -> Void) rethrows -> [String] {
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        defer { store.setStatementObserver(nil) }
        try body()
        return seen.withLock { $0 }
    }

    @Test func aSaveOfNewObjectsIsOneTransactionAndKeepsRelationships() throws {
        let (coordinator, store) = try Self.sqliteCoordinator()
        let context = M.context(coordinator)
        let sql = try Self.statements(store) {
            try context.performAndWait {
                let brewery = M.insert("Brewery", into: context, ["name": "Westmalle"])
                for name in ["Dubbel", "Tripel"] {
                    let beer = M.insert("Beer", into: context, ["name": name])
                    beer.setValue(brewery, forKey: "brewery")
                }
                let tag = M.insert("Tag", into: context, ["name": "trappist"])
                tag.setValue(Set(context.insertedObjects.filter { $0.entity.name == "Beer" }), forKey: "beers")
                try context.save()
                #expect(context.registeredObjects.allSatisfy { !$0.objectID.isTemporaryID })
                #expect(context.registeredObjects.allSatisfy { context.registered[$0.objectID] === $0 })
            }
        }
        #expect(sql.filter { $0.hasPrefix("BEGIN") }.count == 1, "one transaction: \(sql.filter { $0.hasPrefix("BEGIN") })")
        #expect(try Self.maxKey("Beer", store) == 2)
        #expect(try Self.maxKey("Brewery", store) == 1)

        // Another context reads the graph as saved, relationships included.
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let beers = try reader.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
            #expect(M.names(beers) == ["Dubbel", "Tripel"])
            #expect(beers.map { ($0.value(forKey: "brewery") as? ManagedObject)?.value(forKey: "name") as? String } == ["Westmalle", "Westmalle"])
            #expect(beers.map { M.names($0.value(forKey: "tags")) } == [["trappist"], ["trappist"]])
            #expect(Set(beers.map(\.objectID.primaryKey)) == [1, 2])
        }
    }

    @Test func aFailedSaveUsesUpNoKeyAndKeepsTemporaryIDs() throws {
        let (coordinator, store) = try Self.sqliteCoordinator()
        let seed = M.context(coordinator)
        let sharedID = try seed.performAndWait {
            let beer = M.insert("Beer", into: seed, ["name": "Orval"])
            try seed.save()
            return beer.objectID
        }
        #expect(try Self.maxKey("Beer", store) == 1)

        // A stale update (another context saved the object since) next to new objects: the
        // store finds the conflict inside the write transaction, after inserting the new rows.
        let stale = M.context(coordinator)
        let (fresh, freshBrewery) = stale.performAndWait {
            stale.object(with: sharedID).setValue(Int16(30), forKey: "ibu")
            let brewery = M.insert("Brewery", into: stale, ["name": "Rochefort"])
            let beer = M.insert("Beer", into: stale, ["name": "Rochefort 10"])
            beer.setValue(brewery, forKey: "brewery")
            return (beer, brewery)
        }
        let other = M.context(coordinator)
        try other.performAndWait {
            other.object(with: sharedID).setValue(Int16(40), forKey: "ibu")
            try other.save()
        }

        let failure = stale.performAndWait { () -> PersistenceError? in
            do { try stale.save(); return nil } catch let error as PersistenceError { return error } catch { return nil }
        }
        #expect(failure?.code == .managedObjectMerge)
        #expect(try Self.maxKey("Beer", store) == 1, "the failed save's key allocation was rolled back")
        #expect(try Self.maxKey("Brewery", store) == 0)
        stale.performAndWait {
            #expect(fresh.objectID.isTemporaryID && freshBrewery.objectID.isTemporaryID)
            #expect(fresh.isInserted && stale.hasChanges)
            #expect(fresh.primitiveValue(forKey: "brewery") == .object(freshBrewery.objectID))
        }
        let reader = M.context(coordinator)
        #expect(try reader.performAndWait { try reader.count(for: M.request("Beer")) } == 1)

        // Once the conflict is resolved, the same objects are saved with the next keys.
        stale.mergePolicy = .mergeByPropertyObjectTrump
        try stale.performAndWait { try stale.save() }
        stale.performAndWait {
            #expect(fresh.objectID.primaryKey == 2 && !fresh.objectID.isTemporaryID)
            #expect(freshBrewery.objectID.primaryKey == 1 && !freshBrewery.objectID.isTemporaryID)
            #expect(fresh.primitiveValue(forKey: "brewery") == .object(freshBrewery.objectID))
        }
        #expect(try Self.maxKey("Beer", store) == 2)
        try reader.performAndWait {
            let beer = try #require(try reader.fetch(M.request("Beer", .equal("name", .string("Rochefort 10")))).first)
            #expect((beer.value(forKey: "brewery") as? ManagedObject)?.value(forKey: "name") as? String == "Rochefort")
        }
    }

    @Test func permanentIDsObtainedEarlyAreKept() throws {
        let (coordinator, store) = try Self.sqliteCoordinator()
        let context = M.context(coordinator)
        try context.performAndWait {
            let early = M.insert("Beer", into: context, ["name": "Chimay"])
            try context.obtainPermanentIDs(for: [early])
            let earlyID = early.objectID
            #expect(!earlyID.isTemporaryID && earlyID.primaryKey == 1)
            let late = M.insert("Beer", into: context, ["name": "Achel"])
            try context.save()
            #expect(early.objectID == earlyID)
            #expect(late.objectID.primaryKey == 2 && !late.objectID.isTemporaryID)
        }
        #expect(try Self.maxKey("Beer", store) == 2)
    }

    @Test func didSaveNotificationsCarryThePermanentIDs() throws {
        let (coordinator, _) = try Self.sqliteCoordinator()
        let context = M.context(coordinator)
        let seen = Locked<(objects: Set<ManagedObject>, ids: Set<ManagedObjectID>, willSave: Int, changed: Int)>(([], [], 0, 0))
        let center = NotificationCenter.default
        let observers = [
            center.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification, object: context, queue: nil) { note in
                let objects = note.userInfo?[ManagedObjectContext.insertedObjectsKey] as? Set<ManagedObject> ?? []
                seen.withLock { $0.objects = objects }
            },
            center.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification, object: context, queue: nil) { note in
                let ids = note.userInfo?[ManagedObjectContext.insertedObjectIDsKey] as? Set<ManagedObjectID> ?? []
                seen.withLock { $0.ids = ids }
            },
            center.addObserver(forName: ManagedObjectContext.willSaveObjectsNotification, object: context, queue: nil) { _ in
                seen.withLock { $0.willSave += 1 }
            },
            center.addObserver(forName: ManagedObjectContext.didChangeObjectsNotification, object: context, queue: nil) { note in
                let inserted = note.userInfo?[ManagedObjectContext.insertedObjectsKey] as? Set<ManagedObject> ?? []
                seen.withLock { $0.changed += inserted.count }
            },
        ]
        defer { observers.forEach(center.removeObserver) }
        let beers = try context.performAndWait {
            let beers = ["Duvel", "Orval"].map { M.insert("Beer", into: context, ["name": $0]) }
            try context.save()
            return beers
        }
        let result = seen.withLock { $0 }
        #expect(result.objects == Set(beers))
        #expect(result.ids == Set(beers.map(\.objectID)))
        #expect(result.ids.allSatisfy { !$0.isTemporaryID })
        #expect(result.willSave == 1)
        #expect(result.changed == 2)
    }

    @Test func atomicStoresStillGetKeysBeforeWriting() throws {
        let coordinator = try M.coordinator(type: .inMemory)
        let context = M.context(coordinator)
        try context.performAndWait {
            let brewery = M.insert("Brewery", into: context, ["name": "Achel"])
            let beer = M.insert("Beer", into: context, ["name": "Achel Blond"])
            beer.setValue(brewery, forKey: "brewery")
            try context.save()
            #expect(!beer.objectID.isTemporaryID && !brewery.objectID.isTemporaryID)
            #expect(beer.primitiveValue(forKey: "brewery") == .object(brewery.objectID))
        }
    }
}
