import Foundation
import Testing
@testable import PersistKit

/// Lightweight migration of SQLite stores: every kind of inferred change with every object
/// checked after, blocking changes that leave the store byte for byte unchanged, staged
/// migration through a version history, dry-run plans.
@Suite("Migration")
struct MigrationTests {
    typealias S = SQLiteTestSupport
    typealias C = ContextTestModel

    static func attribute(_ name: String, _ type: AttributeType, optional: Bool = true, default value: StoreValue? = nil,
                          renamedFrom old: String? = nil) -> AttributeDescription {
        let attribute = AttributeDescription(name: name, type: type, isOptional: optional, defaultValue: value)
        attribute.renamingIdentifier = old
        return attribute
    }

    static func relationship(_ name: String, _ destination: String, toMany: Bool = false, inverse: String?, ordered: Bool = false,
                             renamedFrom old: String? = nil) -> RelationshipDescription {
        let relationship = RelationshipDescription(name: name, destination: destination, toMany: toMany, inverse: inverse, isOrdered: ordered)
        relationship.renamingIdentifier = old
        return relationship
    }

    /// Version 1: people with pets (one-to-many), an address (one-to-one), clubs
    /// (many-to-many), tags (an entity removed later) and notes (renamed later).
    static func v1() -> ManagedObjectModel {
        ManagedObjectModel(entities: [
            EntityDescription(name: "Person", properties: [
                attribute("name", .string), attribute("age", .integer16), attribute("nickname", .string),
                attribute("score", .float), attribute("status", .string),
                relationship("pets", "Pet", toMany: true, inverse: "owner"),
                relationship("address", "Address", inverse: "resident"),
                relationship("clubs", "Club", toMany: true, inverse: "members"),
            ]),
            EntityDescription(name: "Pet", properties: [
                attribute("name", .string), attribute("species", .string),
                relationship("owner", "Person", inverse: "pets"),
            ]),
            EntityDescription(name: "Address", properties: [
                attribute("street", .string), relationship("resident", "Person", inverse: "address"),
            ]),
            EntityDescription(name: "Club", properties: [
                attribute("name", .string), relationship("members", "Person", toMany: true, inverse: "clubs"),
            ]),
            EntityDescription(name: "Tag", properties: [attribute("label", .string)]),
            EntityDescription(name: "Note", properties: [attribute("text", .string)]),
        ])
    }

    /// Version 2, every kind of inferable change from version 1:
    /// - Person: `name` renamed `fullName`; `age` Integer 16 -> Integer 64; `score` Float ->
    ///   Double; `nickname` removed; `email` added; `joined` added, required with a default;
    ///   `status` made required with a default; `pets` now ordered; `address` renamed
    ///   `addresses` and to-many (its inverse `resident` now to-many too: many-to-many).
    /// - Pet moves under a new abstract parent `Living`, which takes its `name`.
    /// - Tag removed; Note renamed Memo (`text` kept); Badge added.
    static func v2() -> ManagedObjectModel {
        let living = EntityDescription(name: "Living", properties: [attribute("name", .string)])
        living.isAbstract = true
        let pet = EntityDescription(name: "Pet", properties: [
            attribute("species", .string), relationship("owner", "Person", inverse: "pets"),
        ])
        pet.superentityName = "Living"
        let memo = EntityDescription(name: "Memo", properties: [attribute("text", .string)])
        memo.renamingIdentifier = "Note"
        return ManagedObjectModel(entities: [
            EntityDescription(name: "Person", properties: [
                attribute("fullName", .string, renamedFrom: "name"), attribute("age", .integer64),
                attribute("score", .double), attribute("status", .string, optional: false, default: .string("active")),
                attribute("email", .string),
                attribute("joined", .date, optional: false, default: .date(Date(timeIntervalSinceReferenceDate: 0))),
                relationship("pets", "Pet", toMany: true, inverse: "owner", ordered: true),
                relationship("addresses", "Address", toMany: true, inverse: "residents", renamedFrom: "address"),
                relationship("clubs", "Club", toMany: true, inverse: "members"),
            ]),
            living, pet,
            EntityDescription(name: "Address", properties: [
                attribute("street", .string),
                relationship("residents", "Person", toMany: true, inverse: "addresses", renamedFrom: "resident"),
            ]),
            EntityDescription(name: "Club", properties: [
                attribute("name", .string), relationship("members", "Person", toMany: true, inverse: "clubs"),
            ]),
            memo,
            EntityDescription(name: "Badge", properties: [attribute("title", .string)]),
        ])
    }

