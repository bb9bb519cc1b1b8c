import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which file a path names: its device and inode numbers (`stat(2)`'s `st_dev`, `st_ino`).
///
/// Two paths, or one path at two moments, name the same file exactly when both numbers are
/// equal; a file renamed over the path, or deleted and created again, has another inode.
struct SQLiteFileIdentity: Equatable, Sendable, CustomStringConvertible {
    /// `st_dev`.
    var device: UInt64
    /// `st_ino`.
    var inode: UInt64

    /// The identity of the file at `path` now, or `nil` when there is none (or it cannot be
    /// examined). Follows symbolic links, as SQLite's own `open` does.
    static func of(_ path: String) -> SQLiteFileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return SQLiteFileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// `device:inode`.
    var description: String { "\(device):\(inode)" }
}
