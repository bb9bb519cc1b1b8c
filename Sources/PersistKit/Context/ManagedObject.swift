import Foundation
import Synchronization

/// An object of the graph: an instance of an entity, owned by one context.
///
/// The corresponding Core Data class is `NSManagedObject`. Use it directly with
/// ``value(forKey:)`` and ``setValue(_:forKey:)``, or subclass it with typed properties:
///
/// ```swift
/// final class Beer: ManagedObject {
///     var name: String? {
///         get { value(forKey: "name") as? String }
///         set { setValue(newValue, forKey: "name") }
///     }
/// }
/// ```
///
/// and register the class on the entity (``EntityDescription/managedObjectClass``).
///
/// An object belongs to its context and, like the context's state, may be used only on the
/// context's queue (inside `perform`/`performAndWait`, or on the thread that owns a
/// `.mainQueue` context). To hand an object to another context, pass its ``objectID``.
open class ManagedObject: Hashable, CustomStringConvertible {
    /// The object's entity.
    public let entity: EntityDescription
    /// The object's ID: temporary until the object is first saved, then permanent.
    ///
    /// An object fetched from a store is registered under its key (entity, primary key, store
    /// token) and gets its ID instance at the first call, kept from then on: every later call
    /// returns the identical instance until a save replaces a temporary ID by a permanent one.
    public internal(set) var objectID: ManagedObjectID {
        @inline(__always) get {
            if let made = madeID.load(ordering: .acquiring) { return made.takeUnretainedValue() }
            return makeObjectID()
        }
        set {
            idPrimaryKey = newValue.primaryKey
            idStoreBits = newValue.storeBits
            madeID.exchange(Unmanaged.passRetained(newValue), ordering: .acquiringAndReleasing)?.release()
        }
    }

    /// Moves an object that never made its temporary ID to the permanent `key` (of its own
    /// entity) a save gave it, without making the permanent ID: ``objectID`` makes it when
    /// first asked, from the key.
    func takePermanentKey(_ key: ObjectKey) {
        precondition(!hasMadeObjectID, "ManagedObject: an object whose ID was made is given its new ID itself")
        idPrimaryKey = key.primaryKey
        idStoreBits = key.storeBits
    }

    /// The ID, once made (retained by the object; released when replaced and at deinit).
    ///
    /// Atomic so that first calls of ``objectID`` racing on two threads (reading an object's
    /// ID is allowed wherever reading the object is) keep one ID: the loser releases its own.
    private let madeID: Atomic<Unmanaged<ManagedObjectID>?>
    /// The primary key of the object's ID (the temporary ID's number while temporary).
    @exclusivity(unchecked) private(set) var idPrimaryKey: Int64
    /// The address of the store's ``StoreToken``; 0 while the ID is temporary.
    @exclusivity(unchecked) private var idStoreBits: UInt

    /// The key the object is registered under (its ID's ``ManagedObjectID/key``).
    var objectKey: ObjectKey {
        @inline(__always) get {
            ObjectKey(entityIdentity: ObjectIdentifier(entity), primaryKey: idPrimaryKey, storeBits: idStoreBits)
        }
    }

    /// Whether the object has made (or was given) its ``objectID`` instance yet.
    var hasMadeObjectID: Bool {
        madeID.load(ordering: .acquiring) != nil
    }

    /// Whether the object's ID is temporary (not saved yet), read without making, loading or
    /// retaining the ID.
    var hasTemporaryID: Bool {
        @inline(__always) get { idStoreBits == 0 }
    }

