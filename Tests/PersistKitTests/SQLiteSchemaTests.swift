import Foundation
import Testing
@testable import PersistKit

@Suite("SQLiteSchema")
struct SQLiteSchemaTests {
    typealias S = SQLiteTestSupport

    /// The TavantTrade corpus model (`Model.xcdatamodel`), built in code.
    static func feedbackModel() throws -> ManagedObjectModel {
        let category = EntityDescription(name: "FeedbackCategory", properties: [
            S.attribute("name", .string),
            RelationshipDescription(name: "subcategory", destination: "FeedbackSubCategory", toMany: true, inverse: "category"),
        ])
        let subcategory = EntityDescription(name: "FeedbackSubCategory", properties: [
            S.attribute("name", .string),
            RelationshipDescription(name: "category", destination: "FeedbackCategory", inverse: "subcategory"),
        ])
        let model = ManagedObjectModel(entities: [category, subcategory])
        try model.freeze()
        return model
    }

    /// The MagicalRecord Recipes corpus model (a legacy binary `elements` file), built in code
    /// from the property names and types in that archive, in the model's order.
    static func recipesModel() throws -> ManagedObjectModel {
        let ingredient = EntityDescription(name: "Ingredient", properties: [
            RelationshipDescription(name: "recipe", destination: "Recipe", inverse: "ingredients"),
            S.attribute("name", .string), S.attribute("displayOrder", .integer16), S.attribute("amount", .string),
        ])
        let recipe = EntityDescription(name: "Recipe", properties: [
            S.attribute("prepTime", .string),
            RelationshipDescription(name: "type", destination: "RecipeType", inverse: "recipes"),
            S.attribute("instructions", .string), S.attribute("thumbnailImage", .transformable),
            RelationshipDescription(name: "ingredients", destination: "Ingredient", toMany: true, inverse: "recipe"),
            S.attribute("overview", .string), S.attribute("name", .string),
            RelationshipDescription(name: "image", destination: "Image", inverse: "recipe"),
        ])
        let recipeType = EntityDescription(name: "RecipeType", properties: [
            S.attribute("name", .string),
            RelationshipDescription(name: "recipes", destination: "Recipe", toMany: true, inverse: "type"),
        ])
        let image = EntityDescription(name: "Image", properties: [
            S.attribute("image", .transformable),
            RelationshipDescription(name: "recipe", destination: "Recipe", inverse: "image"),
        ])
        let model = ManagedObjectModel(entities: [ingredient, recipe, recipeType, image])
        try model.freeze()
        return model
    }

