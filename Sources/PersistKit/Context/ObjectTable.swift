/// The hash table under ``ObjectRegistry``: unretained object references by ``ObjectKey``,
/// in open addressing, where the primary keys of one entity that differ only in their last
/// three bits land in neighbouring slots.
///
/// A context registers objects in runs of consecutive primary keys (a fetch in key order, a
/// save's new rows, a prefetch's members) and a hash that scatters every key makes each
/// registration a cache miss in a table of millions of bytes: workload 2's fetch of 200,000
/// objects spent about a third of its Swift-side time on the dictionary's stores (perf). Here
/// a key's block of eight (`primaryKey >> 3`, with its entity and whether it is temporary) is
/// hashed to a group of eight slots, and the key's last three bits, turned by three bits of
/// the same hash, pick its slot within the group: a run of keys fills a group's slots, eight
/// per hashed block. Blocks still land at random, so keys from several entities or stores
/// share the table as well as with a plain hash.
///
/// A probe steps from group to group, keeping the slot's place in its group: the slots with
/// one place form eight independent tables with linear probing. A run that meets a taken
/// group moves on to the next group together; with steps of one slot, as before, each of its
/// keys walked through the whole run of groups the earlier blocks had filled, about ten slots
/// a registration in workload 2 (simulated), against about 1.3 now. The turn spreads keys that
/// share their last bits (every eighth key, say) over all eight places. One place can still
/// fill up before the table does; a probe stops when it has seen every slot of its place, and
/// the table then grows.
///
/// Deletion shifts the entries after a removed one (in its place) back towards their home
/// slots, so there are no tombstones and a probe ends at the first empty slot. The table keeps
/// at most five entries per eight slots.
///
/// It holds no reference counts (``ObjectRegistry`` owns the retains) and is not copyable,
/// so its storage has one owner that frees it.
struct ObjectTable: ~Copyable {
    /// The keys, one per slot; meaningful where `objects` holds a reference.
    private var keys: UnsafeMutablePointer<ObjectKey>
    /// The objects, one per slot; `nil` for an empty slot.
    private var objects: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    /// The slot count less one (the slot count is a power of two), or -1 with no storage.
    private var mask: Int
    /// How many entries the table holds.
    private(set) var count: Int

    /// An empty table, without storage until the first entry.
    init() {
        // Placeholders for a table without storage (mask -1: never read or freed); the
        // addresses are nonzero, so unwrapping them cannot fail.
        keys = UnsafeMutablePointer(bitPattern: MemoryLayout<ObjectKey>.alignment).unsafelyUnwrapped
        objects = UnsafeMutablePointer(bitPattern: MemoryLayout<UnsafeMutableRawPointer?>.alignment).unsafelyUnwrapped
        mask = -1
        count = 0
    }

    deinit {
        if mask >= 0 {
            keys.deallocate()
            objects.deallocate()
        }
    }

    /// How many entries fit before the table grows.
    var capacity: Int { mask < 0 ? 0 : Self.limit(slots: mask + 1) }

    /// The most entries `slots` slots hold (five in eight).
    @inline(__always) private static func limit(slots: Int) -> Int { slots / 8 * 5 }

    /// The fewest slots (a power of two, at least 16) that hold `count` entries.
    private static func slots(for count: Int) -> Int {
        var slots = 16
        while limit(slots: slots) < count { slots <<= 1 }
        return slots
    }

    /// The slot a probe for `key` starts at: the block's group (the hash's low bits), and the
    /// key's last three bits turned by the hash's top three as its place in the group.
    @inline(__always) static func home(_ key: ObjectKey, mask: Int) -> Int {
        var x = ManagedObjectID.hashWord(entity: key.entityIdentity, primaryKey: key.primaryKey >> 3, isTemporary: key.storeBits == 0)
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        x ^= x >> 31
        let place = (UInt64(truncatingIfNeeded: key.primaryKey) &+ (x >> 61)) & 7
        return Int(truncatingIfNeeded: (x << 3) | place) & mask
    }

    /// The slot after `slot` in a probe: the same place in the next group.
    @inline(__always) private static func step(_ slot: Int, mask: Int) -> Int {
        (slot &+ 8) & mask
    }

    /// The slot holding `key`, or the empty slot where a probe for it ends; negative when the
    /// table has no storage, or when every slot of the key's place is taken by other keys.
    @inline(__always) private func find(_ key: ObjectKey) -> (slot: Int, found: Bool) {
        guard mask >= 0 else { return (-1, false) }
        let start = Self.home(key, mask: mask)
        var slot = start
        while objects[slot] != nil {
            if keys[slot] == key { return (slot, true) }
            slot = Self.step(slot, mask: mask)
            if slot == start { return (-1, false) }
        }
        return (slot, false)
    }

