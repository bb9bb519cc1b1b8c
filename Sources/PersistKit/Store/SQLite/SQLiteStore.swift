import CSQLite
import Foundation
import Synchronization

/// A store in a SQLite file, in Core Data's own layout, so a store written by Core Data on an
/// Apple platform opens here and one written here opens there.
///
/// The corresponding Core Data store type is `NSSQLiteStoreType`. The layout is described in
/// `docs/sqlite-layout.md`. One connection serves the store, guarded by a `Locked` lock: calls from
/// many threads run one at a time. Saves and key allocations that wait meanwhile are committed
/// together in one transaction (group commit, `SQLiteStore+GroupCommit.swift`).
///
/// ```swift
/// let store = try SQLiteStore(model: model, configurationName: nil, url: fileURL, options: StoreOptions())
/// let beers = try store.fetch(StoreFetchRequest(entity: beer, predicate: .equal("name", .string("Duvel"))))
/// try store.close()
/// ```
public final class SQLiteStore: PersistentStore {
    struct State {
        var connection: SQLiteConnection?
        /// The connection's busy handler, kept alive as long as the connection.
        var busyHandler: SQLiteBusyHandler?
        /// The read scope whose read transaction is open on the connection (`SQLiteStore+ReadLease.swift`).
        var readLease: ObjectIdentifier?
    }

    /// Always ``StoreType/sqlite``.
    public var type: StoreType { .sqlite }
    /// The store file.
    public let url: URL?
    /// The store's UUID (`Z_METADATA.Z_UUID`).
    public let identifier: String
    /// ``identifier`` interned once (``StoreToken``), for the IDs and keys of fetched rows.
    public let storeToken: StoreToken

    /// Whether `id` names an object of this store: its token is the store's, one word compared
    /// (a temporary ID has none, so it is never the store's).
    @inline(__always) func holds(_ id: ManagedObjectID) -> Bool {
        id.storeBits == storeToken.bits
    }
    /// The configuration the store holds, or `nil` for every entity.
    public let configurationName: String?
    /// The model the store was opened with.
    public let model: ManagedObjectModel
    /// Whether the store was opened read-only.
    public let isReadOnly: Bool
    /// Whether every save is recorded in persistent history (``StoreOptions/persistentHistoryTracking``).
    public let isHistoryTracked: Bool
    /// Whether a save's ``StoreSaveRequest/updatedKeys`` are read: when history is tracked (its
    /// update changes list them).
    public var readsUpdatedKeys: Bool { isHistoryTracked }
    /// How long an operation waits for other connections' locks (``StoreOptions/busyTimeout``).
    public let busyTimeout: Double
    /// The layout of the model in this store.
    let schema: SQLiteSchema
    let storeMetadata: SQLiteMetadata
    /// The connection, confined by this lock.
    let state: Locked<State>
    /// Whether the store file and its `-wal` are still the ones opened (checked before writes).
    let fileWatch: SQLiteFileWatch
    /// Checkpoints the WAL on a thread of its own (`nil` for read-only stores, stores not in
    /// WAL mode and `wal_autocheckpoint` 0, which keep SQLite's own behaviour).
    let checkpointer: SQLiteCheckpointer?
    /// Persistent history and remote-change bookkeeping (see `SQLiteStore+History.swift`);
    /// taken alone or inside `state`'s lock, never the other way round.
    let historyState = Locked(HistoryState())
    /// The group commit of saves and key allocations (see `SQLiteStore+GroupCommit.swift`);
    /// its lock is taken alone, never inside `state`'s.
    let commitQueue: SQLiteCommitQueue
    /// What writing each entity's rows needs (layout, key sequence, columns and SQL), by
    /// entity, built on first use (see `SQLiteStore+Save.swift`).
    let writePlans = Locked<[ObjectIdentifier: EntityWritePlan]>([:])
    /// The address of the write plan ``writePlan(for:)`` returned last (0 before the first):
    /// one of those `writePlans` holds for the store's life.
    let lastWritePlan = Atomic<UInt>(0)

