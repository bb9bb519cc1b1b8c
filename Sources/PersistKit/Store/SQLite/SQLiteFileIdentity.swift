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
        of(cString: path.utf8CString)
    }

    /// ``of(_:)`` for a path already converted to a C string (`String.utf8CString`): a path
    /// looked at again and again is converted once, not at every call.
    static func of(cString path: ContiguousArray<CChar>) -> SQLiteFileIdentity? {
        SQLiteFileStatus.of(cString: path).map(SQLiteFileIdentity.init(status:))
    }

    /// ``of(cString:)``, noting in `isLink` whether the path itself is a symbolic link (looked
    /// at with `lstat`: one system call when it is not, as many as ``of(cString:)`` makes).
    static func of(cString path: ContiguousArray<CChar>, isLink: inout Bool) -> SQLiteFileIdentity? {
        guard let info = SQLiteFileStatus.of(cString: path, followingLinks: false) else { return nil }
        if (info.st_mode & S_IFMT) == S_IFLNK {
            isLink = true
            return of(cString: path)
        }
        return SQLiteFileIdentity(status: info)
    }

    /// The identity a `stat` record gives.
    private init(status info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// `device:inode`.
    var description: String { "\(device):\(inode)" }
}
