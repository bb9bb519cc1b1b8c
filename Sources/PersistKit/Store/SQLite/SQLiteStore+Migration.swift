import Foundation

/// Lightweight (inferred) migration of SQLite stores: finding the model a store was written
/// with, planning the steps to the current model, and running them in one transaction after
/// a backup copy. See `docs/migration.md`.
extension SQLiteStore {
    /// The metadata key under which a store keeps a copy of the model it was last written with
    /// (our JSON model format), so a later version can migrate it without the old model at hand.
    /// Core Data keeps a compiled model in `Z_MODELCACHE` for the same purpose; it ignores
    /// metadata keys it does not know.
    public static let modelCacheMetadataKey = "_PersistKitModelJSON"

    /// Where the backup of `url` is written before a migration: `<store file>.backup`, next to
    /// the store (replaced by each migration).
    public static func migrationBackupURL(for url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".backup")
    }

    /// The plan for opening the store at `url` with `model`, made without changing the store
    /// (a dry run). Throws when the file is not a Core Data SQLite store.
    public static func migrationPlan(forStoreAt url: URL, model: ManagedObjectModel, configurationName: String? = nil,
                                     options: StoreOptions = StoreOptions()) throws -> MigrationPlan {
        try model.freeze()
        let connection = try openForMigration(url, readOnly: true, vfs: options.sqliteVFSName)
        defer { try? connection.close() }
        return try plan(connection, url: url, model: model, configurationName: configurationName, options: options)
    }

    /// Whether opening a store with `options` migrates it when its model version differs:
    /// automatic migration and inferred mappings on, and the store writable. `openFile` asks it
    /// too, before it hands a store of another version to ``migrateIfNeeded(url:model:configurationName:options:)``.
    static func migratesAutomatically(_ options: StoreOptions) -> Bool {
        options.migratePersistentStoresAutomatically && options.inferMappingModelAutomatically && !options.readOnly
    }

    /// Called when a writable store that exists is opened: migrates it if its model differs and
    /// the options allow it. Stores whose source model is unknown are left to the schema check
    /// of the open path.
    static func migrateIfNeeded(url: URL, model: ManagedObjectModel, configurationName: String?, options: StoreOptions) throws {
        let path = url.path
        // Without automatic migration, the open path's schema check decides: a store whose
        // tables fit the model opens, any other fails naming the missing table or column.
        guard migratesAutomatically(options), FileManager.default.fileExists(atPath: path),
              ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) > 0 else { return }
        let connection: SQLiteConnection
        do { connection = try openForMigration(url, readOnly: false, vfs: options.sqliteVFSName) } catch { return } // the open path reports it
        defer { try? connection.close() }
        let tables = (try? connection.strings("SELECT name FROM sqlite_master WHERE type = 'table'")) ?? []
        guard tables.contains("Z_METADATA"), tables.contains("Z_PRIMARYKEY") else { return }
        _ = try run(connection, url: url, model: model, configurationName: configurationName, options: options, progress: nil)
    }

    /// Migrates the store at `url` to `model` now, as opening it would, reporting each phase to
    /// `progress` (for a daemon's `STATUS=` line), and returns the plan it ran.
    ///
    /// Migration runs whatever `options.migratePersistentStoresAutomatically` says: calling
    /// this is the explicit request. A store already up to date is left alone; one whose source
    /// model is unknown too (the plan says so).
    ///
    /// - Throws: ``PersistenceError`` with code `migrationMissingMappingModel` listing every
    ///   blocking change (nothing touched), or `migration` when a step failed (rolled back).
    @discardableResult
    public static func migrateStore(at url: URL, to model: ManagedObjectModel, configurationName: String? = nil,
                                    options: StoreOptions = StoreOptions(),
                                    progress: (@Sendable (MigrationProgress) -> Void)? = nil) throws -> MigrationPlan {
        try model.freeze()
        let connection = try openForMigration(url, readOnly: false, vfs: options.sqliteVFSName)
        defer { try? connection.close() }
        return try run(connection, url: url, model: model, configurationName: configurationName, options: options, progress: progress)
    }

    /// Plans, and migrates when the plan allows; throws the blocking changes.
    private static func run(_ connection: SQLiteConnection, url: URL, model: ManagedObjectModel, configurationName: String?,
                            options: StoreOptions, progress: (@Sendable (MigrationProgress) -> Void)?) throws -> MigrationPlan {
        let path = url.path
        let plan = try plan(connection, url: url, model: model, configurationName: configurationName, options: options)
        switch plan.outcome {
        case .upToDate, .sourceModelUnknown:
            return plan
        case .blocked:
            let details = plan.blockingChanges.map { PersistenceError(.migrationMissingMappingModel, "\($0.entity): \($0.detail)", key: $0.property, path: path) }
            throw PersistenceError(.migrationMissingMappingModel,
                                   "the store cannot be migrated by an inferred mapping: \(details.count) change\(details.count == 1 ? "" : "s") would need a mapping model; the store was not changed\n\(plan.blockingChanges.map { "  - \($0)" }.joined(separator: "\n"))",
                                   detailedErrors: details, path: path)
        case .migratable:
            try migrate(connection, plan: plan, model: model, configurationName: configurationName, progress: progress)
            return plan
        }
    }

    /// Writes the backup, then runs every step and the new metadata in one transaction.
    private static func migrate(_ connection: SQLiteConnection, plan: MigrationPlan, model: ManagedObjectModel, configurationName: String?,
                                progress: (@Sendable (MigrationProgress) -> Void)?) throws {
        let path = plan.storeURL.path
        progress?(MigrationProgress(phase: .backup, stepCount: plan.steps.count, plan: plan))
        do {
            try? FileManager.default.removeItem(at: plan.backupURL)
            // VACUUM INTO writes a consistent copy, WAL content included.
            try connection.execute("VACUUM INTO ?", [.string(plan.backupURL.path)])
        } catch {
            throw PersistenceError(.migration, "the backup copy could not be written to \(plan.backupURL.path); the store was not changed", path: path, underlying: "\(error)")
        }
        do {
            try connection.inTransaction(.immediate) {
                // Another process may have migrated the store between the plan and the write lock.
                let locked = try connection.prepare("SELECT \"Z_UUID\", \"Z_PLIST\" FROM \"Z_METADATA\" ORDER BY \"Z_VERSION\" LIMIT 1")
                if try locked.step(), try SQLiteMetadata(uuid: locked.string(0), plistData: locked.data(1)).versionHashes == model.entityVersionHashesByName {
                    locked.reset()
                    return
                }
                locked.reset()
                // The history's rows in Z_PRIMARYKEY (purge floors) are no entity of the model: a
                // step rewrites the table for the model's entities only, so they are put back after.
                let historyRows = try historyPrimaryKeyRows(connection)
                try connection.execute("DELETE FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" >= ?", [.integer(historyEntityNumbers.lowerBound)])
                for (index, step) in plan.steps.enumerated() {
                    progress?(MigrationProgress(phase: .step(index + 1, source: step.sourceName, destination: step.destinationName),
                                                stepCount: plan.steps.count, plan: plan))
                    try SQLiteMigrationStep(connection: connection, step: step, configurationName: configurationName, path: path).run()
                }
                for row in historyRows {
                    try connection.execute("INSERT OR REPLACE INTO \"Z_PRIMARYKEY\" (\"Z_ENT\", \"Z_NAME\", \"Z_SUPER\", \"Z_MAX\") VALUES (?, ?, ?, ?)", row)
                }
                let statement = try connection.prepare("SELECT \"Z_UUID\", \"Z_PLIST\" FROM \"Z_METADATA\" ORDER BY \"Z_VERSION\" LIMIT 1")
                guard try statement.step() else { throw PersistenceError(.migration, "the store's Z_METADATA table is empty", path: path) }
                var metadata = try SQLiteMetadata(uuid: statement.string(0), plistData: statement.data(1))
                statement.reset()
                metadata.record(model)
                try connection.execute("UPDATE \"Z_METADATA\" SET \"Z_PLIST\" = ? WHERE \"Z_VERSION\" = (SELECT MIN(\"Z_VERSION\") FROM \"Z_METADATA\")",
                                       [.data(try metadata.plistData())])
            }
            progress?(MigrationProgress(phase: .finished, stepCount: plan.steps.count, plan: plan))
        } catch let error as PersistenceError {
            throw PersistenceError(.migration, "the migration failed and was rolled back; the store is unchanged (backup at \(plan.backupURL.path)): \(error.message)", path: path, underlying: error.underlying)
        } catch {
            throw PersistenceError(.migration, "the migration failed and was rolled back; the store is unchanged (backup at \(plan.backupURL.path))", path: path, underlying: "\(error)")
        }
    }

    /// The `Z_ENT` numbers of the history's entities (``transactionEntityNumber`` and its
    /// neighbours): rows of `Z_PRIMARYKEY` in this range are no entity of the model.
    static let historyEntityNumbers: ClosedRange<Int64> = 16000...16999

    /// The rows of `Z_PRIMARYKEY` for the history's entities, as their four values.
    private static func historyPrimaryKeyRows(_ connection: SQLiteConnection) throws -> [[StoreValue]] {
        var rows: [[StoreValue]] = []
        try connection.prepare("""
            SELECT "Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX" FROM "Z_PRIMARYKEY" WHERE "Z_ENT" BETWEEN ? AND ?
            """).forEachRow([.integer(historyEntityNumbers.lowerBound), .integer(historyEntityNumbers.upperBound)]) { row in
            rows.append([.integer(row.int64(0)), row.isNull(1) ? .null : .string(row.string(1)), .integer(row.int64(2)), .integer(row.int64(3))])
        }
        return rows
    }

    /// Rewrites `ATRANSACTION` and `ACHANGE` of a store made when they were keyed
    /// `INTEGER PRIMARY KEY AUTOINCREMENT` into the current layout (a plain `INTEGER PRIMARY
    /// KEY`, as Core Data keys its tables), keeping every row and its number; the last number
    /// `sqlite_sequence` held for each becomes its floor in `Z_PRIMARYKEY` when above the
    /// largest `Z_PK` left (the newest rows were purged), so numbering continues above it.
    /// Runs inside the caller's write transaction (the history tables' creation at open): a
    /// crash or error leaves the old layout whole. Does nothing for a store already in the
    /// current layout, or without history tables.
    static func migrateHistoryLayout(_ connection: SQLiteConnection) throws {
        let tables: [(name: String, entity: Int64, entityName: String, create: (String) -> String, columns: String)] = [
            ("ATRANSACTION", transactionEntityNumber, transactionEntityName, transactionTableSQL,
             #""Z_PK", "Z_ENT", "Z_OPT", "ZAUTHORTS", "ZBUNDLEIDTS", "ZCONTEXTNAMETS", "ZPROCESSIDTS", "ZTIMESTAMP", "ZQUERYGEN""#),
            ("ACHANGE", changeEntityNumber, changeEntityName, changeTableSQL,
             #""Z_PK", "Z_ENT", "Z_OPT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS", "ZTOMBSTONE""#),
        ]
        var migrated = false
        for table in tables {
            let definition = try connection.strings("SELECT \"sql\" FROM \"sqlite_master\" WHERE \"type\" = 'table' AND \"name\" = ?",
                                                    [.string(table.name)]).first
            guard let definition, definition.uppercased().contains("AUTOINCREMENT") else { continue }
            let sequence = try connection.int64("SELECT \"seq\" FROM \"sqlite_sequence\" WHERE \"name\" = ?", [.string(table.name)]) ?? 0
            let temporary = table.name + "__PKHISTORY"
            try connection.execute("DROP TABLE IF EXISTS \(SQLiteSchema.quote(temporary))")
            try connection.execute(table.create(temporary))
            try connection.execute("""
                INSERT INTO \(SQLiteSchema.quote(temporary)) (\(table.columns)) SELECT \(table.columns) FROM \(SQLiteSchema.quote(table.name)) ORDER BY "Z_PK"
                """)
            // Dropping the table drops its index and its sqlite_sequence row.
            try connection.execute("DROP TABLE \(SQLiteSchema.quote(table.name))")
            try connection.execute("ALTER TABLE \(SQLiteSchema.quote(temporary)) RENAME TO \(SQLiteSchema.quote(table.name))")
            let kept = try connection.int64("SELECT max(\"Z_PK\") FROM \(SQLiteSchema.quote(table.name))") ?? 0
            if sequence > kept {
                try connection.execute("""
                    INSERT INTO "Z_PRIMARYKEY" ("Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX") VALUES (?, ?, 0, ?) \
                    ON CONFLICT ("Z_ENT") DO UPDATE SET "Z_MAX" = max("Z_MAX", excluded."Z_MAX")
                    """, [.integer(table.entity), .string(table.entityName), .integer(sequence)])
            }
            migrated = true
        }
        if migrated {
            for sql in historyIndexSQL { try connection.execute(sql) }
        }
    }

    /// The migration's own connection, through the store's VFS (``StoreOptions/sqliteVFSName``).
    private static func openForMigration(_ url: URL, readOnly: Bool, vfs: String?) throws -> SQLiteConnection {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw PersistenceError(.persistentStoreOpen, "the store file does not exist", path: url.path)
        }
        do {
            let connection = try SQLiteConnection(path: url.path, flags: readOnly ? [.readOnly, .noMutex] : [.readWrite, .noMutex],
                                                  vfs: SQLiteWALWriteVFS.name(over: vfs))
            connection.setBusyTimeout(seconds: 5)
            connection.registerFunctions()
            return connection
        } catch {
            throw PersistenceError(.persistentStoreOpen, "the store file could not be opened", path: url.path, underlying: error.description)
        }
    }

    /// Identifies the store's model and infers every step from it to `model`.
    static func plan(_ connection: SQLiteConnection, url: URL, model: ManagedObjectModel, configurationName: String?,
                     options: StoreOptions) throws -> MigrationPlan {
        let path = url.path
        let metadata: SQLiteMetadata
        do {
            let statement = try connection.prepare("SELECT \"Z_UUID\", \"Z_PLIST\" FROM \"Z_METADATA\" ORDER BY \"Z_VERSION\" LIMIT 1")
            guard try statement.step() else {
                throw PersistenceError(.persistentStoreTypeMismatch, "the store's Z_METADATA table is empty", path: path)
            }
            metadata = try SQLiteMetadata(uuid: statement.string(0), plistData: statement.data(1))
            statement.reset()
        } catch let error as SQLiteError {
            throw error.persistenceError(.persistentStoreTypeMismatch, "the store's metadata could not be read", path: path)
        }
        var result = MigrationPlan(storeURL: url, backupURL: migrationBackupURL(for: url), outcome: .upToDate, steps: [])
        let storeHashes = metadata.versionHashes
        let current = model.entityVersionHashesByName
        if storeHashes == current { return result }

        var chain: [(name: String, model: ManagedObjectModel)] = []
        if let history = options.modelVersionHistory, let start = history.index(matching: storeHashes, configuration: nil) {
            for index in start..<history.versions.count {
                let version = history.versions[index]
                if version.entityVersionHashesByName == current { break }
                chain.append((history.names[index], version))
            }
        } else if let cached = metadata.cachedModel(), cached.entityVersionHashesByName == storeHashes {
            chain.append(("store", cached))
        } else {
            result.outcome = .sourceModelUnknown
            return result
        }
        chain.append(("current", model))
        for version in chain.map(\.model) {
            do { try version.freeze() } catch {
                throw PersistenceError(.migrationMissingSourceModel, "a model version of the history is not valid", path: path, underlying: "\(error)")
            }
        }
        for (from, to) in zip(chain, chain.dropFirst()) where from.model.entityVersionHashesByName != to.model.entityVersionHashesByName {
            let mapping = InferredMapping(source: from.model, destination: to.model, configurationName: configurationName)
            result.steps.append(MigrationPlan.Step(sourceName: from.name, destinationName: to.name, changes: mapping.changes,
                                                   source: from.model, destination: to.model, mapping: mapping))
        }
        result.outcome = result.steps.isEmpty ? .upToDate : (result.blockingChanges.isEmpty ? .migratable : .blocked)
        return result
    }
}

extension SQLiteMetadata {
    /// The metadata of a new store for `model`: version hashes, their digest, identifiers and
    /// a copy of the model (``SQLiteStore/modelCacheMetadataKey``).
    init(uuid: String, model: ManagedObjectModel) {
        // `record` sets the hashes and identifiers: computed there once, not here as well.
        self.init(uuid: uuid, versionHashes: [:], versionIdentifiers: [])
        record(model)
    }

    /// Records `model` as the one the store is written with.
    mutating func record(_ model: ManagedObjectModel) {
        let hashes = model.entityVersionHashesByName
        plist["NSStoreModelVersionHashes"] = hashes as [String: any Sendable]
        plist["NSStoreModelVersionHashesDigest"] = ManagedObjectModel.versionHashesDigest(hashes)
        plist["NSStoreModelVersionIdentifiers"] = model.versionIdentifiers.sorted() as [any Sendable]
        if let json = try? model.jsonRepresentation() { plist[SQLiteStore.modelCacheMetadataKey] = json }
    }

    /// `NSStoreModelVersionHashes` as data by entity name.
    var versionHashes: [String: Data] {
        (plist["NSStoreModelVersionHashes"] as? [String: any Sendable])?.compactMapValues { $0 as? Data }
            ?? (plist["NSStoreModelVersionHashes"] as? [String: Data]) ?? [:]
    }

    /// The model copy kept in the metadata, if any and if it loads.
    func cachedModel() -> ManagedObjectModel? {
        guard let data = plist[SQLiteStore.modelCacheMetadataKey] as? Data,
              let model = try? ManagedObjectModel(json: data, sourceURL: nil) else { return nil }
        return model
    }
}
