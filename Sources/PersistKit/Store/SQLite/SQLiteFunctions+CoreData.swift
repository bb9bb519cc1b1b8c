import CSQLite
import Foundation

/// The further SQL functions and collations Core Data registers on its own connections
/// (`NSSQLiteRegisterFunctions`), so that triggers, indexes and views that Core Data wrote into
/// a store keep compiling and running when persistd opens it.
///
/// SQLite refuses to run a statement (and so to fire a trigger or use an index) that names an
/// unknown function or collation; these registrations prevent "no such function" errors in
/// stores that use persistent history, derived attributes or sorted indexes.
///
/// | SQL | here |
/// |---|---|
/// | `NSCoreDataNow()` | seconds since 2001-01-01 00:00:00 UTC, now |
/// | `NSCoreDataCanonical(text)` | text folded for `[cd]` comparison |
/// | `NSCoreDataStringCompare(a, b, options, locale, flags)` | -1, 0, 1 comparing `a` and `b` (options bit 1 ignores case) |
/// | `COLLATE NSCollateNoCase`, `NSCollateLocaleSensitiveNoCase` | `caseInsensitiveCompare:` |
/// | `COLLATE NSCollateNumericallyNoCase`, `NSCollateFinderlike` | `localizedStandardCompare:` |
/// | `COLLATE NSCollateLocaleSensitive` | code point order |
/// | `NSCoreDataTriggerUpdateAffectedObjectValue`, `NSCoreDataDATriggerInsertUpdatedAffectedObjectValue`, `NSCoreDataDATriggerUpdatedAffectedObjectValue`, `NSCoreDataDATriggerMergeableString`, `NSPersistentHistoryBatchDeleteUpdateTrigger`, `NSPersistentHistoryBatchDeleteUpdateTriggerDataBlobOperator`, `NSCoreDataPrependExternalReferenceMarker`, `NSCoreDataConvertTransformableToCodable` | registered so statements compile; they return `NULL` (their Core Data behavior is private: see `docs/sqlite-layout.md`) |
extension SQLiteFunctions {
    /// The names of the collations Core Data registers, all registered here too.
    static let coreDataCollations = ["NSCollateNoCase", "NSCollateNumericallyNoCase", "NSCollateLocaleSensitive",
                                     "NSCollateLocaleSensitiveNoCase", "NSCollateFinderlike"]

    /// Registers the Core Data compatibility functions and collations on `db`. Returns the
    /// first failing result code.
    static func registerCoreDataCompatibility(on db: OpaquePointer) -> Int32 {
        typealias Function = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void
        let functions: [(String, Int32, Int32, Function)] = [
            ("NSCoreDataNow", 0, SQLITE_UTF8, now),
            ("NSCoreDataCanonical", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, canonical),
            ("NSCoreDataStringCompare", 5, SQLITE_UTF8 | SQLITE_DETERMINISTIC, stringCompare),
            ("NSCoreDataTriggerUpdateAffectedObjectValue", 5, SQLITE_UTF8, null),
            ("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", 5, SQLITE_UTF8, null),
            ("NSCoreDataDATriggerUpdatedAffectedObjectValue", 5, SQLITE_UTF8, null),
            ("NSCoreDataDATriggerMergeableString", 5, SQLITE_UTF8, null),
            ("NSPersistentHistoryBatchDeleteUpdateTrigger", -1, SQLITE_UTF8, null),
            ("NSPersistentHistoryBatchDeleteUpdateTriggerDataBlobOperator", -1, SQLITE_UTF8, null),
            ("NSCoreDataPrependExternalReferenceMarker", 2, SQLITE_UTF8, null),
            ("NSCoreDataConvertTransformableToCodable", 3, SQLITE_UTF8, null),
        ]
        for (name, arity, flags, body) in functions {
            let code = sqlite3_create_function_v2(db, name, arity, flags, nil, body, nil, nil, nil)
            if code != SQLITE_OK { return code }
        }
        typealias Collation = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32
        let collations: [(String, Collation)] = [
            ("NSCollateNoCase", noCase), ("NSCollateLocaleSensitiveNoCase", noCase),
            ("NSCollateNumericallyNoCase", numeric), ("NSCollateFinderlike", numeric),
            ("NSCollateLocaleSensitive", literal),
        ]
        for (name, body) in collations {
            let code = sqlite3_create_collation_v2(db, name, SQLITE_UTF8, nil, body, nil)
            if code != SQLITE_OK { return code }
        }
        return SQLITE_OK
    }

    private static func argumentText(_ arguments: UnsafeMutablePointer<OpaquePointer?>?, _ index: Int) -> String? {
        guard let value = arguments?[index], sqlite3_value_type(value) == SQLITE_TEXT, let bytes = sqlite3_value_text(value) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }

    private static func collationText(_ pointer: UnsafeRawPointer?, _ count: Int32) -> String {
        guard let pointer else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: pointer, count: Int(count)), as: UTF8.self)
    }

    private static func order(_ result: ComparisonResult) -> Int32 {
        switch result {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }

    private static let now: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, _ in
        sqlite3_result_double(context, Date().timeIntervalSinceReferenceDate)
    }

    private static let canonical: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
        guard let text = argumentText(arguments, 0) else { return sqlite3_result_value(context, arguments?[0]) }
        var folded = StoreValueComparison.fold(text, [.caseInsensitive, .diacriticInsensitive])
        folded.withUTF8 { buffer in
            // SQLITE_TRANSIENT: SQLite copies the bytes before returning.
            sqlite3_result_text64(context, buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                                  sqlite3_uint64(buffer.count), persist_sqlite_transient(), UInt8(SQLITE_UTF8))
        }
    }

    private static let stringCompare: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, arguments in
        guard let a = argumentText(arguments, 0), let b = argumentText(arguments, 1) else { return sqlite3_result_null(context) }
        let options = arguments?[2].map { Int(sqlite3_value_int64($0)) } ?? 0
        let comparison: FetchSortDescriptor.Comparison = options & caseInsensitiveSearch != 0 ? .caseInsensitiveCompare : .compare
        sqlite3_result_int(context, order(StoreValueComparison.compare(.string(a), .string(b), using: comparison)))
    }

    private static let null: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, _ in
        sqlite3_result_null(context)
    }

    private static let noCase: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32 = { _, aCount, a, bCount, b in
        order(StoreValueComparison.compare(.string(collationText(a, aCount)), .string(collationText(b, bCount)), using: .caseInsensitiveCompare))
    }

    private static let numeric: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32 = { _, aCount, a, bCount, b in
        order(StoreValueComparison.compare(.string(collationText(a, aCount)), .string(collationText(b, bCount)), using: .localizedStandardCompare))
    }

    private static let literal: @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeRawPointer?, Int32, UnsafeRawPointer?) -> Int32 = { _, aCount, a, bCount, b in
        order(StoreValueComparison.compareCodePoints(collationText(a, aCount), collationText(b, bCount)))
    }
}