    /// The `journal_size_limit` a store whose WAL SQLite checkpoints itself gets unless
    /// `options.sqlitePragmas` sets one: 4 MiB, about `wal_autocheckpoint`'s 1,000 pages. A
    /// store with a ``SQLiteCheckpointer`` (every writable WAL store by default) gets the
    /// checkpointer's working size instead, about 20 MiB with 4 KiB pages. A `-wal` file that
    /// grew past the limit (while a reader pinned an old snapshot) is truncated back to it when
    /// the WAL is next reset (`docs/stores.md`, "WAL size").
    public static let defaultJournalSizeLimit = 4 * 1024 * 1024

    /// Pragmas `options.sqlitePragmas` may set, with a check of each value.
    static let allowedPragmas: [String: @Sendable (String) -> Bool] = [
        "synchronous": { ["OFF", "NORMAL", "FULL", "EXTRA", "0", "1", "2", "3"].contains($0.uppercased()) },
        "journal_mode": { ["WAL", "DELETE", "TRUNCATE", "PERSIST", "MEMORY"].contains($0.uppercased()) },
        "cache_size": { Int($0) != nil },
        "mmap_size": { Int($0).map { $0 >= 0 } ?? false },
        "temp_store": { ["DEFAULT", "FILE", "MEMORY", "0", "1", "2"].contains($0.uppercased()) },
        "secure_delete": { ["ON", "OFF", "FAST", "0", "1", "TRUE", "FALSE"].contains($0.uppercased()) },
        "wal_autocheckpoint": { Int($0).map { $0 >= 0 } ?? false },
        "journal_size_limit": { Int($0) != nil },
    ]

    /// Opens the store at `url`, creating the file and its schema if the file is new or empty.
    ///
    /// An existing store's entity numbers (`Z_PRIMARYKEY`) win over the ones computed from the
    /// model. Throws ``PersistenceError`` with code `persistentStoreOpen` when the file cannot be
    /// opened or is not a SQLite database, `persistentStoreTypeMismatch` when it is not a Core
    /// Data store, and `persistentStoreIncompatibleSchema` naming the entity and column when its
    /// tables do not fit the model.
    public init(model: ManagedObjectModel, configurationName: String?, url: URL?, options: StoreOptions) throws {
        guard let url, url.isFileURL else {
            throw PersistenceError(.persistentStoreOpen, "a SQLite store needs a file URL", path: url?.absoluteString)
        }
        do { try model.freeze() } catch {
            throw PersistenceError(.persistentStoreOpen, "the model is not valid", path: url.path, underlying: "\(error)")
        }
        guard options.commitDelay.isFinite, options.commitDelay >= 0 else {
            throw PersistenceError(.persistentStoreOpen, "commitDelay must be a number of seconds, 0 or more, not \(options.commitDelay)", path: url.path)
        }
        for (name, value) in options.sqlitePragmas {
            guard let check = Self.allowedPragmas[name.lowercased()], check(value) else {
                throw PersistenceError(.persistentStoreOpen, "SQLite pragma \(name) = \(value) is not allowed (allowed: \(Self.allowedPragmas.keys.sorted().joined(separator: ", ")))", path: url.path)
            }
        }
        let path = url.path
        let exists = FileManager.default.fileExists(atPath: path)
        if options.readOnly && !exists {
            throw PersistenceError(.persistentStoreOpen, "the store file does not exist and the store is read-only", path: path)
        }
        // An existing store written with another model version is migrated first (docs/migration.md).
        // Its own connection reads its metadata: only a store whose version hashes differ from
        // the model's is closed, migrated (the migration opens a connection of its own) and
        // opened again, so opening an up-to-date store opens one connection, not two.
        var opened = try Self.openFile(path: path, model: model, configurationName: configurationName, options: options,
                                       stoppingForMigration: exists)
        if opened == nil {
            try Self.migrateIfNeeded(url: url, model: model, configurationName: configurationName, options: options)
            opened = try Self.openFile(path: path, model: model, configurationName: configurationName, options: options,
                                       stoppingForMigration: false)
        }
        // Force-unwrap: `openFile` returns `nil` only when `stoppingForMigration` is true.
        let (connection, busyHandler, schema, storeMetadata) = opened!
        self.schema = schema
        self.storeMetadata = storeMetadata
        self.url = url
        self.identifier = storeMetadata.uuid
        self.storeToken = StoreToken.forIdentifier(storeMetadata.uuid)
        self.configurationName = configurationName
        self.model = model
        self.isReadOnly = options.readOnly
        self.isHistoryTracked = options.persistentHistoryTracking
        self.busyTimeout = options.busyTimeout
        let journalMode = (try? connection.pragma("journal_mode"))?.lowercased()
        self.fileWatch = SQLiteFileWatch(path: path, watchesWAL: journalMode == "wal")
        self.checkpointer = journalMode == "wal" && !options.readOnly
            ? Self.makeCheckpointer(connection, path: path, options: options) : nil
        self.state = Locked(State(connection: connection, busyHandler: busyHandler))
        self.commitQueue = SQLiteCommitQueue(arrivalWait: options.commitDelay)
    }

