import Foundation
import Testing
@testable import PersistKit

/// The real Core Data stores of the corpus (`../shared/corpus/stores`): version hashes equal to
/// Apple's, every table and sample row read back as the facts files give them, writes that keep
/// the layout Core Data expects, and Core Data's SQL functions available to triggers.
@Suite("Real Core Data stores")
struct RealStoreTests {
    typealias S = SQLiteTestSupport

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// The MagicalRecord Recipes model (legacy binary `elements` file), built in code with the
    /// optionality and minimum counts its archive holds (found by matching the store's hashes).
    static func recipesModel() throws -> ManagedObjectModel {
        func attribute(_ name: String, _ type: AttributeType, optional: Bool = true) -> AttributeDescription {
            AttributeDescription(name: name, type: type, isOptional: optional)
        }
        func toOne(_ name: String, _ destination: String, _ inverse: String, optional: Bool = true, minCount: Int = 0) -> RelationshipDescription {
            let relationship = RelationshipDescription(name: name, destination: destination, inverse: inverse, isOptional: optional)
            relationship.minCount = minCount
            return relationship
        }
        let ingredient = EntityDescription(name: "Ingredient", properties: [
            toOne("recipe", "Recipe", "ingredients", minCount: 1),
            attribute("name", .string, optional: false), attribute("displayOrder", .integer16, optional: false), attribute("amount", .string),
        ])
        let recipe = EntityDescription(name: "Recipe", properties: [
            attribute("prepTime", .string), toOne("type", "RecipeType", "recipes", minCount: 1),
            attribute("instructions", .string), attribute("thumbnailImage", .transformable),
            RelationshipDescription(name: "ingredients", destination: "Ingredient", toMany: true, inverse: "recipe"),
            attribute("overview", .string), attribute("name", .string), toOne("image", "Image", "recipe", minCount: 1),
        ])
        let recipeType = EntityDescription(name: "RecipeType", properties: [
            attribute("name", .string), RelationshipDescription(name: "recipes", destination: "Recipe", toMany: true, inverse: "type"),
        ])
        let image = EntityDescription(name: "Image", properties: [
            attribute("image", .transformable), toOne("recipe", "Recipe", "image", optional: false, minCount: 1),
        ])
        let model = ManagedObjectModel(entities: [ingredient, recipe, recipeType, image])
        try model.freeze()
        return model
    }

    /// Each corpus store: directory, store name, and its model.
    static func cases(_ corpus: URL) throws -> [(directory: URL, name: String, model: ManagedObjectModel)] {
        let tavant = corpus.appendingPathComponent("bandhavivinay__TavantTrade_iPad")
        let model = try ManagedObjectModel(contentsOf: tavant.appendingPathComponent("Model.xcdatamodeld"))
        try model.freeze()
        // Recipes' model exists only as Xcode 3 binary archives (`elements`): the legacy reader loads it.
        let magical = corpus.appendingPathComponent("magicalpanda__MagicalRecord")
        let recipes = try ManagedObjectModel(contentsOf: magical.appendingPathComponent("Recipes.xcdatamodeld"))
        try recipes.freeze()
        return [(tavant, "Model", model), (magical, "Recipes", recipes)]
    }

