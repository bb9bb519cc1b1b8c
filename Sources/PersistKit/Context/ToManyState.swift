/// One object's view of one to-many relationship: what the store holds (once loaded) and
/// what this context has added or removed since.
///
/// Inverse maintenance records additions and removals without loading the stored members, so
/// setting `beer.brewery = b` does not read every beer of `b`.
struct ToManyState {
    /// The committed members, in order; `nil` until loaded from the parent store or context.
    /// For members recorded as objects (a prefetch), their IDs, made from the objects (each
    /// object makes its ID at its first ``ManagedObject/objectID`` and keeps it). Setting it
    /// forgets the member objects recorded with it (``memberObjects(generation:)``).
    var committed: [ManagedObjectID]? {
        get {
            if let committedIDs { return committedIDs }
            return committedObjects.map { objects in objects.map(\.objectID) }
        }
        set {
            committedIDs = newValue
            committedObjects = nil
        }
    }
    /// Whether the committed members are loaded (``committed`` is not `nil`), asked without
    /// making the IDs of members recorded as objects.
    var isLoaded: Bool { committedIDs != nil || committedObjects != nil }
    /// Members added since the last save.
    var added: [ManagedObjectID] = []
    /// Members removed since the last save.
    var removed: Set<ManagedObjectID> = []
    /// For an ordered relationship, the full order set by the program; `nil` while unchanged.
    var order: [ManagedObjectID]?

    /// The committed members' IDs, when set as IDs; `nil` when unloaded or recorded as objects.
    private var committedIDs: [ManagedObjectID]?
    /// The committed members as the objects the context registered for them, in order, recorded
    /// when the members were loaded together with their objects (a prefetch): a read makes no
    /// registry lookup per member, and no member's ID is made until asked for (a prefetch of
    /// many small objects allocated one ID per member only to record it here).
    ///
    /// Held strongly, so the objects outlive any registry change, and the IDs can always be
    /// made from them; they are used as the current members only while the context's registry
    /// has let go of no object since (``objectsGeneration`` equal to the context's
    /// ``ManagedObjectContext/registryGeneration``), when each is still the one registered for
    /// its ID. A context letting go of its objects drops these references first
    /// (``forgetMemberObjects(keepingIDs:)``), so members referring to each other in a cycle
    /// hold no object alive.
    private var committedObjects: [ManagedObject]?
    /// The context's registry generation when ``committedObjects`` was recorded.
    private var objectsGeneration: UInt64 = 0

    /// Whether the relationship has unsaved changes.
    var hasChanges: Bool { !added.isEmpty || !removed.isEmpty || order != nil }

    /// Sets the committed members as the objects the context registered for them, in order,
    /// at registry generation `generation`, without making their IDs.
    mutating func setCommitted(objects: [ManagedObject], generation: UInt64) {
        committedIDs = nil
        committedObjects = objects
        objectsGeneration = generation
    }

    /// The current member objects, in order, when they are the committed ones recorded with
    /// ``setCommitted(objects:generation:)`` and the registry has let go of nothing since
    /// (`generation` is the context's current one); otherwise `nil`, and the members are found
    /// by ID in the registry.
    @inline(__always)
    func memberObjects(generation: UInt64) -> [ManagedObject]? {
        guard let committedObjects, objectsGeneration == generation, added.isEmpty, removed.isEmpty, order == nil else { return nil }
        return committedObjects
    }

    /// Lets go of the recorded member objects: with `keepingIDs`, the committed members stay,
    /// as IDs (made from the objects); without, a relationship recorded only as objects becomes
    /// unloaded again (for an object leaving its context, which reads no relationship then).
    mutating func forgetMemberObjects(keepingIDs: Bool) {
        guard let objects = committedObjects else { return }
        if keepingIDs && committedIDs == nil { committedIDs = objects.map(\.objectID) }
        committedObjects = nil
    }

    /// The current members, given the committed ones.
    func members(committed base: [ManagedObjectID]) -> [ManagedObjectID] {
        if let order { return order }
        if added.isEmpty && removed.isEmpty { return base }
        var result = base.filter { !removed.contains($0) }
        var seen = Set(result)
        for id in added where seen.insert(id).inserted { result.append(id) }
        return result
    }

    /// Records `id` as a member.
    mutating func add(_ id: ManagedObjectID) {
        if removed.remove(id) == nil, !added.contains(id) { added.append(id) }
        if order != nil, !(order?.contains(id) ?? false) { order?.append(id) }
    }

    /// Records `id` as no longer a member.
    mutating func remove(_ id: ManagedObjectID) {
        if let index = added.firstIndex(of: id) { added.remove(at: index) } else { removed.insert(id) }
        order?.removeAll { $0 == id }
    }

    /// Makes the current members the committed ones, after a save or a merge.
    mutating func commit() {
        guard hasChanges else { return } // (keeps the recorded member objects)
        if let base = committed { committed = members(committed: base) } else if order != nil { committed = order }
        else if !added.isEmpty || !removed.isEmpty { committed = nil }
        added = []
        removed = []
        order = nil
    }

    /// Replaces a temporary ID by its permanent one.
    mutating func remap(_ map: [ManagedObjectID: ManagedObjectID]) {
        // (Members recorded as objects are stored objects: their IDs are permanent already.)
        if let ids = committedIDs { committedIDs = ids.map { map[$0] ?? $0 } }
        added = added.map { map[$0] ?? $0 }
        removed = Set(removed.map { map[$0] ?? $0 })
        order = order?.map { map[$0] ?? $0 }
    }
}