    /// Version 3, from version 2: Memo's `text` renamed `body`, Club gets `founded`
    /// (Integer 32, optional) and Badge is removed.
    static func v3() -> ManagedObjectModel {
        let model = v2()
        model.entities.removeAll { $0.name == "Badge" }
        if let memo = model.entities.first(where: { $0.name == "Memo" }) {
            memo.properties = [attribute("body", .string, renamedFrom: "text")]
        }
        if let club = model.entities.first(where: { $0.name == "Club" }) {
            club.properties.append(attribute("founded", .integer32))
        }
        return model
    }

    /// A v1 store with three people and their pets, addresses, clubs, tags and notes.
    static func makeV1Store(_ url: URL, model: ManagedObjectModel = v1()) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = C.context(coordinator)
        try context.performAndWait {
            let ann = C.insert("Person", into: context, ["name": "Ann", "age": Int16(31), "nickname": "A", "score": Float(1.5), "status": "gold"])
            let bob = C.insert("Person", into: context, ["name": "Bob", "age": Int16(42), "score": Float(2.25)])
            let cid = C.insert("Person", into: context, ["name": "Cid"])
            for (name, owner) in [("Rex", ann), ("Tom", ann), ("Kit", bob)] {
                C.insert("Pet", into: context, ["name": name, "species": name == "Tom" ? "cat" : "dog"]).setValue(owner, forKey: "owner")
            }
            C.insert("Address", into: context, ["street": "Elm 1"]).setValue(ann, forKey: "resident")
            C.insert("Address", into: context, ["street": "Oak 2"]).setValue(bob, forKey: "resident")
            let chess = C.insert("Club", into: context, ["name": "Chess"])
            let golf = C.insert("Club", into: context, ["name": "Golf"])
            chess.setValue(Set([ann, bob]), forKey: "members")
            golf.setValue(Set([bob, cid]), forKey: "members")
            _ = C.insert("Tag", into: context, ["label": "t1"])
            _ = C.insert("Note", into: context, ["text": "hello"])
            _ = C.insert("Note", into: context, ["text": "world"])
            try context.save()
        }
        for store in coordinator.persistentStores { try coordinator.remove(store) }
    }

    static func names(_ value: Any?, key: String = "name") -> [String] {
        let list: [ManagedObject] = (value as? Set<ManagedObject>).map(Array.init) ?? (value as? [ManagedObject]) ?? []
        return list.map { $0.value(forKey: key) as? String ?? "<nil>" }.sorted()
    }

    /// Checks every object of a store migrated to v2 (or v3) from ``makeV1Store(_:model:)``.
    static func checkMigrated(_ url: URL, model: ManagedObjectModel, options: StoreOptions = StoreOptions()) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: url, options: options)
        let context = C.context(coordinator)
        try context.performAndWait {
            let people = try context.fetch(C.request("Person", sort: [FetchSortDescriptor(key: "fullName")]))
            #expect(people.map { $0.value(forKey: "fullName") as? String } == ["Ann", "Bob", "Cid"])
            let (ann, bob, cid) = (people[0], people[1], people[2])
            #expect(ann.value(forKey: "age") as? Int64 == 31)
            #expect(bob.value(forKey: "age") as? Int64 == 42)
            #expect(cid.value(forKey: "age") == nil)
            #expect(ann.value(forKey: "score") as? Double == 1.5)
            #expect(bob.value(forKey: "score") as? Double == 2.25)
            #expect(ann.value(forKey: "status") as? String == "gold")
            #expect(bob.value(forKey: "status") as? String == "active")
            #expect(cid.value(forKey: "email") == nil)
            #expect(ann.value(forKey: "joined") as? Date == Date(timeIntervalSinceReferenceDate: 0))
            #expect(Self.names(ann.value(forKey: "pets")) == ["Rex", "Tom"])
            #expect(Self.names(bob.value(forKey: "pets")) == ["Kit"])
            #expect((ann.value(forKey: "pets") as? [ManagedObject])?.count == 2, "pets is ordered now")
            #expect(Self.names(ann.value(forKey: "addresses"), key: "street") == ["Elm 1"])
            #expect(Self.names(bob.value(forKey: "addresses"), key: "street") == ["Oak 2"])
            #expect(Self.names(cid.value(forKey: "addresses"), key: "street") == [])
            #expect(Self.names(ann.value(forKey: "clubs")) == ["Chess"])
            #expect(Self.names(bob.value(forKey: "clubs")) == ["Chess", "Golf"])
            #expect(Self.names(cid.value(forKey: "clubs")) == ["Golf"])
            let pets = try context.fetch(C.request("Living", sort: [FetchSortDescriptor(key: "name")]))
            #expect(pets.map { $0.entity.name } == ["Pet", "Pet", "Pet"])
            #expect(pets.map { $0.value(forKey: "species") as? String } == ["dog", "dog", "cat"])
            #expect(pets.map { ($0.value(forKey: "owner") as? ManagedObject)?.value(forKey: "fullName") as? String } == ["Bob", "Ann", "Ann"])
            let addresses = try context.fetch(C.request("Address"))
            #expect(addresses.flatMap { Self.names($0.value(forKey: "residents"), key: "fullName") }.sorted() == ["Ann", "Bob"])
            let textKey = model.entitiesByName["Memo"]?.attributesByName["body"] != nil ? "body" : "text"
            #expect(Self.names(try context.fetch(C.request("Memo")), key: textKey) == ["hello", "world"])
            // New objects get keys above the old ones, and saving works.
            let dan = C.insert("Person", into: context, ["fullName": "Dan", "status": "new", "joined": Date()])
            dan.setValue(Set([addresses[0]]), forKey: "addresses")
            try context.save()
        }
    }

    /// Opening a store already of the model's version reads it through one connection: as many
    /// reads with automatic migration on as with it off (a migration check that opened its own
    /// connection first read the header, the schema and the metadata twice).
    @Test func openingAnUpToDateStoreReadsItOnce() throws {
        let directory = try ContextTestModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("people.sqlite")
        try Self.makeV1Store(url)
        let scope = try FaultScope(directory: directory)
        func readsToOpen(migratingAutomatically: Bool) throws -> Int {
            var options = StoreOptions()
            options.sqliteVFSName = FaultScope.vfsName
            options.migratePersistentStoresAutomatically = migratingAutomatically
            // No checkpointer: its connection would read on a thread of its own.
            options.sqlitePragmas = ["wal_autocheckpoint": "0"]
            // Arming resets the counts; this fault never comes.
            scope.arm(.read, at: Int.max, error: FaultScope.Code.busy)
            scope.disarm()
            let store = try SQLiteStore(model: Self.v1(), configurationName: nil, url: url, options: options)
            let reads = scope.count(.read)
            try store.close()
            return reads
        }
        let withoutMigration = try readsToOpen(migratingAutomatically: false)
        let withMigration = try readsToOpen(migratingAutomatically: true)
        #expect(withoutMigration > 0)
        #expect(withMigration == withoutMigration)
        // A store of another version still migrates on open.
        let v2 = Self.v2()
        _ = try SQLiteStore(model: v2, configurationName: nil, url: url, options: StoreOptions())
        #expect(try SQLiteStore.migrationPlan(forStoreAt: url, model: v2).steps.isEmpty)
    }

    @Test func everyKindOfInferredChangeKeepsEveryObject() throws {
        let directory = try S.temporaryDirectory()
        let url = directory.appendingPathComponent("people.sqlite")
        try Self.makeV1Store(url)
        let v2 = Self.v2()
        try v2.freeze()
        let plan = try SQLiteStore.migrationPlan(forStoreAt: url, model: v2)
        #expect(plan.outcome == .migratable)
        #expect(plan.steps.map(\.sourceName) == ["store"])
        let kinds = Set(plan.steps.flatMap(\.changes).map(\.kind))
        #expect(kinds == [.entityAdded, .entityRemoved, .entityRenamed, .entityHierarchyChanged, .attributeAdded, .attributeRemoved,
                          .attributeRenamed, .attributeTypeChanged, .attributeMadeRequired, .relationshipRenamed,
                          .relationshipCardinalityChanged])
        print(plan.description)
        try Self.checkMigrated(url, model: v2)
        // The backup is the v1 store, and the metadata now names v2.
        let backup = SQLiteStore.migrationBackupURL(for: url)
        #expect(try S.query(backup, "SELECT count(*) FROM ZTAG") == [["1"]])
        #expect(try S.query(url, "SELECT name FROM sqlite_master WHERE name = 'ZTAG'") == [])
        #expect(try S.query(url, "SELECT Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT")
                == [["Address", "0"], ["Badge", "0"], ["Club", "0"], ["Living", "0"], ["Pet", "4"], ["Memo", "0"], ["Person", "0"]])
        let store = try SQLiteStore(model: v2, configurationName: nil, url: url, options: StoreOptions(readOnly: true))
        defer { try? store.close() }
        #expect(store.metadata()["NSStoreModelVersionHashesDigest"] as? String == v2.versionHashesDigest)
        #expect(try SQLiteStore.migrationPlan(forStoreAt: url, model: v2).outcome == .upToDate)
    }

    @Test func stagedMigrationThroughTheVersionHistory() throws {
        let directory = try S.temporaryDirectory()
        let url = directory.appendingPathComponent("people.sqlite")
        let (v1, v2, v3) = (Self.v1(), Self.v2(), Self.v3())
        try Self.makeV1Store(url, model: v1)
        // Drop the model copy the store keeps, as if written by Core Data: the history is then
        // the only way to find the source model.
        let connection = try SQLiteConnection(path: url.path, flags: [.readWrite])
        let data = try #require(try connection.prepare("SELECT Z_PLIST FROM Z_METADATA").collectData().first)
        var plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        plist.removeValue(forKey: SQLiteStore.modelCacheMetadataKey)
        try connection.execute("UPDATE Z_METADATA SET Z_PLIST = ?", [.data(try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0))])
        try connection.close()

        try v3.freeze()
        #expect(try SQLiteStore.migrationPlan(forStoreAt: url, model: v3).outcome == .sourceModelUnknown)
        let options = StoreOptions(modelVersionHistory: ModelVersionHistory([v1, v2, v3]))
        let plan = try SQLiteStore.migrationPlan(forStoreAt: url, model: v3, options: options)
        #expect(plan.outcome == .migratable)
        #expect(plan.steps.map { "\($0.sourceName)->\($0.destinationName)" } == ["v1->v2", "v2->current"])
        #expect(plan.steps[1].changes.contains(MigrationChange(.attributeRenamed, entity: "Memo", property: "body", "renamed from text")))
        try Self.checkMigrated(url, model: v3, options: options)
        #expect(try S.query(url, "SELECT name FROM sqlite_master WHERE name = 'ZBADGE'") == [])
        #expect(try S.query(url, "SELECT ZBODY FROM ZMEMO ORDER BY ZBODY") == [["hello"], ["world"]])
    }

    @Test func blockingChangesFailBeforeTouchingTheStore() throws {
        let directory = try S.temporaryDirectory()
        let url = directory.appendingPathComponent("people.sqlite")
        try Self.makeV1Store(url)
        let before = try Data(contentsOf: url)
        // Not inferable: a new required attribute without default, String -> Integer 32, a
        // new required relationship, Pet and Club merged under one parent.
        let bad = Self.v1()
        let person = try #require(bad.entities.first { $0.name == "Person" })
        person.properties.append(Self.attribute("ssn", .string, optional: false))
        if let nickname = person.properties.first(where: { $0.name == "nickname" }) as? AttributeDescription { nickname.attributeType = .integer32 }
        let club = try #require(bad.entities.first { $0.name == "Club" })
        let boss = Self.relationship("boss", "Person", inverse: nil)
        boss.isOptional = false
        club.properties.append(boss)
        let thing = EntityDescription(name: "Thing", properties: [])
        bad.entities.append(thing)
        club.superentityName = "Thing"
        try #require(bad.entities.first { $0.name == "Pet" }).superentityName = "Thing"
        try bad.freeze()

        let plan = try SQLiteStore.migrationPlan(forStoreAt: url, model: bad)
        #expect(plan.outcome == .blocked)
        #expect(plan.blockingChanges.map { "\($0.entity).\($0.property ?? "")" }.sorted()
                == ["Club.boss", "Person.nickname", "Person.ssn", "Thing."])
        #expect(plan.description.contains("a mapping model would be needed"))
        #expect { _ = try SQLiteStore(model: bad, configurationName: nil, url: url, options: StoreOptions()) } throws: { error in
            guard let error = error as? PersistenceError else { return false }
            return error.code == .migrationMissingMappingModel && error.detailedErrors.count == 4
                && error.message.contains("mapping model") && error.detailedErrors.contains { $0.key == "ssn" && $0.message.hasPrefix("Person:") }
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(!FileManager.default.fileExists(atPath: SQLiteStore.migrationBackupURL(for: url).path))
    }

    @Test func aFailureWhileMigratingRollsBackToTheSameBytes() throws {
        let directory = try S.temporaryDirectory()
        let url = directory.appendingPathComponent("people.sqlite")
        try Self.makeV1Store(url)
        // A table in the way of the migration's temporary table makes a step fail midway.
        let connection = try SQLiteConnection(path: url.path, flags: [.readWrite])
        try connection.execute("CREATE TABLE \"ZPERSON__PKMIGRATE\" (x)")
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try connection.close()
        let before = try Data(contentsOf: url)
        let v2 = Self.v2()
        #expect { _ = try SQLiteStore(model: v2, configurationName: nil, url: url, options: StoreOptions()) } throws: {
            ($0 as? PersistenceError)?.code == .migration
        }
        #expect(try Data(contentsOf: url) == before)
        #expect(try S.query(url, "SELECT count(*) FROM ZTAG") == [["1"]])
    }

    @Test func explicitMigrationReportsProgress() throws {
        let directory = try S.temporaryDirectory()
        let url = directory.appendingPathComponent("people.sqlite")
        let (v1, v2, v3) = (Self.v1(), Self.v2(), Self.v3())
        try Self.makeV1Store(url, model: v1)
        let lines = Locked<[String]>([])
        let plan = try SQLiteStore.migrateStore(at: url, to: v3, options: StoreOptions(modelVersionHistory: ModelVersionHistory([v1, v2, v3]))) { progress in
            lines.withLock { $0.append(progress.description) }
        }
        #expect(plan.steps.count == 2)
        #expect(lines.withLock { $0 } == [
            "migrating people.sqlite: writing the backup people.sqlite.backup",
            "migrating people.sqlite: step 1 of 2 (v1 -> v2)",
            "migrating people.sqlite: step 2 of 2 (v2 -> current)",
            "migrated people.sqlite in 2 steps",
        ])
        try Self.checkMigrated(url, model: v3)
    }

    @Test func withoutAutomaticMigrationTheSchemaDecides() throws {
        let directory = try S.temporaryDirectory()
        let url = directory.appendingPathComponent("people.sqlite")
        try Self.makeV1Store(url)
        let before = try Data(contentsOf: url)
        #expect { _ = try SQLiteStore(model: Self.v2(), configurationName: nil, url: url,
                                      options: StoreOptions(migratePersistentStoresAutomatically: false)) } throws: {
            ($0 as? PersistenceError)?.code == .persistentStoreIncompatibleSchema
        }
        #expect(try Data(contentsOf: url) == before)
    }
}

