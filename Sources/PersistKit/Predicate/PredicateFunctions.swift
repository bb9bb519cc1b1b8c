import Foundation

/// The functions of ``FetchExpression/function(_:_:)`` and the collection operators of key
/// paths (`@count`, `@sum`, `@avg`, `@min`, `@max`), as `NSExpression` evaluates them.
///
/// Arithmetic keeps integers when both operands are integers (falling back to doubles on
/// overflow), uses decimals when either operand is a decimal, and doubles otherwise; `divide:by:`
/// always divides as doubles (or decimals), as `NSExpression` does. `add:to:` and
/// `from:subtract:` also move a date by a number of seconds. Any `nil` operand gives `nil`.
public enum PredicateFunctions {
    /// Applies the function named by its Foundation selector (`add:to:`, `now`, …) to `arguments`.
    public static func apply(function name: String, to arguments: [StoreValue], now: Date) throws -> StoreValue {
        func argument(_ index: Int) throws -> StoreValue {
            guard index < arguments.count else {
                throw PersistenceError.predicate("the function \(name) needs \(index + 1) arguments, not \(arguments.count)", key: name)
            }
            return arguments[index]
        }
        switch name {
        case "now", "now:": return .date(now)
        case "add:to:": return try arithmetic(name, try argument(0), try argument(1), &+, +, +, addingReportingOverflow)
        case "from:subtract:": return try arithmetic(name, try argument(0), try argument(1), &-, -, -, subtractingReportingOverflow)
        case "multiply:by:": return try arithmetic(name, try argument(0), try argument(1), &*, *, *, multipliedReportingOverflow)
        case "divide:by:":
            let (a, b) = (try argument(0), try argument(1))
            if a.isNull || b.isNull { return .null }
            if case .decimal = a { return .decimal(try decimal(a, name) / decimal(b, name)) }
            if case .decimal = b { return .decimal(try decimal(a, name) / decimal(b, name)) }
            return .double(try double(a, name) / double(b, name))
        case "modulus:by:":
            let (a, b) = (try argument(0), try argument(1))
            if a.isNull || b.isNull { return .null }
            if case .integer(let x) = a, case .integer(let y) = b, y != 0 { return .integer(x % y) }
            return .double(try double(a, name).truncatingRemainder(dividingBy: double(b, name)))
        case "raise:toPower:": return try unaryDouble(try argument(0), name) { pow($0, try double(arguments[1], name)) }
        case "sqrt:": return try unaryDouble(try argument(0), name, sqrt)
        case "ln:": return try unaryDouble(try argument(0), name, log)
        case "log:": return try unaryDouble(try argument(0), name, log10)
        case "exp:": return try unaryDouble(try argument(0), name, exp)
        case "floor:": return try unaryDouble(try argument(0), name) { $0.rounded(.down) }
        case "ceiling:": return try unaryDouble(try argument(0), name) { $0.rounded(.up) }
        case "trunc:": return try unaryDouble(try argument(0), name) { $0.rounded(.towardZero) }
        case "abs:":
            let a = try argument(0)
            if case .integer(let x) = a, x != .min { return .integer(Swift.abs(x)) }
            if case .decimal(let x) = a { return .decimal(Swift.abs(x)) }
            return try unaryDouble(a, name) { Swift.abs($0) }
        case "uppercase:", "lowercase:":
            switch try argument(0) {
            case .null: return .null
            case .string(let s): return .string(name == "uppercase:" ? s.uppercased() : s.lowercased())
            default: throw PersistenceError.predicate("the function \(name) needs a string", key: name)
            }
        case "length:":
            switch try argument(0) {
            case .null: return .null
            case .string(let s): return .integer(Int64(s.utf16.count))
            default: throw PersistenceError.predicate("the function \(name) needs a string", key: name)
            }
        case "count:": return try collectionOperator("@count", on: try argument(0))
        case "sum:": return try collectionOperator("@sum", on: .array(arguments.flatMap { elements(of: $0) }))
        case "average:": return try collectionOperator("@avg", on: .array(arguments.flatMap { elements(of: $0) }))
        case "min:": return try collectionOperator("@min", on: .array(arguments.flatMap { elements(of: $0) }))
        case "max:": return try collectionOperator("@max", on: .array(arguments.flatMap { elements(of: $0) }))
        case "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:":
            let (a, b) = (try argument(0), try argument(1))
            if a.isNull || b.isNull { return .null }
            guard case .integer(let x)? = integer(a), case .integer(let y)? = integer(b) else {
                throw PersistenceError.predicate("\(name) needs integers, not \(a) and \(b)", key: name)
            }
            return .integer(name == "bitwiseAnd:with:" ? x & y : name == "bitwiseOr:with:" ? x | y : x ^ y)
        case "objectFrom:withIndex:":
            let (collection, index) = (try argument(0), try argument(1))
            guard case .integer(let i)? = integer(index) else {
                throw PersistenceError.predicate("an index must be an integer, FIRST, LAST or SIZE, not \(index)", key: name)
            }
            let elements = elements(of: collection)
            guard i >= 0, i < elements.count else {
                throw PersistenceError.predicate("the index \(i) is outside a collection of \(elements.count) elements", key: name)
            }
            return elements[Int(i)]
        case "castObject:toType:":
            guard case .string(let type) = try argument(1) else {
                throw PersistenceError.predicate("CAST needs a type name", key: name)
            }
            return try cast(try argument(0), to: type)
        default:
            throw PersistenceError.predicate("the function \(name) is not supported", key: name)
        }
    }

