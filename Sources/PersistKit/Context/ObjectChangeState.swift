/// The part of an object's state that most objects never use: its changed slots and its
/// to-many relationship states, kept out of line (``ManagedObject``'s one optional reference,
/// made at the first change or the first to-many relationship use) so a fetched object that is
/// only read is a word smaller.
///
/// Touched only on the object's context's queue, as the object's other state is.
final class ObjectChangeState {
    /// Slots changed since the last save.
    @exclusivity(unchecked) var changedSlots: Set<Int> = []
    /// To-many relationship states, by relationship name, created on first use.
    @exclusivity(unchecked) var toMany: [String: ToManyState] = [:]

    /// The member objects a prefetch recorded for the to-many relationship `name`, when still
    /// current at registry generation `generation` (``ToManyState/memberObjects(generation:)``).
    ///
    /// With one state (an object using one to-many relationship, the common case) its name is
    /// compared rather than hashed: a relationship's name is a short string, equal names are
    /// found equal by comparing the strings' words, and hashing one cost about 300 instructions
    /// per read of the relationship.
    @inline(__always) func recordedMembers(named name: String, generation: UInt64) -> [ManagedObject]? {
        if toMany.count == 1 {
            let only = toMany.startIndex
            guard toMany.keys[only] == name else { return nil }
            return Self.memberObjects(of: &toMany.values[only], generation: generation)
        }
        return toMany[name]?.memberObjects(generation: generation)
    }

    /// `state`'s recorded members, read through an `inout` access, in place: read as a value,
    /// the state was copied out of the table first (each of its arrays retained and released).
    @inline(__always) private static func memberObjects(of state: inout ToManyState, generation: UInt64) -> [ManagedObject]? {
        state.memberObjects(generation: generation)
    }
}
