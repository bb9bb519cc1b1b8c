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
            // Prefetched members held as objects by their sources are held as IDs instead, so an
            // object nothing else holds is uniquely referenced by the registry.
            // In place: forgetting members changes objects, not the registry.
            registered.forEachObject { object in
                if object.hasToManyStates { object.forgetMemberObjects(keepingIDs: true) }
            }
            var released = 0
            for id in registered.keys {
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

    /// The fewest registered objects for which ``emptyRegistry(keepingCapacity:_:)`` lets go
    /// of them in address order: below it the table's own teardown is as cheap.
    static var orderedTeardownThreshold: Int { 4096 }

    /// Empties the registry, calling `body` on each object and then letting go of it, lowest
    /// address first.
    ///
    /// A table releases its entries in hash order, which for IDs hashed by primary key is a
    /// random walk over the objects, their IDs and their values: each object freed touches
    /// cold memory, and `malloc` merges each freed block with neighbours freed at random earlier
    /// (perf, workload 2: tearing down 200,000 fetched objects took about a third of the fetch's
    /// time). Objects fetched together were allocated together, in order, each next to its
    /// values and its ID; released in address order they are freed front to back, each block
    /// merged with the one freed just before. So the objects are gathered (one pass over the
    /// table, reading its words only: see ``ObjectRegistry/takeAll(keepingCapacity:)``) and
    /// ordered by address (``inPageOrder(_:)``), then each is released in that order. Objects
    /// held elsewhere are released, not freed, as before.
    func emptyRegistry(keepingCapacity: Bool, _ body: (ManagedObject) -> Void = { _ in }) {
        guard registered.count >= Self.orderedTeardownThreshold else {
            registered.forEachObject(body)
            registered.removeAll(keepingCapacity: keepingCapacity)
            return
        }
        // The table's own retains, taken over without visiting the objects (each a cache miss,
        // in the table's random order): ordering them moves words.
        let objects = registered.takeAll(keepingCapacity: keepingCapacity)
        for object in Self.inPageOrder(objects) {
            // The table's retain, taken over above, keeps the object alive through `body`.
            object._withUnsafeGuaranteedRef(body)
            object.release()
        }
    }

    /// `objects` ordered by the 4 KiB page of memory each starts in, lowest first (in any order
    /// within a page, which is in cache as a whole when its objects go).
    ///
    /// A counting sort over the pages the objects span: two passes over the objects and one
    /// over the pages, rather than a comparison sort's n log n steps. Objects spread over many
    /// more pages than there are objects (not the objects of one fetch) are sorted by address.
    static func inPageOrder(_ objects: [Unmanaged<ManagedObject>]) -> [Unmanaged<ManagedObject>] {
        let count = objects.count
        guard count > 1 else { return objects }
        let pages = objects.map { UInt(bitPattern: $0.toOpaque()) >> 12 }
        var low = pages[0], high = pages[0]
        for page in pages {
            low = Swift.min(low, page)
            high = Swift.max(high, page)
        }
        let span = high - low
        guard span < UInt(4 * count) else {
            return objects.sorted { $0.toOpaque() < $1.toOpaque() }
        }
        // starts[p] is where the objects of page `low + p` begin in the result, once summed.
        var starts = [Int](repeating: 0, count: Int(span) + 2)
        starts.withUnsafeMutableBufferPointer { starts in
            for page in pages { starts[Int(page - low) + 1] += 1 }
            var total = 0
            for index in starts.indices {
                total += starts[index]
                starts[index] = total
            }
        }
        var ordered = objects
        starts.withUnsafeMutableBufferPointer { starts in
            ordered.withUnsafeMutableBufferPointer { ordered in
                for index in 0..<count {
                    let page = Int(pages[index] - low)
                    ordered[starts[page]] = objects[index]
                    starts[page] += 1
                }
            }
        }
        return ordered
    }
}