    /// The symbol of an index expression `[FIRST]`, `[LAST]` or `[SIZE]` (the parser writes
    /// them as argument-less functions of those names), or `nil`.
    public static func indexSymbol(_ expression: FetchExpression) -> String? {
        if case .function(let name, let arguments) = expression, arguments.isEmpty, ["FIRST", "LAST", "SIZE"].contains(name) {
            return name
        }
        return nil
    }

    /// `collection[FIRST]` (or `nil` when empty), `collection[LAST]`, `collection[SIZE]`.
    public static func element(of collection: StoreValue, symbol: String) throws -> StoreValue {
        let elements = elements(of: collection)
        switch symbol {
        case "FIRST": return elements.first ?? .null
        case "LAST": return elements.last ?? .null
        case "SIZE": return .integer(Int64(elements.count))
        default: throw PersistenceError.predicate("unknown index \(symbol)", key: symbol)
        }
    }

    /// Applies a key path collection operator (`@count`, `@sum`, `@avg`, `@min`, `@max`,
    /// `@distinctUnionOfObjects`) to a collection. `nil` elements are skipped, as SQL skips `NULL`.
    public static func collectionOperator(_ name: String, on value: StoreValue) throws -> StoreValue {
        if name == "@count" {
            switch value {
            case .array(let elements): return .integer(Int64(elements.count))
            case .null: return .integer(0)
            default: throw PersistenceError.predicate("@count needs a collection, not \(value)", key: name)
            }
        }
        let values = elements(of: value).filter { !$0.isNull }
        switch name {
        case "@sum":
            var total: StoreValue = .integer(0)
            for element in values { total = try arithmetic("@sum", total, element, &+, +, +, addingReportingOverflow) }
            return total
        case "@avg":
            guard !values.isEmpty else { return .null }
            let total = try collectionOperator("@sum", on: .array(values))
            if case .decimal(let d) = total { return .decimal(d / Decimal(values.count)) }
            return .double(try double(total, name) / Double(values.count))
        case "@min", "@max":
            let wanted: ComparisonResult = name == "@min" ? .orderedAscending : .orderedDescending
            return values.dropFirst().reduce(values.first ?? .null) { best, next in
                StoreValueComparison.compare(next, best) == wanted ? next : best
            }
        case "@distinctUnionOfObjects":
            var seen: [StoreValue] = []
            for element in values where !seen.contains(element) { seen.append(element) }
            return .array(seen)
        default:
            throw PersistenceError.predicate("the collection operator \(name) is not supported", key: name)
        }
    }

