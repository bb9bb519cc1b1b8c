import Foundation

/// The one ordering of ``StoreValue``s that sort descriptors and the predicate evaluator share.
///
/// Numbers compare by value across integer, double and decimal (and Booleans as 0 and 1, as
/// `NSNumber` does); strings by Unicode code points (`compare:`), ignoring case
/// (`caseInsensitiveCompare:`) or as Finder does (`localizedStandardCompare:`); dates, UUIDs,
/// data, URLs and object IDs by their natural order. `nil` sorts before every other value, as
/// in Core Data's SQLite store. Values of different kinds sort by a fixed rank of kinds, so the
/// order is total.
public enum StoreValueComparison {
    /// Compares two values for sorting with a sort descriptor's comparison.
    ///
    /// ```swift
    /// StoreValueComparison.compare(.string("file10"), .string("File9"), using: .localizedStandardCompare)
    /// // .orderedDescending
    /// ```
    public static func compare(_ lhs: StoreValue, _ rhs: StoreValue,
                               using comparison: FetchSortDescriptor.Comparison = .compare) -> ComparisonResult {
        switch (lhs, rhs) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.string(let a), .string(let b)):
            switch comparison {
            case .compare: return compareCodePoints(a, b)
            case .caseInsensitiveCompare: return compareCodePoints(fold(a, [.caseInsensitive]), fold(b, [.caseInsensitive]))
                .breakingTies(with: compareCodePoints(a, b))
            case .localizedStandardCompare: return localizedStandardCompare(a, b)
            }
        default:
            break
        }
        if let result = compareNumbers(lhs, rhs) { return result }
        switch (lhs, rhs) {
        case (.date(let a), .date(let b)): return order(a, b)
        case (.data(let a), .data(let b)): return compareBytes(a, b)
        case (.uuid(let a), .uuid(let b)): return compareCodePoints(a.uuidString, b.uuidString)
        case (.url(let a), .url(let b)): return compareCodePoints(a.absoluteString, b.absoluteString)
        case (.object(let a), .object(let b)):
            return compareCodePoints(a.entity.name, b.entity.name).breakingTies(with: order(a.primaryKey, b.primaryKey))
        case (.array(let a), .array(let b)):
            for (x, y) in zip(a, b) {
                let result = compare(x, y, using: comparison)
                if result != .orderedSame { return result }
            }
            return order(a.count, b.count)
        default:
            return order(rank(lhs), rank(rhs))
        }
    }

    /// Compares two numeric values (integer, double, decimal or Boolean) by value, or returns
    /// `nil` if either is not a number. NaN is equal to NaN and below every other number.
    public static func compareNumbers(_ lhs: StoreValue, _ rhs: StoreValue) -> ComparisonResult? {
        switch (numeric(lhs), numeric(rhs)) {
        case (.integer(let a)?, .integer(let b)?): return order(a, b)
        case (.integer(let a)?, .double(let b)?): return compareInteger(a, b)
        case (.double(let a)?, .integer(let b)?): return compareInteger(b, a).reversed
        case (.double(let a)?, .double(let b)?): return compareDoubles(a, b)
        case (.decimal(let a)?, .decimal(let b)?): return compareDecimals(a, b)
        case (.decimal(let a)?, let other?): return compareDecimals(a, decimal(other))
        case (let other?, .decimal(let b)?): return compareDecimals(decimal(other), b)
        default: return nil
        }
    }

    /// Whether two values are equal as `NSPredicate`'s `==` sees them: numbers by value across
    /// types, `nil` equal only to `nil`, everything else by kind and value.
    public static func isEqual(_ lhs: StoreValue, _ rhs: StoreValue) -> Bool {
        if let result = compareNumbers(lhs, rhs) {
            // NaN is never equal to anything, as with `NSNumber`.
            if case .double(let d)? = numeric(lhs), d.isNaN { return false }
            if case .double(let d)? = numeric(rhs), d.isNaN { return false }
            return result == .orderedSame
        }
        switch (lhs, rhs) {
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { isEqual($0, $1) }
        default:
            return lhs == rhs
        }
    }

    /// `string` folded as `NSString` folds it for `[c]` and `[d]` comparisons, in canonical
    /// decomposition (NFD) so that canonically equivalent strings fold to the same scalars;
    /// `string` itself without either option.
    ///
    /// The SQLite store's `persist_fold` SQL function is this function.
    public static func fold(_ string: String, _ options: ComparisonPredicate.Options) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        return folding.isEmpty ? string : string.folding(options: folding, locale: nil).decomposedStringWithCanonicalMapping
    }

    /// Compares strings by Unicode code points, as SQLite compares UTF-8 text.
    public static func compareCodePoints(_ a: String, _ b: String) -> ComparisonResult {
        var left = a.unicodeScalars.makeIterator()
        var right = b.unicodeScalars.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let x?, let y?) where x != y: return x.value < y.value ? .orderedAscending : .orderedDescending
            default: continue
            }
        }
    }

    /// `localizedStandardCompare:` made deterministic: case, diacritics and width ignored and
    /// digit runs compared as numbers first; ties broken by Foundation's locale-aware order,
    /// then by code points.
    public static func localizedStandardCompare(_ a: String, _ b: String) -> ComparisonResult {
        a.compare(b, options: [.caseInsensitive, .diacriticInsensitive, .numeric, .widthInsensitive])
            .breakingTies(with: a.localizedStandardCompare(b))
            .breakingTies(with: compareCodePoints(a, b))
    }

    // MARK: - Numbers

    enum Number {
        case integer(Int64)
        case double(Double)
        case decimal(Decimal)
    }

    static func numeric(_ value: StoreValue) -> Number? {
        switch value {
        case .integer(let v): return .integer(v)
        case .double(let v): return .double(v)
        case .decimal(let v): return .decimal(v)
        case .bool(let v): return .integer(v ? 1 : 0)
        default: return nil
        }
    }

    static func decimal(_ number: Number) -> Decimal {
        switch number {
        case .integer(let v): return Decimal(v)
        case .double(let v): return Decimal(v)
        case .decimal(let v): return v
        }
    }

    /// Compares an integer with a double exactly, without rounding the integer to a double.
    static func compareInteger(_ i: Int64, _ d: Double) -> ComparisonResult {
        if d.isNaN { return .orderedDescending }
        if d >= 9_223_372_036_854_775_808.0 { return .orderedAscending }   // 2^63
        if d < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let whole = d.rounded(.down)
        // `whole` lies in [-2^63, 2^63), so the conversion cannot trap.
        let wholeInteger = Int64(whole)
        if i != wholeInteger { return order(i, wholeInteger) }
        return whole == d ? .orderedSame : .orderedAscending
    }

    static func compareDoubles(_ a: Double, _ b: Double) -> ComparisonResult {
        switch (a.isNaN, b.isNaN) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: return order(a, b)
        }
    }

    static func compareDecimals(_ a: Decimal, _ b: Decimal) -> ComparisonResult {
        switch (a.isNaN, b.isNaN) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: return order(a, b)
        }
    }

    // MARK: - Helpers

    static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : (a > b ? .orderedDescending : .orderedSame)
    }

    static func compareBytes(_ a: Data, _ b: Data) -> ComparisonResult {
        for (x, y) in zip(a, b) where x != y { return x < y ? .orderedAscending : .orderedDescending }
        return order(a.count, b.count)
    }

    /// The rank of a value's kind, for values of different kinds.
    static func rank(_ value: StoreValue) -> Int {
        switch value {
        case .null: return 0
        case .integer, .double, .decimal, .bool: return 1
        case .string: return 2
        case .date: return 3
        case .data: return 4
        case .uuid: return 5
        case .url: return 6
        case .object: return 7
        case .array: return 8
        }
    }
}

extension ComparisonResult {
    /// `self`, or `other` when `self` is `.orderedSame`.
    func breakingTies(with other: @autoclosure () -> ComparisonResult) -> ComparisonResult {
        self == .orderedSame ? other() : self
    }

    /// The opposite order.
    var reversed: ComparisonResult {
        switch self {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }
}