    /// Makes the ID of ``objectKey`` and keeps it, unless another thread kept one first.
    @inline(never) private func makeObjectID() -> ManagedObjectID {
        let made = ManagedObjectID(entity: entity, key: objectKey)
        let retained = Unmanaged.passRetained(made)
        let (kept, existing) = madeID.compareExchange(expected: nil, desired: retained, ordering: .acquiringAndReleasing)
        if kept { return made }
        retained.release()
        // Force-unwrap: the exchange failed, so the slot held an ID (it is never emptied).
        return existing!.takeUnretainedValue()
    }
    /// The context the object is registered in; `nil` once deleted and saved, after a reset,
    /// or once the context is gone.
    ///
    /// Not retained, and not a `weak` reference either: a weak reference gives the context a
    /// side table, after which every retain and release of the context (several per save, in
    /// notifications, queued work and store calls) takes the runtime's slow path, and it costs
    /// each object a side-table entry made at its creation and destroyed at its end. Instead the
    /// context clears it for every object that leaves it: an object leaving its registry is
    /// cleared there (a reset, a rollback, a saved deletion, a merged deletion, a uniqueness
    /// conflict), or re-registered, or freed (``ManagedObjectContext/releaseUnreferencedObjects(beyond:)``),
    /// and the context's `deinit` clears every object still registered. So it never outlives
    /// the context it names. Set and read on the context's queue (exclusivity unchecked, as for
    /// the per-object state below).
    public internal(set) var managedObjectContext: ManagedObjectContext? {
        @inline(__always) get { contextReference?.takeUnretainedValue() }
        @inline(__always) set { contextReference = newValue.map { Unmanaged.passUnretained($0) } }
    }
    /// ``managedObjectContext``'s storage: unretained, compared by address by
    /// ``isRegistered(in:)`` without loading (and retaining) the context.
    @exclusivity(unchecked) private var contextReference: Unmanaged<ManagedObjectContext>?

    /// Whether the object is registered in `context` (its ``managedObjectContext`` is it).
    @inline(__always) func isRegistered(in context: ManagedObjectContext) -> Bool {
        contextReference?.toOpaque() == Unmanaged.passUnretained(context).toOpaque()
    }

    /// Whether the object is registered in any context.
    var isRegisteredInAnyContext: Bool {
        @inline(__always) get { contextReference != nil }
    }

    // Exclusivity checks are off for the per-object state below: it is touched only on the
    // context's queue (see ManagedObjectContext), and dynamic checks cost about a tenth of a
    // fetch's instructions under callgrind.

    /// Current slot values, laid out by `entity.slots`; meaningful only when not a fault.
    ///
    /// Read in place; changed only through ``replaceValues(_:)``, ``setSlotValue(_:at:)`` and
    /// ``shareCommittedValues()``, which keep the committed state's values apart from them.
    @exclusivity(unchecked) private(set) var values: SlotValues
    /// ``committed``'s storage. While ``committedSharesValues``, its values are empty: the
    /// committed values are ``values`` themselves.
    @exclusivity(unchecked) private var storedCommitted: CommittedState?

    /// The last state read from or saved to the parent store or context (its version and
    /// values; the object knows its entity, key and store itself); `nil` for new objects.
    ///
    /// For a fault it is the state of the row fetched with the object but not yet moved into
    /// `values` (the fault's data is at hand, as Core Data's row cache holds it), or `nil`: a
    /// fault has no other committed state, so one field serves both and each object is a word
    /// pair smaller (see ``pendingRow``).
    ///
    /// Read and set as a stored property is; setting it leaves ``values`` as they are.
    var committed: CommittedState? {
        @inline(__always) get {
            guard committedSharesValues else { return storedCommitted }
            // The flag is set only with a committed state (`shareCommittedValues()`).
            return CommittedState(version: storedCommitted.unsafelyUnwrapped.version, values: values)
        }
        @inline(__always) set {
            committedSharesValues = false
            storedCommitted = newValue
        }
        @inline(__always) _modify {
            separateCommittedValues()
            yield &storedCommitted
        }
    }

    /// Whether the object has a committed state (``committed`` is not `nil`), asked without
    /// copying it.
    var hasCommittedState: Bool {
        @inline(__always) get { storedCommitted != nil }
    }

    /// The committed state's version, 0 for none, read in place: a copy of the optional state
    /// (which `committed?.version` makes) retains and releases its values.
    var committedVersion: Int64 {
        @inline(__always) get { Self.version(of: &storedCommitted) }
    }

    /// The version of `state`, 0 for none, read through an `inout` access, which copies nothing.
    @inline(__always) private static func version(of state: inout CommittedState?) -> Int64 {
        state?.version ?? 0
    }

