extension Set {
    /// The set of `members`, for the sets a save and its notifications hand out.
    ///
    /// `Set(_:)` and `Set(minimumCapacity:)` reach the standard library's unspecialized code,
    /// which looks up the storage class's metadata for `Element` in the runtime's cache at
    /// every call (300 to 750 instructions): four to six times a save of one object, most of
    /// them for sets that stay empty or get one member. See ``init(roomFor:)``.
    @inline(__always) init(members: [Element]) where Element: AnyObject {
        self.init(roomFor: members.count)
        // Borrowed: a loop's own copy of each member is a retain and a release more.
        for index in members.indices { members.withBorrowedElement(at: index) { add($0) } }
    }

    /// Adds `member`, the way the sets of members and of changed objects are filled: through
    /// `update(with:)`, which returns nothing for a new member, rather than `insert(_:)`,
    /// which returns the member it holds afterwards, a reference the caller retains and
    /// releases (two atomic operations per member). An equal member already held is
    /// replaced, which for these sets (objects compared by identity, IDs by value) changes
    /// nothing a caller can tell.
    @inline(__always) mutating func add(_ member: __owned Element) {
        _ = update(with: member)
    }

    /// An empty set about to receive `count` members. No member makes the empty singleton,
    /// which allocates nothing, and one member is inserted into it, growing it in code
    /// specialized for `Element`; more reserve their room at once (`Set(minimumCapacity:)`),
    /// since each growth on the way would cost more than the one look-up (measured: a set of
    /// ten grown one by one cost 2.3 K instructions more than one reserved).
    @inline(__always) init(roomFor count: Int) {
        if count > 1 { self.init(minimumCapacity: count) } else { self.init() }
    }
}