    /// The object filed under `key`.
    @inline(__always) subscript(key: ObjectKey) -> Unmanaged<ManagedObject>? {
        let (slot, found) = find(key)
        guard found, let object = objects[slot] else { return nil }
        return Unmanaged.fromOpaque(object)
    }

    /// Files `object` under `key` and returns the object it replaces, if any.
    @discardableResult
    mutating func updateValue(_ object: Unmanaged<ManagedObject>, forKey key: ObjectKey) -> Unmanaged<ManagedObject>? {
        let (slot, found) = find(key)
        if found, let old = objects[slot] {
            objects[slot] = object.toOpaque()
            return Unmanaged.fromOpaque(old)
        }
        fileNew(object, forKey: key, at: slot)
        return nil
    }

    /// The object filed under `key`, or `make()` newly filed there: one probe.
    @inline(__always)
    mutating func value(forKey key: ObjectKey, orInsert make: () -> Unmanaged<ManagedObject>) -> Unmanaged<ManagedObject> {
        let (slot, found) = find(key)
        if found, let object = objects[slot] { return Unmanaged.fromOpaque(object) }
        let made = make()
        fileNew(made, forKey: key, at: slot)
        return made
    }

    /// Files `object` under `key`, which the table does not hold, in `slot`, the empty slot
    /// where the probe for `key` ended; when the table is full, or the key's place has no
    /// empty slot (`slot` negative), it grows first and the key's slot in the new storage is
    /// found again.
    @inline(__always)
    private mutating func fileNew(_ object: Unmanaged<ManagedObject>, forKey key: ObjectKey, at slot: Int) {
        var slot = slot
        if count >= capacity || slot < 0 { slot = growFinding(key) }
        keys[slot] = key
        objects[slot] = object.toOpaque()
        count += 1
    }

    /// Removes and returns the object filed under `key`, if any.
    @discardableResult
    mutating func removeValue(forKey key: ObjectKey) -> Unmanaged<ManagedObject>? {
        let (slot, found) = find(key)
        guard found, let removed = objects[slot] else { return nil }
        // Each entry after the hole in its place, up to the next empty slot, moves into the hole
        // when its home is not between the hole and itself (cyclically; the slots of one place
        // are in the order of their groups): every probe still reaches it.
        var hole = slot
        var next = slot
        while true {
            next = Self.step(next, mask: mask)
            // Round the whole place: no empty slot ends it.
            if next == slot { break }
            guard let object = objects[next] else { break }
            let home = Self.home(keys[next], mask: mask)
            let movable = next > hole ? (home <= hole || home > next) : (home <= hole && home > next)
            if movable {
                keys[hole] = keys[next]
                objects[hole] = object
                hole = next
            }
        }
        objects[hole] = nil
        count -= 1
        return Unmanaged.fromOpaque(removed)
    }

    /// Removes the entries filed under `removedKeys` and returns their objects, in the order
    /// of `removedKeys` (`nil` for a key the table does not hold, or one given twice).
    ///
    /// One by one, each removal scans the rest of its run of occupied slots to shift entries
    /// back, and a save's new objects, filed in runs of keys, make long runs: re-keying 50,000
    /// of them spent about 1,100 instructions per object there (callgrind, workload 1). From
    /// ``bulkRemovalMinimum`` keys and one key per 16 slots on, each removed slot is marked
    /// instead (a probe passes a marked slot as it passes a full one, so every later key is
    /// still found) and the entries left are then moved once into new storage of the same
    /// size, which drops the marks. Fewer keys are removed one by one: new storage for a save
    /// of one object into a small table would cost more than the scan it saves.
    mutating func removeValues(forKeys removedKeys: [ObjectKey]) -> [Unmanaged<ManagedObject>?] {
        guard mask >= 0, removedKeys.count >= Self.bulkRemovalMinimum, removedKeys.count * 16 >= mask + 1 else {
            return removedKeys.map { removeValue(forKey: $0) }
        }
        var removed: [Unmanaged<ManagedObject>?] = []
        removed.reserveCapacity(removedKeys.count)
        for key in removedKeys {
            let (slot, found) = find(key)
            if found, let object = objects[slot], object != Self.removedMark {
                objects[slot] = Self.removedMark
                count -= 1
                removed.append(Unmanaged.fromOpaque(object))
            } else {
                removed.append(nil)
            }
        }
        moveEntries(toSlots: mask + 1)
        return removed
    }

    /// The fewest keys ``removeValues(forKeys:)`` removes by marking slots and rebuilding.
    static var bulkRemovalMinimum: Int { 64 }