    /// Replaces ``values`` by `newValues`; the committed state keeps its own.
    @inline(__always) func replaceValues(_ newValues: SlotValues) {
        separateCommittedValues()
        values = newValues
    }

    /// Sets the value of `slot`; the committed state keeps its own.
    @inline(__always) func setSlotValue(_ value: consuming StoreValue, at slot: Int) {
        separateCommittedValues()
        values[slot] = value
    }

    /// Makes ``values`` the committed state's values, moved rather than copied: nothing is
    /// retained, and the object holds one reference to their storage. The committed state must
    /// be set; the values the object had are let go of (a fault's, none).
    @inline(__always) func shareCommittedValues() {
        precondition(storedCommitted != nil, "ManagedObject: values shared with a committed state the object does not have")
        if committedSharesValues { return }
        values = SlotValues()
        // Force-unwrap: checked above.
        swap(&values, &storedCommitted!.values)
        committedSharesValues = true
    }

    /// Makes ``values`` the committed state of `version` as they are, shared rather than
    /// copied: nothing is retained, and the object holds one reference to their storage (see
    /// ``committed``). For values that are all stored (an entity without transient slots), as
    /// a save leaves a new object's.
    @inline(__always) func commitValuesShared(version: Int64) {
        storedCommitted = CommittedState(version: version, values: SlotValues())
        committedSharesValues = true
    }

    /// Gives the committed state its own reference to the values it shares with ``values``
    /// (the storage is copied at the first write, as for any two references).
    @inline(__always) private func separateCommittedValues() {
        guard committedSharesValues else { return }
        // Force-unwrap: the flag is set only with a committed state.
        storedCommitted!.values = values
        committedSharesValues = false
    }

    /// Calls `body` with ``values`` in place: through an `inout` access, which no one else can
    /// change while it lasts, the values are not copied (retained) for the call. `body` must
    /// not change the object.
    @inline(__always) func withValuesInPlace<R>(_ body: (UnsafeBufferPointer<StoreValue>) throws -> R) rethrows -> R {
        try Self.lend(&values, body)
    }

    /// `values` borrowed through an `inout` access (see ``withValuesInPlace(_:)``).
    @inline(__always) private static func lend<R>(_ values: inout SlotValues, _ body: (UnsafeBufferPointer<StoreValue>) throws -> R) rethrows -> R {
        try values.withUnsafeBufferPointer(body)
    }

    /// For a fault of a batched fetch beyond its first batch: the batch whose rows are loaded
    /// together when this object is first touched.
    @exclusivity(unchecked) var faultingBatch: FaultingBatch?
    /// The changed slots and to-many states, made at the first change or to-many use; `nil`
    /// for an object that has neither (most fetched objects), a word instead of two.
    @exclusivity(unchecked) private var changeState: ObjectChangeState?
    /// Slots changed since the last save.
    var changedSlots: SlotSet {
        @inline(__always) get {
            guard let changeState else { return [] }
            return changeState.changedSlots
        }
        set {
            // Emptying it on an object without the state makes none.
            if changeState == nil && newValue.isEmpty { return }
            madeChangeState.changedSlots = newValue
        }
        _modify {
            let state = madeChangeState
            yield &state.changedSlots
        }
    }
    /// To-many relationship states, by relationship name, created on first use.
    var toMany: ToManyStates {
        @inline(__always) get {
            guard let changeState else { return ToManyStates() }
            return changeState.toMany
        }
        set {
            // Emptying it on an object without the state makes none.
            if changeState == nil && newValue.isEmpty { return }
            madeChangeState.toMany = newValue
        }
        _modify {
            let state = madeChangeState
            yield &state.toMany
        }
    }
    /// Whether the object has any to-many relationship state, asked without copying the states.
    var hasToManyStates: Bool {
        @inline(__always) get {
            guard let changeState else { return false }
            return Self.inPlace(&changeState.toMany) { !$0.isEmpty }
        }
    }
    /// Whether any to-many relationship state has unsaved changes, asked without copying the states.
    var hasToManyChanges: Bool {
        @inline(__always) get {
            guard let changeState else { return false }
            return Self.inPlace(&changeState.toMany) { $0.hasChanges }
        }
    }
    /// `body` applied to `states` through an `inout` access, which reads them in place. A plain
    /// read of the change state's stored `toMany` copied the whole table of states (a retain
    /// and a release of each of its references, about 330 instructions an object) to ask one
    /// question of it.
    @inline(__always) private static func inPlace<Result>(_ states: inout ToManyStates, _ body: (inout ToManyStates) -> Result) -> Result {
        body(&states)
    }
    /// The member objects a prefetch recorded for the to-many relationship `name`, current at
    /// registry generation `generation`; read in place, without copying the table of states
    /// (``ToManyStates/recordedMembers(named:generation:)``).
    @inline(__always) func recordedMemberObjects(named name: String, generation: UInt64) -> [ManagedObject]? {
        guard let changeState else { return nil }
        return Self.inPlace(&changeState.toMany) { $0.recordedMembers(named: name, generation: generation) }
    }
    /// ``changeState``, or `nil` when the object has none (it never changed nor used a
    /// to-many relationship).
    var existingChangeState: ObjectChangeState? {
        @inline(__always) get { changeState }
    }
    /// ``changeState``, made if the object has none yet.
    var madeChangeState: ObjectChangeState {
        if let changeState { return changeState }
        let made = ObjectChangeState()
        changeState = made
        return made
    }

