import Foundation
@testable import PersistKit
import PredicateDifferential

/// Helpers shared by the SQLite store tests: temporary files, models built in code, rows by name.
enum SQLiteTestSupport {
    /// A new empty temporary directory.
    static func temporaryDirectory() throws -> URL {
        try ScratchDirectory.make(prefix: "persistd-sqlite")
    }

    /// `<package root>/../shared/corpus`, or `nil` when it is absent.
    static func corpusDirectory(file: String = #filePath) -> URL? {
        let root = URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let corpus = root.deletingLastPathComponent().appendingPathComponent("shared/corpus/stores")
        return FileManager.default.fileExists(atPath: corpus.path) ? corpus : nil
    }

    static func attribute(_ name: String, _ type: AttributeType, transient: Bool = false, indexed: Bool = false) -> AttributeDescription {
        let attribute = AttributeDescription(name: name, type: type)
        attribute.isTransient = transient
        attribute.isIndexed = indexed
        return attribute
    }

    /// A model with every attribute type, inheritance, and every kind of relationship:
    ///
    /// - `Brewery` (name, city) —beers→> `Beer` (ordered one-to-many, inverse `brewery`)
    /// - `Beer` (every attribute type, transient `memo`) <<—tags—>> `Tag` (many-to-many)
    /// - abstract `Item` (title) with `Book` (pages, rating) and `Film` (minutes, rating),
    ///   on a `Shelf` (ordered `items`, inverse `shelf`); `Review` —item→ `Item` (to-one to a
    ///   tree with sub-entities), `Review` —book→ `Book` (to a sub-entity, inverse `reviews`).
    static func makeModel() throws -> ManagedObjectModel {
        let brewery = EntityDescription(name: "Brewery", properties: [
            attribute("name", .string), attribute("city", .string),
            RelationshipDescription(name: "beers", destination: "Beer", toMany: true, inverse: "brewery", isOrdered: true),
        ])
        let beer = EntityDescription(name: "Beer", properties: [
            attribute("name", .string, indexed: true), attribute("abv", .double), attribute("ibu", .integer16),
            attribute("count32", .integer32), attribute("big", .integer64), attribute("rating", .float),
            attribute("price", .decimal), attribute("brewed", .date), attribute("isOrganic", .boolean),
            attribute("id", .uuid), attribute("website", .uri), attribute("label", .binaryData),
            attribute("notes", .transformable), attribute("memo", .string, transient: true),
            RelationshipDescription(name: "brewery", destination: "Brewery", inverse: "beers"),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "beers"),
        ])
        beer.indexes = [FetchIndexDescription(name: "byAbv", elements: [.init(propertyName: "abv", isAscending: false)])]
        let tag = EntityDescription(name: "Tag", properties: [
            attribute("name", .string),
            RelationshipDescription(name: "beers", destination: "Beer", toMany: true, inverse: "tags"),
        ])
        let item = EntityDescription(name: "Item", properties: [
            attribute("title", .string),
            RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "items"),
        ])
        item.isAbstract = true
        let book = EntityDescription(name: "Book", properties: [
            attribute("pages", .integer32), attribute("rating", .integer16),
            RelationshipDescription(name: "reviews", destination: "Review", toMany: true, inverse: "book"),
        ])
        book.superentityName = "Item"
        let film = EntityDescription(name: "Film", properties: [attribute("minutes", .integer32), attribute("rating", .integer16)])
        film.superentityName = "Item"
        let shelf = EntityDescription(name: "Shelf", properties: [
            attribute("name", .string),
            RelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: "shelf", isOrdered: true),
        ])
        let review = EntityDescription(name: "Review", properties: [
            attribute("text", .string),
            RelationshipDescription(name: "item", destination: "Item"),
            RelationshipDescription(name: "book", destination: "Book", inverse: "reviews"),
        ])
        let model = ManagedObjectModel(entities: [brewery, beer, tag, item, book, film, shelf, review])
        try model.freeze()
        return model
    }

    /// A row of `entity` with the named values; other slots `.null`.
    static func row(_ store: SQLiteStore, _ entity: EntityDescription, _ key: Int64, version: Int64 = 1,
                    _ values: [String: StoreValue]) -> RowSnapshot {
        var slots = [StoreValue](repeating: .null, count: entity.slots.count)
        for (name, value) in values {
            guard let index = entity.slotIndex(of: name) else { fatalError("no slot \(name) in \(entity.name)") }
            slots[index] = value
        }
        return RowSnapshot(objectID: id(store, entity, key), version: version, values: slots)
    }

    static func id(_ store: SQLiteStore, _ entity: EntityDescription, _ key: Int64) -> ManagedObjectID {
        ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: key)
    }

    /// A value of a row by slot name.
    static func value(_ row: RowSnapshot, _ name: String) -> StoreValue {
        row.values[row.objectID.entity.slotIndex(of: name)!]
    }

    /// The rows of `sql` in the file at `url`, each as text, read with a separate connection.
    static func query(_ url: URL, _ sql: String) throws -> [[String]] {
        let connection = try SQLiteConnection(path: url.path, flags: [.readOnly])
        defer { try? connection.close() }
        let statement = try connection.prepare(sql)
        var rows: [[String]] = []
        while try statement.step() {
            rows.append((0..<Int32(statement.columnCount)).map { statement.isNull($0) ? "NULL" : statement.string($0) })
        }
        return rows
    }
}
