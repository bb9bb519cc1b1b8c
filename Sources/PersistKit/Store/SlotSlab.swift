/// Hands out runs of slabs (``SlotStorage``) to the rows one fetch decodes: the first slab
/// has room for one row, each next one for twice as many rows as the last, up to
/// ``largestSlab`` values (and up to `maximumRows` rows). A fetch of one row allocates as much
/// as an array of its values; a fetch of many, one allocation per many rows.
///
/// A class, used on one thread by the fetch (or the connection) that owns it: a fetch's row
/// closure captures the reference, where a captured variable of a struct would be checked for
/// exclusive access at every row.
final class SlotSlab {
    /// The most values a slab is made for (about 96 KiB), unless one row has more.
    static let largestSlab = 4_096

    // Unchecked exclusivity for the two below: a slab maker is used by one thread, one call at
    // a time (the fetch or the connection that owns it).
    /// The slab being filled.
    @exclusivity(unchecked) private var storage: SlotStorage?
    /// How many rows the next slab is made for.
    @exclusivity(unchecked) private var rowsNext = 1
    /// The most rows a slab is made for.
    private let maximumRows: Int

    /// A new, empty slab maker whose slabs hold at most `maximumRows` rows (and at most
    /// ``largestSlab`` values, unless one row has more).
    init(maximumRows: Int = .max) {
        self.maximumRows = maximumRows
    }

    /// A row of `count` values: `fill` initializes each of the `count` elements from the
    /// pointer it is given, and returns whether any of them may hold a reference.
    @inline(__always)
    func row(count: Int, _ fill: (UnsafeMutablePointer<StoreValue>) -> Bool) -> SlotValues {
        if count == 0 { return SlotValues() }
        let storage = storageWithRoom(for: count)
        let start = storage.withUnsafeMutablePointers { header, elements in
            let start = header.pointee.count
            let holdsReferences = fill(elements + start)
            header.pointee.count = start + count
            if holdsReferences { header.pointee.holdsReferences = true }
            return start
        }
        return SlotValues(storage: storage, start: start, length: count)
    }

    /// The slab being filled, or a new one, with room for `count` more values.
    @inline(__always)
    private func storageWithRoom(for count: Int) -> SlotStorage {
        if let storage, storage.headerAddress.pointee.capacity - storage.headerAddress.pointee.count >= count { return storage }
        return newStorage(for: count)
    }

    /// A new slab, kept as the one being filled, for `count`-value rows: as many rows as the
    /// doubling has reached, within `maximumRows` and ``largestSlab`` values, and at least one.
    @inline(never)
    private func newStorage(for count: Int) -> SlotStorage {
        let rows = Swift.max(1, Swift.min(rowsNext, maximumRows, Self.largestSlab / count))
        rowsNext = Swift.min(rowsNext * 2, Self.largestSlab)
        let made = SlotStorage.make(capacity: rows * count)
        storage = made
        return made
    }
}
