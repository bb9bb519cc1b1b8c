import Foundation
import PredicateDifferential
import Testing
@testable import PersistKit

/// Hand-written predicates with exact expected results, checked in BOTH the SQLite store and
/// the in-memory store, and the exact SQL of each construct.
@Suite("SQLCompilerSemantics")
struct SQLCompilerSemanticsTests {
    /// Fixed rows in the differential test's model:
    ///
    /// | Person | name | nick | age | score | born | active | team | tags |
    /// |---|---|---|---|---|---|---|---|---|
    /// | 1 | Straße | a | 5 | 1.5 | d0 | true | 1 | 1, 2 |
    /// | 2 | STRASSE | nil | nil | 2.0 | nil | false | 1 | 1 |
    /// | 3 | é (U+E9) | É | 3 | nil | d1 | nil | 2 | |
    /// | 4 | e + U+301 | e | 7 | 0.5 | d2 | true | nil | 2, 3 |
    /// | 5 | "" | x*y | nil | nil | nil | nil | nil | |
    /// | 6 | nil | file10 | 1 | -1.0 | d0 | false | 2 | 3 |
    ///
    /// Teams: 1 Alpha (rank 1), 2 beta (rank nil), 3 Gamma (rank 3, no members).
    /// Tags: 1 red, 2 Réd, 3 nil, 4 blue (nobody).
    final class Fixture {
        let model: ManagedObjectModel
        let sqlite: SQLiteStore
        let memory: InMemoryStore

        init() throws {
            model = try DifferentialStores.makeModel()
            sqlite = try SQLiteStore(model: model, configurationName: nil,
                                     url: try SQLiteTestSupport.temporaryDirectory().appendingPathComponent("s.sqlite"), options: StoreOptions())
            memory = try InMemoryStore(model: model, configurationName: nil, url: nil, options: StoreOptions())
            let d = [0.0, 1_000, 86_400].map { StoreValue.date(Date(timeIntervalSinceReferenceDate: $0)) }
            let people: [(StoreValue, StoreValue, StoreValue, StoreValue, StoreValue, StoreValue, Int64?, [Int64])] = [
                (.string("Straße"), .string("a"), .integer(5), .double(1.5), d[0], .bool(true), 1, [1, 2]),
                (.string("STRASSE"), .null, .null, .double(2), .null, .bool(false), 1, [1]),
                (.string("\u{E9}"), .string("\u{C9}"), .integer(3), .null, d[1], .null, 2, []),
                (.string("e\u{301}"), .string("e"), .integer(7), .double(0.5), d[2], .bool(true), nil, [2, 3]),
                (.string(""), .string("x*y"), .null, .null, .null, .null, nil, []),
                (.null, .string("file10"), .integer(1), .double(-1), d[0], .bool(false), 2, [3]),
            ]
            let teams: [(String, StoreValue)] = [("Alpha", .integer(1)), ("beta", .null), ("Gamma", .integer(3))]
            let tags: [StoreValue] = [.string("red"), .string("Réd"), .null, .string("blue")]
            for store in [sqlite as any PersistentStore, memory] {
                func id(_ entity: String, _ key: Int64) -> ManagedObjectID {
                    ManagedObjectID(entity: model.entitiesByName[entity]!, storeIdentifier: store.identifier, primaryKey: key)
                }
                func row(_ entity: String, _ key: Int64, _ values: [String: StoreValue]) -> RowSnapshot {
                    let e = model.entitiesByName[entity]!
                    var slots = [StoreValue](repeating: .null, count: e.slots.count)
                    for (name, value) in values { slots[e.slotIndex(of: name)!] = value }
                    return RowSnapshot(objectID: id(entity, key), version: 1, values: slots)
                }
                var request = StoreSaveRequest()
                for (index, team) in teams.enumerated() {
                    request.inserted.append(row("Team", Int64(index + 1), ["name": .string(team.0), "rank": team.1]))
                }
                for (index, name) in tags.enumerated() { request.inserted.append(row("Tag", Int64(index + 1), ["name": name])) }
                let person = model.entitiesByName["Person"]!, team = model.entitiesByName["Team"]!
                for (index, p) in people.enumerated() {
                    let key = Int64(index + 1)
                    request.inserted.append(row("Person", key, ["name": p.0, "nick": p.1, "age": p.2, "score": p.3, "born": p.4, "active": p.5,
                                                               "team": p.6.map { .object(id("Team", $0)) } ?? .null]))
                    if !p.7.isEmpty {
                        request.toManyChanges.append(.init(relationship: person.relationshipsByName["tags"]!, source: id("Person", key),
                                                           added: p.7.map { id("Tag", $0) }, removed: []))
                    }
                }
                for teamKey: Int64 in [1, 2] {
                    let members = people.indices.filter { people[$0].6 == teamKey }.map { id("Person", Int64($0 + 1)) }
                    request.toManyChanges.append(.init(relationship: team.relationshipsByName["members"]!, source: id("Team", teamKey), added: members, removed: []))
                }
                try store.save(request)
            }
        }

