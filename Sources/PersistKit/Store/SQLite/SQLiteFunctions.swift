import CSQLite
import Foundation

/// The SQL functions and collations the predicate compiler uses, registered on every
/// connection by ``SQLiteConnection/registerFunctions()``.
///
/// Each one calls the same Swift code as the in-memory ``PredicateEvaluator`` and
/// ``StoreValueComparison``, so a predicate or a sort gives the same answer in SQL and in memory.
/// Where Core Data's own SQLite stores register a function of the same purpose, the same name and
/// argument order is used (names seen in Core Data's SQL logs: `NSCoreDataStringSearch(t0.ZNAME, ?, 417, 1)`),
/// so triggers written by Core Data keep working in stores we open.
///
/// | SQL | meaning |
/// |---|---|
/// | `NSCoreDataStringSearch(text, pattern, options, locale)` | `CONTAINS` / `BEGINSWITH` (options has `NSAnchoredSearch` 8) / `ENDSWITH` (8 and `NSBackwardsSearch` 4); `NSCaseInsensitiveSearch` 1 is `[c]`, `NSDiacriticInsensitiveSearch` 128 is `[d]`; other bits (width 256, literal 2) and `locale` are ignored |
/// | `NSCoreDataLike(text, pattern, flags)` | `LIKE` with `*`, `?` and `\` escapes; flags 1 `[c]`, 2 `[d]` |
/// | `NSCoreDataMatches(text, pattern, flags)` | `MATCHES`: ICU regular expression matching the whole text; flags 1 `[c]`, 2 `[d]` |
/// | `NSCoreDataToUpper(text)`, `NSCoreDataToLower(text)` | `uppercase:`, `lowercase:` (full Unicode mapping) |
/// | `persist_fold(value, flags)` | text folded for `[c]` (1) / `[d]` (2) comparisons; other values unchanged |
/// | `COLLATE persist_case_insensitive` | `caseInsensitiveCompare:` sorting |
/// | `COLLATE persist_localized_standard` | `localizedStandardCompare:` sorting |
///
/// The string functions return 0 or 1, never `NULL`: a `NULL` or non-text argument does not
/// match, as in the evaluator. A regular expression that does not compile is an SQL error.
enum SQLiteFunctions {
    /// The name of the collation for ``FetchSortDescriptor/Comparison/caseInsensitiveCompare``.
    static let caseInsensitiveCollation = "persist_case_insensitive"
    /// The name of the collation for ``FetchSortDescriptor/Comparison/localizedStandardCompare``.
    static let localizedStandardCollation = "persist_localized_standard"

    /// `NSCaseInsensitiveSearch`.
    static let caseInsensitiveSearch = 1
    /// `NSBackwardsSearch`.
    static let backwardsSearch = 4
    /// `NSAnchoredSearch`.
    static let anchoredSearch = 8
    /// `NSDiacriticInsensitiveSearch`.
    static let diacriticInsensitiveSearch = 128

    /// The `NSString` compare options `NSCoreDataStringSearch` takes for `op` with `options`.
    static func searchOptions(_ op: ComparisonPredicate.Operator, _ options: ComparisonPredicate.Options) -> Int {
        var bits = 0
        if options.contains(.caseInsensitive) { bits |= caseInsensitiveSearch }
        if options.contains(.diacriticInsensitive) { bits |= diacriticInsensitiveSearch }
        switch op {
        case .beginsWith: bits |= anchoredSearch
        case .endsWith: bits |= anchoredSearch | backwardsSearch
        default: break
        }
        return bits
    }

    /// Registers every function and collation on `db`. Returns the first failing result code.
    static func register(on db: OpaquePointer) -> Int32 {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        let functions: [(String, Int32, @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void)] = [
            ("NSCoreDataStringSearch", 4, stringSearch),
            ("NSCoreDataLike", 3, like),
            ("NSCoreDataMatches", 3, matches),
            ("NSCoreDataToUpper", 1, toUpper),
            ("NSCoreDataToLower", 1, toLower),
            ("persist_fold", 2, fold),
        ]
        for (name, arity, body) in functions {
            let code = sqlite3_create_function_v2(db, name, arity, flags, nil, body, nil, nil, nil)
            if code != SQLITE_OK { return code }
        }
        let collations: [(String, @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32)] = [
            (caseInsensitiveCollation, caseInsensitiveCompare),
            (localizedStandardCollation, localizedStandardCompare),
        ]
        for (name, body) in collations {
            let code = sqlite3_create_collation_v2(db, name, SQLITE_UTF8, nil, body, nil)
            if code != SQLITE_OK { return code }
        }
        // The rest of what Core Data registers (SQLiteFunctions+CoreData.swift).
        return registerCoreDataCompatibility(on: db)
    }

    // MARK: - Reading arguments

