import Foundation

/// One block of work on a context's queue (a `perform`/`performAndWait` block, or one public
/// call of the context made from outside its queue), during which a store may keep one read
/// transaction open across the block's loads of single objects.
///
/// Core Data reads each object in its own transaction. Reading many objects one by one (faults
/// firing, `existingObject(with:)` in a loop) then pays SQLite's cost of starting and ending a
/// read transaction per object. A scope lets the store read the second and later objects of the
/// block in one transaction (see `SQLiteStore+ReadLease.swift`), which ends when the block
/// returns, or earlier when anything else uses the store's connection (a save, a fetch, another
/// context's read). The scope of the current thread is kept in a thread-local slot; scopes nest
/// when a block waits for another context's block on the same thread.
final class ReadScope {
    // Not Sendable: a scope is created, used and ended on the one thread that runs its block.

    /// How many single-object reads the scope made so far; the store starts a shared read
    /// transaction from the second one on, so a block that reads one object pays nothing extra.
    @exclusivity(unchecked) var reads = 0
    /// The context whose queue runs the scope's block, if the block is a context's.
    let context: ObjectIdentifier?
    /// The stores that hold a read transaction for this scope, ended when the scope ends.
    // Unchecked exclusivity: like `reads`, used only by the scope's own thread.
    @exclusivity(unchecked) private var leases: [ReadLeaseHolder] = []

    /// Registers a store that started a read transaction for this scope.
    func holds(_ store: ReadLeaseHolder) {
        if !leases.contains(where: { $0 === store }) { leases.append(store) }
    }

    /// The scope of the block running on this thread, if any, unretained: it is valid while
    /// the block runs (``run(for:_:)`` keeps the scope until its block returns), so a caller
    /// inside the block uses it through `_withUnsafeGuaranteedRef`, without the retain and
    /// release a strong reference would cost each single-object read.
    static var unretainedCurrent: Unmanaged<ReadScope>? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<ReadScope>.fromOpaque(raw)
    }

    init(context: ObjectIdentifier?) {
        self.context = context
    }

    /// Runs `body` as a new scope of this thread, then ends every read transaction it started.
    /// `context` names the context whose queue runs `body` (see ``isRunning(context:)``).
    static func run<T>(for context: AnyObject? = nil, _ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        let scope = ReadScope(context: context.map(ObjectIdentifier.init))
        // Unretained: `scope` lives until this function returns, after the slot is restored.
        pthread_setspecific(key, Unmanaged.passUnretained(scope).toOpaque())
        defer {
            pthread_setspecific(key, previous)
            for store in scope.leases { store.endReadLease(of: ObjectIdentifier(scope)) }
        }
        return try body()
    }

    /// Whether the innermost scope of this thread runs a block of `context` on its queue: a
    /// thread-local read, cheaper than asking Dispatch for the queue's specific value. `false`
    /// says nothing (the caller then asks Dispatch).
    static func isRunning(context: ObjectIdentifier) -> Bool {
        guard let raw = pthread_getspecific(key) else { return false }
        return Unmanaged<ReadScope>.fromOpaque(raw).takeUnretainedValue().context == context
    }

    /// The thread-local slot. `pthread_key_create` fails only when the process ran out of keys
    /// (PTHREAD_KEYS_MAX, at least 128); scopes are then never current and stores read as before.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}

/// A store that can hold a read transaction open for a ``ReadScope``.
protocol ReadLeaseHolder: AnyObject {
    /// Ends the read transaction held for the scope `owner`, if it still holds one.
    func endReadLease(of owner: ObjectIdentifier)
}
