import Foundation
import PersistKit
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// kill -9 of `persistd` at random points of a migration (issue 9, item 3).
///
/// Each round copies one store written with model v1 (`PERSIST_MIGRATION_CRASH_ROWS` Beers,
/// default 20,000), starts `persistd` with model v2 (a new attribute and a new entity) and kills
/// it with SIGKILL after a random delay between 0 and 1.2 times what a whole migration and
/// start took (seeded: `PERSIST_MIGRATION_CRASH_SEED`). The store must then be wholly v1 or
/// wholly v2 — metadata version hashes, tables and columns agreeing, every row there,
/// `integrity_check` `ok` — and the next start must finish the migration, leaving a backup
/// that is a whole v1 store. `make test` runs 6 rounds; `make stress` more
/// (`PERSIST_MIGRATION_CRASH_ROUNDS`).
@Suite("Crash: kill -9 during a migration", .timeLimit(.minutes(5)))
struct MigrationCrashTests {
    static var rounds: Int { ProcessInfo.processInfo.environment["PERSIST_MIGRATION_CRASH_ROUNDS"].flatMap(Int.init) ?? 6 }
    static var rows: Int { ProcessInfo.processInfo.environment["PERSIST_MIGRATION_CRASH_ROWS"].flatMap(Int.init) ?? 20_000 }
    static var seed: UInt64 {
        ProcessInfo.processInfo.environment["PERSIST_MIGRATION_CRASH_SEED"].flatMap { UInt64($0) } ?? 77
    }

    /// SplitMix64: a small seeded generator, so a failing round can be run again.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    enum Version: String { case old, new }

    static func model(_ json: String) throws -> ManagedObjectModel {
        let model = try ManagedObjectModel(json: Data(json.utf8), sourceURL: nil)
        try model.freeze()
        return model
    }

