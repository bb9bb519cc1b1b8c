import Foundation
import Testing
@testable import PersistKit

/// A save's deleted rows go in the order of their entities and keys, full runs of
/// ``SQLiteStore/deleteManyRows`` rows of one entity in one `DELETE` each and the rest one at a
/// time, each row's join-table memberships with it; a row another save changed or deleted
/// fails the save, which then deletes nothing.
@Suite("SQLite deletes in runs")
struct SQLiteDeleteRunTests {
    typealias S = SQLiteTestSupport

    func makeStore() throws -> (SQLiteStore, ManagedObjectModel, URL) {
        let model = try S.makeModel()
        let url = try S.temporaryDirectory().appendingPathComponent("Deletes.sqlite")
        return (try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions()), model, url)
    }

    /// Saves tags under `keys`, named `tag <key>`.
    func insertTags(_ keys: some Sequence<Int64>, _ store: SQLiteStore, _ tag: EntityDescription) throws {
        var request = StoreSaveRequest()
        request.inserted = keys.map { S.row(store, tag, $0, ["name": .string("tag \($0)")]) }
        try store.save(request)
    }

    /// The keys of `table`'s rows, in order.
    func keys(_ url: URL, _ table: String) throws -> [Int64] {
        try S.query(url, "SELECT Z_PK FROM \(table) ORDER BY Z_PK").map { Int64($0[0])! }
    }

    @Test func fullRunsShareAStatementAndTheRestGoOneAtATime() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let tag = model.entitiesByName["Tag"]!
        let many = SQLiteStore.deleteManyRows
        try insertTags(1...Int64(2 * many + 10), store, tag)

        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        // Every key but 1, 5, 9, 13, 17, 21, 25 (so no run is a range of keys), out of order.
        let deleted = (1...Int64(2 * many + 10)).filter { $0 > 25 || $0 % 4 != 1 }.shuffled()
        #expect(deleted.count == 2 * many + 3)
        var request = StoreSaveRequest()
        request.deleted = deleted.map { S.row(store, tag, $0, ["name": .string("tag \($0)")]) }
        try store.save(request)
        store.setStatementObserver(nil)

        #expect(try keys(url, "ZTAG") == [1, 5, 9, 13, 17, 21, 25])
        // BEGIN, then each statement of rows followed by the one of their memberships in the
        // join table of tags and beers: two runs, three rows one at a time; COMMIT.
        let sql = seen.withLock { $0 }
        #expect(sql.count == 2 + 2 * 2 + 3 * 2)
        let term = #"("Z_PK" = ? AND "Z_OPT" = ?)"#
        let manySQL = #"DELETE FROM "ZTAG" WHERE "# + Array(repeating: term, count: many).joined(separator: " OR ")
        let oneSQL = #"DELETE FROM "ZTAG" WHERE "Z_PK" = ? AND "Z_OPT" = ?"#
        let join = try #require(store.schema.joinTables.first)
        let side = join.relationship.entity === tag ? join.sourceColumn : join.destinationColumn
        let joinMany = #"DELETE FROM "\#(join.name)" WHERE "\#(side)" IN ("# + Array(repeating: "?", count: many).joined(separator: ", ") + ")"
        let joinOne = #"DELETE FROM "\#(join.name)" WHERE "\#(side)" = ?"#
        #expect(Array(sql.dropFirst().prefix(10)) == [manySQL, joinMany, manySQL, joinMany, oneSQL, joinOne, oneSQL, joinOne, oneSQL, joinOne])
    }

    @Test func writeOrderSortsByEntityThenKeyAndKeepsEachRowsPosition() throws {
        let (store, model, _) = try makeStore()
        defer { try? store.close() }
        let (tag, beer) = (model.entitiesByName["Tag"]!, model.entitiesByName["Beer"]!)
        let rows = [S.row(store, tag, 9, [:]), S.row(store, beer, 3, [:]), S.row(store, tag, 2, [:]),
                    S.row(store, beer, 1, [:]), S.row(store, tag, 5, [:])]
        let (tagNumber, beerNumber) = (try #require(store.schema.layout(of: tag)?.number), try #require(store.schema.layout(of: beer)?.number))
        let order = try rows.withUnsafeBufferPointer { try store.writeOrder($0) }
        let expected: [(Int, Int64)] = [(tagNumber, 2), (tagNumber, 5), (tagNumber, 9), (beerNumber, 1), (beerNumber, 3)]
            .sorted { $0 < $1 }
        #expect(order.map(\.entityNumber) == expected.map(\.0))
        #expect(order.map(\.key) == expected.map(\.1))
        // Each entry points at its own row.
        #expect(order.allSatisfy { rows[$0.position].primaryKey == $0.key && rows[$0.position].entity === (($0.entityNumber == tagNumber) ? tag : beer) })

        // Rows already in order keep it; a row with a temporary ID is refused.
        let sorted = expected.map { S.row(store, $0.0 == tagNumber ? tag : beer, $0.1, [:]) }
        #expect(try sorted.withUnsafeBufferPointer { try store.writeOrder($0) }.map(\.position) == Array(0..<5))
        let temporary = [RowSnapshot(objectID: ManagedObjectID(temporaryFor: tag), version: 1, values: [])]
        #expect(throws: PersistenceError.self) { try temporary.withUnsafeBufferPointer { try store.writeOrder($0) } }
    }

    @Test func theRadixSortOrdersAsComparisonsDo() throws {
        // A fixed linear congruential sequence: the same entries at every run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 16
        }
        func entries(_ count: Int, keysBelow limit: UInt64) -> [SQLiteStore.WriteOrderEntry] {
            (0..<count).map { SQLiteStore.WriteOrderEntry(entityNumber: Int(next() % 3) + 1, key: Int64(next() % limit), position: $0) }
        }
        func byComparison(_ list: [SQLiteStore.WriteOrderEntry]) -> [Int] {
            list.enumerated().sorted { ($0.element.entityNumber, $0.element.key, $0.offset) < ($1.element.entityNumber, $1.element.key, $1.offset) }
                .map(\.element.position)
        }
        // Keys of one, two and four digits' worth of bits, some repeated (stable: input order kept).
        for limit: UInt64 in [1_000, 3_000_000, 1 << 40] {
            let list = entries(2 * SQLiteStore.radixSortMinimum + 17, keysBelow: limit)
            let sorted = try #require(SQLiteStore.radixSorted(list))
            #expect(sorted.map(\.position) == byComparison(list))
            #expect(SQLiteStore.sortedForWriting(list).map(\.position) == byComparison(list))
        }
        // Keys too large to share 64 bits with the entity number: sorted by comparisons.
        let large = entries(SQLiteStore.radixSortMinimum, keysBelow: 1 << 40).map {
            SQLiteStore.WriteOrderEntry(entityNumber: $0.entityNumber, key: $0.key | (1 << 62), position: $0.position)
        }
        #expect(SQLiteStore.radixSorted(large) == nil)
        #expect(SQLiteStore.sortedForWriting(large).map(\.position) == byComparison(large))
    }

    @Test func deletedRowsTakeTheirJoinTableMembershipsFromEitherSide() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let (tag, beer) = (model.entitiesByName["Tag"]!, model.entitiesByName["Beer"]!)
        let many = Int64(SQLiteStore.deleteManyRows)
        // Beers 1…2many+1, tags 1…3; every beer tagged with every tag.
        let tags = (1...Int64(3)).map { S.id(store, tag, $0) }
        let beers = (1...(2 * many + 1)).map { S.id(store, beer, $0) }
        var request = StoreSaveRequest()
        request.inserted = (1...(2 * many + 1)).map { S.row(store, beer, $0, ["name": .string("beer \($0)")]) }
            + (1...Int64(3)).map { S.row(store, tag, $0, ["name": .string("tag \($0)")]) }
        let beersTags = try #require(beer.relationshipsByName["tags"])
        request.toManyChanges = beers.map { .init(relationship: beersTags, source: $0, added: tags, removed: []) }
        try store.save(request)
        let join = try #require(store.schema.joinTables.first)
        #expect(try S.query(url, "SELECT COUNT(*) FROM \(join.name)") == [["\(3 * (2 * many + 1))"]])

        // A run of beers and one more (the join table's beer side), then one tag (its other side).
        request = StoreSaveRequest()
        request.deleted = (1...(many + 1)).map { S.row(store, beer, $0, [:]) } + [S.row(store, tag, 2, [:])]
        try store.save(request)
        let beerColumn = join.relationship.entity === beer ? join.sourceColumn : join.destinationColumn
        let tagColumn = join.relationship.entity === beer ? join.destinationColumn : join.sourceColumn
        let left = try S.query(url, "SELECT \(beerColumn), \(tagColumn) FROM \(join.name) ORDER BY 1, 2")
        #expect(left == ((many + 2)...(2 * many + 1)).flatMap { beer in [["\(beer)", "1"], ["\(beer)", "3"]] })
        #expect(try keys(url, "ZBEER") == Array((many + 2)...(2 * many + 1)))
        #expect(try keys(url, "ZTAG") == [1, 3])
    }

    /// Bumps the version of tag `key` to 2, as another save would.
    func changeElsewhere(_ key: Int64, _ store: SQLiteStore, _ tag: EntityDescription) throws {
        var request = StoreSaveRequest()
        request.updated = [S.row(store, tag, key, version: 1, ["name": .string("renamed \(key)")])]
        try store.save(request)
    }

    @Test func aRowChangedElsewhereInARunFailsTheSaveNamingItAndDeletesNothing() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let tag = model.entitiesByName["Tag"]!
        let count = Int64(SQLiteStore.deleteManyRows + 8)
        try insertTags(1...count, store, tag)
        try changeElsewhere(7, store, tag)

        var request = StoreSaveRequest()
        request.deleted = (1...count).map { S.row(store, tag, $0, version: 1, [:]) }
        let error = try #require(throws: PersistenceError.self) { try store.save(request) }
        #expect(error.code == .managedObjectMerge)
        #expect(error.objectID == S.id(store, tag, 7))
        #expect(error.description.contains("was changed by another save (version 2, read at version 1)"))
        #expect(try keys(url, "ZTAG") == Array(1...count))
    }

    @Test func aRowDeletedElsewhereFailsTheSaveAndDeletesNothing() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let tag = model.entitiesByName["Tag"]!
        let many = Int64(SQLiteStore.deleteManyRows)
        let count = many + 8
        try insertTags(1...count, store, tag)
        var gone = StoreSaveRequest()
        gone.deleted = [S.row(store, tag, 3, [:]), S.row(store, tag, count, [:])]
        try store.save(gone)
        let left = try keys(url, "ZTAG")

        // Key 3 falls in the run: the run as a whole is named.
        var request = StoreSaveRequest()
        request.deleted = (1...count).map { S.row(store, tag, $0, [:]) }
        let inRun = try #require(throws: PersistenceError.self) { try store.save(request) }
        #expect(inRun.code == .managedObjectMerge)
        #expect(inRun.description.contains("1 of the \(many) Tag rows deleted together (keys \((1...many).map(String.init).joined(separator: ", "))) had been deleted by another save"))
        #expect(try keys(url, "ZTAG") == left)

        // The last key is deleted on its own: that row is named.
        request.deleted = ((many + 1)...count).map { S.row(store, tag, $0, [:]) }
        let alone = try #require(throws: PersistenceError.self) { try store.save(request) }
        #expect(alone.code == .managedObjectMerge)
        #expect(alone.objectID == S.id(store, tag, count))
        #expect(alone.description.contains("was deleted by another save"))
        #expect(try keys(url, "ZTAG") == left)
    }

    @Test func updatedRowsInAnyOrderAreWritten() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let (tag, brewery) = (model.entitiesByName["Tag"]!, model.entitiesByName["Brewery"]!)
        try insertTags(1...Int64(20), store, tag)
        var request = StoreSaveRequest()
        request.inserted = (1...Int64(5)).map { S.row(store, brewery, $0, ["name": .string("brewery \($0)")]) }
        try store.save(request)

        request = StoreSaveRequest()
        request.updated = ((1...Int64(20)).map { S.row(store, tag, $0, ["name": .string("new \($0)")]) }
            + (1...Int64(5)).map { S.row(store, brewery, $0, ["name": .string("new brewery \($0)")]) }).shuffled()
        try store.save(request)
        #expect(try S.query(url, "SELECT Z_PK, Z_OPT, ZNAME FROM ZTAG ORDER BY Z_PK") == (1...20).map { ["\($0)", "2", "new \($0)"] })
        #expect(try S.query(url, "SELECT Z_PK, Z_OPT, ZNAME FROM ZBREWERY ORDER BY Z_PK") == (1...5).map { ["\($0)", "2", "new brewery \($0)"] })
    }

    @Test func anUpdatedRowChangedElsewhereFailsTheSaveNamingItAndWritesNothing() throws {
        let (store, model, url) = try makeStore()
        defer { try? store.close() }
        let tag = model.entitiesByName["Tag"]!
        try insertTags(1...Int64(10), store, tag)
        try changeElsewhere(6, store, tag)
        let before = try S.query(url, "SELECT Z_PK, Z_OPT, ZNAME FROM ZTAG ORDER BY Z_PK")

        var request = StoreSaveRequest()
        request.updated = (1...Int64(10)).reversed().map { S.row(store, tag, $0, version: 1, ["name": .string("new \($0)")]) }
        let error = try #require(throws: PersistenceError.self) { try store.save(request) }
        #expect(error.code == .managedObjectMerge)
        #expect(error.objectID == S.id(store, tag, 6))
        #expect(try S.query(url, "SELECT Z_PK, Z_OPT, ZNAME FROM ZTAG ORDER BY Z_PK") == before)

        // The same statement, used again, writes every column of the next save's rows.
        request.updated = (1...Int64(10)).filter { $0 != 6 }.map { S.row(store, tag, $0, version: 1, ["name": .string("new \($0)")]) }
        try store.save(request)
        #expect(try S.query(url, "SELECT Z_PK, Z_OPT, ZNAME FROM ZTAG ORDER BY Z_PK")
            == (1...10).map { $0 == 6 ? ["6", "2", "renamed 6"] : ["\($0)", "2", "new \($0)"] })
    }

    /// A context lists each updated object's changed properties only for a store that reads
    /// them: a SQLite store keeping history (its update changes name them).
    @Test func onlyAStoreKeepingHistoryReadsUpdatedKeys() throws {
        let model = try S.makeModel()
        let directory = try S.temporaryDirectory()
        let plain = try SQLiteStore(model: model, configurationName: nil, url: directory.appendingPathComponent("Plain.sqlite"),
                                    options: StoreOptions())
        defer { try? plain.close() }
        var options = StoreOptions()
        options.persistentHistoryTracking = true
        let tracked = try SQLiteStore(model: model, configurationName: nil, url: directory.appendingPathComponent("Tracked.sqlite"),
                                      options: options)
        defer { try? tracked.close() }
        let memory = try InMemoryStore(model: model, configurationName: nil, url: nil, options: StoreOptions())
        #expect(!plain.readsUpdatedKeys)
        #expect(tracked.readsUpdatedKeys)
        #expect(!memory.readsUpdatedKeys)
    }

    @Test func identifiersAreQuotedWithTheirQuotesDoubled() {
        #expect(SQLiteSchema.quote("ZNAME") == #""ZNAME""#)
        #expect(SQLiteSchema.quote(#"Z"ODD""#) == #""Z""ODD""""#)
        #expect(SQLiteSchema.quote("") == #""""#)
    }
}