    /// What a slot emptied by ``removeValues(forKeys:)`` holds until the table is rebuilt: a
    /// nonzero address no object has (objects are aligned), so unwrapping it cannot fail.
    private static var removedMark: UnsafeMutableRawPointer {
        @inline(__always) get { UnsafeMutableRawPointer(bitPattern: 1).unsafelyUnwrapped }
    }

    /// Makes room for `minimumCapacity` entries in all (a place that fills up first still
    /// grows the table; see the type).
    mutating func reserveCapacity(_ minimumCapacity: Int) {
        if minimumCapacity > capacity { grow(to: minimumCapacity) }
    }

    /// Removes every entry (their objects are not visited).
    mutating func removeAll(keepingCapacity keepCapacity: Bool) {
        if keepCapacity {
            if mask >= 0 { objects.update(repeating: nil, count: mask + 1) }
            count = 0
        } else {
            freeStorage()
        }
    }

    /// Calls `body` with each entry, in slot order. `body` must not change the table.
    @inline(__always)
    func forEach(_ body: (ObjectKey, Unmanaged<ManagedObject>) throws -> Void) rethrows {
        guard mask >= 0 else { return }
        for slot in 0...mask {
            if let object = objects[slot] { try body(keys[slot], Unmanaged.fromOpaque(object)) }
        }
    }

    /// The objects, in slot order.
    var values: [Unmanaged<ManagedObject>] {
        var values: [Unmanaged<ManagedObject>] = []
        values.reserveCapacity(count)
        forEach { _, object in values.append(object) }
        return values
    }

    /// The keys, in slot order.
    var keyList: [ObjectKey] {
        var list: [ObjectKey] = []
        list.reserveCapacity(count)
        forEach { key, _ in list.append(key) }
        return list
    }

    /// Moves every entry into new storage with room for `minimumCapacity` entries.
    private mutating func grow(to minimumCapacity: Int) {
        moveEntries(toSlots: Self.slots(for: Swift.max(minimumCapacity, count)))
    }

    /// Grows for one more entry, `key` (not in the table), and returns the empty slot its probe
    /// ends at: room for the count, and twice the slots for a key whose place is full (until
    /// it is not).
    @inline(never)
    private mutating func growFinding(_ key: ObjectKey) -> Int {
        if count >= capacity { grow(to: count + 1) }
        while true {
            let slot = find(key).slot
            if slot >= 0 { return slot }
            moveEntries(toSlots: mask < 0 ? Self.slots(for: 1) : (mask + 1) * 2)
        }
    }

    /// Moves every entry (not the slots ``removeValues(forKeys:)`` marked) into new storage of
    /// `slots` slots, a power of two that holds them, or twice as many (again) when a place
    /// there fills up before every entry is in.
    private mutating func moveEntries(toSlots slots: Int) {
        var slots = slots
        while true {
            let newKeys = UnsafeMutablePointer<ObjectKey>.allocate(capacity: slots)
            let newObjects = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: slots)
            newObjects.initialize(repeating: nil, count: slots)
            if fileEntries(into: newKeys, newObjects, mask: slots - 1) {
                let kept = count
                freeStorage()
                keys = newKeys
                objects = newObjects
                mask = slots - 1
                count = kept
                return
            }
            // The keys are plain values: freeing them needs no deinitialization.
            newKeys.deallocate()
            newObjects.deallocate()
            slots *= 2
        }
    }

    /// Files every entry (not the marked slots) into the empty storage `newKeys` and
    /// `newObjects` of `newMask + 1` slots; `false` when a place there fills up first.
    private func fileEntries(into newKeys: UnsafeMutablePointer<ObjectKey>, _ newObjects: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                             mask newMask: Int) -> Bool {
        guard mask >= 0 else { return true }
        for slot in 0...mask {
            guard let object = objects[slot], object != Self.removedMark else { continue }
            let start = Self.home(keys[slot], mask: newMask)
            var target = start
            while newObjects[target] != nil {
                target = Self.step(target, mask: newMask)
                if target == start { return false }
            }
            (newKeys + target).initialize(to: keys[slot])
            newObjects[target] = object
        }
        return true
    }

    /// Frees the storage, leaving an empty table without any.
    private mutating func freeStorage() {
        if mask >= 0 {
            keys.deallocate()
            objects.deallocate()
        }
        // The placeholders of an empty table, as in `init()`.
        keys = UnsafeMutablePointer(bitPattern: MemoryLayout<ObjectKey>.alignment).unsafelyUnwrapped
        objects = UnsafeMutablePointer(bitPattern: MemoryLayout<UnsafeMutableRawPointer?>.alignment).unsafelyUnwrapped
        mask = -1
        count = 0
    }
}
