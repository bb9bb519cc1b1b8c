/// A context's inserted objects not yet saved, in the order they were inserted (Core Data's
/// inserted set, kept as a list).
///
/// A list rather than a table keyed by object: inserting an object hashes nothing, and a save
/// reads the objects in the order they were made, which is the order they lie in memory (each
/// next to its values), instead of the table's hash order, a random walk that costs a cache
/// miss per object once a large insert no longer fits in the caches. Each pass of a save over
/// 50,000 new objects then streams through memory.
///
/// Each object is listed once: the context adds an object only when it is not inserted in
/// it already (``ManagedObject/isInserted``, see ``ManagedObjectContext/insert(_:)``).
/// Removing one object (a constraint clash turned into an update) searches the list; a save
/// that leaves objects inserted after it took its list keeps those, in order; every other
/// removal empties it.
///
/// The list also tells which objects a change notification has not reported yet
/// (``ProcessedCounting``): those past ``processedCount``, the objects inserted since
/// the context last processed its pending changes. A count rather than a second list of the
/// objects: that list retained each new object once more, and processing released each one,
/// two atomic operations per object.
struct InsertedObjects: ProcessedCounting {
    /// The objects, in insertion order.
    private(set) var objects: [ManagedObject] = []
    /// How many objects at the front of ``objects`` were processed (reported to observers by
    /// ``ManagedObjectContext/processPendingChanges()``); those after them were not.
    private(set) var processedCount = 0

    /// An empty list.
    init() {}

    /// How many objects are listed.
    var count: Int { objects.count }
    /// Whether no object is listed.
    var isEmpty: Bool { objects.isEmpty }

    /// The listed objects that are not deleted, in insertion order: the list itself (shared,
    /// not copied) when none is; and whether no listed object uses save hooks: each is an
    /// instance of ``ManagedObject`` itself, whose `willSave()` and `didSave()` do nothing, or
    /// of a class whose ``ManagedObject/usesSaveHooks`` is `false`. Found in one pass, reading
    /// each object's header.
    func undeleted() -> (objects: [ManagedObject], allPlain: Bool) {
        var anyDeleted = false
        var allPlain = true
        for index in objects.indices {
            // Borrowed: the list holds every object while it is read. (An `unowned(unsafe)`
            // local still retained and released each one.)
            objects.withBorrowedElement(at: index) { object in
                if object._isDeleted { anyDeleted = true }
                if allPlain && ManagedObjectContext.hasSaveHooks(object) { allPlain = false }
            }
        }
        return (anyDeleted ? objects.filter { !$0._isDeleted } : objects, allPlain)
    }

    /// Marks every listed object processed.
    mutating func markProcessed() {
        processedCount = objects.count
    }

    /// Adds `object`, which must not be listed yet; it is unprocessed.
    @inline(__always) mutating func append(_ object: ManagedObject) {
        objects.append(object)
    }

    /// Lists `objects`, none of which is listed yet, at `position` (at most ``count``): they
    /// were inserted before the objects listed from there on (a queued save that failed gives
    /// its objects back, ``ManagedObjectContext/saveQueued(overlapping:leadingIfIdle:completingOn:completion:)``).
    /// They were processed before their save took them: at or before the processed ones' end,
    /// they count among them.
    mutating func insert(_ objects: [ManagedObject], at position: Int) {
        self.objects.insert(contentsOf: objects, at: position)
        if position <= processedCount { processedCount += objects.count }
    }

    /// Removes `object` if it is listed; returns whether it was.
    @discardableResult mutating func remove(_ object: ManagedObject) -> Bool {
        guard let index = objects.firstIndex(where: { $0 === object }) else { return false }
        objects.remove(at: index)
        if index < processedCount { processedCount -= 1 }
        return true
    }

    /// Removes the objects for which `shouldRemove` is true, keeping the others in order.
    mutating func removeAll(where shouldRemove: (ManagedObject) -> Bool) {
        var kept: [ManagedObject] = []
        kept.reserveCapacity(objects.count)
        var removedProcessed = 0
        for (index, object) in objects.enumerated() {
            if !shouldRemove(object) {
                kept.append(object)
            } else if index < processedCount {
                removedProcessed += 1
            }
        }
        objects = kept
        processedCount -= removedProcessed
    }

    /// Removes every object. The buffer is let go of, not kept: after a save it is shared with
    /// the save's own list of the objects (``undeleted()``), and keeping its capacity would
    /// allocate a copy.
    mutating func removeAll() {
        processedCount = 0
        if objects.isEmpty { return }
        objects = []
    }
}
