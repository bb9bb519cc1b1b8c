import Foundation
import Testing
@testable import PersistKit

/// Migration with real material: the real Apple store of the corpus migrated (on a copy) to a
/// changed model, and every multi-version `.xcdatamodeld` bundle of the corpus migrated from
/// its first version to its last, step by step.
@Suite("Migration with corpus models and stores")
struct MigrationCorpusTests {
    typealias S = SQLiteTestSupport

    /// `<package root>/../shared/corpus`, or `nil`.
    static func corpusRoot() -> URL? { S.corpusDirectory()?.deletingLastPathComponent() }

    @Test func appleStoreMigratesToAChangedModel() throws {
        guard let corpus = S.corpusDirectory() else { print("MigrationCorpusTests: corpus not found; skipping"); return }
        let original = try RealStoreTests.cases(corpus)[0]
        let url = try RealStoreTests.copy(original.directory, original.name)
        let pairs = "SELECT s.Z_PK, s.ZNAME, c.Z_PK, c.ZNAME FROM ZFEEDBACKSUBCATEGORY s LEFT JOIN ZFEEDBACKCATEGORY c ON c.Z_PK = s.ZCATEGORY ORDER BY s.Z_PK"
        let before = try S.query(url, pairs)
        #expect(before.count == 79)

        // FeedbackSubCategory is renamed Topic, FeedbackCategory gets `code` and `topics`
        // (renamed from `subcategory`).
        let category = EntityDescription(name: "FeedbackCategory", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "code", type: .integer32),
            MigrationTests.relationship("topics", "Topic", toMany: true, inverse: "category", renamedFrom: "subcategory"),
        ])
        let topic = EntityDescription(name: "Topic", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "category", destination: "FeedbackCategory", inverse: "topics"),
        ])
        topic.renamingIdentifier = "FeedbackSubCategory"
        let changed = ManagedObjectModel(entities: [category, topic])
        try changed.freeze()
        // Core Data wrote the store, so it holds no model copy: the history names the source.
        let options = StoreOptions(modelVersionHistory: ModelVersionHistory([original.model]))
        let plan = try SQLiteStore.migrationPlan(forStoreAt: url, model: changed, options: options)
        #expect(plan.outcome == .migratable)
        #expect(plan.steps.first?.sourceName == "v1")

        let store = try SQLiteStore(model: changed, configurationName: nil, url: url, options: options)
        #expect(try store.count(StoreFetchRequest(entity: category)) == 19)
        #expect(try store.count(StoreFetchRequest(entity: topic)) == 79)
        try store.close()
        let after = try S.query(url, "SELECT s.Z_PK, s.ZNAME, c.Z_PK, c.ZNAME FROM ZTOPIC s LEFT JOIN ZFEEDBACKCATEGORY c ON c.Z_PK = s.ZCATEGORY ORDER BY s.Z_PK")
        #expect(after == before)
        #expect(try S.query(url, "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
                == [["1", "FeedbackCategory", "0", "19"], ["2", "Topic", "0", "79"]])
        #expect(try S.query(url, "SELECT count(*) FROM ZFEEDBACKCATEGORY WHERE ZCODE IS NOT NULL") == [["0"]])
        // The original is in the backup; the metadata now describes the changed model.
        #expect(try S.query(SQLiteStore.migrationBackupURL(for: url), "SELECT count(*) FROM ZFEEDBACKSUBCATEGORY") == [["79"]])
        let reopened = try SQLiteStore(model: changed, configurationName: nil, url: url, options: StoreOptions(readOnly: true))
        defer { try? reopened.close() }
        let metadata = reopened.metadata()
        #expect(metadata["NSStoreType"] as? String == "SQLite")
        #expect(metadata["NSStoreModelVersionHashesDigest"] as? String == changed.versionHashesDigest)
        #expect(reopened.identifier == "78FAC3F0-BB06-4113-9B0E-4D5E0B18F00D")
    }

    @Test func dryRunLeavesTheStoreUnchanged() throws {
        guard let corpus = S.corpusDirectory() else { print("MigrationCorpusTests: corpus not found; skipping"); return }
        let original = try RealStoreTests.cases(corpus)[1]
        let url = try RealStoreTests.copy(original.directory, original.name)
        let before = try Data(contentsOf: url)
        let changed = try RealStoreTests.recipesModel().copyForMigrationTest { model in
            model.entities.first { $0.name == "Recipe" }?.properties.append(AttributeDescription(name: "rating", type: .integer16))
        }
        let plan = try SQLiteStore.migrationPlan(forStoreAt: url, model: changed,
                                                 options: StoreOptions(modelVersionHistory: ModelVersionHistory([try RealStoreTests.recipesModel()])))
        #expect(plan.outcome == .migratable)
        #expect(plan.steps.flatMap(\.changes) == [MigrationChange(.attributeAdded, entity: "Recipe", property: "rating", "attribute added (existing objects get nil)")])
        #expect(try Data(contentsOf: url) == before)
    }

    /// A sample stored value for an attribute type, distinct for each `key` (so two rows never
    /// collide on a model's uniqueness constraints, which the store checks when it writes).
    static func sample(_ type: AttributeType, _ key: Int64) -> StoreValue {
        let byte = UInt8(truncatingIfNeeded: key)
        switch type {
        case .integer16, .integer32, .integer64: return .integer(7 + key)
        case .decimal: return .decimal(Decimal(7 + key))
        case .double, .float: return .double(1.5 + Double(key))
        case .string: return .string("x\(key)")
        case .boolean: return .bool(key % 2 == 0)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: 100 + Double(key)))
        case .binaryData, .transformable: return .data(Data([1, 2, byte]))
        case .uuid: return .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte)))
        case .uri: return .url(URL(string: "https://example.org/x\(key)")!) // a valid literal URL
        case .undefined, .objectID: return .null
        }
    }

    @Test func corpusVersionChainsMigrateFromFirstToLast() throws {
        guard let root = Self.corpusRoot() else { print("MigrationCorpusTests: corpus not found; skipping"); return }
        let models = root.appendingPathComponent("xcdatamodels")
        let bundles = (FileManager.default.enumerator(atPath: models.path)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".xcdatamodeld") }.sorted()
        var migrated: [String] = [], blocked: [String] = [], skipped: [String] = []
        for bundlePath in bundles {
            let bundle = models.appendingPathComponent(bundlePath)
            guard let history = try? ModelVersionHistory(bundle: bundle), history.versions.count > 1 else { continue }
            guard (try? history.versions.forEach { try $0.freeze() }) != nil else { skipped.append(bundlePath); continue }
            let first = history.versions[0], last = history.versions[history.versions.count - 1]
            let url = try S.temporaryDirectory().appendingPathComponent("store.sqlite")
            let store = try SQLiteStore(model: first, configurationName: nil, url: url, options: StoreOptions())
            var request = StoreSaveRequest()
            for entity in first.entities where !entity.isAbstract {
                for key in try store.allocatePrimaryKeys(for: entity, count: 2) {
                    let values = entity.slots.map { slot -> StoreValue in
                        guard let attribute = slot as? AttributeDescription, !attribute.isTransient else { return .null }
                        return Self.sample(attribute.attributeType, key)
                    }
                    request.inserted.append(RowSnapshot(objectID: S.id(store, entity, key), version: 1, values: values))
                }
            }
            try store.save(request)
            try store.close()
            let options = StoreOptions(modelVersionHistory: history)
            let plan = try SQLiteStore.migrationPlan(forStoreAt: url, model: last, options: options)
            let before = try Data(contentsOf: url)
            if plan.outcome == .blocked {
                #expect(throws: PersistenceError.self) { _ = try SQLiteStore(model: last, configurationName: nil, url: url, options: options) }
                #expect(try Data(contentsOf: url) == before, "\(bundlePath)")
                blocked.append("\(bundlePath): \(plan.blockingChanges.count) blocking, first \(plan.blockingChanges[0])")
                continue
            }
            let sameSchema = first.entityVersionHashesByName == last.entityVersionHashesByName
            #expect(plan.outcome == (sameSchema ? .upToDate : .migratable), "\(bundlePath)")
            let opened = try SQLiteStore(model: last, configurationName: nil, url: url, options: options)
            defer { try? opened.close() }
            // Entities present under the same name all along keep their two objects, and
            // attributes of unchanged type keep their values.
            let kept = history.versions.dropFirst().reduce(Set(first.entities.map(\.name))) { $0.intersection($1.entities.map(\.name)) }
            for name in kept.sorted() {
                guard let entity = last.entitiesByName[name], let old = first.entitiesByName[name], !entity.isAbstract, !old.isAbstract else { continue }
                let rows = try opened.fetch(StoreFetchRequest(entity: entity, includesSubentities: false))
                #expect(rows.count == 2, "\(bundlePath) \(name)")
                for row in rows {
                    for case let attribute as AttributeDescription in entity.slots where !attribute.isTransient {
                        guard let previous = old.attributesByName[attribute.name], previous.attributeType == attribute.attributeType, !previous.isTransient,
                              history.versions.allSatisfy({ $0.entitiesByName[name]?.attributesByName[attribute.name]?.attributeType == attribute.attributeType }) else { continue }
                        #expect(S.value(row, attribute.name) == Self.sample(attribute.attributeType, row.objectID.primaryKey), "\(bundlePath) \(name).\(attribute.name)")
                    }
                }
            }
            migrated.append("\(bundlePath) (\(plan.steps.count) steps)")
        }
        print("Corpus chains migrated:\n  " + migrated.joined(separator: "\n  "))
        print("Corpus chains blocked (store left unchanged):\n  " + blocked.joined(separator: "\n  "))
        if !skipped.isEmpty { print("Corpus chains skipped (a version does not load): \(skipped)") }
        #expect(migrated.count >= 5)
    }
}

extension ManagedObjectModel {
    /// A frozen copy of this model (through our JSON format) changed by `change`.
    func copyForMigrationTest(_ change: (ManagedObjectModel) -> Void) throws -> ManagedObjectModel {
        let copy = try ManagedObjectModel(json: try jsonRepresentation(), sourceURL: nil)
        change(copy)
        try copy.freeze()
        return copy
    }
}
