import Foundation
import PersistKit

/// A ``SQLiteStore`` and an ``InMemoryStore`` holding the same random rows, for the differential
/// predicate test and fuzz target: the compiled SQL and the in-memory evaluator must agree exactly.
///
/// Model: `Person` (name, nick, age, score, born, active) —team→ `Team` (one-to-many `members`),
/// `Person` <<—tags—>> `Tag` (many-to-many `people`), `Person` <<—friends—>> `Person`. Values
/// include `nil` everywhere, the empty string, case, diacritic and canonical-equivalence variants
/// (`é` / `e` + U+0301), `ß`.
public final class DifferentialStores: Sendable {
    /// The model both stores use.
    public let model: ManagedObjectModel
    /// The store whose fetches run as SQL.
    public let sqlite: SQLiteStore
    /// The store whose fetches run through the in-memory evaluator.
    public let memory: InMemoryStore
    /// How many objects of each entity the stores hold.
    public let counts = ["Person": 36, "Team": 6, "Tag": 8]
    /// The directory of the SQLite file, removed by ``close()``.
    private let directory: URL

    /// The strings attribute values and constants are drawn from.
    public static let strings: [String] = [
        "", "a", "A", "abc", "ABC", "Ábc", "straße", "STRASSE", "Strasse", "\u{E9}", "e\u{301}", "\u{C9}", "e", "E",
        "file10", "file9", "File9", "x*y", "x?y", "a\\b", "naïve", "NAIVE", "日本", "Zürich", "zurich", "ZÜRICH", "b", "ab",
    ]
    /// `LIKE` patterns.
    public static let patterns: [String] = ["*", "a*", "*b*", "?", "??", "x\\*y", "x\\?y", "*e", "str*", "*ß*", "É*", "", "file?0", "a\\\\b"]
    /// `MATCHES` regular expressions.
    public static let regexes: [String] = [".*", "a.*", "[a-z]+", ".*ß.*", "\\p{L}+", "(?i)abc", "x\\*y", "", "e\\u0301", "file[0-9]+", "[[:alpha:]]*"]
    /// Dates.
    public static let dates: [Date] = [0, 1_000, 86_400, 1_000_000, -5_000].map { Date(timeIntervalSinceReferenceDate: $0) }

