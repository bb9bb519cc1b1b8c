import Foundation
import Testing
@testable import PersistKit

@Suite("SQLiteStore")
struct SQLiteStoreTests {
    typealias S = SQLiteTestSupport

    func makeStore(_ directory: URL? = nil, options: StoreOptions = StoreOptions()) throws -> (SQLiteStore, ManagedObjectModel, URL) {
        let model = try S.makeModel()
        let url = (try directory ?? S.temporaryDirectory()).appendingPathComponent("Test.sqlite")
        return (try SQLiteStore(model: model, configurationName: nil, url: url, options: options), model, url)
    }

    func entity(_ model: ManagedObjectModel, _ name: String) -> EntityDescription { model.entitiesByName[name]! }

    @Test func roundTripsEveryAttributeTypeIncludingNullsAndLimits() throws {
        let (store, model, _) = try makeStore()
        defer { try? store.close() }
        let beer = entity(model, "Beer")
        let date = Date(timeIntervalSinceReferenceDate: 123_456_789.125)
        let uuid = UUID(uuidString: "0E1C2B3A-4D5E-6F70-8192-A3B4C5D6E7F8")!
        let full = S.row(store, beer, 1, [
            "name": .string("Ünïcödé 🍺 \"quoted\" 'x'"), "abv": .double(8.5), "ibu": .integer(Int64(Int16.max)),
            "count32": .integer(Int64(Int32.min)), "big": .integer(Int64.max), "rating": .double(-0.25),
            "price": .decimal(Decimal(string: "1234567890.12345")!), "brewed": .date(date),
            "isOrganic": .bool(true), "id": .uuid(uuid), "website": .url(URL(string: "https://example.com/a?b=c")!),
            "label": .data(Data([0, 1, 2, 255])), "notes": .data(Data("{}".utf8)),
        ])
        let minimal = S.row(store, beer, 2, ["big": .integer(Int64.min), "ibu": .integer(Int64(Int16.min)), "isOrganic": .bool(false),
                                             "label": .data(Data()), "name": .string("")])
        var request = StoreSaveRequest()
        request.inserted = [full, minimal]
        try store.save(request)

        let rows = try store.fetch(StoreFetchRequest(entity: beer, sortDescriptors: [FetchSortDescriptor(key: "big")]))
        #expect(rows.count == 2)
        #expect(rows[1] == full)
        #expect(rows[0] == minimal)
        #expect(rows[0].version == 1)
        #expect(S.value(rows[1], "memo") == .null)
        // On disk as Core Data writes them: seconds since 2001 as REAL, booleans 0/1, UUIDs as 16 bytes.
        let disk = try S.query(store.url!, "SELECT typeof(ZBREWED), ZBREWED, ZISORGANIC, typeof(ZID), length(ZID), ZWEBSITE FROM ZBEER WHERE Z_PK = 1")
        #expect(disk == [["real", "123456789.125", "1", "blob", "16", "https://example.com/a?b=c"]])
    }

