/// A context's registry: the object it holds for each ID (one object per ID, Core Data's
/// uniquing), with a ``generation`` that changes whenever the registry may let go of an object.
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
    /// The objects, by ID.
    private var objects: [ManagedObjectID: ManagedObject]
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

    /// The object registered for `id`; setting `nil` removes it, setting another object
    /// replaces it (either moves ``generation`` on when an object was there).
    subscript(id: ManagedObjectID) -> ManagedObject? {
        @inline(__always) get { objects[id] }
        @inline(__always) set {
            if let newValue {
                // One probe; the object it replaces, if any, is let go of.
                if let old = objects.updateValue(newValue, forKey: id), old !== newValue { generation &+= 1 }
            } else if objects.removeValue(forKey: id) != nil {
                generation &+= 1
            }
        }
    }

    /// The object registered for `id`, registering `make()` for it first when there is none:
    /// one probe of the table (a lookup then an insert would hash the ID twice). Setting
    /// through it replaces the object (and moves ``generation`` on) if the new one is another.
    subscript(id: ManagedObjectID, default make: @autoclosure () -> ManagedObject) -> ManagedObject {
        @inline(__always) get { objects[id] ?? make() }
        @inline(__always) _modify {
            var value = object(for: id, orRegister: make)
            let registeredValue = ObjectIdentifier(value)
            yield &value
            if ObjectIdentifier(value) != registeredValue { self[id] = value }
        }
    }

    /// The object registered for `id`, or `make()` newly registered for it; one probe.
    @inline(__always)
    mutating func object(for id: ManagedObjectID, orRegister make: () -> ManagedObject) -> ManagedObject {
        @inline(__always) func pass(_ object: inout ManagedObject) -> ManagedObject { object }
        // The inout access inserts the default when the key is absent, and nothing else.
        return pass(&objects[id, default: make()])
    }

    /// Removes and returns the object registered for `id`, if any (moving ``generation`` on).
    @discardableResult @inline(__always)
    mutating func removeValue(forKey id: ManagedObjectID) -> ManagedObject? {
        let removed = objects.removeValue(forKey: id)
        if removed != nil { generation &+= 1 }
        return removed
    }

    /// Removes every object (moving ``generation`` on).
    mutating func removeAll(keepingCapacity keepCapacity: Bool = false) {
        generation &+= 1
        objects.removeAll(keepingCapacity: keepCapacity)
    }

    /// Replaces the whole table by `table` (moving ``generation`` on: the objects not in
    /// `table` are let go of).
    mutating func replaceAll(with table: [ManagedObjectID: ManagedObject]) {
        generation &+= 1
        objects = table
    }

    /// Makes room for `minimumCapacity` objects in all.
    @inline(__always) mutating func reserveCapacity(_ minimumCapacity: Int) {
        objects.reserveCapacity(minimumCapacity)
    }

    /// The registered objects.
    var values: Dictionary<ManagedObjectID, ManagedObject>.Values { objects.values }
    /// The IDs of the registered objects.
    var keys: Dictionary<ManagedObjectID, ManagedObject>.Keys { objects.keys }
    /// How many objects are registered.
    var count: Int { objects.count }
    /// Whether no object is registered.
    var isEmpty: Bool { objects.isEmpty }
    /// How many objects the table holds without growing.
    var capacity: Int { objects.capacity }

    /// The (ID, object) pairs, in the table's order.
    func makeIterator() -> Dictionary<ManagedObjectID, ManagedObject>.Iterator { objects.makeIterator() }
    /// The registered objects' count (so `Array(registry)` reserves once).
    var underestimatedCount: Int { objects.count }
}
