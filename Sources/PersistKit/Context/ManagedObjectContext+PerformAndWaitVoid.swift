import Dispatch

extension ManagedObjectContext {
    /// ``performAndWait(_:)`` for a block that returns nothing and throws nothing: the same hop
    /// (inline when already on the context's queue, else a synchronous one onto it, as a new
    /// ``ReadScope``), through Dispatch's non-generic `sync`, which spares the generic one's
    /// result box, metadata look-ups and closure wrapping (about 2 K instructions a call).
    /// A server answering small reads on its event-loop thread makes one such hop per request.
    public func performVoidAndWait(_ block: () -> Void) {
        if isOnQueue { return block() }
        queue.sync { ReadScope.run(for: self, block) }
    }
}