    @Test func inheritanceSharesOneTableAndFiltersByEntity() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let (item, book, film) = (entity(model, "Item"), entity(model, "Book"), entity(model, "Film"))
        var request = StoreSaveRequest()
        request.inserted = [
            S.row(store, book, 1, ["title": .string("Dune"), "pages": .integer(412), "rating": .integer(5)]),
            S.row(store, film, 2, ["title": .string("Alien"), "minutes": .integer(117), "rating": .integer(4)]),
            S.row(store, book, 3, ["title": .string("Emma"), "pages": .integer(300)]),
        ]
        try store.save(request)
        #expect(try store.count(StoreFetchRequest(entity: item)) == 3)
        #expect(try store.count(StoreFetchRequest(entity: item, includesSubentities: false)) == 0)
        let books = try store.fetch(StoreFetchRequest(entity: book, sortDescriptors: [FetchSortDescriptor(key: "title")]))
        #expect(books.map { S.value($0, "title") } == [.string("Dune"), .string("Emma")])
        let films = try store.fetch(StoreFetchRequest(entity: film))
        #expect(films.count == 1 && films[0].objectID.entity === film && S.value(films[0], "rating") == .integer(4))
        // Both sub-entities declare `rating`: the second column is suffixed.
        let columns = try S.query(url, "SELECT name FROM pragma_table_info('ZITEM')").map { $0[0] }
        #expect(columns.contains("ZRATING") && columns.contains("ZRATING1"))
        let mixed = try store.fetch(StoreFetchRequest(entity: item, sortDescriptors: [FetchSortDescriptor(key: "title", ascending: false)]))
        #expect(mixed.map { $0.objectID.entity.name } == ["Book", "Book", "Film"])
    }

    /// The insert loop takes rows in runs of one entity and keeps each run's statement bound
    /// between rows: rows of two entities in turn, some with text and some with none, each
    /// come back with their own values and NULLs, none left over from a row before.
    @Test func rowsOfEntitiesInTurnEachKeepTheirOwnValues() throws {
        let (store, model, _) = try makeStore()
        defer { try? store.close() }
        let (book, film) = (entity(model, "Book"), entity(model, "Film"))
        var request = StoreSaveRequest()
        request.inserted = [
            S.row(store, book, 1, ["title": .string("Dune"), "pages": .integer(412)]),
            S.row(store, book, 2, ["title": .string("Emma"), "pages": .integer(300), "rating": .integer(3)]),
            S.row(store, film, 3, ["minutes": .integer(117)]),
            S.row(store, book, 4, ["pages": .integer(90)]),
            S.row(store, film, 5, ["title": .string("Alien"), "rating": .integer(4)]),
            S.row(store, book, 6, [:]),
        ]
        try store.save(request)
        let read = try store.rows(for: request.inserted.map(\.objectID)).sorted { $0.primaryKey < $1.primaryKey }
        #expect(read.count == 6)
        for (row, written) in zip(read, request.inserted) {
            #expect(row.objectID == written.objectID)
            #expect(row.values == written.values, "row \(written.primaryKey)")
        }
        #expect(S.value(read[3], "title") == .null && S.value(read[5], "pages") == .null)
        #expect(S.value(read[2], "title") == .null && S.value(read[4], "minutes") == .null)
    }

    @Test func relationshipsOneToManyOrderedManyToManyAndToSubentity() throws {
        let (store, model, _) = try makeStore()
        defer { try? store.close() }
        let (brewery, beer, tag) = (entity(model, "Brewery"), entity(model, "Beer"), entity(model, "Tag"))
        let (shelf, book, film, review) = (entity(model, "Shelf"), entity(model, "Book"), entity(model, "Film"), entity(model, "Review"))
        let b = S.id(store, brewery, 1)
        let beers = (1...3).map { S.id(store, beer, Int64($0)) }
        let tags = (1...2).map { S.id(store, tag, Int64($0)) }
        let beersRel = brewery.relationshipsByName["beers"]!
        let tagsRel = beer.relationshipsByName["tags"]!
        let tagBeersRel = tag.relationshipsByName["beers"]!
        var request = StoreSaveRequest()
        request.inserted = [S.row(store, brewery, 1, ["name": .string("Westmalle")])]
            + beers.map { S.row(store, beer, $0.primaryKey, ["name": .string("b\($0.primaryKey)"), "brewery": .object(b)]) }
            + tags.map { S.row(store, tag, $0.primaryKey, ["name": .string("t\($0.primaryKey)")]) }
        // Ordered one-to-many, in an order different from the keys.
        request.toManyChanges.append(.init(relationship: beersRel, source: b, added: beers, removed: [], order: [beers[2], beers[0], beers[1]]))
        // Many-to-many, both sides, as contexts send it.
        request.toManyChanges.append(.init(relationship: tagsRel, source: beers[0], added: tags, removed: []))
        request.toManyChanges.append(.init(relationship: tagBeersRel, source: tags[0], added: [beers[0]], removed: []))
        request.toManyChanges.append(.init(relationship: tagBeersRel, source: tags[1], added: [beers[0]], removed: []))
        // A shelf with an ordered to-many to an abstract entity, and reviews of sub-entities.
        let s = S.id(store, shelf, 1)
        let dune = S.id(store, book, 1), alien = S.id(store, film, 2)
        request.inserted += [
            S.row(store, shelf, 1, ["name": .string("top")]),
            S.row(store, book, 1, ["title": .string("Dune"), "shelf": .object(s)]),
            S.row(store, film, 2, ["title": .string("Alien"), "shelf": .object(s)]),
            S.row(store, review, 1, ["text": .string("great"), "item": .object(alien), "book": .object(dune)]),
        ]
        request.toManyChanges.append(.init(relationship: shelf.relationshipsByName["items"]!, source: s, added: [dune, alien], removed: [], order: [alien, dune]))
        try store.save(request)

        #expect(try store.destinations(of: b, relationship: beersRel) == [beers[2], beers[0], beers[1]])
        #expect(try store.destinations(of: beers[0], relationship: tagsRel) == tags)
        #expect(try store.destinations(of: tags[1], relationship: tagBeersRel) == [beers[0]])
        #expect(try store.destinations(of: beers[1], relationship: tagsRel) == [])
        #expect(try store.destinations(of: s, relationship: shelf.relationshipsByName["items"]!) == [alien, dune])
        #expect(try store.destinations(of: dune, relationship: book.relationshipsByName["reviews"]!) == [S.id(store, review, 1)])
        let reviewRow = try #require(try store.row(for: S.id(store, review, 1)))
        // The entity column tells which sub-entity the to-one points to.
        #expect(S.value(reviewRow, "item") == .object(alien))
        #expect(S.value(reviewRow, "book") == .object(dune))
        let beerRow = try #require(try store.row(for: beers[1]))
        #expect(S.value(beerRow, "brewery") == .object(b))

        // Removing a tag from both sides, and deleting a beer, clears join rows.
        var second = StoreSaveRequest()
        second.toManyChanges = [.init(relationship: tagsRel, source: beers[0], added: [], removed: [tags[0]]),
                                .init(relationship: tagBeersRel, source: tags[0], added: [], removed: [beers[0]])]
        try store.save(second)
        #expect(try store.destinations(of: beers[0], relationship: tagsRel) == [tags[1]])
        var third = StoreSaveRequest()
        third.deleted = [try #require(try store.row(for: beers[0]))]
        try store.save(third)
        #expect(try store.destinations(of: tags[1], relationship: tagBeersRel) == [])
        #expect(try store.rows(for: beers).count == 2)
    }

    @Test func primaryKeysComeFromTheRootEntityRow() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        #expect(try store.allocatePrimaryKeys(for: entity(model, "Book"), count: 2) == [1, 2])
        #expect(try store.allocatePrimaryKeys(for: entity(model, "Film"), count: 3) == [3, 4, 5])
        #expect(try store.allocatePrimaryKeys(for: entity(model, "Beer"), count: 1) == [1])
        let rows = try S.query(url, "SELECT Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
        // Numbering: roots by name, each tree depth-first, siblings by name.
        #expect(rows == [["Beer", "0", "1"], ["Brewery", "0", "0"], ["Item", "0", "5"], ["Book", "3", "0"], ["Film", "3", "0"],
                         ["Review", "0", "0"], ["Shelf", "0", "0"], ["Tag", "0", "0"]])
    }

    @Test func aFailedSaveChangesNothing() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let beer = entity(model, "Beer")
        var first = StoreSaveRequest()
        first.inserted = [S.row(store, beer, 1, ["name": .string("a")])]
        try store.save(first)
        let before = try S.query(url, "SELECT * FROM ZBEER ORDER BY Z_PK") + S.query(url, "SELECT * FROM Z_PRIMARYKEY")
        var failing = StoreSaveRequest()
        failing.inserted = (2...50).map { S.row(store, beer, Int64($0), ["name": .string("n\($0)")]) }
        failing.updated = [S.row(store, beer, 1, version: 1, ["name": .string("changed")])]
        // The last statement fails: the primary key 1 already exists.
        failing.inserted.append(S.row(store, beer, 1, ["name": .string("duplicate")]))
        #expect(throws: PersistenceError.self) { try store.save(failing) }
        let after = try S.query(url, "SELECT * FROM ZBEER ORDER BY Z_PK") + S.query(url, "SELECT * FROM Z_PRIMARYKEY")
        #expect(before == after)
        #expect(try store.count(StoreFetchRequest(entity: beer)) == 1)
    }

    @Test func optimisticLockingConflictIsAMergeError() throws {
        let (store, model, _) = try makeStore()
        defer { try? store.close() }
        let beer = entity(model, "Beer")
        var insert = StoreSaveRequest()
        insert.inserted = [S.row(store, beer, 1, ["name": .string("a")])]
        try store.save(insert)
        var update = StoreSaveRequest()
        update.updated = [S.row(store, beer, 1, version: 1, ["name": .string("b")])]
        try store.save(update)
        #expect(try store.row(for: S.id(store, beer, 1))?.version == 2)
        // A second writer that read version 1 conflicts.
        do {
            try store.save(update)
            Issue.record("expected a conflict")
        } catch let error as PersistenceError {
            #expect(error.code == .managedObjectMerge)
            #expect(error.objectID == S.id(store, beer, 1))
        }
    }

    @Test func reopensWithEqualContentsAndIdentifier() throws {
        let directory = try S.temporaryDirectory()
        let (store, model, url) = try makeStore(directory)
        let beer = entity(model, "Beer")
        var request = StoreSaveRequest()
        request.inserted = [S.row(store, beer, 1, ["name": .string("a"), "abv": .double(5)])]
        try store.save(request)
        let rows = try store.fetch(StoreFetchRequest(entity: beer))
        let identifier = store.identifier
        try store.close()
        #expect(throws: PersistenceError.self) { try store.fetch(StoreFetchRequest(entity: beer)) }

        let reopened = try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions())
        defer { try? reopened.close() }
        #expect(reopened.identifier == identifier)
        #expect(try reopened.fetch(StoreFetchRequest(entity: beer)) == rows)
        #expect(reopened.metadata()["NSStoreType"] as? String == "SQLite")
        #expect(reopened.metadata()["NSStoreUUID"] as? String == identifier)
        let hashes = try #require(reopened.metadata()["NSStoreModelVersionHashes"] as? [String: any Sendable])
        #expect((hashes["Beer"] as? Data) == beer.versionHash)
        #expect(try S.query(url, "PRAGMA journal_mode") == [["wal"]])
    }

    @Test func readOnlyStoresRefuseWrites() throws {
        let directory = try S.temporaryDirectory()
        let (store, model, url) = try makeStore(directory)
        try store.close()
        let readOnly = try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions(readOnly: true))
        defer { try? readOnly.close() }
        var request = StoreSaveRequest()
        request.inserted = [S.row(readOnly, entity(model, "Tag"), 1, [:])]
        #expect(throws: PersistenceError.self) { try readOnly.save(request) }
        #expect(try readOnly.count(StoreFetchRequest(entity: entity(model, "Tag"))) == 0)
    }

    @Test func openErrorsNameTheFileAndTheProblem() throws {
        let directory = try S.temporaryDirectory()
        let model = try S.makeModel()
        let garbage = directory.appendingPathComponent("garbage.sqlite")
        try Data(repeating: 0x41, count: 4096).write(to: garbage)
        #expect { _ = try SQLiteStore(model: model, configurationName: nil, url: garbage, options: StoreOptions()) } throws: {
            ($0 as? PersistenceError)?.code == .persistentStoreOpen && ($0 as? PersistenceError)?.path == garbage.path
        }
        let plain = directory.appendingPathComponent("plain.sqlite")
        let connection = try SQLiteConnection(path: plain.path)
        try connection.execute("CREATE TABLE t (x)")
        try connection.close()
        #expect { _ = try SQLiteStore(model: model, configurationName: nil, url: plain, options: StoreOptions()) } throws: {
            ($0 as? PersistenceError)?.code == .persistentStoreTypeMismatch
        }
        // A model with an attribute the store lacks.
        let url = directory.appendingPathComponent("store.sqlite")
        try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions()).close()
        let changed = try S.makeModel()
        _ = changed // frozen already; build a different one:
        let other = EntityDescription(name: "Tag", properties: [S.attribute("name", .string), S.attribute("color", .string)])
        let otherModel = ManagedObjectModel(entities: [other])
        // (With migration on, the store would be migrated to the other model: see MigrationTests.)
        #expect { _ = try SQLiteStore(model: otherModel, configurationName: nil, url: url,
                                      options: StoreOptions(migratePersistentStoresAutomatically: false)) } throws: {
            guard let error = $0 as? PersistenceError else { return false }
            return error.code == .persistentStoreIncompatibleSchema && error.message.contains("ZCOLOR") && error.message.contains("Tag.color")
        }
        #expect { _ = try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions(sqlitePragmas: ["key": "x"])) } throws: {
            ($0 as? PersistenceError)?.code == .persistentStoreOpen
        }
    }

    @Test func manyInsertsReuseOneStatementAndCountStatements() throws {
        let (store, model, _) = try makeStore()
        defer { try? store.close() }
        let tag = entity(model, "Tag")
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        let start = store.statementCount
        var request = StoreSaveRequest()
        request.inserted = (1...100).map { S.row(store, tag, Int64($0), ["name": .string("t\($0)")]) }
        try store.save(request)
        // BEGIN, the INSERTs of the first rows together (SQLiteInsertRunTests), one of each
        // row left, the Z_MAX update, COMMIT.
        let together = SQLiteStore.insertManyMaximumRows, full = 100 / together
        #expect(store.statementCount - start == 1 + full + (100 - full * together) + 2)
        let sql = seen.withLock { $0 }
        #expect(sql.first == "BEGIN IMMEDIATE TRANSACTION" && sql.last == "COMMIT TRANSACTION")
        #expect(Set(sql.dropFirst(1 + full).dropLast(2)) == [#"INSERT INTO "ZTAG" ("Z_PK", "Z_ENT", "Z_OPT", "ZNAME") VALUES (?, ?, ?, ?)"#])
    }
}
