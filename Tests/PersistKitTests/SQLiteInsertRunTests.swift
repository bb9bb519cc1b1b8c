import Foundation
import Testing
@testable import PersistKit

/// A save's inserted rows go in `INSERT`s of several rows each (``SQLiteStore/WriteColumns/insertManySQL``)
/// and the rest one at a time: every row lands whole, under its key, with its entity and
/// version, whatever the mix of entities, value kinds and widths, and a failure anywhere in a
/// statement of several rows writes nothing.
@Suite("SQLite inserts in runs")
struct SQLiteInsertRunTests {
    typealias S = SQLiteTestSupport

    func makeStore(_ model: ManagedObjectModel? = nil) throws -> (SQLiteStore, ManagedObjectModel, URL) {
        let model = try model ?? S.makeModel()
        let url = try S.temporaryDirectory().appendingPathComponent("Runs.sqlite")
        return (try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions()), model, url)
    }

    /// A frozen model of one entity `Wide` with `count` Integer 64 attributes `a0`, `a1`, ….
    func wideModel(_ count: Int) throws -> ManagedObjectModel {
        let wide = EntityDescription(name: "Wide", properties: (0..<count).map { S.attribute("a\($0)", .integer64) })
        let model = ManagedObjectModel(entities: [wide])
        try model.freeze()
        return model
    }

    @Test func fullRunsShareAStatementOfManyRowsAndTheRestGoOneAtATime() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let tag = model.entitiesByName["Tag"]!
        let many = try store.writePlan(for: tag).columns.insertManyRows
        #expect(many == SQLiteStore.insertManyMaximumRows)
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        let start = store.statementCount
        // Keys from 11 on, not in order: Z_MAX must end at the largest.
        let keys = (0..<(2 * many + 3)).map { Int64(11 + ($0 * 7) % (2 * many + 3)) }
        var request = StoreSaveRequest()
        request.inserted = keys.map { S.row(store, tag, $0, ["name": .string("tag \($0)")]) }
        try store.save(request)

        // BEGIN, two INSERTs of `many` rows, three of one, the Z_MAX update, COMMIT.
        #expect(store.statementCount - start == 8)
        let sql = seen.withLock { $0 }
        let number = try #require(store.schema.layout(of: tag)?.number)
        let row = "(?, \(number), 1, ?)"
        let manySQL = #"INSERT INTO "ZTAG" ("Z_PK", "Z_ENT", "Z_OPT", "ZNAME") VALUES "# + Array(repeating: row, count: many).joined(separator: ", ")
        let oneSQL = #"INSERT INTO "ZTAG" ("Z_PK", "Z_ENT", "Z_OPT", "ZNAME") VALUES (?, ?, ?, ?)"#
        #expect(Array(sql.dropFirst().prefix(5)) == [manySQL, manySQL, oneSQL, oneSQL, oneSQL])

        let disk = try S.query(url, "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME FROM ZTAG ORDER BY Z_PK")
        #expect(disk == keys.sorted().map { ["\($0)", "\(number)", "1", "tag \($0)"] })
        let maximum = try S.query(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(number)")
        #expect(maximum == [["\(keys.max()!)"]])
    }

    @Test func runsOfSeveralEntitiesKeepTextReferencesAndEntityColumns() throws {
        let (store, model, _) = try makeStore()
        defer { try? store.close() }
        let (review, book, film, brewery, beer) = (model.entitiesByName["Review"]!, model.entitiesByName["Book"]!,
                                                   model.entitiesByName["Film"]!, model.entitiesByName["Brewery"]!,
                                                   model.entitiesByName["Beer"]!)
        let many = try store.writePlan(for: review).columns.insertManyRows
        #expect(many > 1)
        var request = StoreSaveRequest()
        request.inserted = [S.row(store, book, 1, ["title": .string("Dune")]), S.row(store, film, 2, ["title": .string("Alien")]),
                            S.row(store, brewery, 1, ["name": .string("Zum Uerige")])]
        try store.save(request)

        // A run of reviews one longer than a statement, beers (a run of their own), then more
        // reviews: each review points at the book or the film (the to-one's entity column
        // tells which), each beer at the brewery, with text and blobs bound as copies.
        func reviewRow(_ key: Int64) -> RowSnapshot {
            S.row(store, review, key, ["text": .string("review \(key) ✓"),
                                       "item": .object(key % 2 == 0 ? S.id(store, book, 1) : S.id(store, film, 2)),
                                       "book": key % 3 == 0 ? .object(S.id(store, book, 1)) : .null])
        }
        let reviews = (1...Int64(many + 1)).map(reviewRow) + (Int64(many + 2)...Int64(3 * many)).map(reviewRow)
        let beers = (1...Int64(many)).map {
            S.row(store, beer, $0, ["name": .string("beer \($0)"), "label": .data(Data(repeating: UInt8($0 % 256), count: Int($0))),
                                    "brewery": .object(S.id(store, brewery, 1)), "abv": .double(Double($0) / 4)])
        }
        request = StoreSaveRequest()
        request.inserted = Array(reviews.prefix(many + 1)) + beers + Array(reviews.dropFirst(many + 1))
        try store.save(request)

        let fetchedReviews = try store.fetch(StoreFetchRequest(entity: review))
        #expect(fetchedReviews.count == reviews.count)
        let reviewsByKey = Dictionary(uniqueKeysWithValues: fetchedReviews.map { ($0.primaryKey, $0) })
        for expected in reviews { #expect(reviewsByKey[expected.primaryKey] == expected) }
        let fetchedBeers = try store.fetch(StoreFetchRequest(entity: beer))
        let beersByKey = Dictionary(uniqueKeysWithValues: fetchedBeers.map { ($0.primaryKey, $0) })
        #expect(fetchedBeers.count == beers.count)
        for expected in beers {
            let fetched = try #require(beersByKey[expected.primaryKey])
            for name in ["name", "label", "brewery", "abv"] { #expect(S.value(fetched, name) == S.value(expected, name)) }
        }
    }

    @Test func wideEntitiesWriteFewerRowsAStatementOrOneAtATime() throws {
        // 99 columns and the key: 5 rows fit in 500 parameters.
        let (store, model, url) = try makeStore(try wideModel(99))
        defer { try? store.close() }
        let wide = model.entitiesByName["Wide"]!
        #expect(try store.writePlan(for: wide).columns.insertManyRows == SQLiteStore.insertParameterBudget / 100)
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        var request = StoreSaveRequest()
        request.inserted = (1...22).map { key in
            S.row(store, wide, key, Dictionary(uniqueKeysWithValues: (0..<99).map { ("a\($0)", StoreValue.integer(key * 1000 + Int64($0))) }))
        }
        try store.save(request)
        // Four statements of five rows and two of one.
        #expect(seen.withLock { $0 }.filter { $0.hasPrefix("INSERT INTO \"ZWIDE\"") }.count == 6)
        let disk = try S.query(url, "SELECT Z_PK, ZA0, ZA98 FROM ZWIDE ORDER BY Z_PK")
        #expect(disk == (1...22).map { ["\($0)", "\($0 * 1000)", "\($0 * 1000 + 98)"] })

        // 300 columns: not even two rows fit; every row is an INSERT of its own.
        let (widest, widestModel, widestURL) = try makeStore(try wideModel(300))
        defer { try? widest.close() }
        let entity = widestModel.entitiesByName["Wide"]!
        let columns = try widest.writePlan(for: entity).columns
        #expect(columns.insertManyRows == 1 && columns.insertManySQL.isEmpty)
        request = StoreSaveRequest()
        request.inserted = (1...3).map { S.row(widest, entity, $0, ["a0": .integer($0), "a299": .integer(-$0)]) }
        try widest.save(request)
        #expect(try S.query(widestURL, "SELECT Z_PK, ZA0, ZA299 FROM ZWIDE ORDER BY Z_PK") == [["1", "1", "-1"], ["2", "2", "-2"], ["3", "3", "-3"]])
    }

    @Test func aFailureInAStatementOfManyRowsWritesNothing() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let tag = model.entitiesByName["Tag"]!
        let many = try store.writePlan(for: tag).columns.insertManyRows
        var request = StoreSaveRequest()
        request.inserted = [S.row(store, tag, 10, ["name": .string("first")])]
        try store.save(request)

        // Key 10 again, in the middle of the first statement of many rows.
        request.inserted = (1...Int64(many + 5)).map { S.row(store, tag, $0, ["name": .string("again \($0)")]) }
        #expect { try store.save(request) } throws: { error in
            // The statement's SQL cut short in the message, which says how long it was.
            let description = "\(error)"
            return (error as? PersistenceError)?.code == .sqlite && description.contains("UNIQUE constraint failed: ZTAG.Z_PK")
                && description.contains("…` (") && description.count < 1_000
        }
        // A temporary ID in the middle of a statement of many rows, before anything is stepped.
        let temporary = RowSnapshot(objectID: ManagedObjectID(temporaryFor: tag), version: 1,
                                    values: [StoreValue](repeating: .null, count: tag.slots.count))
        request.inserted = (100...Int64(99 + many)).map { S.row(store, tag, $0, ["name": .string("new \($0)")]) }
        request.inserted.insert(temporary, at: many / 2)
        #expect { try store.save(request) } throws: { error in
            (error as? PersistenceError)?.message.contains("temporary ID") == true
        }
        #expect(try S.query(url, "SELECT Z_PK, ZNAME FROM ZTAG") == [["10", "first"]])
        #expect(try S.query(url, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(store.schema.layout(of: tag)!.number)") == [["10"]])
    }

    @Test func aBatchInsertWritesInRunsToo() throws {
        let model = try wideModel(3)
        let url = try S.temporaryDirectory().appendingPathComponent("Batch.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        let many = SQLiteStore.insertManyMaximumRows
        let count = 2 * many + 5
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        // Every third object leaves a2 out: it is stored as null.
        let request = BatchInsertRequest(entityName: "Wide", objects: (0..<count).map { index -> [String: Any] in
            index % 3 == 0 ? ["a0": index, "a1": -index] : ["a0": index, "a1": -index, "a2": index * 10]
        })
        request.resultType = .objectIDs
        let ids = try #require(try context.execute(request).objectIDs)
        store.setStatementObserver(nil)

        #expect(ids.count == count && ids.allSatisfy { !$0.isTemporaryID })
        #expect(ids.map(\.primaryKey) == (1...Int64(count)).map { $0 })
        // Two statements of `many` rows, five of one.
        let inserts = seen.withLock { $0 }.filter { $0.hasPrefix(#"INSERT INTO "ZWIDE""#) }
        #expect(inserts.count == 7 && inserts.prefix(2).allSatisfy { $0.hasSuffix(", 1, ?, ?, ?)") && $0.count > 20 * many })
        let disk = try S.query(url, "SELECT Z_PK, Z_ENT, Z_OPT, ZA0, ZA1, ZA2 FROM ZWIDE ORDER BY Z_PK")
        let number = try #require(store.schema.layout(of: model.entitiesByName["Wide"]!)?.number)
        #expect(disk == (0..<count).map { ["\($0 + 1)", "\(number)", "1", "\($0)", "\(-$0)", $0 % 3 == 0 ? "NULL" : "\($0 * 10)"] })
        // A later save gets keys after the batch's.
        let later: Int64 = try context.performAndWait {
            let object = ManagedObject(entity: model.entitiesByName["Wide"]!, insertInto: context)
            object.setValue(Int64(1), forKey: "a0")
            try context.save()
            return object.objectID.primaryKey
        }
        #expect(later == Int64(count + 1))
    }

    @Test func anErrorShowsShortSQLWholeAndCutsLongSQL() {
        let short = SQLiteError(extendedResultCode: 1555, message: "UNIQUE constraint failed: T.Z_PK", sql: "INSERT INTO T VALUES (?)")
        #expect(short.description == "SQLite error 1555 (constraint failed): UNIQUE constraint failed: T.Z_PK - while executing `INSERT INTO T VALUES (?)`")
        let sql = "INSERT INTO T VALUES " + Array(repeating: "(?, 8, 1, ?)", count: 64).joined(separator: ", ")
        let long = SQLiteError(extendedResultCode: 1555, message: "UNIQUE constraint failed: T.Z_PK", sql: sql)
        #expect(long.description == "SQLite error 1555 (constraint failed): UNIQUE constraint failed: T.Z_PK - while executing `"
                + sql.prefix(SQLiteError.describedSQLLength) + "…` (\(sql.count) characters)")
        #expect(long.sql == sql)
    }

    @Test func aContextSavesManyNewObjectsUnderTheKeysItWasGiven() throws {
        let model = try wideModel(3)
        let url = try S.temporaryDirectory().appendingPathComponent("Context.sqlite")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        let count = 3 * SQLiteStore.insertManyMaximumRows + 7
        let saved: [(ManagedObjectID, Int64)] = try context.performAndWait {
            let objects = (0..<count).map { index in
                let object = ManagedObject(entity: model.entitiesByName["Wide"]!, insertInto: context)
                object.setValue(Int64(index), forKey: "a0")
                object.setValue(Int64(index) * 2, forKey: "a1")
                return object
            }
            try context.save()
            return objects.map { ($0.objectID, $0.int64(forKey: "a0") ?? -1) }
        }
        #expect(Set(saved.map(\.0)).count == count && saved.allSatisfy { !$0.0.isTemporaryID })
        // Read back in a context of its own: each ID finds its object's values.
        let reader = ManagedObjectContext(concurrencyType: .privateQueue)
        reader.persistentStoreCoordinator = coordinator
        try reader.performAndWait {
            for (id, value) in saved {
                let object = try reader.existingObject(with: id)
                #expect(object.int64(forKey: "a0") == value && object.int64(forKey: "a1") == value * 2 && object.value(forKey: "a2") == nil)
            }
        }
    }
}