    /// Writes a v1 store of `rows` Beers at `url` with PersistKit, and closes it.
    static func makeOldStore(at url: URL, rows: Int) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model(MigrationDaemonTests.v1))
        let store = try coordinator.addPersistentStore(type: .sqlite, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let objects: [[String: Any]] = (0..<rows).map { ["name": "Beer \($0) " + String(repeating: "h", count: 40)] }
            _ = try context.execute(BatchInsertRequest(entityName: "Beer", objects: objects))
        }
        try coordinator.remove(store)
    }

    /// Copies the store file (and its -wal/-shm, if any) to `directory/store.sqlite`.
    static func copyStore(_ source: URL, to directory: URL) throws -> URL {
        let target = directory.appendingPathComponent("store.sqlite")
        for suffix in ["", "-wal", "-shm", ".backup"] {
            try? FileManager.default.removeItem(atPath: target.path + suffix)
        }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try FileManager.default.copyItem(atPath: source.path + suffix, toPath: target.path + suffix)
        }
        return target
    }

    static func sqlite(_ path: String, _ sql: String) throws -> String { try CrashRecoveryTests.sqlite(path, sql) }

    /// The version the store at `url` is wholly in, or `nil` (with the reason) when it is neither.
    static func version(of url: URL, v1: ManagedObjectModel, v2: ManagedObjectModel, rows: Int) throws -> (Version?, String) {
        let integrity = try sqlite(url.path, "PRAGMA integrity_check;")
        guard integrity == "ok" else { return (nil, "integrity_check: \(integrity)") }
        let count = try sqlite(url.path, "SELECT COUNT(*) FROM ZBEER;")
        guard count == "\(rows)" else { return (nil, "\(count) Beers, not \(rows)") }
        let hasTag = try sqlite(url.path, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'ZTAG';") == "1"
        let hasABV = try sqlite(url.path, "SELECT COUNT(*) FROM pragma_table_info('ZBEER') WHERE name = 'ZABV';") == "1"
        let asOld = try SQLiteStore.migrationPlan(forStoreAt: url, model: v1).outcome
        let asNew = try SQLiteStore.migrationPlan(forStoreAt: url, model: v2).outcome
        let state = "tag table \(hasTag), abv column \(hasABV), metadata v1 \(asOld == .upToDate), v2 \(asNew == .upToDate)"
        if asOld == .upToDate && !hasTag && !hasABV { return (.old, state) }
        if asNew == .upToDate && hasTag && hasABV { return (.new, state) }
        return (nil, state)
    }

    /// Starts persistd with `model` on `store`, without waiting for it.
    static func launch(model: String, store: URL, directory: URL) throws -> Process {
        let process = Process()
        process.executableURL = ModelCheckTests.binary
        process.arguments = ["--model", model, "--store", store.path, "--socket", directory.appendingPathComponent("p.sock").path]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test("kill -9 at random points of a migration: the store is wholly v1 or wholly v2, the next start finishes it")
    func killDuringMigration() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let v1 = try Self.model(MigrationDaemonTests.v1)
        let v2 = try Self.model(MigrationDaemonTests.v2)
        let v2Path = try MigrationDaemonTests.writeModel(MigrationDaemonTests.v2, named: "v2.json", in: directory)
        let pristineDirectory = directory.appendingPathComponent("pristine")
        try FileManager.default.createDirectory(at: pristineDirectory, withIntermediateDirectories: true)
        let pristine = pristineDirectory.appendingPathComponent("old.sqlite")
        try Self.makeOldStore(at: pristine, rows: Self.rows)
        #expect(try Self.version(of: pristine, v1: v1, v2: v2, rows: Self.rows).0 == .old)

        // How long a whole start with the migration takes here: the range of the kill delays.
        let work = directory.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        _ = try Self.copyStore(pristine, to: work)
        let clock = ContinuousClock()
        let started = clock.now
        let calibration = try DaemonHarness.start(model: v2Path, directory: work)
        // persistd listens before it opens (and migrates) the store: the first answer to a
        // request that reads the store marks the end.
        let probe = try calibration.connect()
        _ = try probe.result(["op": "count", "entity": "Tag"])
        let whole = clock.now - started
        probe.close()
        calibration.stop()
        let wholeMilliseconds = Double(whole.components.seconds) * 1000 + Double(whole.components.attoseconds) / 1e15
        let range = max(50, Int(wholeMilliseconds * 1.2))

        var generator = SplitMix64(state: Self.seed)
        var outcomes: [Version: Int] = [:]
        var phases: [String: Int] = [:]
        var delaysByPhase: [String: [Int]] = [:]
        for round in 0..<Self.rounds {
            let store = try Self.copyStore(pristine, to: work)
            let delay = Int.random(in: 0...range, using: &generator)
            let process = try Self.launch(model: v2Path, store: store, directory: work)
            usleep(UInt32(delay * 1000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

            // Where the kill fell, as the files tell: before the backup, during it, or after it
            // (in the migration's transaction, or after its commit).
            let backup = SQLiteStore.migrationBackupURL(for: store)
            let phase: String
            if !FileManager.default.fileExists(atPath: backup.path) {
                phase = "before the backup"
            } else if (try? Self.version(of: backup, v1: v1, v2: v2, rows: Self.rows).0) == .old {
                phase = "after the backup"
            } else {
                phase = "during the backup"
            }
            phases[phase, default: 0] += 1
            delaysByPhase[phase, default: []].append(delay)

            let (version, state) = try Self.version(of: store, v1: v1, v2: v2, rows: Self.rows)
            #expect(version != nil, "round \(round) (killed after \(delay) ms): neither wholly v1 nor wholly v2: \(state)")
            if let version { outcomes[version, default: 0] += 1 }

            // The next start finishes the migration and serves every row.
            let daemon = try DaemonHarness.start(model: v2Path, directory: work)
            let client = try daemon.connect()
            #expect(try client.result(["op": "count", "entity": "Beer"]) == ["count": .integer(Int64(Self.rows))], "round \(round)")
            #expect(try client.result(["op": "count", "entity": "Tag"]) == ["count": 0], "round \(round)")
            client.close()
            daemon.stop()
            #expect(try Self.version(of: store, v1: v1, v2: v2, rows: Self.rows).0 == .new, "round \(round): not migrated by the next start")
            // The backup (written before the migration's transaction, again by the next start
            // when the killed one had not committed) is a whole v1 store.
            #expect(try Self.version(of: backup, v1: v1, v2: v2, rows: Self.rows).0 == .old, "round \(round): backup")
        }
        print("MigrationCrashTests: a whole start with migration took \(whole); kill delays 0–\(range) ms; outcomes: \(outcomes[.old] ?? 0) left wholly v1, \(outcomes[.new] ?? 0) wholly v2; killed \(phases.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value) (\(delaysByPhase[$0.key]?.min() ?? 0)–\(delaysByPhase[$0.key]?.max() ?? 0) ms)" }.joined(separator: ", ")) (seed \(Self.seed))")
    }
}
