import Foundation

extension PersistentStoreCoordinator {
    /// What adding the store at `url` with `options` would migrate, without changing it (a dry
    /// run, as `persistctl migrate --dry-run` prints it).
    ///
    /// Only SQLite stores migrate in place; for other types the plan is always up to date.
    public func migrationPlan(forStoreAt url: URL, type: StoreType = .sqlite, configuration: String? = nil,
                              options: StoreOptions = StoreOptions()) throws -> MigrationPlan {
        guard type == .sqlite else {
            return MigrationPlan(storeURL: url, backupURL: SQLiteStore.migrationBackupURL(for: url), outcome: .upToDate, steps: [])
        }
        return try SQLiteStore.migrationPlan(forStoreAt: url, model: managedObjectModel, configurationName: configuration, options: options)
    }
}
