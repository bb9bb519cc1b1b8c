/// A context's registry: the object it holds for each ID (one object per ID, Core Data's
/// uniquing), with a ``generation`` that changes whenever the registry may let go of an object.
///
/// Objects are filed under their ``ObjectKey`` (entity, primary key, store token: three words
/// hashed and compared in place), not under the ``ManagedObjectID`` instance: an object fetched
/// needs no ID to be registered, and a lookup compares no store identifier strings. Every
/// operation takes either a key or an ID (converted to its key).
///
/// It keeps the dictionary API the context's code uses (subscripts, `removeValue(forKey:)`,
/// `removeAll(keepingCapacity:)`, `values`, `keys`), and every one of those that can
/// take an object out (a removal, setting a key to `nil` or to another object, emptying, a
/// re-keying) moves ``generation`` on itself. So a record of registered
/// objects made at one generation (a prefetched to-many relationship's member objects, kept
/// unretained by ``ToManyState``) is known to hold live, registered objects while the
/// generation is unchanged, whatever code changed the registry since: no call site has to
/// remember to say so.
///
/// Each registry starts at a generation no other registry of the process started at (a
/// process-wide counter, in steps of 2^32), so a registry assigned over another reuses no
/// generation a record was made at (short of 2^32 mutations that let go in one registry).
/// (Restoring a saved copy of an older registry would, but a registry cannot be copied.)
///
/// The table (an ``ObjectTable``) holds each object as an unretained reference, and the
/// registry owns one retain of each, taken when the object is filed and given back when it
/// leaves (a removal, a replacement, ``takeAll(keepingCapacity:)`` or the registry's end). So
/// the table's growth and teardown move words and never visit the objects: emptying a
/// registry of 200,000 fetched objects through a dictionary of strong references retained
/// each object once more to gather it and released it again as the table went, two visits
/// per object in the table's random order before the one that frees it (perf, workload 2:
/// about a quarter of the context's teardown). The registry is not copyable, so no second
/// copy can give back a retain twice.
///
/// Objects that cannot meet another under their key are registered without a probe of the
/// table: a fetch's rows of entities with no object registered, and newly inserted objects
/// (``appendUnfiled(_:)``). They wait in a list, in the order they came, and are filed all at
/// once by the first operation that looks a key up or changes the table; until then they
/// count, are visited and are let go of like the filed ones. A context that fetches objects,
/// reads them and goes away never files them (workload 2: about a sixth of the fetch's time),
/// and its teardown frees them in the order they were made.
///
/// An object taken out (``removeValue(forKey:)-(ObjectKey)``, ``takeAll(keepingCapacity:)``)
/// that stays alive must be filed again or leave the context, its
/// ``ManagedObject/managedObjectContext`` cleared: that reference is not retained, and the
/// context clears it only for the objects it still has (see there).
///
/// ``values`` and ``keys`` are copies, safe to hold while the registry changes;
/// ``forEachObject(_:)`` reads the table in place and its body must not change the registry.
struct ObjectRegistry: ~Copyable {
    /// The objects, by key (unretained: the registry holds one retain of each).
    private var objects = ObjectTable()
    /// Objects registered and not filed in ``objects`` yet, in the order they came
    /// (unretained: the registry holds one retain of each): see ``appendUnfiled(_:)``.
    private var unfiled: [Unmanaged<ManagedObject>] = []
    /// The concrete entities of every object registered since the registry was made or last
    /// emptied (a superset of those it holds: a removal leaves its entity here).
    private var entities: [ObjectIdentifier] = []
    /// Moves on (by one) at every mutation that can let go of an object; never otherwise.
    private(set) var generation: UInt64

    /// The generation the next registry starts at.
    private static let nextBase = Locked<UInt64>(0)

    /// An empty registry.
    init() {
        generation = Self.nextBase.withLock { base in
            base &+= 1 << 32
            return base
        }
    }

    deinit {
        objects.forEach { _, object in object.release() }
        for object in unfiled { object.release() }
    }

    /// The object registered for `key`; setting `nil` removes it, setting another object
    /// replaces it (either moves ``generation`` on when an object was there).
    subscript(key: ObjectKey) -> ManagedObject? {
        @inline(__always) mutating get {
            fileUnfiled()
            return objects[key]?.takeUnretainedValue()
        }
        @inline(__always) set {
            fileUnfiled()
            if let newValue {
                noteEntity(key.entityIdentity)
                // One probe; the object it replaces, if any, is let go of once the table no
                // longer holds it (its release may free it).
                let filed = Unmanaged.passRetained(newValue)
                if let old = objects.updateValue(filed, forKey: key) {
                    if old.toOpaque() != filed.toOpaque() { generation &+= 1 }
                    old.release()
                }
            } else if let old = objects.removeValue(forKey: key) {
                generation &+= 1
                old.release()
            }
        }
    }