        func object(_ entity: String, _ key: Int64) -> StoreValue {
            .object(ManagedObjectID(entity: model.entitiesByName[entity]!, storeIdentifier: sqlite.identifier, primaryKey: key))
        }

        /// The primary keys `predicate` selects in each store (in sort order, or sorted).
        func keys(_ entity: String, _ predicate: FetchPredicate?, sort: [FetchSortDescriptor] = []) throws -> (sqlite: [Int64], memory: [Int64]) {
            let e = model.entitiesByName[entity]!
            let a = try sqlite.fetch(StoreFetchRequest(entity: e, predicate: predicate, sortDescriptors: sort)).map(\.objectID.primaryKey)
            let memoryPredicate = predicate.map { DifferentialStores.rebind($0, to: memory.identifier) }
            let b = try memory.fetch(StoreFetchRequest(entity: e, predicate: memoryPredicate, sortDescriptors: sort)).map(\.objectID.primaryKey)
            return sort.isEmpty ? (a.sorted(), b.sorted()) : (a, b)
        }

        /// The SQL of the fetch for `predicate`.
        func sql(_ entity: String, _ predicate: FetchPredicate, sort: [FetchSortDescriptor] = []) throws -> String {
            let seen = Locked<[String]>([])
            sqlite.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
            defer { sqlite.setStatementObserver(nil) }
            _ = try sqlite.fetch(StoreFetchRequest(entity: model.entitiesByName[entity]!, predicate: predicate, sortDescriptors: sort))
            let sql = seen.withLock { $0.last ?? "" }
            // Everything after the select list.
            return sql.range(of: " FROM ").map { String(sql[sql.index(after: $0.lowerBound)...]) } ?? sql
        }

        func close() {
            try? sqlite.close()
            try? memory.close()
        }
    }

    static func cmp(_ key: String, _ op: ComparisonPredicate.Operator, _ value: StoreValue,
                    _ options: ComparisonPredicate.Options = [], modifier: ComparisonPredicate.Modifier = .direct) -> FetchPredicate {
        .comparison(.keyPath(key), op, .constant(value), modifier: modifier, options: options)
    }