    /// Calls `body` with ``madeChangeState`` borrowed: the object holds the state throughout,
    /// so it is not retained and released for the call, as a reference returned by the
    /// property is. `body` must not replace the object's change state.
    @inline(__always) func withMadeChangeState<Result>(_ body: (ObjectChangeState) throws -> Result) rethrows -> Result {
        if changeState == nil { changeState = ObjectChangeState() }
        return try Unmanaged.passUnretained(changeState.unsafelyUnwrapped)._withUnsafeGuaranteedRef(body)
    }

    /// Calls `body` with the object's context, if it has one, borrowed (the context is not
    /// retained for the call; it outlives its objects' use on its queue).
    @inline(__always) func withContext(_ body: (ManagedObjectContext) -> Void) {
        contextReference?._withUnsafeGuaranteedRef(body)
    }

    /// Whether the committed state's value at `slot` is `value`, read in place: through
    /// ``committed``, the state was copied (its values' storage retained and released) to ask.
    /// `false` for an object without a committed state or with fewer slots in it.
    @inline(__always) func committedValue(at slot: Int, is value: StoreValue) -> Bool {
        // Shared: the committed values are `values` themselves.
        if committedSharesValues { return slot < values.count && values[slot] == value }
        return Self.value(of: &storedCommitted, at: slot, is: value)
    }

    /// ``committedValue(at:is:)`` of `state`, read through an `inout` access, which copies nothing.
    @inline(__always) private static func value(of state: inout CommittedState?, at slot: Int, is value: StoreValue) -> Bool {
        guard let count = state?.values.count, slot < count else { return false }
        return state.unsafelyUnwrapped.values[slot] == value
    }

    @exclusivity(unchecked) var _isFault: Bool
    @exclusivity(unchecked) var _isInserted = false
    @exclusivity(unchecked) var _isDeleted = false
    /// Whether the committed values are ``values`` (the object has not changed since its fault
    /// fired): a fetched object that is only read holds its values' storage once, not twice,
    /// so firing its fault retains nothing and freeing it releases the storage once.
    ///
    /// Declared with the other flags, after every word: the fields are laid out in order, and
    /// a flag between two words would pad the object past 120 bytes, the most that fits
    /// glibc's 128-byte chunks (``ObjectLayoutTests``).
    @exclusivity(unchecked) private var committedSharesValues = false

