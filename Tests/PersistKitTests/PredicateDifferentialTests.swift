import Foundation
import Testing
@testable import PersistKit

/// The same random predicates and sorts run against a ``SQLiteStore`` and an ``InMemoryStore``
/// holding the same rows: the compiled SQL and the in-memory evaluator must agree exactly.
///
/// Model: `Person` (name, nick, age, score, born, active) —team→ `Team` (one-to-many `members`),
/// `Person` <<—tags—>> `Tag` (many-to-many `people`). Values include `nil` everywhere, the empty
/// string, case, diacritic and canonical-equivalence variants (`é` / `e` + U+0301), `ß`.
@Suite("PredicateDifferential")
struct PredicateDifferentialTests {
    typealias Random = SplitMix64

    static let strings: [String] = [
        "", "a", "A", "abc", "ABC", "Ábc", "straße", "STRASSE", "Strasse", "\u{E9}", "e\u{301}", "\u{C9}", "e", "E",
        "file10", "file9", "File9", "x*y", "x?y", "a\\b", "naïve", "NAIVE", "日本", "Zürich", "zurich", "ZÜRICH", "b", "ab",
    ]
    static let patterns: [String] = ["*", "a*", "*b*", "?", "??", "x\\*y", "x\\?y", "*e", "str*", "*ß*", "É*", "", "file?0", "a\\\\b"]
    static let regexes: [String] = [".*", "a.*", "[a-z]+", ".*ß.*", "\\p{L}+", "(?i)abc", "x\\*y", "", "e\\u0301", "file[0-9]+", "[[:alpha:]]*"]
    static let dates: [Date] = [0, 1_000, 86_400, 1_000_000, -5_000].map { Date(timeIntervalSinceReferenceDate: $0) }