    /// Opens the file at `path` for a store of `model` (creating its schema when the file is new
    /// or empty) and reads its schema and metadata: the connection, with its busy handler, query
    /// limit and functions installed. With `stoppingForMigration`, returns `nil` (the connection
    /// closed) for an existing store that automatic migration would migrate, one whose version
    /// hashes are not the model's; the caller migrates it and opens it again.
    private static func openFile(path: String, model: ManagedObjectModel, configurationName: String?, options: StoreOptions,
                                 stoppingForMigration: Bool) throws
        -> (connection: SQLiteConnection, busyHandler: SQLiteBusyHandler, schema: SQLiteSchema, metadata: SQLiteMetadata)? {
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, flags: options.readOnly ? [.readOnly, .noMutex] : [.readWrite, .create, .noMutex],
                                              vfs: SQLiteWALWriteVFS.name(over: options.sqliteVFSName))
        } catch {
            throw PersistenceError(.persistentStoreOpen, "the store file could not be opened", path: path, underlying: error.description)
        }
        let busyHandler = SQLiteBusyHandler(timeout: options.busyTimeout)
        busyHandler.install(on: connection)
        connection.registerFunctions()
        // After the functions: the limit registers its own MATCHES, which honours the deadline.
        SQLiteQueryLimit(timeout: options.queryTimeout).install(on: connection)

        let entities = model.entities(forConfiguration: configurationName)
        var opened: (SQLiteSchema, SQLiteMetadata)
        do {
            var tables: Set<String>
            do {
                tables = try Self.tableNames(connection)
            } catch let error as SQLiteError where error.resultCode == SQLiteError.notADatabase {
                throw PersistenceError(.persistentStoreOpen, "the file is not a SQLite database", path: path)
            }
            var created: (SQLiteSchema, SQLiteMetadata)?
            if tables.isEmpty {
                guard !options.readOnly else {
                    throw PersistenceError(.persistentStoreTypeMismatch, "the file is an empty SQLite database, not a Core Data store", path: path)
                }
                created = try Self.createSchema(connection, entities: entities, model: model, options: options, path: path)
                // Another process created the store between our look and our write lock: open theirs.
                if created == nil { tables = try Self.tableNames(connection) }
            }
            if let (schema, metadata) = created {
                opened = (schema, metadata)
            } else {
                guard tables.contains("Z_METADATA"), tables.contains("Z_PRIMARYKEY") else {
                    throw PersistenceError(.persistentStoreTypeMismatch, "the SQLite database is not a Core Data store (it has no Z_METADATA and Z_PRIMARYKEY tables)", path: path)
                }
                let metadata = try Self.readMetadata(connection, path: path)
                if stoppingForMigration && migratesAutomatically(options) && metadata.versionHashes != model.entityVersionHashesByName {
                    try? connection.close()
                    return nil
                }
                var numbers: [String: Int] = [:]
                // (Rows of the history's entities, 16001 and up, are no entity of the model.)
                try connection.cachedStatement("SELECT \"Z_ENT\", \"Z_NAME\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" < 16000").forEachRow { row in
                    numbers[row.string(1)] = Int(row.int64(0))
                }
                for entity in entities where numbers[entity.name] == nil {
                    throw PersistenceError(.persistentStoreIncompatibleSchema, "the store has no entity \(entity.name) in Z_PRIMARYKEY", path: path)
                }
                let schema = SQLiteSchema(entities: entities, existingNumbers: numbers)
                try Self.checkSchema(schema, connection: connection, tables: tables, path: path)
                if !options.readOnly { try Self.applyPragmas(connection, options: options, path: path) }
                opened = (schema, metadata)
            }
            if options.persistentHistoryTracking && !options.readOnly { try Self.createHistoryTables(connection) }
        } catch {
            try? connection.close()
            if let error = error as? SQLiteError {
                throw error.persistenceError(.persistentStoreOpen, "the store could not be opened", path: path)
            }
            throw error
        }
        return (connection, busyHandler, opened.0, opened.1)
    }

    /// The checkpointer of a store in WAL mode, its hook installed on `connection`; `nil` when
    /// `wal_autocheckpoint` is 0 (no automatic checkpoints at all) or its connection could not
    /// be opened (SQLite's own checkpoints then go on). Unless `options` set one, the store's
    /// `journal_size_limit` becomes the checkpointer's working size of the WAL.
    private static func makeCheckpointer(_ connection: SQLiteConnection, path: String, options: StoreOptions) -> SQLiteCheckpointer? {
        // Read before the hook is installed: with another hook, SQLite reports 0.
        guard let threshold = (try? connection.pragma("wal_autocheckpoint")).flatMap({ Int32($0) }), threshold > 0,
              let checkpointer = try? SQLiteCheckpointer(path: path, vfs: options.sqliteVFSName, threshold: threshold) else { return nil }
        connection.setWALHook(checkpointer)
        if !options.sqlitePragmas.keys.contains(where: { $0.lowercased() == "journal_size_limit" }),
           let pageSize = (try? connection.pragma("page_size")).flatMap({ Int($0) }) {
            try? connection.setPragma("journal_size_limit", String(checkpointer.journalSizeLimit(pageSize: pageSize)))
        }
        return checkpointer
    }

    /// What the WAL's checkpointer did since the store was opened: checkpoints on its thread,
    /// checkpoints run by a committing thread at the WAL's limit, and the times a commit found
    /// the WAL started again from its beginning; `nil` without a checkpointer (persistd logs
    /// them when it stops).
    public var checkpointCounters: (background: Int, onCommit: Int, restarts: Int)? {
        checkpointer.map { let counts = $0.counts; return (counts.background, counts.onCommit, counts.restarts) }
    }

    /// Stops the checkpointer and removes its hook from `connection`, then closes its
    /// connection, or keeps it open once the files were found replaced (see
    /// ``SQLiteFileWatch/keepsOpen(_:)``). Called with the store's lock held, before
    /// `connection` itself is closed, so that `connection` is the last one and removes the WAL.
    private func endCheckpointer(_ connection: SQLiteConnection) {
        guard let checkpointer else { return }
        connection.setWALHook(nil)
        checkpointer.stop()
        if !fileWatch.keepsOpen(checkpointer.connection) { try? checkpointer.connection.close() }
    }

    deinit {
        state.withLock { state in
            if let connection = state.connection {
                endCheckpointer(connection)
                Self.endReadLease(&state, connection)
            }
            if let connection = state.connection, fileWatch.keepsOpen(connection) { state.connection = nil; return }
            try? state.connection?.close()
            state.connection = nil
        }
    }

    /// Creates Core Data's tables for `entities` in an empty database, in one write
    /// transaction; `nil` if, once the write lock is held, the database is no longer empty
    /// (another process created the store first: several processes may open a new store file
    /// at once).
    private static func createSchema(_ connection: SQLiteConnection, entities: [EntityDescription], model: ManagedObjectModel,
                                     options: StoreOptions, path: String) throws -> (SQLiteSchema, SQLiteMetadata)? {
        let schema = SQLiteSchema(entities: entities)
        let metadata = SQLiteMetadata(uuid: UUID().uuidString, model: model)
        // auto_vacuum must be set before the first table is created; Core Data records it as _NSAutoVacuumLevel 2.
        // (On a database another process filled meanwhile it changes nothing.)
        try connection.setPragma("auto_vacuum", "2")
        try applyPragmas(connection, options: options, path: path)
        return try connection.inTransaction(.immediate) { () throws -> (SQLiteSchema, SQLiteMetadata)? in
            guard try tableNames(connection).isEmpty else { return nil }
            for sql in schema.creationSQL() { try connection.execute(sql) }
            for (number, entity) in schema.entitiesByNumber.sorted(by: { $0.key < $1.key }) {
                let parent = entity.superentity.flatMap { schema.layout(of: $0)?.number } ?? 0
                try connection.execute("INSERT INTO \"Z_PRIMARYKEY\" (\"Z_ENT\", \"Z_NAME\", \"Z_SUPER\", \"Z_MAX\") VALUES (?, ?, ?, 0)",
                                       [.integer(Int64(number)), .string(entity.name), .integer(Int64(parent))])
            }
            try connection.execute("INSERT INTO \"Z_METADATA\" (\"Z_VERSION\", \"Z_UUID\", \"Z_PLIST\") VALUES (1, ?, ?)",
                                   [.string(metadata.uuid), .data(try metadata.plistData())])
            return (schema, metadata)
        }
    }

    /// The names of the database's tables; untyped `throws` so callers can catch by code.
    private static func tableNames(_ connection: SQLiteConnection) throws -> Set<String> {
        Set(try connection.strings("SELECT name FROM sqlite_master WHERE type = 'table'"))
    }

    private static func applyPragmas(_ connection: SQLiteConnection, options: StoreOptions, path: String) throws {
        var pragmas = ["journal_mode": "WAL", "synchronous": "NORMAL", "journal_size_limit": String(defaultJournalSizeLimit)]
        for (name, value) in options.sqlitePragmas { pragmas[name.lowercased()] = value }
        // journal_mode first: it must run outside a transaction and before the others take effect.
        if let mode = pragmas.removeValue(forKey: "journal_mode") {
            // Changing the journal mode takes an exclusive lock, and where waiting for it could
            // deadlock SQLite reports another connection's lock at once (SQLITE_BUSY) instead of
            // calling the busy handler: several connections opening one new store file together
            // meet this, so the change is retried for up to the busy timeout.
            try retryingWhileBusy(timeout: options.busyTimeout, what: "setting journal_mode", path: path) {
                try connection.setPragma("journal_mode", mode)
            }
        }
        for (name, value) in pragmas.sorted(by: { $0.key < $1.key }) { try connection.setPragma(name, value) }
    }

    private static func readMetadata(_ connection: SQLiteConnection, path: String) throws -> SQLiteMetadata {
        let statement = try connection.cachedStatement("SELECT \"Z_UUID\", \"Z_PLIST\" FROM \"Z_METADATA\" ORDER BY \"Z_VERSION\" LIMIT 1")
        defer { statement.reset() }
        guard try statement.step() else {
            throw PersistenceError(.persistentStoreTypeMismatch, "the store's Z_METADATA table is empty", path: path)
        }
        let metadata: SQLiteMetadata
        do {
            metadata = try SQLiteMetadata(uuid: statement.string(0), plistData: statement.data(1))
        } catch {
            throw PersistenceError(.persistentStoreOpen, "the store's metadata (Z_METADATA.Z_PLIST) is not a property list", path: path, underlying: "\(error)")
        }
        if let type = metadata.plist["NSStoreType"] as? String, type != StoreType.sqlite.rawValue {
            throw PersistenceError(.persistentStoreTypeMismatch, "the store's metadata says it is a \(type) store, not SQLite", path: path)
        }
        return metadata
    }

    /// Checks that every table and column the model needs exists.
    private static func checkSchema(_ schema: SQLiteSchema, connection: SQLiteConnection, tables: Set<String>, path: String) throws {
        func columns(of table: String) throws -> Set<String> {
            let statement = try connection.prepare("PRAGMA table_info(\(SQLiteSchema.quote(table)))")
            var names: Set<String> = []
            while try statement.step() { names.insert(statement.string(1)) }
            return names
        }
        for table in schema.tables {
            guard tables.contains(table.name) else {
                throw PersistenceError(.persistentStoreIncompatibleSchema, "the store has no table \(table.name) for entity \(table.root.name)", path: path)
            }
            let existing = try columns(of: table.name)
            for column in ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name) where !existing.contains(column) {
                let owner = table.columns.first { $0.name == column }.map { column -> String in
                    switch column.kind {
                    case .attribute(let a): return "\(a.entity?.name ?? table.root.name).\(a.name)"
                    case .foreignKey(let r), .foreignEntity(let r), .foreignOrder(let r): return "\(r.entity?.name ?? table.root.name).\(r.name)"
                    }
                } ?? table.root.name
                throw PersistenceError(.persistentStoreIncompatibleSchema, "table \(table.name) has no column \(column) for \(owner)", path: path)
            }
        }
        for join in schema.joinTables {
            let owner = "\(join.relationship.entity?.name ?? "?").\(join.relationship.name)"
            guard tables.contains(join.name) else {
                throw PersistenceError(.persistentStoreIncompatibleSchema, "the store has no join table \(join.name) for \(owner)", path: path)
            }
            let existing = try columns(of: join.name)
            for column in [join.sourceColumn, join.destinationColumn] + [join.sourceOrderColumn, join.destinationOrderColumn].compactMap({ $0 })
            where !existing.contains(column) {
                throw PersistenceError(.persistentStoreIncompatibleSchema, "join table \(join.name) has no column \(column) for \(owner)", path: path)
            }
        }
    }

    // MARK: - Connection access

    /// Runs `body` with the connection under the store's lock, mapping SQLite errors to
    /// ``PersistenceError`` with code `code`.
    ///
    /// When another connection holds a lock `body` needs, `body` runs again (the lock released
    /// in between) with backoff, for at most ``busyTimeout`` seconds; then the error is
    /// ``PersistenceError/Code/persistentStoreTimeout``. Every `body` is one transaction or
    /// one read whose result it gathers before returning, so running it again is safe; a read
    /// that hands rows to a consumer as it goes runs in ``withReadSnapshot(_:_:)`` instead.
    func withConnection<T: Sendable>(_ code: PersistenceError.Code = .sqlite, _ what: String,
                                     _ body: (SQLiteConnection) throws -> T) throws -> T {
        do {
            return try Self.retryingWhileBusy(timeout: busyTimeout, what: what, path: url?.path) { try onConnection(body) }
        } catch let error as SQLiteError {
            throw error.persistenceError(code, what, path: url?.path)
        }
    }

    /// One attempt of ``withConnection(_:_:_:)`` (or of ``withReadSnapshot(_:_:)``): under the
    /// store's lock, ends the open read lease, if any, and runs `body` with the connection.
    func onConnection<T: Sendable>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try state.withLock { state throws -> T in
            guard let connection = state.connection else {
                throw PersistenceError(.persistentStoreOperation, "the store is closed", path: url?.path)
            }
            Self.endReadLease(&state, connection)
            return try body(connection)
        }
    }

    /// The number of SQL statements run on the store's connection so far (for tests).
    public var statementCount: Int {
        state.withLock { $0.connection?.statementCount ?? 0 }
    }

    /// Calls `observer` with the SQL of every statement the store runs from now on, or stops
    /// with `nil` (for tests that assert the exact SQL).
    public func setStatementObserver(_ observer: (@Sendable (String) -> Void)?) {
        state.withLock { $0.connection?.statementObserver = observer }
    }

    // MARK: - PersistentStore

    /// The store's metadata: the `Z_METADATA` plist with `NSStoreUUID` and `NSStoreType`.
    public func metadata() -> [String: any Sendable] { storeMetadata.dictionary }

    /// Closes the connection; later calls throw.
    public func close() throws {
        try state.withLock { state in
            defer { state.connection = nil }
            if let connection = state.connection {
                endCheckpointer(connection)
                Self.endReadLease(&state, connection)
            }
            if let connection = state.connection, fileWatch.keepsOpen(connection) { return }
            do { try state.connection?.close() } catch let error as SQLiteError {
                throw error.persistenceError(.sqlite, "the store could not be closed", path: url?.path)
            }
        }
    }

    /// The layout of `entity`, or an error if the store does not hold it.
    func layout(of entity: EntityDescription) throws -> SQLiteSchema.EntityLayout {
        guard let layout = schema.layout(of: entity), layout.entity === entity || layout.entity.name == entity.name else {
            throw PersistenceError(.persistentStoreOperation, "the store does not hold entity \(entity.name)", path: url?.path)
        }
        return layout
    }

    func readOnlyError(_ what: String) -> PersistenceError {
        PersistenceError(.persistentStoreSave, "the store is read-only; cannot \(what)", path: url?.path)
    }
}