    /// Creates an object of `entity` and inserts it into `context`, as Core Data's
    /// `init(entity:insertInto:)` does. With a `nil` context the object is not registered
    /// anywhere until ``ManagedObjectContext/insert(_:)`` is called.
    public required init(entity: EntityDescription, insertInto context: ManagedObjectContext?) {
        precondition(!entity.isAbstract, "ManagedObject: cannot create an instance of the abstract entity \(entity.name)")
        self.entity = entity
        // The temporary ID's number only: the ID itself is made at the first ``objectID``
        // (most new objects are saved without anyone asking, and get a permanent one).
        self.madeID = Atomic(nil)
        self.idPrimaryKey = ManagedObjectID.nextTemporaryNumber()
        self.idStoreBits = 0
        self.values = entity.withRules { $0.newObjectValues() }
        self._isFault = false
        if let context { context.insert(self) }
    }

    /// Creates an unregistered fault for a stored object, as a context does when it meets an
    /// object ID in a fetch; programs call ``ManagedObjectContext/object(with:)`` instead. The
    /// fault has no values until its context fills it in on first access.
    public required init(fault objectID: ManagedObjectID) {
        self.entity = objectID.entity
        self.madeID = Atomic(Unmanaged.passRetained(objectID))
        self.idPrimaryKey = objectID.primaryKey
        self.idStoreBits = objectID.storeBits
        self.values = SlotValues()
        self._isFault = true
    }

    /// Creates an unregistered fault for the stored object of `key`, whose entity is
    /// `entity`, without making its ID (made at the first ``objectID``), as a context does for
    /// a fetched row; programs call ``ManagedObjectContext/object(with:)`` instead.
    public required init(fault key: ObjectKey, entity: EntityDescription) {
        precondition(key.entityIdentity == ObjectIdentifier(entity), "ManagedObject: the key names another entity than \(entity.name)")
        self.entity = entity
        self.madeID = Atomic(nil)
        self.idPrimaryKey = key.primaryKey
        self.idStoreBits = key.storeBits
        self.values = SlotValues()
        self._isFault = true
    }

    deinit {
        madeID.load(ordering: .acquiring)?.release()
    }

    /// Creates an object of the entity whose ``EntityDescription/managedObjectClass`` is this
    /// class, inserted into `context` (Core Data's `init(context:)`).
    public convenience init(context: ManagedObjectContext) {
        guard let entity = context.entity(forClass: Self.self) else {
            preconditionFailure("ManagedObject: no entity in the context's model has the class \(Self.self)")
        }
        self.init(entity: entity, insertInto: context)
    }

    /// The state of the row fetched with a fault and not yet moved into `values` (its data at
    /// hand), or `nil`: the fault's ``committed`` field. Always `nil` for an object that is not
    /// a fault; setting it on such an object does nothing.
    var pendingRow: CommittedState? {
        @inline(__always) get { _isFault ? committed : nil }
        @inline(__always) set { if _isFault { committed = newValue } }
    }

    // MARK: - State

    /// Whether the object's data has not been loaded yet (`isFault`).
    public var isFault: Bool { _isFault }
    /// Whether the object was inserted into its context and not yet saved.
    public var isInserted: Bool { _isInserted }
    /// Whether the object was deleted from its context (and, until saved, may still be undone).
    public var isDeleted: Bool { _isDeleted }
    /// Whether the object has unsaved changes and is not inserted or deleted. A change to a
    /// transient property counts, as in Core Data (see ``hasPersistentChangedValues``).
    public var isUpdated: Bool { !_isInserted && !_isDeleted && hasChangedValues }
    /// Whether the object has unsaved changes of any kind, transient properties included.
    public var hasChanges: Bool { _isInserted || _isDeleted || hasChangedValues }

    /// The version of the stored state this object's values are based on: the store's
    /// optimistic-locking version (`Z_OPT`) when the object was last read or saved, one more
    /// at each save of it; 0 for an object never saved. Reading it loads a fault.
    ///
    /// Core Data keeps this number private; PersistKit exposes it so a client that reads an
    /// object in one place and changes it in another (persistd's `update` with `version`)
    /// can say which state its change is based on.
    public var storeVersion: Int64 {
        willAccessValue()
        return committedVersion
    }

