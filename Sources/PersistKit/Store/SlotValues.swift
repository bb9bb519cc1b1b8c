/// An object's slot values: a random-access, mutable collection of ``StoreValue``s, laid out
/// by its entity's ``EntityDescription/slots``, with value semantics (copied on write, as an
/// array is).
///
/// Unlike an array, the values may be a run of a larger allocation: a fetch decodes its rows
/// into slabs of many rows each, so a fetched object costs no allocation of its own for its
/// values, and freeing it frees none (see `SlotStorage`). The first change to such values
/// copies them into storage of their own. Build them from an array, an array literal or
/// ``init(repeating:count:)``; read them as any collection (`Array(values)` gives an array).
///
/// A slab lives while any of its runs does: keeping one object of a large fetch keeps its
/// slab (at most 4,096 values, about 96 KiB; see `docs/stores.md`).
///
/// `@unchecked Sendable` (its storage, a `ManagedBuffer`, cannot conform): a storage's elements
/// and header are written only by the one who made it before a run of it is handed out (the
/// fetch filling a slab, on its own thread, writes only past every run it handed out), and
/// afterwards only through the one `SlotValues` that holds its only reference
/// (`isKnownUniquelyReferenced` before every write, as an array's buffer is copied on write).
/// Every other access reads elements that no one writes any more.
public struct SlotValues: @unchecked Sendable {
    /// The storage the values are a run of; `nil` when there are none.
    var storage: SlotStorage?
    /// The index in `storage` of the first value.
    var start: UInt32
    /// How many values there are.
    var length: UInt32

    /// No values.
    public init() {
        storage = nil
        start = 0
        length = 0
    }

    /// The run of `length` values of `storage` that begins at `start` (initialized already).
    init(storage: SlotStorage, start: Int, length: Int) {
        self.storage = storage
        // Checked conversions: a slab holds at most 4,096 values unless one row has more, so
        // only values of more than 4 G elements could trap, rather than wrap.
        self.start = UInt32(start)
        self.length = UInt32(length)
    }

    /// The values of `array`, in storage of their own.
    public init(_ array: [StoreValue]) {
        self = array.withUnsafeBufferPointer { SlotValues(copying: $0) }
    }

    /// The values of `sequence`, in storage of their own.
    public init<S: Sequence>(_ sequence: S) where S.Element == StoreValue {
        self.init(Array(sequence))
    }

    /// `count` times `value`, in storage of their own.
    public init(repeating value: StoreValue, count: Int) {
        self.init()
        guard count > 0 else { return }
        let storage = SlotStorage.make(capacity: count)
        storage.withUnsafeMutablePointers { header, elements in
            elements.initialize(repeating: value, count: count)
            header.pointee.count = count
            header.pointee.holdsReferences = !value.holdsNoReference
        }
        self.init(storage: storage, start: 0, length: count)
    }

