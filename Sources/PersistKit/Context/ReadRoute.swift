/// The store a root context read its last single object from, with the generations of the
/// context's settings and of the coordinator's stores it was found under.
///
/// Finding the store of an ID takes the context's settings lock (for its coordinator and
/// parent) and the coordinator's store lock, and retains what they hand out, on every lookup
/// to find the same store again: the route saved about 180 instructions a lookup by ID that
/// reads one row (workload 4, callgrind). While both generations are unchanged, and the ID's
/// store token is the same, the route's store is the one the locks would give.
///
/// A route keeps its store alive until the next read replaces it, even after the store was
/// removed from its coordinator (the route is then stale, and not used).
final class ReadRoute {
    // Not Sendable: made and read only on its context's queue.

    /// The context's settings generation when the store was found.
    let settingsGeneration: UInt
    /// The coordinator's stores generation when the store was found.
    let storesGeneration: UInt
    /// The context's coordinator then.
    let coordinator: PersistentStoreCoordinator
    /// The address of the store's token (the ``ObjectKey/storeBits`` of its IDs).
    let storeBits: UInt
    /// The store.
    let store: any PersistentStore

    init(settingsGeneration: UInt, storesGeneration: UInt, coordinator: PersistentStoreCoordinator, storeBits: UInt,
         store: any PersistentStore) {
        self.settingsGeneration = settingsGeneration
        self.storesGeneration = storesGeneration
        self.coordinator = coordinator
        self.storeBits = storeBits
        self.store = store
    }
}
