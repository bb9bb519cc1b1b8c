/// An object's to-many relationship states, by relationship name: the first state made is held
/// in place, any others in a dictionary.
///
/// Most objects that have a to-many state have one (an entity's one to-many relationship, or
/// the one a fetch prefetched). Held in a dictionary, that one state cost a table allocated and
/// freed per object, and its name hashed at every look-up (a prefetch of many sources made and
/// freed one table per source). Here the first state's name is compared instead, and a table is
/// made only for a second relationship.
///
/// The order of iteration is not specified, as a dictionary's is not.
struct ToManyStates: Sequence, ExpressibleByDictionaryLiteral {
    /// The name of the state held in place; `nil` when there is none, and then ``others`` is
    /// empty too.
    private var firstName: String?
    /// The state of ``firstName`` (an empty one while there is none).
    private var firstState = ToManyState()
    /// The states of the other relationships.
    private var others: [String: ToManyState] = [:]

    /// No states.
    init() {}

    /// The states `elements`, by name (each name once).
    init(dictionaryLiteral elements: (String, ToManyState)...) {
        for (name, state) in elements { self[name] = state }
    }

    /// Whether there is no state.
    var isEmpty: Bool { firstName == nil }

    /// How many states there are.
    var count: Int { firstName == nil ? 0 : 1 + others.count }

    /// The names of the relationships that have a state.
    var keys: [String] {
        guard let firstName else { return [] }
        return [firstName] + others.keys
    }

    /// Whether any state has unsaved changes (``ToManyState/hasChanges``).
    var hasChanges: Bool {
        guard firstName != nil else { return false }
        return firstState.hasChanges || others.values.contains { $0.hasChanges }
    }

    /// The names of the relationships whose states have unsaved changes.
    var namesWithChanges: [String] {
        guard let firstName else { return [] }
        var names = firstState.hasChanges ? [firstName] : []
        for (name, state) in others where state.hasChanges { names.append(name) }
        return names
    }

    /// The state of the relationship `name`, or `nil` when it has none; setting `nil` removes it.
    subscript(name: String) -> ToManyState? {
        get {
            if firstName == name { return firstState }
            return others[name]
        }
        set {
            if firstName == name {
                if let newValue { firstState = newValue } else { removeFirst() }
            } else if firstName == nil {
                if let newValue { (firstName, firstState) = (name, newValue) }
            } else {
                others[name] = newValue
            }
        }
        _modify {
            if firstName == name {
                // Moved out, so the state changed is the only copy of its arrays.
                var state: ToManyState? = firstState
                firstState = ToManyState()
                defer { if let state { firstState = state } else { removeFirst() } }
                yield &state
            } else if firstName == nil {
                var state: ToManyState?
                defer { if let state { (firstName, firstState) = (name, state) } }
                yield &state
            } else {
                yield &others[name]
            }
        }
    }

    /// The state of the relationship `name`, `defaultValue` when it has none (changing it adds it).
    subscript(name: String, default defaultValue: @autoclosure () -> ToManyState) -> ToManyState {
        get { self[name] ?? defaultValue() }
        _modify {
            if firstName == nil { (firstName, firstState) = (name, defaultValue()) }
            if firstName == name {
                yield &firstState
            } else {
                yield &others[name, default: defaultValue()]
            }
        }
    }

    /// The member objects a prefetch recorded for the relationship `name`, when still current at
    /// registry generation `generation` (``ToManyState/memberObjects(generation:)``), read in place.
    @inline(__always) func recordedMembers(named name: String, generation: UInt64) -> [ManagedObject]? {
        if firstName == name { return firstState.memberObjects(generation: generation) }
        if others.isEmpty { return nil }
        return others[name]?.memberObjects(generation: generation)
    }

    /// Calls `body` on each state, changing it in place.
    mutating func forEachState(_ body: (inout ToManyState) -> Void) {
        guard firstName != nil else { return }
        body(&firstState)
        var index = others.startIndex
        while index != others.endIndex {
            body(&others.values[index])
            others.formIndex(after: &index)
        }
    }

    /// A dictionary of `transform` applied to each state, by name.
    func mapValues<T>(_ transform: (ToManyState) throws -> T) rethrows -> [String: T] {
        guard let firstName else { return [:] }
        var result = try others.mapValues(transform)
        result[firstName] = try transform(firstState)
        return result
    }

    /// Removes the state held in place, moving another (if any) into its place.
    private mutating func removeFirst() {
        if let (name, state) = others.first {
            others[name] = nil
            (firstName, firstState) = (name, state)
        } else {
            (firstName, firstState) = (nil, ToManyState())
        }
    }

    /// Iterates the states as (name, state) pairs.
    struct Iterator: IteratorProtocol {
        /// The state held in place, until it was returned.
        fileprivate var first: (key: String, value: ToManyState)?
        /// The other states.
        fileprivate var others: Dictionary<String, ToManyState>.Iterator

        /// The next (name, state) pair, or `nil` after the last.

        mutating func next() -> (key: String, value: ToManyState)? {
            if let first {
                self.first = nil
                return first
            }
            return others.next()
        }
    }

    /// An iterator over the states as (name, state) pairs, the one held in place first.
    func makeIterator() -> Iterator {
        Iterator(first: firstName.map { ($0, firstState) }, others: others.makeIterator())
    }
}