    /// Calls `body` with the values in place.
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<StoreValue>) throws -> R) rethrows -> R {
        if length == 0 { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try withExtendedLifetime(self) { try body(UnsafeBufferPointer(start: firstValue, count: Int(length))) }
    }

    /// Calls `body` with the values `values` points at, in place: unlike reading
    /// `values.pointee` (a copy, whose storage is retained and released again), nothing is
    /// copied. The caller keeps `values.pointee` alive and unchanged while `body` runs (the
    /// values of a row in a request's array, say).
    @inline(__always)
    static func withUnsafeBufferPointer<R>(at values: UnsafePointer<SlotValues>,
                                           _ body: (UnsafeBufferPointer<StoreValue>) throws -> R) rethrows -> R {
        let length = Int(values.pointee.length)
        if length == 0 { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        // The storage's address, read as a word rather than as a reference to retain: the
        // caller's values hold it. Force-unwraps: `storage` is a stored property, so it has an
        // address, and values that are not empty have storage.
        let address = UnsafeRawPointer(values.pointer(to: \.storage)!).load(as: UnsafeRawPointer?.self)!
        let start = Int(values.pointee.start)
        return try Unmanaged<SlotStorage>.fromOpaque(address)._withUnsafeGuaranteedRef { storage in
            try storage.withUnsafeMutablePointerToElements { elements in
                try body(UnsafeBufferPointer(start: elements + start, count: length))
            }
        }
    }

    /// Makes the values the only ones in their storage, copying them out of a shared one.
    @inline(__always)
    private mutating func makeUnique() {
        if isKnownUniquelyReferenced(&storage) { return }
        copyOut()
    }

    /// Replaces the values by a copy in storage of their own.
    @inline(never)
    private mutating func copyOut() {
        self = withUnsafeBufferPointer { SlotValues(copying: $0) }
    }

    /// A copy of `values` in storage of their own with room for `capacity` values (at least
    /// as many as there are). `holdsReferences`: whether any value may hold one; `nil` reads it
    /// off the values, never off a shared storage's header, which the fetch filling a slab may
    /// be writing on another thread. When none does, the values are copied as bytes, there
    /// being no reference to retain.
    init(copying values: UnsafeBufferPointer<StoreValue>, holdsReferences: Bool? = nil, capacity: Int = 0) {
        self.init()
        let capacity = Swift.max(capacity, values.count)
        guard capacity > 0 else { return }
        let holdsReferences = holdsReferences ?? values.contains { !$0.holdsNoReference }
        let storage = SlotStorage.make(capacity: capacity)
        storage.withUnsafeMutablePointers { header, elements in
            if let source = values.baseAddress {
                if holdsReferences {
                    elements.initialize(from: source, count: values.count)
                } else {
                    UnsafeMutableRawPointer(elements).copyMemory(from: source, byteCount: values.count * MemoryLayout<StoreValue>.stride)
                }
            }
            header.pointee.count = values.count
            header.pointee.holdsReferences = holdsReferences
        }
        self.init(storage: storage, start: 0, length: values.count)
    }
}

extension SlotValues: RandomAccessCollection, MutableCollection {
    /// A position: the offset from the first value.
    public typealias Index = Int
    /// The positions, `0..<count`.
    public typealias Indices = Range<Int>

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of values.
    public var endIndex: Int { Int(length) }
    /// The number of values.
    public var count: Int { Int(length) }
    /// Whether there are no values.
    public var isEmpty: Bool { length == 0 }
    /// `0..<count`.
    public var indices: Range<Int> { 0..<Int(length) }

    /// The value at `position`, which must be in `indices`.
    public subscript(position: Int) -> StoreValue {
        @inline(__always) get {
            precondition(UInt(bitPattern: position) < UInt(length), "SlotValues: index \(position) out of range 0..<\(length)")
            return firstValue[position]
        }
        @inline(__always) set {
            precondition(UInt(bitPattern: position) < UInt(length), "SlotValues: index \(position) out of range 0..<\(length)")
            makeUnique()
            // Through the address, with `self` holding the storage for the whole access: the
            // old value's release cannot free it, so the storage is not retained around it.
            let address = firstValue + position
            if newValue.holdsNoReference {
                if address.pointee.holdsNoReference {
                    // Neither value holds a reference: the new one is written over the old,
                    // without the calls that copy and destroy an enum of several payloads (9 to
                    // 20 instructions fewer for each integer written into a new object, under
                    // callgrind).
                    address.initialize(to: newValue)
                    return
                }
            } else {
                storageHeader.pointee.holdsReferences = true
            }
            address.pointee = newValue
        }
    }

    /// Whether any value at `positions` (those within range) is null: read in place, so an
    /// object's values are checked without a copy of them (see `modelValidationErrors`).
    @inline(__always) func anyNull(at positions: [Int]) -> Bool {
        for position in positions where UInt(bitPattern: position) < UInt(length) && firstValue[position].isNull {
            return true
        }
        return false
    }

    /// The address of the first value. Only for values that are not empty (which have
    /// storage), and valid while `self` holds its storage.
    private var firstValue: UnsafeMutablePointer<StoreValue> {
        @inline(__always) get {
            // Unwrapped: there are values, so there is storage.
            storage.unsafelyUnwrapped.withUnsafeMutablePointerToElements { $0 + Int(start) }
        }
    }

    /// The address of the storage's header, on the same terms as ``firstValue``.
    private var storageHeader: UnsafeMutablePointer<SlotStorage.Header> {
        @inline(__always) get { storage.unsafelyUnwrapped.headerAddress }
    }
}

extension SlotValues: RangeReplaceableCollection {
    /// Replaces the values in `subrange` by `newElements`, in storage of their own.
    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
        where C.Element == StoreValue {
        var array = Array(self)
        array.replaceSubrange(subrange, with: newElements)
        self = SlotValues(array)
    }

    /// Appends `value`, in place when the values are the last of storage of their own with
    /// room left, else into a copy with twice the room.
    public mutating func append(_ value: StoreValue) {
        if isKnownUniquelyReferenced(&storage), let storage,
           storage.headerAddress.pointee.count == Int(start) + Int(length),
           storage.headerAddress.pointee.count < storage.headerAddress.pointee.capacity {
            storage.withUnsafeMutablePointers { header, elements in
                (elements + header.pointee.count).initialize(to: value)
                header.pointee.count += 1
                if !value.holdsNoReference { header.pointee.holdsReferences = true }
            }
            length += 1
            return
        }
        reserveCapacity(Swift.max(8, count * 2))
        append(value)
    }

    /// Makes room for `minimumCapacity` values in storage of their own.
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        if isKnownUniquelyReferenced(&storage), let storage, start == 0,
           storage.headerAddress.pointee.count == Int(length), storage.headerAddress.pointee.capacity >= minimumCapacity { return }
        self = withUnsafeBufferPointer { SlotValues(copying: $0, capacity: Swift.max(minimumCapacity, 1)) }
    }
}

extension SlotValues: ExpressibleByArrayLiteral {
    /// The values of the literal.
    public init(arrayLiteral elements: StoreValue...) {
        if elements.isEmpty {
            self.init()
        } else {
            self.init(elements)
        }
    }
}

extension SlotValues: Hashable {
    /// Values are equal when they have the same values in the same order.
    public static func == (lhs: SlotValues, rhs: SlotValues) -> Bool {
        if lhs.length != rhs.length { return false }
        if lhs.storage === rhs.storage && lhs.start == rhs.start { return true }
        return lhs.elementsEqual(rhs)
    }

    /// Hashes the count and the values, as an array of them hashes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for value in self { hasher.combine(value) }
    }
}

extension SlotValues: CustomStringConvertible, CustomDebugStringConvertible {
    /// The values as an array prints them.
    public var description: String { Array(self).description }
    /// The values as an array prints them for debugging.
    public var debugDescription: String { Array(self).debugDescription }
}