    /// The object registered for `key`, found without filing the unfiled objects (a linear
    /// search among them): for assertions, which must not change what they check.
    func objectWithoutFiling(forKey key: ObjectKey) -> ManagedObject? {
        if let object = objects[key] { return object.takeUnretainedValue() }
        return unfiled.last { $0._withUnsafeGuaranteedRef { $0.objectKey } == key }?.takeUnretainedValue()
    }

    /// The object registered for `key`, unretained (the registry holds it while registered).
    @inline(__always) mutating func unretainedObject(forKey key: ObjectKey) -> Unmanaged<ManagedObject>? {
        fileUnfiled()
        return objects[key]
    }

    /// The object registered for `id` (for its ``ManagedObjectID/key``); as the key subscript.
    subscript(id: ManagedObjectID) -> ManagedObject? {
        @inline(__always) mutating get { self[id.key] }
        @inline(__always) set { self[id.key] = newValue }
    }

    /// The object registered for `key`, or `make()` newly registered for it; one probe (a
    /// lookup then an insert would hash the key twice).
    @inline(__always)
    mutating func object(for key: ObjectKey, orRegister make: () -> ManagedObject) -> ManagedObject {
        fileUnfiled()
        // Noted whether or not the object is there already (when it is, it was noted).
        noteEntity(key.entityIdentity)
        return objects.value(forKey: key, orInsert: { Unmanaged.passRetained(make()) }).takeUnretainedValue()
    }

    /// The object registered for `id`, or `make()` newly registered for it; one probe.
    @inline(__always)
    mutating func object(for id: ManagedObjectID, orRegister make: () -> ManagedObject) -> ManagedObject {
        object(for: id.key, orRegister: make)
    }

    /// Removes and returns the object registered for `key`, if any (moving ``generation`` on).
    @discardableResult @inline(__always)
    mutating func removeValue(forKey key: ObjectKey) -> ManagedObject? {
        fileUnfiled()
        guard let removed = objects.removeValue(forKey: key) else { return nil }
        generation &+= 1
        // The registry's retain becomes the caller's reference.
        return removed.takeRetainedValue()
    }

    /// Removes and returns the object registered for `id`, if any (moving ``generation`` on).
    @discardableResult @inline(__always)
    mutating func removeValue(forKey id: ManagedObjectID) -> ManagedObject? {
        removeValue(forKey: id.key)
    }

    /// Files the object registered under `old` under `new` instead, its retain moving with it
    /// (an object already under `new` is let go of); returns whether one was under `old`.
    /// Moves ``generation`` on when it moves an object.
    @discardableResult
    mutating func rekey(from old: ObjectKey, to new: ObjectKey) -> Bool {
        // An unfiled object needs no moving: it is filed under its own key when filed, which
        // the caller changes next (see ``appendUnfiled(_:)``).
        guard let object = objects.removeValue(forKey: old) else { return false }
        generation &+= 1
        refile(object, under: new)
        return true
    }

    /// Files the objects registered under `oldKeys` under the key at the same index of
    /// `newKeys` instead (as ``rekey(from:to:)`` does for one, but the table is rebuilt at
    /// most once: ``ObjectTable/removeValues(forKeys:)``); returns how many it moved. The old
    /// keys are all taken out before any new key is filed, so the two lists must not share a
    /// key (a save's temporary keys and their permanent ones never do).
    @discardableResult
    mutating func rekey(from oldKeys: [ObjectKey], to newKeys: [ObjectKey]) -> Int {
        precondition(oldKeys.count == newKeys.count, "ObjectRegistry.rekey: \(oldKeys.count) old keys, \(newKeys.count) new ones")
        // Unfiled objects need no moving (as in the single form); with none filed, nothing does.
        if objects.count == 0 { return 0 }
        let taken = objects.removeValues(forKeys: oldKeys)
        var moved = 0
        for (object, newKey) in zip(taken, newKeys) {
            guard let object else { continue }
            moved += 1
            refile(object, under: newKey)
        }
        if moved > 0 { generation &+= 1 }
        return moved
    }

    /// Files `object`, just taken out of the table with the registry's retain of it, under
    /// `key`, letting go of another object filed there (the caller moves ``generation`` on).
    @inline(__always)
    private mutating func refile(_ object: Unmanaged<ManagedObject>, under key: ObjectKey) {
        if let displaced = objects.updateValue(object, forKey: key), displaced.toOpaque() != object.toOpaque() {
            displaced.release()
        }
    }

    /// Whether no object of the entity `identity` is registered (nor was since the registry
    /// was made or last emptied: a removal does not count).
    @inline(__always) func hasNoObjects(ofEntity identity: ObjectIdentifier) -> Bool {
        !entities.contains(identity)
    }

