import Foundation

/// How a store is opened: Core Data's store options dictionary, as a typed value.
///
/// Each property names the Core Data option it stands for.
public struct StoreOptions: Sendable, Hashable {
    /// Migrate a store made with an older model version when it is opened
    /// (`NSMigratePersistentStoresAutomaticallyOption`).
    public var migratePersistentStoresAutomatically: Bool
    /// Infer the mapping between model versions rather than require a mapping model
    /// (`NSInferMappingModelAutomaticallyOption`).
    public var inferMappingModelAutomatically: Bool
    /// Open the store read-only (`NSReadOnlyPersistentStoreOption`).
    public var readOnly: Bool
    /// Extra SQLite pragmas, applied after opening (`NSSQLitePragmasOption`): for example
    /// `["synchronous": "FULL"]`. Names and values are checked against an allow-list.
    public var sqlitePragmas: [String: String]
    /// Record every transaction in the store's history (`NSPersistentHistoryTrackingKey`).
    public var persistentHistoryTracking: Bool
    /// How long a SQLite writer waits for another process's lock before failing, in seconds
    /// (`NSPersistentStoreTimeoutOption`); past it, ``PersistenceError/Code/persistentStoreTimeout``.
    public var busyTimeout: Double
    /// How long one read (fetch, count, dictionary fetch) may run in a SQLite store, in seconds;
    /// 0 (the default) for no limit. A read still running then is interrupted and fails with
    /// ``PersistenceError/Code/queryTimeout`` (persistd's own: Core Data has no such limit).
    public var queryTimeout: Double = 0
    /// Notice other processes' commits to a SQLite store, merge them into the view context and
    /// auto-merging contexts, and post ``PersistentStoreCoordinator/storeRemoteChangeNotification``
    /// (`NSPersistentStoreRemoteChangeNotificationPostOptionKey`); see ``RemoteChangeObserver``.
    public var remoteChangeNotificationPost: Bool
    /// The earlier versions of the model, oldest first, for staged lightweight migration: a
    /// store written with any of them is migrated one version at a time to the current model.
    /// Load them from an Xcode bundle with ``ModelVersionHistory/init(bundle:)``. Without it,
    /// a store made by persistd is migrated from the model copy kept in its metadata.
    /// See `docs/migration.md`.
    public var modelVersionHistory: ModelVersionHistory?
    /// The name of the SQLite VFS a SQLite store is opened through (`sqlite3_open_v2`'s `zVfs`),
    /// or `nil` (the default) for SQLite's default one; a migration's connection uses it too.
    /// The VFS must be registered first
    /// (`sqlite3_vfs_register`); an unknown name fails to open with
    /// ``PersistenceError/Code/persistentStoreOpen``. The store's WAL is written through a VFS
    /// of PersistKit's layered over it, which writes a commit's frames with one call (`docs/stores.md`,
    /// "WAL writes"). Tests use it to inject I/O faults (see `docs/stores.md`). persistd's own
    /// option; Core Data has none.
    public var sqliteVFSName: String? = nil
    /// How long, in seconds, a SQLite store's group commit waits for saves announced as coming
    /// (``SQLiteStore/expectingWrite(adoptingAnnouncement:_:)``, ``SQLiteStore/announceWrite()``)
    /// once a group's statements ran, before it commits without them; 0 for never.
    /// PostgreSQL's `commit_delay`; PersistKit's own option, Core Data has none.
    ///
    /// A wait lets more saves share one `COMMIT`, and costs each save of the group up to that
    /// long and the committing thread its idle time. Only saves their threads announce are
    /// waited for: a program that announces none never waits, whatever the delay. persistd
    /// announces every save it is handed and sets 0 unless told otherwise (`--commit-delay`):
    /// measured on its machine, waiting gained no throughput in any shape tried and cost up to
    /// 14 % (docs/daemon.md, "The wait, measured again"). The default,
    /// ``defaultCommitDelay``, is what the store waited before the option existed.
    public var commitDelay: Double = Self.defaultCommitDelay
    /// ``commitDelay``'s default: half a millisecond. A save's own work before it reaches the
    /// store takes some tens of microseconds, and a wait that runs out costs every member of
    /// the group that much latency.
    public static let defaultCommitDelay: Double = 0.000_5

    /// Creates store options; by default stores migrate with inferred mappings, as
    /// `NSPersistentContainer` does.
    public init(
        migratePersistentStoresAutomatically: Bool = true,
        inferMappingModelAutomatically: Bool = true,
        readOnly: Bool = false,
        sqlitePragmas: [String: String] = [:],
        persistentHistoryTracking: Bool = false,
        busyTimeout: Double = 5,
        remoteChangeNotificationPost: Bool = false,
        modelVersionHistory: ModelVersionHistory? = nil
    ) {
        self.migratePersistentStoresAutomatically = migratePersistentStoresAutomatically
        self.inferMappingModelAutomatically = inferMappingModelAutomatically
        self.readOnly = readOnly
        self.sqlitePragmas = sqlitePragmas
        self.persistentHistoryTracking = persistentHistoryTracking
        self.busyTimeout = busyTimeout
        self.remoteChangeNotificationPost = remoteChangeNotificationPost
        self.modelVersionHistory = modelVersionHistory
    }
}