    /// The model: `Person`, `Team`, `Tag`.
    public static func makeModel() throws -> ManagedObjectModel {
        let person = EntityDescription(name: "Person", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "nick", type: .string), AttributeDescription(name: "age", type: .integer64),
            AttributeDescription(name: "score", type: .double), AttributeDescription(name: "born", type: .date), AttributeDescription(name: "active", type: .boolean),
            RelationshipDescription(name: "team", destination: "Team", inverse: "members"),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "people"),
            RelationshipDescription(name: "friends", destination: "Person", toMany: true, inverse: "friendOf"),
            RelationshipDescription(name: "friendOf", destination: "Person", toMany: true, inverse: "friends"),
        ])
        let team = EntityDescription(name: "Team", properties: [
            AttributeDescription(name: "name", type: .string), AttributeDescription(name: "rank", type: .integer32),
            RelationshipDescription(name: "members", destination: "Person", toMany: true, inverse: "team"),
        ])
        let tag = EntityDescription(name: "Tag", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "people", destination: "Person", toMany: true, inverse: "tags"),
        ])
        let model = ManagedObjectModel(entities: [person, team, tag])
        try model.freeze()
        return model
    }

    /// Creates both stores, in a new temporary directory, and fills them with the rows `seed` gives.
    public init(seed: UInt64) throws {
        model = try Self.makeModel()
        directory = try ScratchDirectory.make(prefix: "persistd-differential")
        let url = directory.appendingPathComponent("d.sqlite")
        sqlite = try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions())
        memory = try InMemoryStore(model: model, configurationName: nil, url: nil, options: StoreOptions())
        var random = SplitMix64(state: seed)
        // The same rows for both stores, by primary key.
        var values: [String: [Int64: [String: StoreValue]]] = [:]
        var teamOf: [Int64: Int64] = [:]
        var tagsOf: [Int64: [Int64]] = [:]
        var friendsOf: [Int64: [Int64]] = [:]
        func maybe(_ value: StoreValue) -> StoreValue { random.chance(0.15) ? .null : value }
        for key in 1...Int64(counts["Team"]!) {
            values["Team", default: [:]][key] = ["name": maybe(.string(random.pick(Self.strings))), "rank": maybe(.integer(Int64(random.int(0...4))))]
        }
        for key in 1...Int64(counts["Tag"]!) {
            values["Tag", default: [:]][key] = ["name": maybe(.string(random.pick(Self.strings)))]
        }
        for key in 1...Int64(counts["Person"]!) {
            values["Person", default: [:]][key] = [
                "name": maybe(.string(random.pick(Self.strings))), "nick": maybe(.string(random.pick(Self.strings))),
                "age": maybe(.integer(Int64(random.int(-3...6)))), "score": maybe(.double(Double(random.int(-8...12)) * 0.25)),
                "born": maybe(.date(random.pick(Self.dates))), "active": maybe(.bool(random.chance(0.5))),
            ]
            if random.chance(0.75) { teamOf[key] = Int64(random.int(1...counts["Team"]! - 1)) } // the last team stays empty
            tagsOf[key] = (0..<random.int(0...3)).map { _ in Int64(random.int(1...counts["Tag"]! - 1)) } // so does the last tag
            friendsOf[key] = (0..<random.int(0...2)).map { _ in Int64(random.int(1...counts["Person"]!)) }
        }
        for store in [sqlite as any PersistentStore, memory] {
            let id = { (entity: String, key: Int64) in ManagedObjectID(entity: self.model.entitiesByName[entity]!, storeIdentifier: store.identifier, primaryKey: key) }
            var request = StoreSaveRequest()
            for (entityName, rows) in values.sorted(by: { $0.key < $1.key }) {
                let entity = model.entitiesByName[entityName]!
                for (key, named) in rows.sorted(by: { $0.key < $1.key }) {
                    var slots = [StoreValue](repeating: .null, count: entity.slots.count)
                    for (name, value) in named { slots[entity.slotIndex(of: name)!] = value }
                    if entityName == "Person", let team = teamOf[key] { slots[entity.slotIndex(of: "team")!] = .object(id("Team", team)) }
                    request.inserted.append(RowSnapshot(objectID: id(entityName, key), version: 1, values: slots))
                }
            }
            let person = model.entitiesByName["Person"]!, team = model.entitiesByName["Team"]!
            for teamKey in 1...Int64(counts["Team"]!) {
                let members = teamOf.filter { $0.value == teamKey }.keys.sorted().map { id("Person", $0) }
                if !members.isEmpty {
                    request.toManyChanges.append(.init(relationship: team.relationshipsByName["members"]!, source: id("Team", teamKey), added: members, removed: []))
                }
            }
            for (key, tags) in tagsOf.sorted(by: { $0.key < $1.key }) where !tags.isEmpty {
                var unique: [Int64] = []
                for tag in tags where !unique.contains(tag) { unique.append(tag) }
                request.toManyChanges.append(.init(relationship: person.relationshipsByName["tags"]!, source: id("Person", key), added: unique.map { id("Tag", $0) }, removed: []))
            }
            // Both sides, as a context sends them: the SQLite store writes a many-to-many
            // from its canonical side only (here `friendOf`), the in-memory store from either.
            var friendOf: [Int64: [Int64]] = [:]
            for (key, friends) in friendsOf.sorted(by: { $0.key < $1.key }) where !friends.isEmpty {
                var unique: [Int64] = []
                for friend in friends where !unique.contains(friend) { unique.append(friend) }
                for friend in unique { friendOf[friend, default: []].append(key) }
                request.toManyChanges.append(.init(relationship: person.relationshipsByName["friends"]!, source: id("Person", key), added: unique.map { id("Person", $0) }, removed: []))
            }
            for (key, sources) in friendOf.sorted(by: { $0.key < $1.key }) {
                request.toManyChanges.append(.init(relationship: person.relationshipsByName["friendOf"]!, source: id("Person", key), added: sources.map { id("Person", $0) }, removed: []))
            }
            try store.save(request)
        }
    }

    /// Closes both stores and removes the SQLite file.
    public func close() {
        try? sqlite.close()
        try? memory.close()
        try? FileManager.default.removeItem(at: directory)
    }
}
