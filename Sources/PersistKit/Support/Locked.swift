import Foundation

/// A value guarded by a lock: the one way PersistKit shares mutable state between threads.
///
/// The same shape as `Synchronization.Mutex` (`withLock { value in … }`), built on a pthread
/// mutex (`NSLock`) instead of a raw futex. The thread sanitizer understands pthread mutexes
/// but not the futex `Mutex` uses on Linux, where every `Mutex`-guarded access is reported as
/// a race; with `Locked`, `make test`'s sanitizer run reports only real races.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written only inside `withLock`, while `lock` is held.
    @usableFromInline let lock = NSLock()
    // No dynamic exclusivity checks: the lock already makes every access exclusive, and the
    // checks cost about 2% of a run of single-object lookups (each takes the store's lock).
    @exclusivity(unchecked) @usableFromInline var value: Value

    /// Creates a lock guarding `value`.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value, and returns its result.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
