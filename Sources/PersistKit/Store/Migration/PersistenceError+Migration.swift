import Foundation

extension PersistenceError.Code {
    /// A migration failed while it ran; the store was left as it was (`NSMigrationError`).
    public static let migration = PersistenceError.Code(rawValue: 134110)
    /// The model the store was written with was not found (`NSMigrationMissingSourceModelError`).
    public static let migrationMissingSourceModel = PersistenceError.Code(rawValue: 134130)
    /// A change between model versions cannot be inferred; a mapping model would be needed
    /// (`NSMigrationMissingMappingModelError`). The error's ``PersistenceError/detailedErrors``
    /// list each blocking change with its entity (``PersistenceError/message``) and property
    /// (``PersistenceError/key``).
    public static let migrationMissingMappingModel = PersistenceError.Code(rawValue: 134140)
}
