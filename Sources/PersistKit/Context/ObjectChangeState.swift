/// The part of an object's state that most objects never use: its changed slots, its
/// to-many relationship states and its places in its context's lists of changed and deleted
/// objects, kept out of line (``ManagedObject``'s one optional reference,
/// made at the first change or the first to-many relationship use) so a fetched object that is
/// only read is a word smaller.
///
/// Touched only on the object's context's queue, as the object's other state is.
final class ObjectChangeState {
    /// Slots changed since the last save.
    @exclusivity(unchecked) var changedSlots = SlotSet()
    /// To-many relationship states, by relationship name, created on first use.
    @exclusivity(unchecked) var toMany = ToManyStates()
    /// The object's place in its context's list of changed objects (``ListedObjects``) when
    /// it was last added there; -1 before. Meaningful only while that place holds the object.
    @exclusivity(unchecked) var changedPlace = -1
    /// The object's place in its context's list of deleted objects, as ``changedPlace``.
    @exclusivity(unchecked) var deletedPlace = -1
}
