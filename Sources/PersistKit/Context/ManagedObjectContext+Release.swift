extension ManagedObjectContext {
    /// Lets go of the registered objects that have no unsaved changes and that nothing outside
    /// the context holds, once more than `limit` objects are registered; returns how many it
    /// let go of (a PersistKit addition).
    ///
    /// Core Data's contexts hold unchanged objects weakly, so an object nobody holds goes away
    /// by itself; PersistKit's registry holds them strongly (docs/core-data-differences.md).
    /// A long-lived context that reads many objects, such as a server's view context, calls this
    /// between units of work to keep its memory bounded. An object let go of is gone: asking for
    /// its ID again registers a fault that reads the store. Objects with changes are held by
    /// the context's change sets and stay, as do objects the program still holds.
    ///
    /// Each call past `limit` passes over the whole registry: call it where the program holds
    /// few of the context's objects, so the pass lets go of most of them.
    @discardableResult
    public func releaseUnreferencedObjects(beyond limit: Int = 0) -> Int {
        onQueue {
            guard registered.count > limit else { return 0 }
            var released = 0
            for id in Array(registered.keys) {
                // Taken out of the registry, the object is held here and by anyone else who
                // holds it; held only here, it goes when this reference does.
                guard var object = registered.removeValue(forKey: id) else { continue }
                if isKnownUniquelyReferenced(&object) {
                    released += 1
                } else {
                    registered[id] = object
                }
            }
            return released
        }
    }
}