    @Test func handWrittenPredicatesGiveTheSameExactResultsInBothStores() throws {
        let f = try Fixture()
        defer { f.close() }
        let cd: ComparisonPredicate.Options = [.caseInsensitive, .diacriticInsensitive]
        let cases: [(String, FetchPredicate, [Int64], Comment)] = [
            ("Person", Self.cmp("name", .equalTo, .string("\u{E9}")), [3], "== is literal: e + U+301 is not U+E9"),
            ("Person", Self.cmp("name", .equalTo, .string("\u{C9}"), .caseInsensitive), [3, 4], "[c] folds and compares canonically"),
            ("Person", Self.cmp("name", .equalTo, .string("e"), cd), [3, 4], "[cd]"),
            ("Person", Self.cmp("name", .equalTo, .string("strasse"), .caseInsensitive), [1, 2], "[c]: ß folds to ss"),
            ("Person", !Self.cmp("age", .equalTo, .integer(5)), [2, 3, 4, 5, 6], "NOT keeps nil"),
            ("Person", Self.cmp("age", .notEqualTo, .null), [1, 3, 4, 6], "!= nil"),
            ("Person", Self.cmp("age", .lessThan, .integer(4)), [3, 6], "< is false for nil"),
            ("Person", !Self.cmp("age", .lessThan, .integer(4)), [1, 2, 4, 5], "NOT < keeps nil"),
            ("Person", Self.cmp("name", .beginsWith, .string("")), [], "an empty prefix is never found"),
            ("Person", Self.cmp("name", .contains, .string("")), [], "an empty substring is never found"),
            ("Person", Self.cmp("name", .like, .string("str*e"), .caseInsensitive), [1, 2], "LIKE[c]"),
            ("Person", Self.cmp("nick", .like, .string("x\\*y")), [5], "LIKE escapes"),
            ("Person", Self.cmp("nick", .matches, .string("[a-z]")), [1, 4], "MATCHES the whole string"),
            ("Person", Self.cmp("tags.name", .equalTo, .string("red"), cd, modifier: .any), [1, 2, 4], "ANY through many-to-many"),
            ("Person", Self.cmp("tags.name", .equalTo, .string("red"), cd, modifier: .all), [1, 2, 3, 5], "ALL holds for no tags"),
            ("Person", !Self.cmp("tags.name", .equalTo, .null, modifier: .any), [1, 2, 3, 5], "NONE"),
            ("Person", Self.cmp("tags.@count", .greaterThan, .integer(1)), [1, 4], "@count"),
            ("Person", Self.cmp("team.members.@count", .equalTo, .integer(2)), [1, 2, 3, 6], "to-one then to-many"),
            ("Team", Self.cmp("members.@avg.score", .greaterThan, .integer(1)), [1], "@avg, key-value coding's form"),
            ("Team", Self.cmp("members.@sum.age", .equalTo, .integer(0)), [3], "@sum of nothing is 0"),
            ("Team", Self.cmp("members.@max.age", .equalTo, .integer(3)), [2], "@max"),
            ("Team", Self.cmp("members.age.@min", .equalTo, .integer(1)), [2], "@min, operator last"),
            ("Team", .comparison(.member(.subquery(collection: .keyPath("members"), variable: "m",
                                                   predicate: .comparison(.keyPath("$m.age"), .greaterThan, .constant(.integer(2)))
                                                       && .comparison(.member(.variable("m"), "score"), .lessThan, .constant(.integer(2)))), "@count"),
                                 .greaterThan, .constant(.integer(0))), [1], "SUBQUERY"),
            ("Tag", .comparison(.constant(f.object("Person", 1)), .in, .keyPath("people")), [1, 2], "%@ IN to-many"),
            ("Tag", .comparison(.keyPath("people"), .contains, .constant(f.object("Person", 4))), [2, 3], "to-many CONTAINS"),
            ("Tag", Self.cmp("people.team.name", .beginsWith, .string("al"), .caseInsensitive, modifier: .any), [1, 2], "to-many then to-one"),
            ("Team", Self.cmp("members.tags.name", .equalTo, .string("red"), modifier: .any), [1], "to-many then to-many"),
            ("Person", Self.cmp("team.members.nick", .equalTo, .string("file10"), modifier: .any), [3, 6], "ANY through a to-one"),
            ("Person", Self.cmp("team", .equalTo, .null), [4, 5], "to-one == nil"),
            ("Person", Self.cmp("team", .notEqualTo, f.object("Team", 1)), [3, 4, 5, 6], "to-one != object keeps nil"),
            ("Person", Self.cmp("score", .between, .array([.double(0.5), .double(1.5)])), [1, 4], "BETWEEN"),
            ("Person", !Self.cmp("score", .between, .array([.double(0.5), .double(1.5)])), [2, 3, 5, 6], "NOT BETWEEN keeps nil"),
            ("Person", .comparison(.keyPath("age"), .between, .aggregate([.keyPath("score"), .constant(.integer(10))])), [1, 4, 6], "BETWEEN key paths"),
            ("Person", .comparison(.function("add:to:", [.keyPath("age"), .constant(.integer(1))]), .greaterThan, .constant(.integer(5))), [1, 4], "arithmetic"),
            ("Person", .comparison(.conditional(.equal("active", .bool(true)), .keyPath("age"), .keyPath("score")), .greaterThan, .constant(.integer(2))), [1, 4], "TERNARY"),
            ("Person", .comparison(.keyPath("born"), .lessThan, .function("now", [])), [1, 3, 4, 6], "now()"),
            ("Person", .comparison(.constant(.array([.integer(1), .integer(3)])), .equalTo, .keyPath("age"), modifier: .any), [3, 6], "ANY of a constant collection"),
            ("Person", Self.cmp("age", .greaterThan, .integer(2), modifier: .all), [1, 2, 3, 4, 5], "ALL of a single value: nil is no elements"),
            ("Person", Self.cmp("name", .in, .array([.string("\u{E9}"), .null])), [3, 6], "IN with nil"),
            ("Person", Self.cmp("nick", .in, .string("ax*yb")), [1, 5], "IN a string is a substring"),
            ("Person", .comparison(.function("uppercase:", [.keyPath("name")]), .equalTo, .constant(.string("STRASSE"))), [1, 2], "uppercase: maps ß"),
            ("Person", Self.cmp("tags", .equalTo, .null), [], "a to-many is never nil"),
            ("Person", Self.cmp("team.members", .equalTo, .null), [4, 5], "but is nil through a nil to-one"),
        ]
        for (entity, predicate, expected, comment) in cases {
            let (sqlite, memory) = try f.keys(entity, predicate)
            #expect(sqlite == expected, comment)
            #expect(memory == expected, comment)
        }
    }

