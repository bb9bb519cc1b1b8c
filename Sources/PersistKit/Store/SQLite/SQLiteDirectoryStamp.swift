import CSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which directory a path names and when its entries last changed: `stat(2)`'s `st_dev`,
/// `st_ino`, `st_ctim` and `st_mtim`.
///
/// Adding, removing or renaming an entry of a directory sets its change and modification times
/// to the current time (POSIX requires it of `rename`, `unlink`, `link` and `open` with
/// `O_CREAT`). So while a directory's stamp stays the same, no name in it was bound to another
/// file, provided a change made later cannot have been given the same time as the one the
/// stamp holds: see ``isSettled(at:)``. ``SQLiteFileWatch`` uses this to look at one directory
/// instead of the store file and its `-wal` before each write.
struct SQLiteDirectoryStamp: Equatable, Sendable {
    /// `st_dev`.
    var device: UInt64
    /// `st_ino`.
    var inode: UInt64
    /// `st_ctim`, in nanoseconds since 1970.
    var changed: Int64
    /// `st_mtim`, in nanoseconds since 1970.
    var modified: Int64

    /// The stamp of the directory at `path` now (following symbolic links), or `nil` when
    /// there is none (or it cannot be examined).
    static func of(cString path: ContiguousArray<CChar>) -> SQLiteDirectoryStamp? {
        guard let info = SQLiteFileStatus.of(cString: path) else { return nil }
        return SQLiteDirectoryStamp(device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
                                    changed: Self.nanoseconds(info.st_ctim), modified: Self.nanoseconds(info.st_mtim))
    }

    /// The time of the kernel's coarse real-time clock, in nanoseconds since 1970: the clock
    /// file systems take their timestamps from (`CLOCK_REALTIME_COARSE`; read without a system
    /// call).
    static func coarseNow() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        return nanoseconds(now)
    }

    private static func nanoseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }

    /// An upper bound on the granularity of the file system's timestamps, read off the change
    /// time: file systems truncate timestamps to a power of ten nanoseconds (FAT to two
    /// seconds), so the largest power of ten that divides the nanoseconds is at least the
    /// granularity. Whole seconds count as two.
    var granularity: Int64 {
        let fraction = changed % 1_000_000_000
        if fraction == 0 { return 2_000_000_000 }
        var bound: Int64 = 1
        var rest = fraction
        while rest % 10 == 0 {
            rest /= 10
            bound *= 10
        }
        return bound
    }

    /// Whether every change of the directory made after `now` (the coarse clock read before
    /// this stamp was taken, see ``coarseNow()``) gets a change time other than this stamp's:
    /// a later change is stamped at `now` or later, truncated to the file system's granularity,
    /// which is past ``changed`` once `now` is at least a granularity beyond it. (A clock set
    /// back could stamp a change with exactly the old time; nothing else can.)
    func isSettled(at now: Int64) -> Bool {
        changed <= now &- granularity
    }

    /// The earliest coarse time at which a stamp equal to this one would be settled.
    var settlesAt: Int64 { changed &+ granularity }

    /// Whether the directory at `path` lies on a file system known to keep directory times to
    /// the letter (ext2/3/4, XFS, Btrfs, tmpfs, F2FS); other file systems (network, FUSE,
    /// overlay) are not trusted to, and keep every file looked at.
    static func keepsExactTimes(cString path: ContiguousArray<CChar>) -> Bool {
        let type = path.withUnsafeBufferPointer { buffer in
            // Never nil: utf8CString ends with a NUL, so the buffer is not empty.
            buffer.baseAddress.map { Int64(persist_filesystem_type($0)) } ?? 0
        }
        // EXT4_SUPER_MAGIC (ext2/3/4), XFS_SUPER_MAGIC, BTRFS_SUPER_MAGIC, TMPFS_MAGIC, F2FS_SUPER_MAGIC.
        let trusted: [Int64] = [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0xF2F5_2010]
        return trusted.contains(type)
    }
}
