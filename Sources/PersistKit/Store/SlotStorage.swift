/// The memory behind ``SlotValues``: `StoreValue`s in one allocation, either one object's
/// own values or a slab that the rows of one fetch are decoded into, each row a run of it
/// (see ``SlotSlab``).
///
/// A slab turns one allocation per row into one per many rows, and the release of a fetched
/// object's values into a decrement of the slab's count: the values themselves are destroyed
/// when the last row of the slab goes, all at once, and not at all when none of them holds a
/// reference (``Header/holdsReferences``).
///
/// Not `Sendable` itself (a `ManagedBuffer` is not): it crosses threads inside ``SlotValues``,
/// whose conformance says why that is safe.
final class SlotStorage: ManagedBuffer<SlotStorage.Header, StoreValue> {
    /// What the storage knows of its elements.
    struct Header {
        /// How many elements are initialized: the first `count`.
        var count: Int
        /// How many elements the allocation has room for.
        let capacity: Int
        /// Whether an element may hold a reference. When none does (integers, floating point,
        /// Booleans, dates, UUIDs, decimals and nulls: ``StoreValue/holdsNoReference``), freeing the
        /// storage destroys no element.
        var holdsReferences: Bool
    }

    /// Empty storage with room for `capacity` elements.
    static func make(capacity: Int) -> SlotStorage {
        let buffer = SlotStorage.create(minimumCapacity: capacity) { _ in
            Header(count: 0, capacity: capacity, holdsReferences: false)
        }
        // `create` called on `SlotStorage` makes a `SlotStorage`.
        return unsafeDowncast(buffer, to: SlotStorage.self)
    }

    /// The header, read and written in place: an access through `header` (a class's stored
    /// property) is checked for exclusivity at run time, once per row of a fetch.
    var headerAddress: UnsafeMutablePointer<Header> {
        @inline(__always) get { withUnsafeMutablePointerToHeader { $0 } }
    }

    deinit {
        withUnsafeMutablePointers { header, elements in
            // Elements that hold no reference need no destroying: freeing their memory is all.
            if header.pointee.holdsReferences { _ = elements.deinitialize(count: header.pointee.count) }
        }
    }
}
