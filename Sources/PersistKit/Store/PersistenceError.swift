import Foundation

/// An error from a store, a coordinator or a context, with Core Data's error code and context.
///
/// The codes are Core Data's (`NSCocoaErrorDomain`), so a program that checks
/// `NSValidationMissingMandatoryPropertyError` (1570) checks ``Code/validationMissingMandatoryProperty``.
/// A save that fails validation for several reasons throws one error with code
/// ``Code/validationMultipleErrors`` whose ``detailedErrors`` lists each object and key.
public struct PersistenceError: Error, Sendable, CustomStringConvertible {
    /// A Core Data error code.
    public struct Code: RawRepresentable, Sendable, Hashable {
        /// The numeric code, as in Core Data.
        public let rawValue: Int
        /// Creates a code from its number.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// A managed object failed validation (`NSManagedObjectValidationError`).
        public static let managedObjectValidation = Code(rawValue: 1550)
        /// A uniqueness constraint was violated (`NSManagedObjectConstraintValidationError`).
        public static let managedObjectConstraintValidation = Code(rawValue: 1551)
        /// Several validation errors; see ``PersistenceError/detailedErrors`` (`NSValidationMultipleErrorsError`).
        public static let validationMultipleErrors = Code(rawValue: 1560)
        /// A required value is missing (`NSValidationMissingMandatoryPropertyError`).
        public static let validationMissingMandatoryProperty = Code(rawValue: 1570)
        /// A to-many relationship has too few objects (`NSValidationRelationshipLacksMinimumCountError`).
        public static let validationRelationshipLacksMinimumCount = Code(rawValue: 1580)
        /// A to-many relationship has too many objects (`NSValidationRelationshipExceedsMaximumCountError`).
        public static let validationRelationshipExceedsMaximumCount = Code(rawValue: 1590)
        /// A deny delete rule refused a delete (`NSValidationRelationshipDeniedDeleteError`).
        public static let validationRelationshipDeniedDelete = Code(rawValue: 1600)
        /// A number is above the maximum (`NSValidationNumberTooLargeError`).
        public static let validationNumberTooLarge = Code(rawValue: 1610)
        /// A number is below the minimum (`NSValidationNumberTooSmallError`).
        public static let validationNumberTooSmall = Code(rawValue: 1620)
        /// A date is after the maximum (`NSValidationDateTooLateError`).
        public static let validationDateTooLate = Code(rawValue: 1630)
        /// A date is before the minimum (`NSValidationDateTooSoonError`).
        public static let validationDateTooSoon = Code(rawValue: 1640)
        /// A value has the wrong type (`NSValidationInvalidDateError` is 1650; Core Data reports
        /// wrong types as `NSManagedObjectValidationError`, which this reuses).
        public static let validationInvalidType = Code(rawValue: 1550)
        /// A string or binary value is too long (`NSValidationStringTooLongError`).
        public static let validationStringTooLong = Code(rawValue: 1660)
        /// A string or binary value is too short (`NSValidationStringTooShortError`).
        public static let validationStringTooShort = Code(rawValue: 1670)
        /// A string does not match the attribute's regular expression (`NSValidationStringPatternMatchingError`).
        public static let validationStringPatternMatching = Code(rawValue: 1680)
        /// An object refers to a deleted object or one in another store (`NSManagedObjectReferentialIntegrityError`).
        public static let managedObjectReferentialIntegrity = Code(rawValue: 133000)
        /// An object refers to an object in another context (`NSManagedObjectExternalRelationshipError`).
        public static let managedObjectExternalRelationship = Code(rawValue: 133010)
        /// A save conflicts with changes saved by someone else (`NSManagedObjectMergeError`).
        public static let managedObjectMerge = Code(rawValue: 133020)
        /// Saves conflicted on uniqueness constraints (`NSManagedObjectConstraintMergeError`).
        public static let managedObjectConstraintMerge = Code(rawValue: 133021)
        /// The store type is unknown (`NSPersistentStoreInvalidTypeError`).
        public static let persistentStoreInvalidType = Code(rawValue: 134000)
        /// The store file is of another type (`NSPersistentStoreTypeMismatchError`).
        public static let persistentStoreTypeMismatch = Code(rawValue: 134010)
        /// The store's schema does not fit the model (`NSPersistentStoreIncompatibleSchemaError`).
        public static let persistentStoreIncompatibleSchema = Code(rawValue: 134020)
        /// A store failed to save (`NSPersistentStoreSaveError`).
        public static let persistentStoreSave = Code(rawValue: 134030)
        /// A store failed an operation (`NSPersistentStoreOperationError`).
        public static let persistentStoreOperation = Code(rawValue: 134070)
        /// A store could not be opened (`NSPersistentStoreOpenError`).
        public static let persistentStoreOpen = Code(rawValue: 134080)
        /// The store stayed locked by another connection or process for longer than
        /// ``StoreOptions/busyTimeout`` (`NSPersistentStoreTimeoutError`); the daemon calls it `busy`.
        public static let persistentStoreTimeout = Code(rawValue: 134090)
        /// A read ran longer than ``StoreOptions/queryTimeout`` and was interrupted (persistd's
        /// own code, next to `NSPersistentStoreTimeoutError`; the daemon calls it `query_timeout`).
        public static let queryTimeout = Code(rawValue: 134091)
        /// The store's model version does not match the model (`NSPersistentStoreIncompatibleVersionHashError`).
        public static let persistentStoreIncompatibleVersionHash = Code(rawValue: 134100)
        /// SQLite reported an error (`NSSQLiteError`).
        public static let sqlite = Code(rawValue: 134180)
        /// A persistent history token names history that was purged (`NSPersistentHistoryTokenExpiredError`).
        public static let persistentHistoryTokenExpired = Code(rawValue: 134301)
        /// An object could not be found in any store.
        public static let objectNotFound = Code(rawValue: 133000)
        /// A save's `willSave()` calls still changed objects after the most rounds a save makes
        /// (a PersistKit code: Core Data documents no bound and keeps calling `willSave()`); the
        /// error's ``PersistenceError/detailedErrors`` name each object still changing, nothing
        /// was written and the context keeps its changes.
        public static let willSaveDidNotSettle = Code(rawValue: 139_001)
    }