    /// The elements of a collection value; a single value is a one-element collection and `nil` an empty one.
    public static func elements(of value: StoreValue) -> [StoreValue] {
        switch value {
        case .array(let elements): return elements
        case .null: return []
        default: return [value]
        }
    }

    // MARK: - Arithmetic

    static func addingReportingOverflow(_ a: Int64, _ b: Int64) -> (partialValue: Int64, overflow: Bool) { a.addingReportingOverflow(b) }
    static func subtractingReportingOverflow(_ a: Int64, _ b: Int64) -> (partialValue: Int64, overflow: Bool) { a.subtractingReportingOverflow(b) }
    static func multipliedReportingOverflow(_ a: Int64, _ b: Int64) -> (partialValue: Int64, overflow: Bool) { a.multipliedReportingOverflow(by: b) }

    static func arithmetic(_ name: String, _ a: StoreValue, _ b: StoreValue,
                           _ wrapping: (Int64, Int64) -> Int64,
                           _ doubles: (Double, Double) -> Double,
                           _ decimals: (Decimal, Decimal) -> Decimal,
                           _ checked: (Int64, Int64) -> (partialValue: Int64, overflow: Bool)) throws -> StoreValue {
        if a.isNull || b.isNull { return .null }
        switch (a, b) {
        case (.date(let date), _) where name == "add:to:" || name == "from:subtract:":
            return .date(Date(timeIntervalSinceReferenceDate: doubles(date.timeIntervalSinceReferenceDate, try double(b, name))))
        case (_, .date(let date)) where name == "add:to:":
            return .date(Date(timeIntervalSinceReferenceDate: doubles(try double(a, name), date.timeIntervalSinceReferenceDate)))
        case (.decimal, _), (_, .decimal):
            return .decimal(decimals(try decimal(a, name), try decimal(b, name)))
        default:
            break
        }
        if case .integer(let x)? = integer(a), case .integer(let y)? = integer(b) {
            let result = checked(x, y)
            if !result.overflow { return .integer(result.partialValue) }
        }
        return .double(doubles(try double(a, name), try double(b, name)))
    }

    static func integer(_ value: StoreValue) -> StoreValue? {
        switch value {
        case .integer: return value
        case .bool(let b): return .integer(b ? 1 : 0)
        default: return nil
        }
    }

    static func double(_ value: StoreValue, _ name: String) throws -> Double {
        switch value {
        case .integer(let v): return Double(v)
        case .double(let v): return v
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        case .bool(let v): return v ? 1 : 0
        case .date(let v): return v.timeIntervalSinceReferenceDate
        default: throw PersistenceError.predicate("\(name) needs numbers, not \(value)", key: name)
        }
    }

    static func decimal(_ value: StoreValue, _ name: String) throws -> Decimal {
        switch value {
        case .integer(let v): return Decimal(v)
        case .decimal(let v): return v
        case .bool(let v): return v ? 1 : 0
        default: return Decimal(try double(value, name))
        }
    }

    static func unaryDouble(_ value: StoreValue, _ name: String, _ body: (Double) throws -> Double) throws -> StoreValue {
        if value.isNull { return .null }
        return .double(try body(try double(value, name)))
    }

    /// `CAST(value, 'NSNumber' | 'NSDate' | 'NSString')`.
    static func cast(_ value: StoreValue, to type: String) throws -> StoreValue {
        if value.isNull { return .null }
        switch type {
        case "NSDate":
            if case .date = value { return value }
            return .date(Date(timeIntervalSinceReferenceDate: try double(value, "CAST")))
        case "NSNumber":
            if case .string(let s) = value {
                if let i = Int64(s) { return .integer(i) }
                return Double(s).map(StoreValue.double) ?? .null
            }
            if case .date(let d) = value { return .double(d.timeIntervalSinceReferenceDate) }
            return value
        case "NSString":
            switch value {
            case .string: return value
            case .integer(let v): return .string(String(v))
            case .double(let v): return .string(String(v))
            case .decimal(let v): return .string(v.description)
            default: return .string(String(describing: value.anyValue ?? ""))
            }
        default:
            throw PersistenceError.predicate("CAST to \(type) is not supported", key: type)
        }
    }
}
