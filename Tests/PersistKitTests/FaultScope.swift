import CFaultVFS
import Foundation
import PersistKit

/// A directory whose SQLite files go through the fault-injecting VFS of `CFaultVFS`
/// ("persist-fault"): open a store there with ``StoreOptions/sqliteVFSName`` set to
/// ``FaultScope/vfsName`` and its reads, writes and syncs can be failed or counted, and its
/// writes and syncs cut by a simulated power loss. Scopes keep tests that run in parallel apart.
///
/// Immutable: every mutable piece lives in the C library, behind its own pthread mutex.
final class FaultScope: Sendable {
    /// What a fault or a count is about.
    enum Operation {
        case write
        case sync
        /// A read of the database, its WAL or its journal.
        case read

        var raw: Int32 {
            switch self {
            case .write: Int32(PERSIST_FAULT_WRITE)
            case .sync: Int32(PERSIST_FAULT_SYNC)
            case .read: Int32(PERSIST_FAULT_READ)
            }
        }
    }

    /// How a crash image treats the writes not yet synced.
    enum PowerLoss {
        /// Every unsynced write is lost.
        case dropAll
        /// Each unsynced write kept, lost, or torn sector by sector, at random from a seed.
        case random

        var raw: Int32 {
            switch self {
            case .dropAll: Int32(PERSIST_FAULT_DROP_ALL)
            case .random: Int32(PERSIST_FAULT_RANDOM)
            }
        }
    }

    /// What a crash image did to the unsynced writes of one file.
    struct ImageStats: Sendable, Equatable {
        var kept = 0
        var dropped = 0
        var torn = 0
    }

    /// A failure of the VFS's controls.
    struct ControlError: Error, CustomStringConvertible {
        var description: String
    }

    /// SQLite result codes the tests inject (values from sqlite3.h).
    enum Code {
        /// `SQLITE_IOERR_WRITE`: a write failed.
        static let ioErrWrite: Int32 = 10 | (3 << 8)
        /// `SQLITE_IOERR_FSYNC`: an fsync failed.
        static let ioErrFsync: Int32 = 10 | (4 << 8)
        /// `SQLITE_FULL`: the disk is full (ENOSPC).
        static let full: Int32 = 13
        /// `SQLITE_BUSY`: another connection holds a lock (a read failed with it stands for a
        /// lock no busy handler waits out).
        static let busy: Int32 = 5
    }

    /// The VFS's name, for ``StoreOptions/sqliteVFSName``.
    static let vfsName = PERSIST_FAULT_VFS_NAME

    /// The directory watched.
    let directory: URL
    private let handle: Int32

    /// Registers the VFS if needed and starts watching `directory` (which must exist).
    init(directory: URL) throws {
        // SQLite's process-wide settings first: registering initializes SQLite, after which
        // they could not be given (see SQLiteLibrary).
        SQLiteLibrary.prepare()
        let registered = persist_fault_vfs_register()
        guard registered == 0 else { throw ControlError(description: "registering the fault VFS failed with SQLite code \(registered)") }
        let handle = persist_fault_scope_open(directory.path)
        guard handle >= 0 else { throw ControlError(description: "cannot watch \(directory.path) (missing, or every scope is taken)") }
        self.directory = directory
        self.handle = handle
    }

    deinit { persist_fault_scope_close(handle) }

    /// Fails the `n`-th `operation` from now (counted from 1) with `error`; with `persistent`,
    /// every later one too, until ``disarm()``. Resets the counts.
    func arm(_ operation: Operation, at n: Int, error: Int32, persistent: Bool = false) {
        persist_fault_arm(handle, operation.raw, Int64(n), error, persistent ? 1 : 0)
    }

    /// Stops failing operations.
    func disarm() { persist_fault_disarm(handle) }

    /// The operations of a kind since the last arm.
    func count(_ operation: Operation) -> Int { Int(persist_fault_count(handle, operation.raw)) }

    /// The faults injected since the scope was opened.
    var injected: Int { Int(persist_fault_injected(handle)) }

    /// The writes to `file` (or, for `nil`, to every file of the scope) not yet made durable by
    /// a sync: 0 means a power loss now would lose none of them.
    func unsyncedWrites(_ file: URL? = nil) -> Int { Int(persist_fault_unsynced(handle, file?.path)) }

    /// Cuts the power at the `n`-th write or sync from now (0: now): that operation and every
    /// later one fails and leaves the disk as it was.
    func armPowerCut(at n: Int) { persist_fault_arm_power_cut(handle, Int64(n)) }

    /// Whether the power is cut.
    var isPoweredOff: Bool { persist_fault_is_powered_off(handle) != 0 }

    /// Writes to `destination` what `file` could hold after a power loss now.
    @discardableResult
    func crashImage(of file: URL, to destination: URL, seed: UInt64, _ mode: PowerLoss) throws -> ImageStats {
        var stats = persist_fault_image_stats()
        let code = persist_fault_crash_image(handle, file.path, destination.path, seed, mode.raw, &stats)
        guard code == 0 else {
            throw ControlError(description: "crash image of \(file.path) failed: \(String(cString: strerror(code)))")
        }
        return ImageStats(kept: Int(stats.kept), dropped: Int(stats.dropped), torn: Int(stats.torn))
    }

    /// Crash images of a SQLite store's files (the database and its WAL, when there is one) in
    /// `destination`, under the same names; the `-shm` index is left out, as SQLite rebuilds it.
    @discardableResult
    func crashImage(ofStore store: URL, into destination: URL, seed: UInt64, _ mode: PowerLoss) throws -> ImageStats {
        var total = ImageStats()
        for (index, suffix) in ["", "-wal"].enumerated() {
            let file = URL(fileURLWithPath: store.path + suffix)
            guard FileManager.default.fileExists(atPath: file.path) else { continue }
            let stats = try crashImage(of: file, to: destination.appendingPathComponent(file.lastPathComponent),
                                       seed: seed &+ UInt64(index), mode)
            total.kept += stats.kept
            total.dropped += stats.dropped
            total.torn += stats.torn
        }
        return total
    }
}
