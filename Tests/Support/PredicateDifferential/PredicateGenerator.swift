import Foundation
import PersistKit

/// Random predicates and sort descriptors over ``DifferentialStores``' model: comparisons of
/// every operator and option, functions, aggregates, `ANY`/`ALL`/`NONE`, subqueries, object
/// constants, compounds. Every choice is drawn from ``random``, so the same source gives the
/// same predicates (a seed for the randomized test, libFuzzer's bytes for the fuzz target).
public struct PredicateGenerator<Source: RandomSource> {
    /// Where every choice comes from.
    public var random: Source
    /// The stores whose objects constants name.
    public let stores: DifferentialStores

    /// Creates a generator making its choices with `random`.
    public init(random: Source, stores: DifferentialStores) {
        self.random = random
        self.stores = stores
    }

    func object(_ entity: String, _ key: Int64) -> StoreValue {
        .object(ManagedObjectID(entity: stores.model.entitiesByName[entity]!, storeIdentifier: stores.sqlite.identifier, primaryKey: key))
    }

    mutating func options() -> ComparisonPredicate.Options {
        random.pick([[], [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]])
    }

    mutating func string() -> StoreValue { random.chance(0.08) ? .null : .string(random.pick(DifferentialStores.strings)) }
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
            return .comparison(key, .like, .constant(.string(random.pick(DifferentialStores.patterns))), options: options)
        case 4:
            return .comparison(key, .matches, .constant(.string(random.pick(DifferentialStores.regexes))), options: options)
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
        let p = DifferentialPaths.byEntity[entity]!
        let strings = p.strings.filter { !$0.contains(".") }
        let numbers = p.numbers.filter { !$0.contains(".") }
        if !numbers.isEmpty && random.chance(0.4) {
            return numberComparison(base(random.pick(numbers)), other: [], functions: functions)
        }
        return stringComparison(base(random.pick(strings)), other: [], functions: functions)
    }

    mutating func toManyPredicate(_ entity: String) -> FetchPredicate {
        let p = DifferentialPaths.byEntity[entity]!
        let (path, element) = random.pick(p.toMany)
        let e = DifferentialPaths.byEntity[element]!
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
            let attribute = random.pick(DifferentialPaths.byEntity[innerElement]!.strings.filter { !$0.contains(".") })
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
        let p = DifferentialPaths.byEntity[entity]!
        switch random.int(0...11) {
        case 0, 1, 2:
            return stringComparison(.keyPath(random.pick(p.strings)), other: p.strings.map { .keyPath($0) })
        case 3 where !p.numbers.isEmpty, 4 where !p.numbers.isEmpty:
            return numberComparison(.keyPath(random.pick(p.numbers)), other: p.numbers.map { .keyPath($0) })
        case 5 where !p.dates.isEmpty:
            let date: StoreValue = random.chance(0.1) ? .null : .date(random.pick(DifferentialStores.dates))
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

    /// A random predicate on `entity`: compounds of comparisons up to three levels deep.
    public mutating func predicate(_ entity: String, depth: Int = 0) -> FetchPredicate {
        if depth < 3 && random.chance(depth == 0 ? 0.55 : 0.3) {
            switch random.int(0...2) {
            case 0: return !predicate(entity, depth: depth + 1)
            case 1: return CompoundPredicate.and((0..<random.int(2...3)).map { _ in predicate(entity, depth: depth + 1) })
            default: return CompoundPredicate.or((0..<random.int(2...3)).map { _ in predicate(entity, depth: depth + 1) })
            }
        }
        return leaf(entity)
    }

    /// Zero to two random sort descriptors for `entity`.
    public mutating func sortDescriptors(_ entity: String) -> [FetchSortDescriptor] {
        let p = DifferentialPaths.byEntity[entity]!
        let keys = p.strings + p.numbers + p.dates + p.bools + p.toOne.map(\.0)
        return (0..<random.int(0...2)).map { _ in
            let key = random.pick(keys)
            let comparison: FetchSortDescriptor.Comparison = p.strings.contains(key)
                ? random.pick([.compare, .caseInsensitiveCompare, .localizedStandardCompare]) : .compare
            return FetchSortDescriptor(key: key, ascending: random.chance(0.5), comparison: comparison)
        }
    }
}