extension SQLiteStatement {
    /// The first column of every row, as data.
    func collectData() throws -> [Data] {
        var result: [Data] = []
        while try step() { result.append(data(0)) }
        return result
    }
}

/// Migration of a store with every layout feature: inheritance in one table, to-one to a tree
/// (`Z<n><REL>` entity column), ordered one-to-many (`Z_FOK_`), many-to-many join table,
/// ordered to-many to an abstract entity.
@Suite("Migration of every layout feature")
struct MigrationLayoutTests {
    typealias S = SQLiteTestSupport

    @Test func relationshipsOfEveryShapeSurviveAMigration() throws {
        let directory = try S.temporaryDirectory()
        let url = directory.appendingPathComponent("beer.sqlite")
        let model = try S.makeModel()
        let store = try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions())
        func entity(_ name: String) -> EntityDescription { model.entitiesByName[name]! } // names of makeModel()
        let (brewery, beer, tag) = (entity("Brewery"), entity("Beer"), entity("Tag"))
        let (shelf, book, film, review) = (entity("Shelf"), entity("Book"), entity("Film"), entity("Review"))
        let b = S.id(store, brewery, 1)
        let beers = (1...3).map { S.id(store, beer, Int64($0)) }
        let tags = (1...2).map { S.id(store, tag, Int64($0)) }
        var request = StoreSaveRequest()
        request.inserted = [S.row(store, brewery, 1, ["name": .string("Westmalle")])]
            + beers.map { S.row(store, beer, $0.primaryKey, ["name": .string("b\($0.primaryKey)"), "brewery": .object(b), "abv": .double(9.5)]) }
            + tags.map { S.row(store, tag, $0.primaryKey, ["name": .string("t\($0.primaryKey)")]) }
        request.toManyChanges.append(.init(relationship: brewery.relationshipsByName["beers"]!, source: b, added: beers, removed: [],
                                           order: [beers[2], beers[0], beers[1]]))
        request.toManyChanges.append(.init(relationship: beer.relationshipsByName["tags"]!, source: beers[0], added: tags, removed: []))
        request.toManyChanges.append(.init(relationship: beer.relationshipsByName["tags"]!, source: beers[2], added: [tags[1]], removed: []))
        let s = S.id(store, shelf, 1)
        let dune = S.id(store, book, 1), alien = S.id(store, film, 2)
        request.inserted += [
            S.row(store, shelf, 1, ["name": .string("top")]),
            S.row(store, book, 1, ["title": .string("Dune"), "shelf": .object(s), "pages": .integer(412)]),
            S.row(store, film, 2, ["title": .string("Alien"), "shelf": .object(s), "minutes": .integer(117)]),
            S.row(store, review, 1, ["text": .string("great"), "item": .object(alien), "book": .object(dune)]),
        ]
        request.toManyChanges.append(.init(relationship: shelf.relationshipsByName["items"]!, source: s, added: [dune, alien], removed: [], order: [alien, dune]))
        try store.save(request)
        try store.close()