    @Test func tablesAndIndexesMatchTheTavantCorpusStoreExactly() throws {
        let model = try Self.feedbackModel()
        let schema = SQLiteSchema(entities: model.entities)
        #expect(schema.creationSQL() == [
            "CREATE TABLE ZFEEDBACKCATEGORY ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
            "CREATE TABLE ZFEEDBACKSUBCATEGORY ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCATEGORY INTEGER, ZNAME VARCHAR )",
            "CREATE INDEX ZFEEDBACKSUBCATEGORY_ZCATEGORY_INDEX ON ZFEEDBACKSUBCATEGORY (ZCATEGORY)",
            "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
            "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
        ])
        #expect(schema.layout(of: model.entitiesByName["FeedbackCategory"]!)?.number == 1)
        #expect(schema.layout(of: model.entitiesByName["FeedbackSubCategory"]!)?.number == 2)
    }

    @Test func recipesTablesMatchTheCorpusStore() throws {
        let model = try Self.recipesModel()
        let schema = SQLiteSchema(entities: model.entities)
        let sql = Dictionary(uniqueKeysWithValues: schema.tables.map { ($0.name, schema.createTableSQL($0)) })
        // Entity numbers: alphabetical, not model order (Z_PRIMARYKEY of Recipes.sqlite).
        #expect(["Image", "Ingredient", "Recipe", "RecipeType"].map { schema.entities[$0]?.number } == [1, 2, 3, 4])
        #expect(sql["ZIMAGE"] == "CREATE TABLE ZIMAGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZRECIPE INTEGER, ZIMAGE BLOB )")
        #expect(sql["ZINGREDIENT"] == "CREATE TABLE ZINGREDIENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZDISPLAYORDER INTEGER, ZRECIPE INTEGER, ZAMOUNT VARCHAR, ZNAME VARCHAR )")
        #expect(sql["ZRECIPETYPE"] == "CREATE TABLE ZRECIPETYPE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )")
        // Core Data 241 wrote ZRECIPE's VARCHAR columns as PREPTIME, NAME, INSTRUCTIONS, OVERVIEW
        // (not alphabetical); the groups and the column set match.
        #expect(sql["ZRECIPE"] == "CREATE TABLE ZRECIPE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZIMAGE INTEGER, ZTYPE INTEGER, ZINSTRUCTIONS VARCHAR, ZNAME VARCHAR, ZOVERVIEW VARCHAR, ZPREPTIME VARCHAR, ZTHUMBNAILIMAGE BLOB )")
        #expect(schema.tables.flatMap(\.indexes).sorted() == [
            "CREATE INDEX ZIMAGE_ZRECIPE_INDEX ON ZIMAGE (ZRECIPE)",
            "CREATE INDEX ZINGREDIENT_ZRECIPE_INDEX ON ZINGREDIENT (ZRECIPE)",
            "CREATE INDEX ZRECIPE_ZIMAGE_INDEX ON ZRECIPE (ZIMAGE)",
            "CREATE INDEX ZRECIPE_ZTYPE_INDEX ON ZRECIPE (ZTYPE)",
        ])
    }

    @Test func joinTablesOrderColumnsAndEntityColumns() throws {
        let model = try S.makeModel()
        let schema = SQLiteSchema(entities: model.entities)
        // Beer = 1, Tag = 8: Z_1TAGS (Z_1BEERS, Z_8TAGS), as Photos' Z_26ASSETS (Z_26ALBUMS, Z_34ASSETS).
        #expect(schema.creationSQL().filter { $0.contains("Z_1TAGS") } == [
            "CREATE TABLE Z_1TAGS ( Z_1BEERS INTEGER, Z_8TAGS INTEGER, PRIMARY KEY (Z_1BEERS, Z_8TAGS) )",
            "CREATE INDEX Z_1TAGS_Z_8TAGS_INDEX ON Z_1TAGS (Z_8TAGS, Z_1BEERS)",
        ])
        let sql = Dictionary(uniqueKeysWithValues: schema.tables.map { ($0.name, schema.createTableSQL($0)) })
        #expect(sql["ZBEER"] == "CREATE TABLE ZBEER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZBIG INTEGER, ZCOUNT32 INTEGER, ZIBU INTEGER, ZISORGANIC INTEGER, ZBREWERY INTEGER, Z_FOK_BREWERY INTEGER, ZABV FLOAT, ZBREWED TIMESTAMP, ZPRICE DECIMAL, ZRATING FLOAT, ZNAME VARCHAR, ZWEBSITE VARCHAR, ZID BLOB, ZLABEL BLOB, ZNOTES BLOB )")
        // Item (3) with Book (4) and Film (5): sibling `rating` columns are suffixed; Review's
        // to-one to Item carries the destination's entity column.
        #expect(sql["ZITEM"] == "CREATE TABLE ZITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSHELF INTEGER, Z_FOK_SHELF INTEGER, ZPAGES INTEGER, ZRATING INTEGER, ZMINUTES INTEGER, ZRATING1 INTEGER, ZTITLE VARCHAR )")
        #expect(sql["ZREVIEW"] == "CREATE TABLE ZREVIEW ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZBOOK INTEGER, ZITEM INTEGER, Z3ITEM INTEGER, ZTEXT VARCHAR )")
        #expect(schema.tables.flatMap(\.indexes).contains("CREATE INDEX ZBEER_byAbv ON ZBEER (ZABV DESC)"))
        #expect(schema.tables.flatMap(\.indexes).contains("CREATE INDEX ZBEER_ZNAME_INDEX ON ZBEER (ZNAME)"))
    }

    @Test func sha256MatchesNISTVectors() {
        func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA256.hash(Data())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.hash(Data("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(hex(SHA256.hash(Data(repeating: 0x61, count: 1_000_000))) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // Lengths around the block and padding boundaries (bytes 0, 1, 2, …; digests from
        // Python's hashlib): one padded block, two, and full blocks before the padding.
        let boundaries: [Int: String] = [
            55: "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59",
            56: "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562",
            57: "2fe741af801cc238602ac0ec6a7b0c3a8a87c7fc7d7f02a3fe03d1c12eac4d8f",
            63: "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488",
            64: "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108",
            65: "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781",
            119: "da18797ed7c3a777f0847f429724a2d8cd5138e6ed2895c3fa1a6d39d18f7ec6",
            120: "f52b23db1fbb6ded89ef42a23ce0c8922c45f25c50b568a93bf1c075420bbb7c",
            128: "471fb943aa23c511f6f72f8d1652d9c880cfa392ad80503120547703e56a2be5",
            200: "1901da1c9f699b48f6b2636e65cbf73abf99d0441ef67f5c540a42f7051dec6f",
        ]
        for (length, digest) in boundaries {
            #expect(hex(SHA256.hash(Data((0..<length).map { UInt8($0) }))) == digest, "\(length) bytes")
            // The same bytes at a nonzero offset of a larger buffer (a slice of `Data`).
            let slice = Data((0..<length + 3).map { UInt8(truncatingIfNeeded: $0 &- 3) })[3...]
            #expect(hex(SHA256.hash(slice)) == digest, "\(length) bytes, sliced")
        }
    }

    @Test func versionHashesAre32BytesAndTrackChanges() throws {
        let a = try Self.feedbackModel().entitiesByName["FeedbackCategory"]!
        let b = try Self.feedbackModel().entitiesByName["FeedbackCategory"]!
        #expect(a.versionHash.count == 32 && a.versionHash == b.versionHash)
        let changed = EntityDescription(name: "FeedbackCategory", properties: [S.attribute("name", .integer32)])
        #expect(changed.versionHash != a.versionHash)
        let model = try Self.feedbackModel()
        #expect(model.entityVersionHashesByName.keys.sorted() == ["FeedbackCategory", "FeedbackSubCategory"])
    }

    @Test func opensTheRealCoreDataCorpusStoresReadOnly() throws {
        guard let corpus = S.corpusDirectory() else {
            print("SQLiteSchemaTests: corpus not found next to the package; skipping the real-store test")
            return
        }
        let cases: [(String, String, ManagedObjectModel)] = [
            ("bandhavivinay__TavantTrade_iPad", "Model", try Self.feedbackModel()),
            ("magicalpanda__MagicalRecord", "Recipes", try Self.recipesModel()),
        ]
        for (directory, name, model) in cases {
            let source = corpus.appendingPathComponent(directory)
            let copy = try S.temporaryDirectory().appendingPathComponent("\(name).sqlite")
            try FileManager.default.copyItem(at: source.appendingPathComponent("\(name).sqlite"), to: copy)
            let facts = try JSONSerialization.jsonObject(with: Data(contentsOf: source.appendingPathComponent("\(name).facts.json"))) as! [String: Any]
            let store = try SQLiteStore(model: model, configurationName: nil, url: copy, options: StoreOptions(readOnly: true))
            defer { try? store.close() }
            let metadata = (facts["z_metadata"] as! [[String: Any]])[0]
            #expect(store.identifier == metadata["Z_UUID"] as? String)
            #expect(store.metadata()["NSStoreModelVersionHashesVersion"] as? Int == 3)
            let counts = facts["row_counts"] as! [String: Int]
            var total = 0
            for entity in model.entities {
                let count = try store.count(StoreFetchRequest(entity: entity))
                #expect(count == counts["Z" + entity.name.uppercased()], "\(entity.name)")
                let rows = try store.fetch(StoreFetchRequest(entity: entity))
                #expect(rows.count == count)
                total += count
                // Every to-many read back through the inverse foreign key adds up.
                for case let relationship as RelationshipDescription in entity.properties where relationship.isToMany {
                    let destinations = try rows.flatMap { try store.destinations(of: $0.objectID, relationship: relationship) }
                    let all = try store.fetch(StoreFetchRequest(entity: relationship.destinationEntity!))
                    let pointing = all.filter { !S.value($0, relationship.inverseName!).isNull }
                    #expect(destinations.count == pointing.count, "\(entity.name).\(relationship.name)")
                }
            }
            #expect(total > 0)
        }
        // A sample row, as the facts file gives it.
        let copy = try S.temporaryDirectory().appendingPathComponent("Model.sqlite")
        try FileManager.default.copyItem(at: corpus.appendingPathComponent("bandhavivinay__TavantTrade_iPad/Model.sqlite"), to: copy)
        let model = try Self.feedbackModel()
        let store = try SQLiteStore(model: model, configurationName: nil, url: copy, options: StoreOptions(readOnly: true))
        defer { try? store.close() }
        let sub = model.entitiesByName["FeedbackSubCategory"]!
        let first = try #require(try store.row(for: S.id(store, sub, 1)))
        #expect(S.value(first, "name") == .string("Discrepancy in limits"))
        #expect(S.value(first, "category") == .object(S.id(store, model.entitiesByName["FeedbackCategory"]!, 15)))
    }
}
