extension Set {
    /// The set of `members`, for the sets a save and its notifications hand out.
    ///
    /// `Set(_:)` and `Set(minimumCapacity:)` reach the standard library's unspecialized code,
    /// which looks up the storage class's metadata for `Element` in the runtime's cache at
    /// every call (300 to 750 instructions): four to six times a save of one object, most of
    /// them for sets that stay empty or get one member. See ``init(roomFor:)``.
    @inline(__always) init(members: [Element]) {
        self.init(roomFor: members.count)
        for member in members { insert(member) }
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