    /// Registers `object` under its own key without filing it in the table yet: it is filed
    /// with every other such object at the next operation that looks a key up or changes the
    /// table (``fileUnfiled()``), and never if none comes before the registry is emptied.
    /// Registering a fetch's rows or a batch of inserted objects so costs a word appended per
    /// object instead of a probe of a table larger than the processor's caches, and a context
    /// dropped after reading what it fetched, or after saving what it inserted, never builds
    /// the table at all.
    ///
    /// An unfiled object is registered under whatever its key is when it is filed: re-keying
    /// it (``rekey(from:to:)``, a save giving an inserted object its permanent key) moves
    /// nothing, and the object's own key, changed by the caller, is the one filed.
    ///
    /// - Precondition: no other object is registered under the key, nor will be before it is
    ///   filed. The callers know: a fetch whose rows have distinct keys, of entities with no
    ///   object registered (``hasNoObjects(ofEntity:)``), and an inserted object's temporary
    ///   key, unique in the process. The one exception, a save's permanent key that a fault
    ///   made for it before the row existed already has, resolves as a re-keying does: the
    ///   later registration wins and the fault is let go of when filed.
    @inline(__always) mutating func appendUnfiled(_ object: ManagedObject) {
        noteEntity(object.objectKey.entityIdentity)
        unfiled.append(Unmanaged.passRetained(object))
    }

    /// Files every object of ``appendUnfiled(_:)`` in the table, in the order they came.
    @inline(__always) private mutating func fileUnfiled() {
        if !unfiled.isEmpty { fileAllUnfiled() }
    }

    /// ``fileUnfiled()``'s work, out of line: the table grows once for all of them.
    @inline(never) private mutating func fileAllUnfiled() {
        objects.reserveCapacity(objects.count + unfiled.count)
        let list = unfiled
        unfiled = []
        for object in list {
            let key = object._withUnsafeGuaranteedRef { $0.objectKey }
            // The later registration wins, as a re-keying's does: an object a save's new key
            // displaced (a fault made for that key before the row existed) is let go of.
            if let displaced = objects.updateValue(object, forKey: key), displaced.toOpaque() != object.toOpaque() {
                generation &+= 1
                displaced.release()
            }
        }
    }

    /// Records that an object of the entity `identity` is registered.
    @inline(__always) private mutating func noteEntity(_ identity: ObjectIdentifier) {
        if entities.last != identity { noteEntitySlowly(identity) }
    }

    /// ``noteEntity(_:)`` for an entity other than the last one noted.
    @inline(never) private mutating func noteEntitySlowly(_ identity: ObjectIdentifier) {
        if let index = entities.firstIndex(of: identity) {
            // The last one noted is compared first next time.
            entities.swapAt(index, entities.count - 1)
        } else {
            entities.append(identity)
        }
    }

    /// Removes every object (moving ``generation`` on).
    mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
        for object in takeAll(keepingCapacity: keepCapacity) { object.release() }
    }

    /// Removes every object and hands over the registry's retain of each, unvisited (moving
    /// ``generation`` on): the caller releases each exactly once.
    mutating func takeAll(keepingCapacity keepCapacity: Bool) -> [Unmanaged<ManagedObject>] {
        generation &+= 1
        var taken = objects.values
        objects.removeAll(keepingCapacity: keepCapacity)
        if taken.isEmpty && !keepCapacity {
            swap(&taken, &unfiled)
        } else {
            taken.append(contentsOf: unfiled)
            unfiled.removeAll(keepingCapacity: keepCapacity)
        }
        entities.removeAll(keepingCapacity: true)
        return taken
    }

    /// Makes room for `minimumCapacity` objects in all: in the table, or with `unfiled` in the
    /// list of ``appendUnfiled(_:)``, where the objects to come will go.
    @inline(__always) mutating func reserveCapacity(_ minimumCapacity: Int, unfiled: Bool = false) {
        if unfiled {
            self.unfiled.reserveCapacity(minimumCapacity)
        } else {
            objects.reserveCapacity(minimumCapacity)
        }
    }

    /// Calls `body` with each registered object, in the table's order, reading the table in
    /// place. `body` must not change the registry.
    @inline(__always)
    func forEachObject(_ body: (ManagedObject) throws -> Void) rethrows {
        try objects.forEach { _, object in try body(object.takeUnretainedValue()) }
        for object in unfiled { try body(object.takeUnretainedValue()) }
    }

    /// The registered objects (a copy).
    var values: [ManagedObject] {
        var values: [ManagedObject] = []
        values.reserveCapacity(count)
        forEachObject { values.append($0) }
        return values
    }
    /// The keys of the registered objects (a copy).
    var keys: [ObjectKey] {
        var keys = objects.keyList
        for object in unfiled { keys.append(object._withUnsafeGuaranteedRef { $0.objectKey }) }
        return keys
    }
    /// How many objects are registered.
    var count: Int { objects.count + unfiled.count }
    /// Whether no object is registered.
    var isEmpty: Bool { count == 0 }
    /// How many objects the table, or the list of unfiled objects, holds without growing.
    var capacity: Int { Swift.max(objects.capacity, unfiled.capacity) }
}