    /// The text of argument `index`, or `nil` when it is not text (`NULL`, a number, a blob).
    private static func text(_ arguments: UnsafeMutablePointer<OpaquePointer?>?, _ index: Int) -> String? {
        guard let value = arguments?[index], sqlite3_value_type(value) == SQLITE_TEXT else { return nil }
        guard let bytes = sqlite3_value_text(value) else { return "" }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    private static func integer(_ arguments: UnsafeMutablePointer<OpaquePointer?>?, _ index: Int) -> Int {
        guard let value = arguments?[index] else { return 0 }
        return Int(sqlite3_value_int64(value))
    }

    private static func resultText(_ context: OpaquePointer?, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            // SQLITE_TRANSIENT: SQLite copies the bytes before returning.
            sqlite3_result_text64(context, buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                  sqlite3_uint64(buffer.count), persist_sqlite_transient(), UInt8(SQLITE_UTF8))
        }
    }

    /// Runs the evaluator's own comparison of two strings and sets 0 or 1 (or an SQL error).
    private static func compare(_ context: OpaquePointer?, _ text: String?, _ op: ComparisonPredicate.Operator,
                                _ pattern: String?, _ options: ComparisonPredicate.Options) {
        guard let text, let pattern else { return sqlite3_result_int(context, 0) }
        do {
            let result = try PredicateComparison.compare(.string(text), op, .string(pattern), options: options)
            sqlite3_result_int(context, result ? 1 : 0)
        } catch {
            let message = (error as? PersistenceError)?.message ?? "\(error)"
            sqlite3_result_error(context, message, -1)
        }
    }

    // MARK: - Functions

    private static let stringSearch: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
        let bits = integer(arguments, 2)
        var options: ComparisonPredicate.Options = []
        if bits & caseInsensitiveSearch != 0 { options.insert(.caseInsensitive) }
        if bits & diacriticInsensitiveSearch != 0 { options.insert(.diacriticInsensitive) }
        let op: ComparisonPredicate.Operator = bits & anchoredSearch == 0 ? .contains
            : (bits & backwardsSearch == 0 ? .beginsWith : .endsWith)
        compare(context, text(arguments, 0), op, text(arguments, 1), options)
    }

    private static let like: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
        compare(context, text(arguments, 0), .like, text(arguments, 1), ComparisonPredicate.Options(rawValue: integer(arguments, 2) & 3))
    }

    /// `MATCHES`. Registered once without user data (no time limit), and again by
    /// ``SQLiteQueryLimit/install(on:)`` with the limit as user data, so a long backtracking
    /// match is stopped at the query's deadline and the statement fails with `SQLITE_INTERRUPT`.
    static let matches: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
        guard let subject = text(arguments, 0), let pattern = text(arguments, 1) else { return sqlite3_result_int(context, 0) }
        let options = ComparisonPredicate.Options(rawValue: integer(arguments, 2) & 3)
        // The user data is the connection's SQLiteQueryLimit, which the store keeps alive as long as the connection.
        let limit = sqlite3_user_data(context).map { Unmanaged<SQLiteQueryLimit>.fromOpaque($0).takeUnretainedValue() }
        do {
            let result = try PredicateComparison.matches(subject, regex: pattern, options: options,
                                                         shouldStop: limit.map { limit in { limit.isPastDeadline } })
            sqlite3_result_int(context, result ? 1 : 0)
        } catch let error as PersistenceError where error.code == .queryTimeout {
            sqlite3_result_error(context, error.message, -1)
            sqlite3_result_error_code(context, SQLITE_INTERRUPT)
        } catch {
            sqlite3_result_error(context, (error as? PersistenceError)?.message ?? "\(error)", -1)
        }
    }

    private static let toUpper: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
        guard let string = text(arguments, 0) else { return sqlite3_result_value(context, arguments?[0]) }
        resultText(context, string.uppercased())
    }

    private static let toLower: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
        guard let string = text(arguments, 0) else { return sqlite3_result_value(context, arguments?[0]) }
        resultText(context, string.lowercased())
    }

    private static let fold: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
        guard let string = text(arguments, 0) else { return sqlite3_result_value(context, arguments?[0]) }
        resultText(context, StoreValueComparison.fold(string, ComparisonPredicate.Options(rawValue: integer(arguments, 1) & 3)))
    }

    // MARK: - Collations

    private static func collate(_ a: UnsafeRawPointer?, _ aCount: Int32, _ b: UnsafeRawPointer?, _ bCount: Int32,
                                _ comparison: FetchSortDescriptor.Comparison) -> Int32 {
        func string(_ pointer: UnsafeRawPointer?, _ count: Int32) -> String {
            guard let pointer else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(count)), as: UTF8.self)
        }
        switch StoreValueComparison.compare(.string(string(a, aCount)), .string(string(b, bCount)), using: comparison) {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }

    private static let caseInsensitiveCompare: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32 = { _, aCount, a, bCount, b in
        collate(a, aCount, b, bCount, .caseInsensitiveCompare)
    }

    private static let localizedStandardCompare: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32 = { _, aCount, a, bCount, b in
        collate(a, aCount, b, bCount, .localizedStandardCompare)
    }
}