    static func facts(_ directory: URL, _ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent("\(name).facts.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A copy of a corpus store in a new temporary directory.
    static func copy(_ directory: URL, _ name: String) throws -> URL {
        let copy = try S.temporaryDirectory().appendingPathComponent("\(name).sqlite")
        try FileManager.default.copyItem(at: directory.appendingPathComponent("\(name).sqlite"), to: copy)
        return copy
    }

    @Test func sha512MatchesNISTVectors() {
        #expect(Self.hex(SHA512.hash(Data("abc".utf8))) == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(Self.hex(SHA512.hash(Data())) == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e")
        let long = Data("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8)
        #expect(Self.hex(SHA512.hash(long)) == "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909")
        #expect(Self.hex(SHA512.hash(Data(repeating: 0x61, count: 1_000_000)))
                == "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b")
        // Lengths around the block and padding boundaries (bytes 0, 1, 2, …; digests from
        // Python's hashlib): one padded block, two, and full blocks before the padding.
        let boundaries: [Int: String] = [
            111: "a1a111449b198d9b1f538bad7f3fc1022b3a5b1a5e90a0bc860de8512746cbc31599e6c834de3a3235327af0b51ff57bf7acf1974a73014d9c3953812edc7c8d",
            112: "c5fbd731d19d2ae1180f001be72c2c1aaba1d7b094b3748880e24593b8e117a750e11c1bd867cc2f96dace8c8b74abd2d5c4f236be444e77d30d1916174070b9",
            113: "61b2e77db697dfe5571fff3ed06bd60c41e1e7b7c08a80de01cb16526d9a9a52d690dfbe792278a60f6e2b4c57a97c729773f26e258d2393890c985d645f6715",
            127: "eab89674feaa34e27aebeeff3c0a4d70070bb872d5e9f186cf1dbbdee517b6e35724d629ff025a5b07185e911ada7e3c8acf830aa0e4f71777bd2d44f504f7f0",
            128: "1dffd5e3adb71d45d2245939665521ae001a317a03720a45732ba1900ca3b8351fc5c9b4ca513eba6f80bc7b1d1fdad4abd13491cb824d61b08d8c0e1561b3f7",
            129: "1d9da57fbbdab09afb3506ab2d223d06109d65c1c8ad197f50138f714bc4c3f2fe5787922639c680acad1c651f955990425954ce2cba0c5cc83f2667d878eb0f",
            239: "cb4c7fd522756d5781ad3a4f590a1d862906b960e7720136cb3fb36b563caa1ea5689134291fa79c80ccc2b4092b41df32ebdcb36dbe79db483440228c1622a8",
            240: "6c48466c9f6c07e4ab762c696b7eeb35cfe236fca73683e5fab873ac3489b4d2eb3d7afcce7e8165dbbf37aded3b5b0c889c0b7e0f1790a8330d8677429d91a5",
            256: "1e7b80bc8edc552c8feeb2780e111477e5bc70465fac1a77b29b35980c3f0ce4a036a6c9462036824bd56801e62af7e9feba5c22ed8a5af877bf7de117dcac6d",
            300: "f1dca2eb677b303265b0b9baff0e061202818f35c1470a69bbaa9bb66025e948d90e565e69642506c6213aef3cf9e929357a59da263deb34d1236dbdcda279b3",
        ]
        for (length, digest) in boundaries {
            #expect(Self.hex(SHA512.hash(Data((0..<length).map { UInt8(truncatingIfNeeded: $0) }))) == digest, "\(length) bytes")
            // The same bytes at a nonzero offset of a larger buffer (a slice of `Data`).
            let slice = Data((0..<length + 3).map { UInt8(truncatingIfNeeded: $0 &- 3) })[3...]
            #expect(Self.hex(SHA512.hash(slice)) == digest, "\(length) bytes, sliced")
        }
    }

    @Test func versionHashesEqualApplesInBothCorpusStores() throws {
        guard let corpus = S.corpusDirectory() else { print("RealStoreTests: corpus not found; skipping"); return }
        for (directory, name, model) in try Self.cases(corpus) {
            let facts = try Self.facts(directory, name)
            let metadata = try #require((facts["z_metadata"] as? [[String: Any]])?.first?["plist"] as? [String: Any])
            let apple = try #require(metadata["NSStoreModelVersionHashes"] as? [String: String])
            #expect(model.entityVersionHashesByName.mapValues(Self.hex) == apple, "\(name)")
        }
    }

    @Test func legacyRecipesModelLoadsLikeTheModelBuiltInCode() throws {
        guard let corpus = S.corpusDirectory() else { print("RealStoreTests: corpus not found; skipping"); return }
        let loaded = try Self.cases(corpus)[1].model
        let built = try Self.recipesModel()
        #expect(loaded.entities.map(\.name).sorted() == ["Image", "Ingredient", "Recipe", "RecipeType"])
        #expect(loaded.entityVersionHashesByName == built.entityVersionHashesByName)
        let recipe = try #require(loaded.entitiesByName["Recipe"])
        #expect(recipe.attributesByName["thumbnailImage"]?.attributeType == .transformable)
        #expect(recipe.relationshipsByName["ingredients"]?.isToMany == true)
        #expect(recipe.relationshipsByName["ingredients"]?.inverseName == "recipe")
        #expect(recipe.relationshipsByName["ingredients"]?.deleteRule == .cascade)
        let ingredient = try #require(loaded.entitiesByName["Ingredient"])
        #expect(ingredient.attributesByName["displayOrder"]?.defaultValue == .integer(0))
        #expect(ingredient.attributesByName["name"]?.isOptional == false)
    }

    @Test func versionHashesFollowTheDocumentedInputs() throws {
        let model = try SQLiteSchemaTests.feedbackModel()
        let category = try #require(model.entitiesByName["FeedbackCategory"])
        let before = category.versionHash
        // Not inputs: class name, user info, delete rule, indexing, defaults.
        let copy = try SQLiteSchemaTests.feedbackModel()
        let other = try #require(copy.entitiesByName["FeedbackCategory"])
        #expect(other.versionHash == before)
        let unfrozen = EntityDescription(name: "FeedbackCategory", properties: [
            AttributeDescription(name: "name", type: .string, defaultValue: .string("x")),
            RelationshipDescription(name: "subcategory", destination: "FeedbackSubCategory", toMany: true, inverse: "category", deleteRule: .cascade),
        ])
        unfrozen.managedObjectClassName = "Something"
        unfrozen.userInfo = ["a": "b"]
        #expect(unfrozen.versionHash == before)
        unfrozen.versionHashModifier = "2"
        #expect(unfrozen.versionHash != before)
        // The digest: base64 of 64 bytes.
        #expect(Data(base64Encoded: model.versionHashesDigest)?.count == 64)
    }

    @Test func everyCorpusStoreReadsBackAsItsFactsFileSays() throws {
        guard let corpus = S.corpusDirectory() else { print("RealStoreTests: corpus not found; skipping"); return }
        for (directory, name, model) in try Self.cases(corpus) {
            let facts = try Self.facts(directory, name)
            let url = try Self.copy(directory, name)
            // Opened as persistd opens stores: writable, migration on. The hashes match, so
            // nothing is migrated.
            let plan = try SQLiteStore.migrationPlan(forStoreAt: url, model: model)
            #expect(plan.outcome == .upToDate, "\(name)")
            let store = try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions())
            defer { try? store.close() }
            let metadata = try #require((facts["z_metadata"] as? [[String: Any]])?.first)
            #expect(store.identifier == metadata["Z_UUID"] as? String)
            let counts = try #require(facts["row_counts"] as? [String: Int])
            // Entity numbers and Z_MAX from Z_PRIMARYKEY.
            for row in try #require(facts["z_primarykey"] as? [[String: Any]]) {
                let entityName = try #require(row["Z_NAME"] as? String)
                let entity = try #require(model.entitiesByName[entityName])
                #expect(store.schema.layout(of: entity)?.number == row["Z_ENT"] as? Int)
            }
            // Every table's rows: counted through the store.
            for table in store.schema.tables {
                let total = try table.root.selfAndDescendants.reduce(0) { sum, entity in
                    sum + (entity.isAbstract ? 0 : try store.fetch(StoreFetchRequest(entity: entity, includesSubentities: false)).count)
                }
                #expect(total == counts[table.name], "\(table.name)")
            }
            // Every sample row, column by column.
            let samples = try #require(facts["sample_rows"] as? [String: [[String: Any]]])
            for (tableName, rows) in samples {
                guard let table = store.schema.tables.first(where: { $0.name == tableName }) else { continue }
                for sample in rows {
                    let key = Int64(try #require(sample["Z_PK"] as? Int))
                    let number = try #require(sample["Z_ENT"] as? Int)
                    let entity = try #require(store.schema.entitiesByNumber[number])
                    let found = try store.row(for: S.id(store, entity, key))
                    let row = try #require(found, "\(tableName) \(key)")
                    #expect(row.version == Int64(sample["Z_OPT"] as? Int ?? -1))
                    for (columnName, expected) in sample where !["Z_PK", "Z_ENT", "Z_OPT"].contains(columnName) {
                        let column = try #require(table.columns.first { $0.name == columnName }, "\(tableName).\(columnName)")
                        let value: StoreValue
                        switch column.kind {
                        case .attribute(let attribute): value = S.value(row, attribute.name)
                        case .foreignKey(let relationship): value = S.value(row, relationship.name)
                        default: continue
                        }
                        #expect(Self.matches(value, expected), "\(tableName) \(key) \(columnName): \(value) vs \(expected)")
                    }
                }
            }
            // Every to-many relationship reads back through its inverse.
            for entity in model.entities {
                for case let relationship as RelationshipDescription in entity.properties where relationship.isToMany {
                    let owners = try store.fetch(StoreFetchRequest(entity: entity))
                    let linked = try owners.reduce(0) { $0 + (try store.destinations(of: $1.objectID, relationship: relationship).count) }
                    let destinationEntity = try #require(relationship.destinationEntity)
                    let destinations = try store.fetch(StoreFetchRequest(entity: destinationEntity))
                    #expect(linked == destinations.filter { !S.value($0, relationship.inverseName ?? "").isNull }.count)
                }
            }
        }
    }

    /// Whether a value read by the store equals a facts-file value.
    static func matches(_ value: StoreValue, _ expected: Any) -> Bool {
        switch (value, expected) {
        case (.null, is NSNull): return true
        case (.string(let s), let e as String): return s == e
        case (.integer(let i), let e as Int): return i == Int64(e)
        case (.bool(let b), let e as Int): return (b ? 1 : 0) == e
        case (.object(let id), let e as Int): return id.primaryKey == Int64(e)
        case (.double(let d), let e as Double): return d == e
        case (.date(let d), let e as Double): return d.timeIntervalSinceReferenceDate == e
        case (.data(let data), let e as [String: Any]):
            if let bytes = e["$bytes_hex"] as? String { return hex(data) == bytes }
            return data.count == e["$bytes_len"] as? Int && hex(SHA256.hash(data)) == e["sha256"] as? String
        default: return false
        }
    }

    @Test func writingKeepsCoreDataBookkeepingAndUnknownTables() throws {
        guard let corpus = S.corpusDirectory() else { print("RealStoreTests: corpus not found; skipping"); return }
        let (directory, name, model) = try Self.cases(corpus)[0]
        let url = try Self.copy(directory, name)
        // A history table and a trigger of the kinds Core Data adds, using its SQL functions.
        do {
            let connection = try SQLiteConnection(path: url.path, flags: [.readWrite])
            connection.registerFunctions()
            try connection.execute("CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR)")
            try connection.execute("INSERT INTO ATRANSACTION VALUES (1, 700000000.5, 'app')")
            try connection.execute("CREATE TABLE ANSCKRECORDMETADATA (Z_PK INTEGER PRIMARY KEY, ZCKRECORDNAME VARCHAR)")
            try connection.execute("CREATE INDEX ZFEEDBACKCATEGORY_NAME_NOCASE ON ZFEEDBACKCATEGORY (ZNAME COLLATE NSCollateNoCase)")
            try connection.execute("""
                CREATE TRIGGER ZFEEDBACKCATEGORY_LOG AFTER INSERT ON ZFEEDBACKCATEGORY
                WHEN NSCoreDataStringSearch(NEW.ZNAME, 'new', 1, 0) BEGIN
                INSERT INTO ATRANSACTION (ZTIMESTAMP, ZAUTHOR) VALUES (NSCoreDataNow(), NSCoreDataToLower(NEW.ZNAME)); END
                """)
            try connection.close()
        }
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(type: .sqlite, at: url)
            let context = ContextTestModel.context(coordinator)
            try context.performAndWait {
                let category = ContextTestModel.insert("FeedbackCategory", into: context, ["name": "New Things"])
                let sub = ContextTestModel.insert("FeedbackSubCategory", into: context, ["name": "Sub"])
                sub.setValue(category, forKey: "category")
                let found = try context.fetch(ContextTestModel.request("FeedbackCategory", .equal("name", .string("Settlement"))))
                let first = try #require(found.first)
                first.setValue("Settlement (renamed)", forKey: "name")
                try context.save()
            }
        }
        #expect(try S.query(url, "SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [["1", "20"], ["2", "80"]])
        #expect(try S.query(url, "SELECT Z_PK, Z_ENT, Z_OPT, ZNAME FROM ZFEEDBACKCATEGORY WHERE Z_PK IN (1, 20) ORDER BY Z_PK")
                == [["1", "1", "2", "Settlement (renamed)"], ["20", "1", "1", "New Things"]])
        #expect(try S.query(url, "SELECT ZCATEGORY FROM ZFEEDBACKSUBCATEGORY WHERE Z_PK = 80") == [["20"]])
        let log = try S.query(url, "SELECT Z_PK, ZAUTHOR FROM ATRANSACTION ORDER BY Z_PK")
        #expect(log == [["1", "app"], ["2", "new things"]])
        #expect(try S.query(url, "SELECT count(*) FROM ANSCKRECORDMETADATA") == [["0"]])
        // The metadata still carries Apple's hashes, and reopening reads everything.
        let reopened = try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions(readOnly: true))
        defer { try? reopened.close() }
        let hashes = try #require(reopened.metadata()["NSStoreModelVersionHashes"] as? [String: any Sendable])
        #expect(hashes.compactMapValues { ($0 as? Data).map(Self.hex) } == model.entityVersionHashesByName.mapValues(Self.hex))
        let categoryEntity = try #require(model.entitiesByName["FeedbackCategory"])
        #expect(try reopened.count(StoreFetchRequest(entity: categoryEntity)) == 20)
    }
}
