/// A context's registry: the object it holds for each ID (one object per ID, Core Data's
/// uniquing), with a ``generation`` that changes whenever the registry may let go of an object.
///
/// Objects are filed under their ``ObjectKey`` (entity, primary key, store token: three words
/// hashed and compared in place), not under the ``ManagedObjectID`` instance: an object fetched
/// needs no ID to be registered, and a lookup compares no store identifier strings. Every
/// operation takes either a key or an ID (converted to its key).
///
/// It keeps the dictionary API the context's code uses (subscripts, `removeValue(forKey:)`,
/// `removeAll(keepingCapacity:)`, `values`, `keys`, iteration), and every one of those that can
/// take an object out (a removal, setting a key to `nil` or to another object, emptying, a
/// replacement of the whole table) moves ``generation`` on itself. So a record of registered
/// objects made at one generation (a prefetched to-many relationship's member objects, kept
/// unretained by ``ToManyState``) is known to hold live, registered objects while the
/// generation is unchanged, whatever code changed the registry since: no call site has to
/// remember to say so.
///
/// Each registry starts at a generation no other registry of the process started at (a
/// process-wide counter, in steps of 2^32), so a registry assigned over another reuses no
/// generation a record was made at (short of 2^32 mutations that let go in one registry).
/// (Restoring a saved copy of an older registry would: the context never does.)
struct ObjectRegistry: Sequence {
    /// The objects, by key.
    private var objects: [ObjectKey: ManagedObject]
    /// Moves on (by one) at every mutation that can let go of an object; never otherwise.
    private(set) var generation: UInt64

    /// The generation the next registry starts at.
    private static let nextBase = Locked<UInt64>(0)

    /// An empty registry.
    init() {
        objects = [:]
        generation = Self.nextBase.withLock { base in
            base &+= 1 << 32
            return base
        }
    }

    /// The object registered for `key`; setting `nil` removes it, setting another object
    /// replaces it (either moves ``generation`` on when an object was there).
    subscript(key: ObjectKey) -> ManagedObject? {
        @inline(__always) get { objects[key] }
        @inline(__always) set {
            if let newValue {
                // One probe; the object it replaces, if any, is let go of.
                if let old = objects.updateValue(newValue, forKey: key), old !== newValue { generation &+= 1 }
            } else if objects.removeValue(forKey: key) != nil {
                generation &+= 1
            }
        }
    }

    /// The object registered for `id` (for its ``ManagedObjectID/key``); as the key subscript.
    subscript(id: ManagedObjectID) -> ManagedObject? {
        @inline(__always) get { objects[id.key] }
        @inline(__always) set { self[id.key] = newValue }
    }

    /// The object registered for `id`, registering `make()` for it first when there is none:
    /// one probe of the table (a lookup then an insert would hash the key twice). Setting
    /// through it replaces the object (and moves ``generation`` on) if the new one is another.
    subscript(id: ManagedObjectID, default make: @autoclosure () -> ManagedObject) -> ManagedObject {
        @inline(__always) get { objects[id.key] ?? make() }
        @inline(__always) _modify {
            let key = id.key
            var value = object(for: key, orRegister: make)
            let registeredValue = ObjectIdentifier(value)
            yield &value
            if ObjectIdentifier(value) != registeredValue { self[key] = value }
        }
    }

    /// The object registered for `key`, or `make()` newly registered for it; one probe (a
    /// lookup then an insert would hash the key twice).
    @inline(__always)
    mutating func object(for key: ObjectKey, orRegister make: () -> ManagedObject) -> ManagedObject {
        @inline(__always) func pass(_ object: inout ManagedObject) -> ManagedObject { object }
        // The inout access inserts the default when the key is absent, and nothing else.
        return pass(&objects[key, default: make()])
    }

    /// The object registered for `id`, or `make()` newly registered for it; one probe.
    @inline(__always)
    mutating func object(for id: ManagedObjectID, orRegister make: () -> ManagedObject) -> ManagedObject {
        object(for: id.key, orRegister: make)
    }

    /// Removes and returns the object registered for `key`, if any (moving ``generation`` on).
    @discardableResult @inline(__always)
    mutating func removeValue(forKey key: ObjectKey) -> ManagedObject? {
        let removed = objects.removeValue(forKey: key)
        if removed != nil { generation &+= 1 }
        return removed
    }

    /// Removes and returns the object registered for `id`, if any (moving ``generation`` on).
    @discardableResult @inline(__always)
    mutating func removeValue(forKey id: ManagedObjectID) -> ManagedObject? {
        removeValue(forKey: id.key)
    }

    /// Removes every object (moving ``generation`` on).
    mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
        generation &+= 1
        objects.removeAll(keepingCapacity: keepCapacity)
    }

    /// Replaces the whole table by `table` (moving ``generation`` on: the objects not in
    /// `table` are let go of).
    mutating func replaceAll(with table: [ObjectKey: ManagedObject]) {
        generation &+= 1
        objects = table
    }

    /// Makes room for `minimumCapacity` objects in all.
    @inline(__always) mutating func reserveCapacity(_ minimumCapacity: Int) {
        objects.reserveCapacity(minimumCapacity)
    }

    /// The registered objects.
    var values: Dictionary<ObjectKey, ManagedObject>.Values { objects.values }
    /// The keys of the registered objects.
    var keys: Dictionary<ObjectKey, ManagedObject>.Keys { objects.keys }
    /// How many objects are registered.
    var count: Int { objects.count }
    /// Whether no object is registered.
    var isEmpty: Bool { objects.isEmpty }
    /// How many objects the table holds without growing.
    var capacity: Int { objects.capacity }

    /// The (key, object) pairs, in the table's order.
    func makeIterator() -> Dictionary<ObjectKey, ManagedObject>.Iterator { objects.makeIterator() }
    /// The registered objects' count (so `Array(registry)` reserves once).
    var underestimatedCount: Int { objects.count }
}
