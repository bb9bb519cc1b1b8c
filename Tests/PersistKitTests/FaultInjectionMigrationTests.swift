import Foundation
import Testing
@testable import PersistKit

/// Failed writes and syncs during a migration: each failed migration leaves the store wholly
/// of the old version (or, for a sync that failed after the commit was written, wholly of the
/// new one), and the next open finishes it.
@Suite("Fault injection during a migration")
struct FaultInjectionMigrationTests {
    typealias S = SQLiteTestSupport

    typealias Fault = FaultInjectionTests.Fault

    static func metadata(_ url: URL) throws -> [[String]] {
        try S.query(url, "SELECT hex(Z_PLIST) FROM Z_METADATA")
    }

    @Test("fail the N-th write / fsync / write on a full disk of a migration, N = 1, 2, … until it succeeds",
          .timeLimit(.minutes(1)), arguments: Fault.allCases)
    func failNthOperation(_ fault: Fault) throws {
        let directory = try ContextTestModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("people.sqlite")
        try MigrationTests.makeV1Store(url)
        let v2 = MigrationTests.v2()
        let scope = try FaultScope(directory: directory)
        var options = StoreOptions()
        options.sqliteVFSName = FaultScope.vfsName
        let oldContents = try FaultInjectionTests.contents(url)
        let oldMetadata = try Self.metadata(url)
        var failures = 0
        var committedThoughFailed = 0
        for n in 1...400 {
            scope.arm(fault.operation, at: n, error: fault.code, persistent: fault.persistent)
            do {
                let store = try SQLiteStore(model: v2, configurationName: nil, url: url, options: options)
                scope.disarm()
                _ = store
                #expect(failures == n - 1)
                print("fault injection during a migration, \(fault): \(failures) failed (N = 1…\(failures)), then N = \(n) migrated; "
                      + "\(committedThoughFailed) failed ones were found committed")
                break
            } catch {
                scope.disarm()
                failures += 1
                let persistence = try #require(error as? PersistenceError, "not a PersistenceError: \(error)")
                #expect([.migration, .persistentStoreOpen, .sqlite].contains(persistence.code), "N = \(n): \(persistence)")
                #expect(try S.query(url, "PRAGMA integrity_check") == [["ok"]], "N = \(n)")
                // Wholly old, or (a sync that failed after the commit reached the WAL) wholly new.
                let plan = try SQLiteStore.migrationPlan(forStoreAt: url, model: v2)
                if plan.steps.isEmpty {
                    committedThoughFailed += 1
                    #expect(try Self.metadata(url) != oldMetadata, "N = \(n): migrated, so its metadata is new")
                } else {
                    #expect(try FaultInjectionTests.contents(url) == oldContents, "N = \(n): the old store, unchanged")
                    #expect(try Self.metadata(url) == oldMetadata, "N = \(n)")
                }
            }
        }
        #expect(failures > 0, "no \(fault) ever failed the migration")
        // Whatever happened, the store now opens with v2 and holds every object.
        try MigrationTests.checkMigrated(url, model: v2)
    }
}
