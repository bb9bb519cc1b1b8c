import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `stat(2)` and `lstat(2)` of a path held as a C string, wrapped once for the file watch's
/// views of a path (``SQLiteFileIdentity``, ``SQLiteDirectoryStamp``).
enum SQLiteFileStatus {
    /// The `stat` record of the file at `path`, following a final symbolic link (`stat`) or
    /// not (`lstat`), or `nil` when there is none (or it cannot be examined).
    static func of(cString path: ContiguousArray<CChar>, followingLinks: Bool = true) -> stat? {
        var info = stat()
        let found = path.withUnsafeBufferPointer { buffer in
            // Never nil: utf8CString ends with a NUL, so the buffer is not empty.
            guard let base = buffer.baseAddress else { return false }
            return (followingLinks ? stat(base, &info) : lstat(base, &info)) == 0
        }
        return found ? info : nil
    }
}
