/// One of a context's lists of objects: its changed objects (Core Data's updated objects, and
/// objects whose only changes are transient), or its deleted objects; each listed once, in
/// the order they were added.
///
/// A list whose objects know their own place in it (``ObjectChangeState/changedPlace`` or
/// ``ObjectChangeState/deletedPlace``, in the object's change state, made when the object is
/// added), rather than a dictionary keyed by object identity: adding an object hashes nothing
/// and never rehashes a growing table (in a save of 50,000 changed objects, the dictionary's
/// insertions cost about 400 instructions an object, and emptying it released its objects in
/// hash order).
///
/// An object is listed when its recorded place holds it, so a place left behind by an earlier
/// list (the list was emptied after a save, or replaced) is told apart without visiting the
/// objects when the list is emptied.
///
/// The list also tells which objects a change notification has not reported yet
/// (``ProcessedCounting``): those from ``processedCount`` on, added since the context last
/// processed its pending changes (a count, not a second list retaining each object once
/// more). Removing an object keeps the processed objects in front: a processed object's place
/// is taken by the last processed one, whose place is taken by the last object.
struct ListedObjects: ProcessedCounting {
    /// Which list of a context this is: which place of an object's change state it records.
    enum Kind {
        /// The changed objects (``ObjectChangeState/changedPlace``).
        case changed
        /// The deleted objects (``ObjectChangeState/deletedPlace``).
        case deleted
    }

    /// Which list this is.
    let kind: Kind
    /// The objects, in the order they were added (until a removal moves the last one).
    private(set) var objects: [ManagedObject] = []
    /// How many objects at the front of ``objects`` were processed (reported to observers by
    /// ``ManagedObjectContext/processPendingChanges()``); those after them were not.
    private(set) var processedCount = 0

    /// An empty list of `kind`.
    init(_ kind: Kind) {
        self.kind = kind
    }

    /// How many objects are listed.
    var count: Int { objects.count }
    /// Whether no object is listed.
    var isEmpty: Bool { objects.isEmpty }

    /// Whether `object` is listed.
    func contains(_ object: ManagedObject) -> Bool {
        guard let state = object.existingChangeState else { return false }
        return holds(object, at: place(in: state))
    }

    /// Adds `object` unless it is listed; returns whether it was added.
    @discardableResult mutating func add(_ object: ManagedObject) -> Bool {
        // The state borrowed from the object, not retained for the look.
        object.withMadeChangeState { state in
            if holds(object, at: place(in: state)) { return false }
            setPlace(objects.count, in: state)
            objects.append(object)
            return true
        }
    }

    /// Marks every listed object processed.
    mutating func markProcessed() {
        processedCount = objects.count
    }

    /// Removes `object` if it is listed; returns whether it was.
    @discardableResult mutating func remove(_ object: ManagedObject) -> Bool {
        guard let state = object.existingChangeState else { return false }
        var index = place(in: state)
        guard holds(object, at: index) else { return false }
        if index < processedCount {
            // Moved to the processed objects' end, which then becomes the first unprocessed place.
            processedCount -= 1
            swapPlaces(index, processedCount)
            index = processedCount
        }
        swapPlaces(index, objects.count - 1)
        objects.removeLast()
        setPlace(-1, in: state)
        return true
    }

    /// Removes every object, keeping a small list's storage for the next changes (a context
    /// saving one object at a time then allocates none per save) but not a large one's. The
    /// objects are not visited: the places they recorded no longer hold them.
    mutating func removeAll() {
        processedCount = 0
        if objects.isEmpty { return }
        if objects.count <= 64 { objects.removeAll(keepingCapacity: true) } else { objects = [] }
    }

    /// Exchanges the objects at places `first` and `second`, each recording its new place.
    private mutating func swapPlaces(_ first: Int, _ second: Int) {
        if first == second { return }
        objects.swapAt(first, second)
        // Force-unwraps: a listed object was given its change state when it was added.
        setPlace(first, in: objects[first].existingChangeState!)
        setPlace(second, in: objects[second].existingChangeState!)
    }

    /// The place `state`'s object recorded in a list of this kind.
    @inline(__always) private func place(in state: ObjectChangeState) -> Int {
        switch kind {
        case .changed: state.changedPlace
        case .deleted: state.deletedPlace
        }
    }

    /// Records `place` as `state`'s object's place in a list of this kind.
    @inline(__always) private func setPlace(_ place: Int, in state: ObjectChangeState) {
        switch kind {
        case .changed: state.changedPlace = place
        case .deleted: state.deletedPlace = place
        }
    }

    /// Whether `index` is a place of the list holding `object`, compared by address (the
    /// element borrowed, not retained).
    @inline(__always) private func holds(_ object: ManagedObject, at index: Int) -> Bool {
        guard index >= 0 && index < objects.count else { return false }
        return objects.withBorrowedElement(at: index) { $0 === object }
    }
}
