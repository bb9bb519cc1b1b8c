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
    }

    /// The object registered for `key`; setting `nil` removes it, setting another object
    /// replaces it (either moves ``generation`` on when an object was there).
    subscript(key: ObjectKey) -> ManagedObject? {
        @inline(__always) get { objects[key]?.takeUnretainedValue() }
        @inline(__always) set {
            if let newValue {
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

    /// The object registered for `key`, unretained (the registry holds it while registered).
    @inline(__always) func unretainedObject(forKey key: ObjectKey) -> Unmanaged<ManagedObject>? {
        objects[key]
    }

    /// The object registered for `id` (for its ``ManagedObjectID/key``); as the key subscript.
    subscript(id: ManagedObjectID) -> ManagedObject? {
        @inline(__always) get { objects[id.key]?.takeUnretainedValue() }
        @inline(__always) set { self[id.key] = newValue }
    }

    /// The object registered for `key`, or `make()` newly registered for it; one probe (a
    /// lookup then an insert would hash the key twice).
    @inline(__always)
    mutating func object(for key: ObjectKey, orRegister make: () -> ManagedObject) -> ManagedObject {
        objects.value(forKey: key, orInsert: { Unmanaged.passRetained(make()) }).takeUnretainedValue()
    }

    /// The object registered for `id`, or `make()` newly registered for it; one probe.
    @inline(__always)
    mutating func object(for id: ManagedObjectID, orRegister make: () -> ManagedObject) -> ManagedObject {
        object(for: id.key, orRegister: make)
    }

    /// Removes and returns the object registered for `key`, if any (moving ``generation`` on).
    @discardableResult @inline(__always)
    mutating func removeValue(forKey key: ObjectKey) -> ManagedObject? {
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

    /// Removes every object (moving ``generation`` on).
    mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
        for object in takeAll(keepingCapacity: keepCapacity) { object.release() }
    }

    /// Removes every object and hands over the registry's retain of each, unvisited (moving
    /// ``generation`` on): the caller releases each exactly once.
    mutating func takeAll(keepingCapacity keepCapacity: Bool) -> [Unmanaged<ManagedObject>] {
        generation &+= 1
        let taken = objects.values
        objects.removeAll(keepingCapacity: keepCapacity)
        return taken
    }

    /// Makes room for `minimumCapacity` objects in all.
    @inline(__always) mutating func reserveCapacity(_ minimumCapacity: Int) {
        objects.reserveCapacity(minimumCapacity)
    }

    /// Calls `body` with each registered object, in the table's order, reading the table in
    /// place. `body` must not change the registry.
    @inline(__always)
    func forEachObject(_ body: (ManagedObject) throws -> Void) rethrows {
        try objects.forEach { _, object in try body(object.takeUnretainedValue()) }
    }

    /// The registered objects (a copy).
    var values: [ManagedObject] {
        var values: [ManagedObject] = []
        values.reserveCapacity(objects.count)
        objects.forEach { _, object in values.append(object.takeUnretainedValue()) }
        return values
    }
    /// The keys of the registered objects (a copy).
    var keys: [ObjectKey] { objects.keyList }
    /// How many objects are registered.
    var count: Int { objects.count }
    /// Whether no object is registered.
    var isEmpty: Bool { objects.count == 0 }
    /// How many objects the table holds without growing.
    var capacity: Int { objects.capacity }
}