    /// The Core Data error code.
    public var code: Code
    /// What went wrong, in one sentence a person can act on.
    public var message: String
    /// The object the error concerns, if any (`NSValidationObjectErrorKey`).
    public var objectID: ManagedObjectID?
    /// The key the error concerns, if any (`NSValidationKeyErrorKey`).
    public var key: String?
    /// For ``Code/validationMultipleErrors``, each error (`NSDetailedErrorsKey`).
    public var detailedErrors: [PersistenceError]
    /// The file involved, if any (`NSFilePathErrorKey`).
    public var path: String?
    /// The underlying error's description (for example SQLite's message), if any.
    public var underlying: String?
    /// For ``Code/managedObjectMerge``, every optimistic-locking conflict the save met
    /// (Core Data's `conflictList` of `NSMergeConflict`s).
    public var conflicts: [MergeConflict]

    /// Creates an error.
    public init(_ code: Code, _ message: String, objectID: ManagedObjectID? = nil, key: String? = nil,
                detailedErrors: [PersistenceError] = [], path: String? = nil, underlying: String? = nil,
                conflicts: [MergeConflict] = []) {
        self.code = code
        self.message = message
        self.objectID = objectID
        self.key = key
        self.detailedErrors = detailedErrors
        self.path = path
        self.underlying = underlying
        self.conflicts = conflicts
    }

    /// The message with its code, object, key and underlying cause.
    public var description: String {
        var text = "\(message) (code \(code.rawValue)"
        if let objectID { text += ", object \(objectID.uriRepresentation().absoluteString)" }
        if let key { text += ", key \(key)" }
        if let path { text += ", file \(path)" }
        text += ")"
        if let underlying { text += ": \(underlying)" }
        for detail in detailedErrors { text += "\n  - \(detail)" }
        for conflict in conflicts { text += "\n  - \(conflict)" }
        return text
    }
}