    /// Whether any persistent attribute or relationship changed since the last save (Core
    /// Data's `hasPersistentChangedValues`). Changes to transient properties do not count: an
    /// object whose only changes are transient ones is ``isUpdated`` but is not written by a
    /// save.
    public var hasPersistentChangedValues: Bool {
        guard let changeState else { return false }
        // Most entities have no transient property: every change is a persistent one.
        if entity.rulesSatisfy({ $0.transientSlots.isEmpty && !$0.hasTransientToMany }) { return hasChangedValues }
        return Self.hasPersistentChanges(changeState, of: entity)
    }

    /// Whether any property, transient or persistent, changed since the last save.
    var hasChangedValues: Bool {
        guard let changeState else { return false }
        return !changeState.changedSlots.isEmpty || hasToManyChanges
    }

    /// ``hasPersistentChangedValues`` for an entity with transient properties: the changes of
    /// `state` other than those of transient slots and transient to-many relationships.
    private static func hasPersistentChanges(_ state: ObjectChangeState, of entity: EntityDescription) -> Bool {
        let slots = entity.slots
        for slot in state.changedSlots where slot >= slots.count || !slots[slot].isTransient { return true }
        for (name, toMany) in state.toMany where toMany.hasChanges {
            if entity.relationshipsByName[name]?.isTransient != true { return true }
        }
        return false
    }

    // MARK: - Life-cycle hooks (override points, as in Core Data)

    /// Called once when the object is first inserted into a context.
    open func awakeFromInsert() {}
    /// Called when the object's data is loaded from the store.
    open func awakeFromFetch() {}
    /// Called before the object's context saves it.
    open func willSave() {}
    /// Called after the object's context saved it.
    open func didSave() {}

    /// Whether a save calls ``willSave()`` and ``didSave()`` on objects of this class.
    ///
    /// `false` for `ManagedObject` itself, whose own do nothing; `true` for a subclass unless it
    /// says otherwise. A subclass that overrides neither method may return `false`: a save of
    /// its objects then skips the calls, and the passes over the saved objects they need (6 %
    /// to 9 % of inserting and saving 50,000 new objects, `BENCHMARKS.md`). The `final` classes
    /// `persistctl codegen` generates return `false`, as Swift lets no extension override the
    /// methods. A PersistKit addition: Core Data calls both on every saved object.
    open class var usesSaveHooks: Bool { self != ManagedObject.self }
    /// Called when the object becomes a fault again.
    open func didTurnIntoFault() {}

    /// Validation before an insert is saved; throw to refuse it. The default checks the model's rules.
    open func validateForInsert() throws { try validateAgainstModel() }
    /// Validation before an update is saved; throw to refuse it. The default checks the model's rules.
    open func validateForUpdate() throws { try validateAgainstModel() }
    /// Validation before a delete is saved; throw to refuse it. The default applies deny rules.
    open func validateForDelete() throws { try validateDeleteRules() }

    // MARK: - Identity

    /// Objects are equal only when they are the same instance, as `NSManagedObject`s are.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }

    /// Hashes the instance's identity. Final, as identity is what `==` compares (Core Data
    /// forbids overriding `hash` too): a `Set` of objects hashes without a class-method call.
    public final func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The hash `Set` and `Dictionary` ask for first: the instance's address mixed with the
    /// table's seed (``ManagedObjectID``'s mix), without SipHash (a to-many relationship's
    /// `Set` is built from scratch at each read).
    public final func _rawHashValue(seed: Int) -> Int {
        ManagedObjectID.mixedHash(UInt64(UInt(bitPattern: ObjectIdentifier(self))), seed: seed)
    }

    /// `<Beer: x-coredata://…/Beer/p1>` and, unless a fault, its values.
    open var description: String {
        var text = "<\(entity.name): \(objectID.uriRepresentation().absoluteString)"
        if _isFault { return text + "> (fault)" }
        let shown = entity.slots.enumerated().map { index, property in
            "\(property.name)=\(index < values.count ? String(describing: values[index]) : "?")"
        }
        text += "> {" + shown.joined(separator: ", ") + "}"
        return text
    }
}