    @Test func sortsAgreeIncludingNilAndTies() throws {
        let f = try Fixture()
        defer { f.close() }
        let cases: [([FetchSortDescriptor], [Int64])] = [
            ([FetchSortDescriptor(key: "name", comparison: .caseInsensitiveCompare)], [6, 5, 4, 3, 2, 1]),
            ([FetchSortDescriptor(key: "name", ascending: false, comparison: .caseInsensitiveCompare)], [1, 2, 3, 4, 5, 6]),
            ([FetchSortDescriptor(key: "nick", comparison: .localizedStandardCompare)], [2, 1, 4, 3, 6, 5]),
            ([FetchSortDescriptor(key: "team.name"), FetchSortDescriptor(key: "age", ascending: false)], [4, 5, 1, 2, 3, 6]),
            ([FetchSortDescriptor(key: "active")], [3, 5, 2, 6, 1, 4]),
        ]
        for (sort, expected) in cases {
            let (sqlite, memory) = try f.keys("Person", nil, sort: sort)
            #expect(sqlite == expected, "\(sort.map(\.key))")
            #expect(memory == expected, "\(sort.map(\.key))")
        }
    }

    @Test func exactSQL() throws {
        let f = try Fixture()
        defer { f.close() }
        let cd: ComparisonPredicate.Options = [.caseInsensitive, .diacriticInsensitive]
        let cases: [(String, FetchPredicate, String)] = [
            ("Person", Self.cmp("age", .equalTo, .integer(5)),
             #"FROM "ZPERSON" AS "t0" WHERE "t0"."ZAGE" = ?"#),
            ("Person", !Self.cmp("age", .equalTo, .integer(5)),
             #"FROM "ZPERSON" AS "t0" WHERE NOT ("t0"."ZAGE" IS ?)"#),
            ("Person", !Self.cmp("age", .lessThan, .integer(5)),
             #"FROM "ZPERSON" AS "t0" WHERE NOT (COALESCE("t0"."ZAGE" < ?, 0))"#),
            ("Person", Self.cmp("name", .equalTo, .string("É"), cd),
             #"FROM "ZPERSON" AS "t0" WHERE persist_fold("t0"."ZNAME", 3) = ?"#),
            ("Person", Self.cmp("name", .beginsWith, .string("st"), .caseInsensitive),
             #"FROM "ZPERSON" AS "t0" WHERE NSCoreDataStringSearch("t0"."ZNAME", ?, 9, 0)"#),
            ("Person", Self.cmp("name", .like, .string("st*"), .diacriticInsensitive),
             #"FROM "ZPERSON" AS "t0" WHERE NSCoreDataLike("t0"."ZNAME", ?, 2)"#),
            ("Person", Self.cmp("name", .matches, .string("s.*")),
             #"FROM "ZPERSON" AS "t0" WHERE NSCoreDataMatches("t0"."ZNAME", ?, 0)"#),
            ("Person", Self.cmp("tags.name", .equalTo, .string("red"), modifier: .any),
             #"FROM "ZPERSON" AS "t0" WHERE EXISTS (SELECT 1 FROM "Z_1TAGS" AS "t2" JOIN "ZTAG" AS "t1" ON "t1"."Z_PK" = "t2"."Z_2TAGS" WHERE "t2"."Z_1PEOPLE" = "t0"."Z_PK" AND "t1"."ZNAME" = ?)"#),
            ("Person", Self.cmp("tags.name", .equalTo, .string("red"), modifier: .all),
             #"FROM "ZPERSON" AS "t0" WHERE NOT EXISTS (SELECT 1 FROM "Z_1TAGS" AS "t2" JOIN "ZTAG" AS "t1" ON "t1"."Z_PK" = "t2"."Z_2TAGS" WHERE "t2"."Z_1PEOPLE" = "t0"."Z_PK" AND NOT ("t1"."ZNAME" IS ?))"#),
            ("Team", Self.cmp("members.@avg.score", .greaterThan, .integer(1)),
             #"FROM "ZTEAM" AS "t0" WHERE (SELECT AVG("t1"."ZSCORE") FROM "ZPERSON" AS "t1" WHERE "t1"."ZTEAM" = "t0"."Z_PK") > ?"#),
            ("Team", .comparison(.member(.subquery(collection: .keyPath("members"), variable: "m",
                                                   predicate: .comparison(.keyPath("$m.age"), .greaterThan, .constant(.integer(2)))), "@count"),
                                 .greaterThan, .constant(.integer(0))),
             #"FROM "ZTEAM" AS "t0" WHERE (SELECT COUNT(*) FROM "ZPERSON" AS "t1" WHERE "t1"."ZTEAM" = "t0"."Z_PK" AND "t1"."ZAGE" > ?) > ?"#),
            ("Person", Self.cmp("team.members.nick", .equalTo, .string("x"), modifier: .any),
             #"FROM "ZPERSON" AS "t0" LEFT JOIN "ZTEAM" AS "t1" ON "t1"."Z_PK" = "t0"."ZTEAM" WHERE EXISTS (SELECT 1 FROM "ZPERSON" AS "t2" WHERE "t2"."ZTEAM" = "t1"."Z_PK" AND "t2"."ZNICK" = ?)"#),
        ]
        for (entity, predicate, expected) in cases {
            let actual = try f.sql(entity, predicate)
            #expect(actual == expected)
        }
        let sorted = try f.sql("Person", .alwaysTrue, sort: [FetchSortDescriptor(key: "name", comparison: .localizedStandardCompare)])
        #expect(sorted == #"FROM "ZPERSON" AS "t0" ORDER BY "t0"."ZNAME" COLLATE persist_localized_standard, "t0"."Z_PK""#)
    }
}

/// The same agreement over a model with inheritance, ordered relationships and a to-one to a
/// sub-entity (`SQLiteTestSupport.makeModel()`): sub-selects over a table shared by sub-entities.
@Suite("SQLCompilerInheritance")
struct SQLCompilerInheritanceTests {
    @Test func toManyKeyPathsOverSubentityTablesAgree() throws {
        let model = try SQLiteTestSupport.makeModel()
        let sqlite = try SQLiteStore(model: model, configurationName: nil,
                                     url: try SQLiteTestSupport.temporaryDirectory().appendingPathComponent("i.sqlite"), options: StoreOptions())
        let memory = try InMemoryStore(model: model, configurationName: nil, url: nil, options: StoreOptions())
        defer { try? sqlite.close(); try? memory.close() }
        func e(_ name: String) -> EntityDescription { model.entitiesByName[name]! }
        func object(_ entity: String, _ key: Int64) -> StoreValue {
            .object(ManagedObjectID(entity: e(entity), storeIdentifier: sqlite.identifier, primaryKey: key))
        }
        for store in [sqlite as any PersistentStore, memory] {
            func id(_ entity: String, _ key: Int64) -> ManagedObjectID { ManagedObjectID(entity: e(entity), storeIdentifier: store.identifier, primaryKey: key) }
            func row(_ entity: String, _ key: Int64, _ values: [String: StoreValue]) -> RowSnapshot {
                var slots = [StoreValue](repeating: .null, count: e(entity).slots.count)
                for (name, value) in values { slots[e(entity).slotIndex(of: name)!] = value }
                return RowSnapshot(objectID: id(entity, key), version: 1, values: slots)
            }
            var request = StoreSaveRequest()
            request.inserted = [
                row("Shelf", 1, ["name": .string("Top")]), row("Shelf", 2, ["name": .string("Empty")]),
                row("Book", 1, ["title": .string("Dune"), "pages": .integer(600), "rating": .integer(5), "shelf": .object(id("Shelf", 1))]),
                row("Film", 2, ["title": .string("Alien"), "minutes": .integer(117), "rating": .integer(4), "shelf": .object(id("Shelf", 1))]),
                row("Book", 3, ["title": .string("Emma"), "pages": .integer(400), "rating": .null]),
                row("Review", 1, ["text": .string("great"), "book": .object(id("Book", 1)), "item": .object(id("Film", 2))]),
                row("Review", 2, ["text": .string("dull"), "book": .object(id("Book", 1)), "item": .object(id("Book", 3))]),
            ]
            request.toManyChanges = [
                .init(relationship: e("Shelf").relationshipsByName["items"]!, source: id("Shelf", 1), added: [id("Book", 1), id("Film", 2)], removed: []),
                .init(relationship: e("Book").relationshipsByName["reviews"]!, source: id("Book", 1), added: [id("Review", 1), id("Review", 2)], removed: []),
            ]
            try store.save(request)
        }
        let cases: [(String, FetchPredicate, [Int64])] = [
            ("Shelf", .comparison(.keyPath("items.title"), .beginsWith, .constant(.string("a")), modifier: .any, options: .caseInsensitive), [1]),
            ("Shelf", .comparison(.keyPath("items.@count"), .equalTo, .constant(.integer(0))), [2]),
            ("Shelf", .comparison(.keyPath("items.rating"), .greaterThan, .constant(.integer(4)), modifier: .all), [2]),
            ("Shelf", .comparison(.keyPath("items.@max.rating"), .equalTo, .constant(.integer(5))), [1]),
            ("Book", .comparison(.keyPath("reviews.text"), .equalTo, .constant(.string("dull")), modifier: .any), [1]),
            ("Book", .comparison(.keyPath("reviews.@count"), .equalTo, .constant(.integer(0))), [3]),
            ("Item", .comparison(.keyPath("shelf.name"), .equalTo, .constant(.string("Top"))), [1, 2]),
            ("Item", !.comparison(.keyPath("rating"), .greaterThanOrEqualTo, .constant(.integer(5))), [2, 3]),
            ("Review", .comparison(.keyPath("item.title"), .equalTo, .constant(.string("Emma"))), [2]),
            ("Review", .comparison(.keyPath("book.shelf.items.title"), .equalTo, .constant(.string("Alien")), modifier: .any), [1, 2]),
            // Object IDs name an entity: the right key with the wrong sub-entity is another object.
            ("Review", .equal("item", object("Film", 2)), [1]),
            ("Review", .equal("item", object("Book", 2)), []),
            ("Review", !.equal("item", object("Book", 2)), [1, 2]),
            ("Review", .comparison(.keyPath("item"), .in, .constant(.array([object("Book", 3), object("Film", 1)]))), [2]),
            ("Shelf", .comparison(.constant(object("Film", 1)), .in, .keyPath("items")), []),
            ("Shelf", .comparison(.constant(object("Film", 2)), .in, .keyPath("items")), [1]),
            ("Item", .comparison(.evaluatedObject, .equalTo, .constant(object("Book", 1))), [1]),
            ("Item", .comparison(.evaluatedObject, .equalTo, .constant(object("Film", 1))), []),
        ]
        for (entity, predicate, expected) in cases {
            let a = try sqlite.fetch(StoreFetchRequest(entity: e(entity), predicate: predicate)).map(\.objectID.primaryKey).sorted()
            let b = try memory.fetch(StoreFetchRequest(entity: e(entity), predicate: DifferentialStores.rebind(predicate, to: memory.identifier)))
                .map(\.objectID.primaryKey).sorted()
            #expect(a == expected, "\(entity) \(PredicateDescription.describe(predicate))")
            #expect(b == expected, "\(entity) \(PredicateDescription.describe(predicate))")
        }
    }
}