        // Version 2: Brewery gets `country`, Film's `minutes` is renamed `length`.
        let v2 = try S.makeModel().copyForMigrationTest { next in
            next.entitiesByName["Brewery"]?.properties.append(AttributeDescription(name: "country", type: .string, defaultValue: .string("BE")))
            if let minutes = next.entitiesByName["Film"]?.properties.first(where: { $0.name == "minutes" }) {
                minutes.name = "length"
                minutes.renamingIdentifier = "minutes"
            }
        }
        let migrated = try SQLiteStore(model: v2, configurationName: nil, url: url, options: StoreOptions())
        defer { try? migrated.close() }
        func id(_ name: String, _ key: Int64) -> ManagedObjectID { S.id(migrated, v2.entitiesByName[name]!, key) } // names of v2
        func keys(_ source: ManagedObjectID, _ relationship: String) throws -> [String] {
            try migrated.destinations(of: source, relationship: source.entity.relationshipsByName[relationship]!)
                .map { "\($0.entity.name)\($0.primaryKey)" }
        }
        #expect(try keys(id("Brewery", 1), "beers") == ["Beer3", "Beer1", "Beer2"])
        #expect(try keys(id("Beer", 1), "tags") == ["Tag1", "Tag2"])
        #expect(try keys(id("Tag", 2), "beers").sorted() == ["Beer1", "Beer3"])
        #expect(try keys(id("Shelf", 1), "items") == ["Film2", "Book1"])
        #expect(try keys(id("Book", 1), "reviews") == ["Review1"])
        let reviewRow = try #require(try migrated.row(for: id("Review", 1)))
        #expect(S.value(reviewRow, "item") == .object(id("Film", 2)))
        #expect(S.value(reviewRow, "book") == .object(id("Book", 1)))
        let filmRow = try #require(try migrated.row(for: id("Film", 2)))
        #expect(S.value(filmRow, "length") == .integer(117))
        #expect(S.value(filmRow, "title") == .string("Alien"))
        let breweryRow = try #require(try migrated.row(for: id("Brewery", 1)))
        #expect(S.value(breweryRow, "country") == .string("BE"))
        let beerRow = try #require(try migrated.row(for: id("Beer", 2)))
        #expect(S.value(beerRow, "abv") == .double(9.5))
        #expect(S.value(beerRow, "brewery") == .object(id("Brewery", 1)))
        // The entity column and the fetch index exist under the new layout.
        #expect(try S.query(url, "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'ZBEER_byAbv'") == [["ZBEER_byAbv"]])
    }
}
