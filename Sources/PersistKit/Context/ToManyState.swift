/// One object's view of one to-many relationship: what the store holds (once loaded) and
/// what this context has added or removed since.
///
/// Inverse maintenance records additions and removals without loading the stored members, so
/// setting `beer.brewery = b` does not read every beer of `b`.
struct ToManyState {
    /// The committed members, in order; `nil` until loaded from the parent store or context.
    /// Setting it forgets the member objects recorded with it (``memberObjects(generation:)``).
    var committed: [ManagedObjectID]? {
        didSet { committedObjects = nil }
    }
    /// Members added since the last save.
    var added: [ManagedObjectID] = []
    /// Members removed since the last save.
    var removed: Set<ManagedObjectID> = []
    /// For an ordered relationship, the full order set by the program; `nil` while unchanged.
    var order: [ManagedObjectID]?

    /// The objects the context registered for `committed`, in the same order, recorded when
    /// the members were loaded together with their objects (a prefetch), so a read makes no
    /// registry lookup per member. Unowned: valid only while the context's registry has let go
    /// of no object since (``objectsGeneration`` equal to the context's
    /// ``ManagedObjectContext/registryGeneration``), as the registry holds each of them until then.
    private var committedObjects: [Unmanaged<ManagedObject>]?
    /// The context's registry generation when ``committedObjects`` was recorded.
    private var objectsGeneration: UInt64 = 0

    /// Whether the relationship has unsaved changes.
    var hasChanges: Bool { !added.isEmpty || !removed.isEmpty || order != nil }

    /// Sets the committed members together with the objects the context registered for them
    /// (`objects[i]` for `ids[i]`) at registry generation `generation`.
    mutating func setCommitted(_ ids: [ManagedObjectID], objects: [Unmanaged<ManagedObject>], generation: UInt64) {
        committed = ids
        committedObjects = objects
        objectsGeneration = generation
    }

    /// The current member objects, in order, when they are the committed ones recorded with
    /// ``setCommitted(_:objects:generation:)`` and the registry has let go of nothing since
    /// (`generation` is the context's current one); otherwise `nil`, and the members are found
    /// by ID in the registry.
    @inline(__always)
    func memberObjects(generation: UInt64) -> [Unmanaged<ManagedObject>]? {
        guard let committedObjects, objectsGeneration == generation, added.isEmpty, removed.isEmpty, order == nil else { return nil }
        return committedObjects
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
        committed = committed?.map { map[$0] ?? $0 }
        added = added.map { map[$0] ?? $0 }
        removed = Set(removed.map { map[$0] ?? $0 })
        order = order?.map { map[$0] ?? $0 }
    }
}
