/// The stored state of one object: its ID, its version and its slot values.
///
/// `values` is laid out by the concrete entity's ``EntityDescription/slots``: attributes and
/// to-one relationships (as ``StoreValue/object(_:)`` or ``StoreValue/null``), inherited first.
/// Transient slots are ``StoreValue/null`` in a store. To-many relationships are not in a row;
/// stores answer them with ``PersistentStore/destinations(of:relationship:)``.
///
/// A row made with ``init(objectID:version:values:)`` holds that ID. A row a store makes with
/// ``init(entity:store:primaryKey:version:values:)`` holds only the object's entity, primary
/// key and store token (no ``ManagedObjectID`` allocated per row): a context files the object
/// under its ``key`` and makes its ID only when asked; ``objectID`` of such a row makes an
/// equal (not identical) ID at each call.
public struct RowSnapshot: Sendable, Hashable {
    /// The entity of the row's object (its concrete entity).
    public private(set) var entity: EntityDescription
    /// The row's primary key (`Z_PK`).
    public private(set) var primaryKey: Int64
    /// The address of the store's ``StoreToken`` for a row made without an ID; for a row made
    /// with one (whose key names the store), 1 when that ID is temporary and 0 otherwise, so
    /// ``isTemporaryID`` reads no ID (a save's rows are read long after their IDs were made,
    /// and each ID read there is a cache miss). 1 also for the row of a new object that has
    /// not made its temporary ID (``init(temporaryEntity:number:version:values:)``): a token's
    /// address is never 1, so 1 means a temporary ID whichever way the row was made.
    private var storeBits: UInt
    /// The ID the row was made with, if any.
    private var madeID: ManagedObjectID?
    /// The optimistic-locking version (`Z_OPT`): 1 when first saved, one more at each update.
    public var version: Int64
    /// The slot values.
    public var values: SlotValues
}

// The initializers are in an extension, so that the type keeps its implicit memberwise
// initializer, and each of them delegates to it. An initializer that assigned the fields one
// by one built the row in a stack slot and, inlined, retained the whole row and released it
// again before handing it over (the optimizer did not pair the two): three retains and three
// releases more per row built (workload 10 under callgrind: 14,378 instructions an object
// before, 13,902 after; workload 9: 7,767 and 7,569).
extension RowSnapshot {
    /// Creates a row snapshot.
    public init(objectID: ManagedObjectID, version: Int64, values: SlotValues) {
        self.init(entity: objectID.entity, primaryKey: objectID.primaryKey, storeBits: objectID.isTemporaryID ? 1 : 0, madeID: objectID,
                  version: version, values: values)
    }

    /// A row made with `objectID`, whose entity, primary key and temporary flag the caller
    /// knows already (an object's own fields), so the ID is not read.
    init(objectID: ManagedObjectID, entity: EntityDescription, primaryKey: Int64, isTemporaryID: Bool,
         version: Int64, values: SlotValues) {
        self.init(entity: entity, primaryKey: primaryKey, storeBits: isTemporaryID ? 1 : 0, madeID: objectID, version: version, values: values)
    }

    /// The row of a new object of `entity` whose temporary ID, numbered `number`, was not made
    /// yet: ``objectID`` makes an equal one when asked (a save that gives the object its
    /// permanent ID never asks).
    init(temporaryEntity entity: EntityDescription, number: Int64, version: Int64, values: SlotValues) {
        self.init(entity: entity, primaryKey: number, storeBits: 1, madeID: nil, version: version, values: values)
    }

    /// Creates the snapshot of the row `primaryKey` of `entity` in the store of `store`,
    /// without a ``ManagedObjectID`` (a store's fast path).
    public init(entity: EntityDescription, store: StoreToken, primaryKey: Int64, version: Int64, values: SlotValues) {
        self.init(entity: entity, primaryKey: primaryKey, storeBits: store.bits, madeID: nil, version: version, values: values)
    }

    /// Creates a row snapshot from an array of values.
    public init(objectID: ManagedObjectID, version: Int64, values: [StoreValue]) {
        self.init(objectID: objectID, version: version, values: SlotValues(values))
    }

    /// Creates the snapshot of the row `primaryKey` of `entity` in the store of `store`, from
    /// an array of values.
    public init(entity: EntityDescription, store: StoreToken, primaryKey: Int64, version: Int64, values: [StoreValue]) {
        self.init(entity: entity, store: store, primaryKey: primaryKey, version: version, values: SlotValues(values))
    }

    /// The object's permanent ID: the one the row was made with, or a new one equal to it.
    public var objectID: ManagedObjectID {
        get { madeID ?? ManagedObjectID(entity: entity, key: keyWithoutID) }
        set {
            madeID = newValue
            entity = newValue.entity
            primaryKey = newValue.primaryKey
            storeBits = newValue.isTemporaryID ? 1 : 0
        }
    }

    /// The ID the row was made with, or `nil` for a row made from a key (a context gives it to
    /// the object it registers, rather than making another).
    var objectIDIfMade: ManagedObjectID? {
        @inline(__always) get { madeID }
    }

    /// Whether the row's object has a temporary ID (a new object, not saved yet), read without
    /// making or retaining an ID (see ``storeBits``).
    public var isTemporaryID: Bool {
        @inline(__always) get { storeBits == 1 }
    }

    /// The key a context files the row's object under (``ObjectKey``).
    public var key: ObjectKey {
        @inline(__always) get {
            if let madeID { return madeID.key }
            return keyWithoutID
        }
    }

    /// The key of a row without an ID: a temporary one (store bits 0) for a new object's row.
    @inline(__always) private var keyWithoutID: ObjectKey {
        ObjectKey(entityIdentity: ObjectIdentifier(entity), primaryKey: primaryKey, storeBits: storeBits == 1 ? 0 : storeBits)
    }

    /// Rows are equal when their objects' IDs, versions and values are.
    public static func == (lhs: RowSnapshot, rhs: RowSnapshot) -> Bool {
        lhs.key == rhs.key && lhs.version == rhs.version && lhs.values == rhs.values
    }

    /// Hashes the object's key, the version and the values.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(version)
        hasher.combine(values)
    }
}
