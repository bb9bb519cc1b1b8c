import Foundation

/// New empty directories for a test's files, under the system's temporary directory, removed
/// with their contents when the test process exits.
///
/// Most tests make a store or two in a directory of their own, and nothing removed those: a
/// development machine had 3,755 of them in `/tmp` after a few weeks of runs. A process that
/// crashes still leaves its directories, for a look at what it was doing.
public enum ScratchDirectory {
    /// Guards `made`. (A `Synchronization.Mutex` in a static `let` was reported by the thread
    /// sanitizer as a Swift access race when tests made directories in parallel: its
    /// `withLock` is seen as a modifying access of the global.)
    private static let lock = NSLock()
    /// The directories made so far, removed at exit; guarded by `lock`.
    nonisolated(unsafe) private static var made: [URL] = []
    /// Registers the removal at exit, once per process.
    private static let removalAtExit: Void = {
        atexit { ScratchDirectory.removeAll() }
    }()

    /// A new empty directory named `<prefix>-<UUID>` in the system's temporary directory.
    public static func make(prefix: String) throws -> URL {
        _ = removalAtExit
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        lock.withLock { made.append(url) }
        return url
    }

    /// Removes every directory made so far.
    private static func removeAll() {
        let urls = lock.withLock {
            defer { made.removeAll() }
            return made
        }
        for url in urls { try? FileManager.default.removeItem(at: url) }
    }
}
