import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a file atomically: a temporary file in the same directory, `fsync`, `rename` over the
/// old file, `fsync` of the directory. A crash at any point leaves either the old file or the
/// new one whole, never a mix.
///
/// The corresponding C functions are `open`, `write`, `fsync`, `rename` and `close`.
enum AtomicFileWriter {
    /// Writes `data` to `url` atomically. `beforeRename`, a test hook, runs once the temporary
    /// file is durable; throwing from it abandons the write as a failed `rename` would.
    static func write(_ data: Data, to url: URL, beforeRename: (@Sendable (URL) throws -> Void)? = nil) throws {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        do {
            let fd = try call("open", temporary.path) { open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
            do {
                try data.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        // `offset < buffer.count`, so the base address is non-nil and in bounds.
                        let written = try call("write", temporary.path) {
                            Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                        }
                        offset += Int(written)
                    }
                }
                _ = try call("fsync", temporary.path) { fsync(fd) }
            } catch {
                _ = close(fd)
                throw error
            }
            _ = try call("close", temporary.path) { close(fd) }
            try beforeRename?(temporary)
            _ = try call("rename", url.path) { rename(temporary.path, url.path) }
        } catch {
            _ = unlink(temporary.path)
            throw error
        }
        let directoryFD = try call("open", directory.path) { open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { _ = close(directoryFD) }
        _ = try call("fsync", directory.path) { fsync(directoryFD) }
    }

    /// Runs a system call, retrying on `EINTR`; a negative result throws an error naming the
    /// call, the file and `errno`.
    @discardableResult
    static func call<T: BinaryInteger>(_ name: String, _ path: String, _ body: () -> T) throws -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw PersistenceError(.persistentStoreSave, "Cannot write the store file: \(name) failed",
                                   path: path, underlying: String(cString: strerror(code)))
        }
    }
}
