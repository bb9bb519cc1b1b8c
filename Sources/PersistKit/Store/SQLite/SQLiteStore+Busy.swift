import CSQLite
import Foundation

/// Waiting for other connections' locks: a SQLite busy handler that polls often, and a retry
/// with backoff around whole store operations, both bounded by ``StoreOptions/busyTimeout``.
///
/// Several processes share a store file in WAL mode: readers never wait, but one writer at a
/// time holds the write lock. SQLite's own `sqlite3_busy_timeout` sleeps up to 100 ms between
/// tries, which lets a busy writer in another process win again and again; this handler
/// sleeps 1–4 ms (with jitter) instead. Some `SQLITE_BUSY` results never reach a busy handler
/// ("the busy handler is not invoked if … [it] could result in a deadlock", and
/// `SQLITE_BUSY_SNAPSHOT`/`SQLITE_BUSY_RECOVERY`, sqlite.org/c3ref/busy_handler.html); for
/// those, ``SQLiteStore/withConnection(_:_:_:)`` retries the whole operation — every store
/// operation is one transaction or one read, so running it again is safe.
final class SQLiteBusyHandler {
    // Not Sendable, and need not be: SQLite calls the handler synchronously on the thread
    // running the statement, which holds the store's lock (see `SQLiteStore.state`).
    let timeout: Double
    private var waitStarted: ContinuousClock.Instant?

    init(timeout: Double) {
        self.timeout = max(0, timeout)
    }

    /// Installs the handler on `connection` (`sqlite3_busy_handler`). The store keeps this
    /// object alive as long as the connection (both live in the store's `State`).
    func install(on connection: SQLiteConnection) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_busy_handler(connection.handle, { context, count in
            // "The first argument to the busy handler is a copy of the void* pointer which is
            // the third argument to sqlite3_busy_handler()"; it is never NULL here.
            guard let context else { return 0 }
            let handler = Unmanaged<SQLiteBusyHandler>.fromOpaque(context).takeUnretainedValue()
            return handler.shouldRetry(count: Int(count)) ? 1 : 0
        }, context)
    }

    /// Whether to try again after the `count`-th busy result of one lock wait; sleeps first.
    /// "The second argument … is the number of times that the busy handler has been invoked
    /// previously for the same locking event."
    func shouldRetry(count: Int) -> Bool {
        let clock = ContinuousClock()
        if count == 0 { waitStarted = clock.now }
        guard let started = waitStarted else { return false }
        let elapsed = started.duration(to: clock.now)
        if elapsed >= .milliseconds(Int64(timeout * 1000)) { return false }
        usleep(UInt32(1000 + Int.random(in: 0...3000)))
        return true
    }
}

extension SQLiteStore {
    /// Whether `error` means another connection holds a lock this one needs.
    static func isBusy(_ error: SQLiteError) -> Bool {
        error.resultCode == SQLITE_BUSY || error.resultCode == SQLITE_LOCKED
    }

    /// Runs `attempt` until it does not fail with `SQLITE_BUSY`/`SQLITE_LOCKED`, sleeping with
    /// exponential backoff and jitter (1 ms doubling to 50 ms) between tries, for at most
    /// `timeout` seconds; then throws ``PersistenceError/Code/persistentStoreTimeout``.
    /// `path` is only evaluated for the error (building a file URL's path costs more than a read).
    static func retryingWhileBusy<T>(timeout: Double, what: String, path: @autoclosure () -> String?,
                                     _ attempt: () throws -> T) throws -> T {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int64(max(0, timeout) * 1000)))
        var delay = 0.001
        while true {
            do {
                return try attempt()
            } catch let error as SQLiteError where isBusy(error) {
                if clock.now >= deadline {
                    throw PersistenceError(.persistentStoreTimeout,
                                           "\(what): the store stayed locked by another connection for more than \(timeout) s (busyTimeout)",
                                           path: path(), underlying: error.description)
                }
                usleep(UInt32(delay * 1_000_000 * Double.random(in: 0.5...1.5)))
                delay = min(delay * 2, 0.05)
            }
        }
    }
}
