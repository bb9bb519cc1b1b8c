import Foundation
import Synchronization

/// A value guarded by a lock: the one way PersistKit shares mutable state between threads.
///
/// The same shape as `Synchronization.Mutex` (`withLock { value in … }`), usable as a shared
/// class reference. Normally built on `Mutex` (a futex on Linux: an uncontended lock and unlock
/// are two atomic instructions, against about 80 instructions for a pthread mutex through
/// `NSLock`). With the compilation condition `PERSIST_PTHREAD_LOCKS` it is built on `NSLock`
/// instead: the thread sanitizer understands pthread mutexes but not the futex, and reports
/// every `Mutex`-guarded access as a race; `make test`'s sanitizer run sets the condition so
/// that it reports only real races.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written only inside `withLock`, while `lock` is held.
    #if PERSIST_PTHREAD_LOCKS
    @usableFromInline let lock = NSLock()
    #else
    @usableFromInline let lock = Mutex(())
    #endif
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
        #if PERSIST_PTHREAD_LOCKS
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
        #else
        return try lock.withLock { _ throws(Failure) -> Result in try body(&value) }
        #endif
    }
}
