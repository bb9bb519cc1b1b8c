import Foundation
import PersistKit

/// What persistd and `persistctl migrate` share: the model to migrate to, and the store options
/// that let an `.xcdatamodeld` bundle's older versions serve as the steps of a staged migration.
public enum StoreMigration {
    /// The model at `modelPath`, frozen, and store options carrying the bundle's version
    /// history when the model is an `.xcdatamodeld` with several versions.
    public static func load(modelPath: String) throws -> (model: ManagedObjectModel, options: StoreOptions) {
        let url = URL(fileURLWithPath: modelPath)
        let model = try ManagedObjectModel(contentsOf: url)
        try model.freeze()
        var options = StoreOptions()
        if url.pathExtension == "xcdatamodeld" {
            options.modelVersionHistory = try ModelVersionHistory(bundle: url)
        }
        return (model, options)
    }

    /// Migrates the SQLite store at `storeURL` to `model` if it needs it, telling `progress`
    /// each step (for `STATUS=` and the log). Does nothing for a new or up-to-date store.
    public static func migrateIfNeeded(storeURL: URL, model: ManagedObjectModel, options: StoreOptions,
                                       progress: @escaping @Sendable (String) -> Void) throws {
        guard FileManager.default.fileExists(atPath: storeURL.path) else { return }
        let plan = try SQLiteStore.migrationPlan(forStoreAt: storeURL, model: model, options: options)
        guard plan.outcome == .migratable else { return }
        progress("migrating \(storeURL.lastPathComponent): \(plan.steps.count) step\(plan.steps.count == 1 ? "" : "s")")
        _ = try SQLiteStore.migrateStore(at: storeURL, to: model, options: options) { progress($0.description) }
        progress("migrated \(storeURL.lastPathComponent)")
    }
}