    static func makeModel() throws -> ManagedObjectModel {
        typealias S = SQLiteTestSupport
        let person = EntityDescription(name: "Person", properties: [
            S.attribute("name", .string), S.attribute("nick", .string), S.attribute("age", .integer64),
            S.attribute("score", .double), S.attribute("born", .date), S.attribute("active", .boolean),
            RelationshipDescription(name: "team", destination: "Team", inverse: "members"),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true, inverse: "people"),
            RelationshipDescription(name: "friends", destination: "Person", toMany: true, inverse: "friendOf"),
            RelationshipDescription(name: "friendOf", destination: "Person", toMany: true, inverse: "friends"),
        ])
        let team = EntityDescription(name: "Team", properties: [
            S.attribute("name", .string), S.attribute("rank", .integer32),
            RelationshipDescription(name: "members", destination: "Person", toMany: true, inverse: "team"),
        ])
        let tag = EntityDescription(name: "Tag", properties: [
            S.attribute("name", .string),
            RelationshipDescription(name: "people", destination: "Person", toMany: true, inverse: "tags"),
        ])
        let model = ManagedObjectModel(entities: [person, team, tag])
        try model.freeze()
        return model
    }

    /// The two stores, filled with the same random rows.
    final class Stores {
        let model: ManagedObjectModel
        let sqlite: SQLiteStore
        let memory: InMemoryStore
        let counts = ["Person": 36, "Team": 6, "Tag": 8]

        init(seed: UInt64) throws {
            model = try PredicateDifferentialTests.makeModel()
            let url = try SQLiteTestSupport.temporaryDirectory().appendingPathComponent("d.sqlite")
            sqlite = try SQLiteStore(model: model, configurationName: nil, url: url, options: StoreOptions())
            memory = try InMemoryStore(model: model, configurationName: nil, url: nil, options: StoreOptions())
            var random = Random(state: seed)
            // The same rows for both stores, by primary key.
            var values: [String: [Int64: [String: StoreValue]]] = [:]
            var teamOf: [Int64: Int64] = [:]
            var tagsOf: [Int64: [Int64]] = [:]
            var friendsOf: [Int64: [Int64]] = [:]
            func maybe(_ value: StoreValue) -> StoreValue { random.chance(0.15) ? .null : value }
            for key in 1...Int64(counts["Team"]!) {
                values["Team", default: [:]][key] = ["name": maybe(.string(random.pick(PredicateDifferentialTests.strings))), "rank": maybe(.integer(Int64(random.int(0...4))))]
            }
            for key in 1...Int64(counts["Tag"]!) {
                values["Tag", default: [:]][key] = ["name": maybe(.string(random.pick(PredicateDifferentialTests.strings)))]
            }
            for key in 1...Int64(counts["Person"]!) {
                values["Person", default: [:]][key] = [
                    "name": maybe(.string(random.pick(PredicateDifferentialTests.strings))), "nick": maybe(.string(random.pick(PredicateDifferentialTests.strings))),
                    "age": maybe(.integer(Int64(random.int(-3...6)))), "score": maybe(.double(Double(random.int(-8...12)) * 0.25)),
                    "born": maybe(.date(random.pick(PredicateDifferentialTests.dates))), "active": maybe(.bool(random.chance(0.5))),
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

        func close() {
            try? sqlite.close()
            try? memory.close()
        }
    }

    // MARK: - Predicate generation

    /// What can be said about one entity: its key paths by kind and its to-many paths.
    struct Paths {
        var strings: [String]
        var numbers: [String]
        var dates: [String] = []
        var bools: [String] = []
        var toOne: [(String, String)] = []
        /// To-many key paths and the entity of their elements.
        var toMany: [(String, String)]
    }

    static let paths: [String: Paths] = [
        "Person": Paths(strings: ["name", "nick", "team.name"], numbers: ["age", "score", "team.rank"], dates: ["born"], bools: ["active"],
                        toOne: [("team", "Team")], toMany: [("tags", "Tag"), ("team.members", "Person"), ("tags.people", "Person"),
                                                          ("friends", "Person"), ("friendOf", "Person"), ("friends.friends", "Person"), ("friends.tags", "Tag")]),
        "Team": Paths(strings: ["name"], numbers: ["rank"], toMany: [("members", "Person"), ("members.tags", "Tag")]),
        "Tag": Paths(strings: ["name"], numbers: [], toMany: [("people", "Person"), ("people.tags", "Tag"), ("people.team.members", "Person")]),
    ]

    struct Generator {
        var random: Random
        let stores: Stores

        func object(_ entity: String, _ key: Int64) -> StoreValue {
            .object(ManagedObjectID(entity: stores.model.entitiesByName[entity]!, storeIdentifier: stores.sqlite.identifier, primaryKey: key))
        }

        mutating func options() -> ComparisonPredicate.Options {
            random.pick([[], [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]])
        }

        mutating func string() -> StoreValue { random.chance(0.08) ? .null : .string(random.pick(PredicateDifferentialTests.strings)) }
        mutating func number() -> StoreValue {
            if random.chance(0.08) { return .null }
            return random.chance(0.5) ? .integer(Int64(random.int(-3...6))) : .double(Double(random.int(-8...12)) * 0.25)
        }

        /// A comparison of a string expression, possibly through `prefix` (a variable).
        mutating func stringComparison(_ key: FetchExpression, other: [FetchExpression], functions: Bool = true) -> FetchPredicate {
            let options = options()
            switch random.int(0...9) {
            case 0, 1:
                return .comparison(key, random.pick([.equalTo, .notEqualTo, .lessThan, .greaterThanOrEqualTo]), .constant(string()), options: options)
            case 2:
                return .comparison(key, random.pick([.beginsWith, .endsWith, .contains]), .constant(string()), options: options)
            case 3:
                return .comparison(key, .like, .constant(.string(random.pick(PredicateDifferentialTests.patterns))), options: options)
            case 4:
                return .comparison(key, .matches, .constant(.string(random.pick(PredicateDifferentialTests.regexes))), options: options)
            case 5:
                return .comparison(key, .in, .constant(.array((0..<random.int(0...3)).map { _ in string() })), options: options)
            case 6 where !other.isEmpty:
                return .comparison(key, random.pick([.equalTo, .notEqualTo, .lessThan, .beginsWith, .contains, .in]), random.pick(other), options: options)
            case 7:
                return .comparison(.constant(string()), random.pick([.equalTo, .in, .contains, .beginsWith]), key, options: options)
            case 8 where functions:
                return .comparison(.function(random.pick(["uppercase:", "lowercase:"]), [key]), .equalTo, .constant(string()), options: options)
            default:
                return .comparison(key, random.pick([.equalTo, .notEqualTo]), .constant(string()), options: options)
            }
        }

        mutating func numberComparison(_ key: FetchExpression, other: [FetchExpression], functions: Bool = true) -> FetchPredicate {
            let ops: [ComparisonPredicate.Operator] = [.equalTo, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo]
            switch random.int(0...7) {
            case 0:
                return .comparison(key, .between, .constant(.array([number(), number()])))
            case 1:
                return .comparison(key, .in, .constant(.array((0..<random.int(0...3)).map { _ in number() })))
            case 2 where !other.isEmpty:
                return .comparison(key, random.pick(ops), random.pick(other))
            case 3 where functions:
                let function = random.pick(["add:to:", "from:subtract:", "multiply:by:"])
                return .comparison(.function(function, [key, .constant(number())]), random.pick(ops), .constant(number()))
            case 4:
                return .comparison(.constant(number()), random.pick(ops), key)
            case 5 where !other.isEmpty:
                return .comparison(key, .between, .aggregate([random.pick(other), .constant(number())]))
            default:
                return .comparison(key, random.pick(ops), .constant(number()))
            }
        }

        /// A predicate on the elements of a to-many path of elements of `entity`, with the
        /// element reached through `base` (`$x` in a subquery, or a key path prefix).
        mutating func elementPredicate(_ entity: String, functions: Bool, base: (String) -> FetchExpression) -> FetchPredicate {
            let p = PredicateDifferentialTests.paths[entity]!
            let strings = p.strings.filter { !$0.contains(".") }
            let numbers = p.numbers.filter { !$0.contains(".") }
            if !numbers.isEmpty && random.chance(0.4) {
                return numberComparison(base(random.pick(numbers)), other: [], functions: functions)
            }
            return stringComparison(base(random.pick(strings)), other: [], functions: functions)
        }

        mutating func toManyPredicate(_ entity: String) -> FetchPredicate {
            let p = PredicateDifferentialTests.paths[entity]!
            let (path, element) = random.pick(p.toMany)
            let e = PredicateDifferentialTests.paths[element]!
            let ops: [ComparisonPredicate.Operator] = [.equalTo, .notEqualTo, .lessThan, .greaterThan, .greaterThanOrEqualTo]
            switch random.int(0...13) {
            case 9:
                // An element attribute against a key path of the evaluated object.
                let attribute = random.pick(e.strings.filter { !$0.contains(".") })
                return .comparison(.keyPath(path + "." + attribute), random.pick([.equalTo, .notEqualTo, .beginsWith, .lessThan]),
                                   .keyPath(random.pick(p.strings)), modifier: random.pick([.any, .all]), options: options())
            case 10:
                // A subquery whose predicate reads the evaluated object, or nests another subquery.
                let (inner, innerElement) = random.pick(e.toMany)
                let attribute = random.pick(PredicateDifferentialTests.paths[innerElement]!.strings.filter { !$0.contains(".") })
                let nested = FetchExpression.subquery(collection: .keyPath("$v." + inner), variable: "w",
                                                      predicate: stringComparison(.keyPath("$w." + attribute), other: [.keyPath(random.pick(p.strings))]))
                let test: FetchPredicate = random.chance(0.5)
                    ? .comparison(.member(nested, "@count"), .greaterThan, .constant(.integer(Int64(random.int(0...1)))))
                    : .comparison(.keyPath("$v." + random.pick(e.strings.filter { !$0.contains(".") })), .equalTo, .keyPath(random.pick(p.strings)), options: options())
                let subquery = FetchExpression.subquery(collection: .keyPath(path), variable: "v", predicate: test)
                return .comparison(.function("count:", [subquery]), random.pick(ops), .constant(.integer(Int64(random.int(0...2)))))
            case 11:
                // ANY / ALL of a single value, or of a constant collection.
                let key = random.pick(p.strings + p.numbers)
                let left: FetchExpression = random.chance(0.5) ? .keyPath(key)
                    : .constant(.array((0..<random.int(0...3)).map { _ in p.strings.contains(key) ? string() : number() }))
                let right: FetchExpression = random.chance(0.5) ? .keyPath(key) : .constant(p.strings.contains(key) ? string() : number())
                return .comparison(left, random.pick(ops), right, modifier: random.pick([.any, .all]), options: options())
            case 12 where !e.numbers.filter({ !$0.contains(".") }).isEmpty:
                let attribute = random.pick(e.numbers.filter { !$0.contains(".") })
                let divisor = StoreValue.integer(Int64(random.pick([-2, 1, 3])))
                return .comparison(.function("divide:by:", [.keyPath("\(path).@sum.\(attribute)"), .constant(divisor)]), random.pick(ops), .constant(number()))
            case 0, 1:
                // ANY / ALL / NONE on an attribute of the elements.
                var inner = elementPredicate(element, functions: false) { .keyPath(path + "." + $0) }
                guard case .comparison(var comparison) = inner, comparison.modifier == .direct,
                      case .keyPath = comparison.left else { return inner }
                comparison.modifier = random.chance(0.5) ? .any : .all
                inner = .comparison(comparison)
                return random.chance(0.25) ? !inner : inner
            case 2:
                return .comparison(.keyPath(path + ".@count"), random.pick(ops), .constant(.integer(Int64(random.int(0...3)))))
            case 3 where !e.numbers.filter({ !$0.contains(".") }).isEmpty:
                let attribute = random.pick(e.numbers.filter { !$0.contains(".") })
                let op = random.pick(["@sum", "@avg", "@min", "@max"])
                let key = random.chance(0.5) ? "\(path).\(op).\(attribute)" : "\(path).\(attribute).\(op)"
                return .comparison(.keyPath(key), random.pick(ops), .constant(number()))
            case 4:
                let variable = "v"
                let inner = elementPredicate(element, functions: true) { .member(.variable(variable), $0) }
                let subquery = FetchExpression.subquery(collection: .keyPath(path), variable: variable, predicate: random.chance(0.3) ? !inner : inner)
                return .comparison(.member(subquery, "@count"), random.pick(ops), .constant(.integer(Int64(random.int(0...2)))))
            case 5:
                let target = object(element, Int64(random.int(1...stores.counts[element]!)))
                return random.chance(0.5) ? .comparison(.constant(target), .in, .keyPath(path)) : .comparison(.keyPath(path), .contains, .constant(target))
            case 6:
                let attribute = random.pick(e.strings.filter { !$0.contains(".") })
                return .comparison(.keyPath(path + "." + attribute), .contains, .constant(string()), options: options())
            case 7:
                return .comparison(.keyPath(path), random.pick([.equalTo, .notEqualTo]), .constant(.null))
            default:
                let attribute = random.pick(e.strings.filter { !$0.contains(".") })
                return .comparison(.keyPath(path + "." + attribute), random.pick([.equalTo, .beginsWith, .like]), .constant(string()),
                                   modifier: .any, options: options())
            }
        }

        mutating func leaf(_ entity: String) -> FetchPredicate {
            let p = PredicateDifferentialTests.paths[entity]!
            switch random.int(0...11) {
            case 0, 1, 2:
                return stringComparison(.keyPath(random.pick(p.strings)), other: p.strings.map { .keyPath($0) })
            case 3 where !p.numbers.isEmpty, 4 where !p.numbers.isEmpty:
                return numberComparison(.keyPath(random.pick(p.numbers)), other: p.numbers.map { .keyPath($0) })
            case 5 where !p.dates.isEmpty:
                let date: StoreValue = random.chance(0.1) ? .null : .date(random.pick(PredicateDifferentialTests.dates))
                if random.chance(0.2) {
                    return .comparison(.keyPath("born"), .lessThan, .function("now", []))
                }
                if random.chance(0.2) {
                    return .comparison(.keyPath("born"), .greaterThan, .function("castObject:toType:", [.constant(.integer(500)), .constant(.string("NSDate"))]))
                }
                return .comparison(.keyPath(p.dates[0]), random.pick([.equalTo, .notEqualTo, .lessThan, .greaterThanOrEqualTo]), .constant(date))
            case 6 where !p.bools.isEmpty:
                let value: StoreValue = random.chance(0.2) ? .null : .bool(random.chance(0.5))
                return .comparison(.keyPath(p.bools[0]), random.pick([.equalTo, .notEqualTo]), .constant(value))
            case 7 where !p.toOne.isEmpty:
                let (key, destination) = p.toOne[0]
                let value = random.chance(0.25) ? StoreValue.null : object(destination, Int64(random.int(1...stores.counts[destination]!)))
                return .comparison(.keyPath(key), random.pick([.equalTo, .notEqualTo]), .constant(value))
            case 8 where entity == "Person":
                let ternary = FetchExpression.conditional(.equal("active", .bool(true)), .keyPath("age"), .keyPath("score"))
                return .comparison(ternary, random.pick([.greaterThan, .equalTo, .lessThanOrEqualTo]), .constant(number()))
            case 9 where random.chance(0.2):
                return random.chance(0.5) ? .alwaysTrue : .alwaysFalse
            default:
                return toManyPredicate(entity)
            }
        }

        mutating func predicate(_ entity: String, depth: Int = 0) -> FetchPredicate {
            if depth < 3 && random.chance(depth == 0 ? 0.55 : 0.3) {
                switch random.int(0...2) {
                case 0: return !predicate(entity, depth: depth + 1)
                case 1: return CompoundPredicate.and((0..<random.int(2...3)).map { _ in predicate(entity, depth: depth + 1) })
                default: return CompoundPredicate.or((0..<random.int(2...3)).map { _ in predicate(entity, depth: depth + 1) })
                }
            }
            return leaf(entity)
        }

        mutating func sortDescriptors(_ entity: String) -> [FetchSortDescriptor] {
            let p = PredicateDifferentialTests.paths[entity]!
            let keys = p.strings + p.numbers + p.dates + p.bools + p.toOne.map(\.0)
            return (0..<random.int(0...2)).map { _ in
                let key = random.pick(keys)
                let comparison: FetchSortDescriptor.Comparison = p.strings.contains(key)
                    ? random.pick([.compare, .caseInsensitiveCompare, .localizedStandardCompare]) : .compare
                return FetchSortDescriptor(key: key, ascending: random.chance(0.5), comparison: comparison)
            }
        }
    }

    // MARK: - Rebinding objects to the in-memory store

    static func rebind(_ predicate: FetchPredicate, to store: String) -> FetchPredicate {
        switch predicate {
        case .alwaysTrue, .alwaysFalse: return predicate
        case .compound(var c):
            c.subpredicates = c.subpredicates.map { rebind($0, to: store) }
            return .compound(c)
        case .comparison(var c):
            c.left = rebind(c.left, to: store)
            c.right = rebind(c.right, to: store)
            return .comparison(c)
        }
    }

    static func rebind(_ expression: FetchExpression, to store: String) -> FetchExpression {
        switch expression {
        case .constant(let value): return .constant(rebind(value, to: store))
        case .member(let base, let key): return .member(rebind(base, to: store), key)
        case .function(let name, let arguments): return .function(name, arguments.map { rebind($0, to: store) })
        case .aggregate(let elements): return .aggregate(elements.map { rebind($0, to: store) })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(collection: rebind(collection, to: store), variable: variable, predicate: rebind(predicate, to: store))
        case .conditional(let p, let a, let b): return .conditional(rebind(p, to: store), rebind(a, to: store), rebind(b, to: store))
        default: return expression
        }
    }

    static func rebind(_ value: StoreValue, to store: String) -> StoreValue {
        switch value {
        case .object(let id): return .object(ManagedObjectID(entity: id.entity, storeIdentifier: store, primaryKey: id.primaryKey))
        case .array(let values): return .array(values.map { rebind($0, to: store) })
        default: return value
        }
    }

    // MARK: - Describing predicates

    /// A predicate in (roughly) Apple's format syntax, for failure messages.
    static func describe(_ predicate: FetchPredicate) -> String {
        switch predicate {
        case .alwaysTrue: return "TRUEPREDICATE"
        case .alwaysFalse: return "FALSEPREDICATE"
        case .compound(let c):
            if c.type == .not { return "NOT (\(c.subpredicates.map(describe).joined()))" }
            return "(" + c.subpredicates.map(describe).joined(separator: c.type == .and ? " AND " : " OR ") + ")"
        case .comparison(let c):
            let modifier = c.modifier == .direct ? "" : (c.modifier == .any ? "ANY " : "ALL ")
            var options = ""
            if c.options.contains(.caseInsensitive) { options += "c" }
            if c.options.contains(.diacriticInsensitive) { options += "d" }
            return "\(modifier)\(describe(c.left)) \(c.operator.rawValue)\(options.isEmpty ? "" : "[\(options)]") \(describe(c.right))"
        }
    }

    static func describe(_ expression: FetchExpression) -> String {
        switch expression {
        case .constant(let value): return describe(value)
        case .evaluatedObject: return "SELF"
        case .keyPath(let path): return path
        case .member(let base, let key): return "\(describe(base)).\(key)"
        case .variable(let name): return "$" + name
        case .function(let name, let arguments): return "FUNCTION(\(name), \(arguments.map(describe).joined(separator: ", ")))"
        case .aggregate(let elements): return "{" + elements.map(describe).joined(separator: ", ") + "}"
        case .subquery(let collection, let variable, let predicate): return "SUBQUERY(\(describe(collection)), $\(variable), \(describe(predicate)))"
        case .conditional(let p, let a, let b): return "TERNARY(\(describe(p)), \(describe(a)), \(describe(b)))"
        case .unboundArgument(let specifier, _): return specifier
        }
    }

    static func describe(_ value: StoreValue) -> String {
        switch value {
        case .null: return "nil"
        case .string(let s): return "\"" + s.unicodeScalars.map { $0.isASCII ? String($0) : String(format: "\\u{%X}", $0.value) }.joined() + "\""
        case .object(let id): return "\(id.entity.name)#\(id.primaryKey)"
        case .date(let d): return "date(\(d.timeIntervalSinceReferenceDate))"
        case .array(let values): return "{" + values.map(describe).joined(separator: ", ") + "}"
        default: return "\(value.anyValue ?? "?")"
        }
    }

    // MARK: - The test

    static let seed: UInt64 = ProcessInfo.processInfo.environment["PERSIST_DIFF_SEED"].flatMap(UInt64.init) ?? 20_261_129
    static let predicateCount = ProcessInfo.processInfo.environment["PERSIST_DIFF_COUNT"].flatMap(Int.init) ?? 2_500

    @Test func sqliteAndInMemoryAgreeOnRandomPredicatesAndSorts() throws {
        let seed = Self.seed
        let stores = try Stores(seed: seed)
        defer { stores.close() }
        var generator = Generator(random: Random(state: seed ^ 0xD1FF), stores: stores)
        var mismatches: [String] = []
        var (bothFailed, selective) = (0, 0)
        let started = Date()
        for index in 0..<Self.predicateCount {
            let entityName = generator.random.pick(["Person", "Person", "Person", "Person", "Team", "Tag"])
            let entity = stores.model.entitiesByName[entityName]!
            let predicate = generator.predicate(entityName)
            let sort = generator.sortDescriptors(entityName)
            let sqlRequest = StoreFetchRequest(entity: entity, predicate: predicate, sortDescriptors: sort)
            let memoryRequest = StoreFetchRequest(entity: entity, predicate: Self.rebind(predicate, to: stores.memory.identifier), sortDescriptors: sort)
            let sql: Result<[Int64], any Error> = Result { try stores.sqlite.fetch(sqlRequest).map(\.objectID.primaryKey) }
            let memory: Result<[Int64], any Error> = Result { try stores.memory.fetch(memoryRequest).map(\.objectID.primaryKey) }
            let agree: Bool
            switch (sql, memory) {
            case (.success(let a), .success(let b)):
                agree = sort.isEmpty ? a.sorted() == b.sorted() : a == b
                if !a.isEmpty && a.count < stores.counts[entityName]! { selective += 1 }
            case (.failure, .failure):
                agree = true
                bothFailed += 1
            default: agree = false
            }
            if !agree {
                mismatches.append("seed \(seed) #\(index) \(entityName) predicate: \(Self.describe(predicate))\n  sort: \(sort.map { "\($0.key) \($0.ascending ? "asc" : "desc") \($0.comparison)" })\n  sqlite: \(sql)\n  memory: \(memory)")
            }
        }
        let elapsed = Date().timeIntervalSince(started)
        print("PredicateDifferential: \(Self.predicateCount) predicates, seed \(seed), \(mismatches.count) mismatches, \(selective) selecting some but not all objects, \(bothFailed) failing in both stores, \(String(format: "%.1f", elapsed)) s")
        for mismatch in mismatches.prefix(15) { print(mismatch) }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(Self.predicateCount) predicates disagree (seed \(seed)); first: \(mismatches.first ?? "")")
        #expect(bothFailed < Self.predicateCount / 50, "too many predicates fail in both stores: \(bothFailed)")
        #expect(selective > Self.predicateCount / 3, "too few predicates select some but not all objects: \(selective)")
    }
}
