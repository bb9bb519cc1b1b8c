/// What a context's registry files an object under: its entity, its primary key and its
/// store, as three words compared and hashed without following a reference (a
/// ``ManagedObjectID`` is a class instance, allocated per ID).
///
/// Two keys are equal exactly when the IDs they stand for are equal: a permanent key names a
/// store by its ``StoreToken`` (the same primary key in two stores gives two keys); a
/// temporary key has no store and the temporary ID's number as its primary key.
public struct ObjectKey: Hashable, Sendable {
    /// The identity of the object's (concrete) entity.
    let entityIdentity: ObjectIdentifier
    /// The row's primary key (`Z_PK`), or the temporary ID's number.
    public let primaryKey: Int64
    /// The address of the store's ``StoreToken``; 0 for a temporary key.
    let storeBits: UInt

    /// The key of the row `primaryKey` of `entity` in the store of `store`.
    public init(entity: EntityDescription, store: StoreToken, primaryKey: Int64) {
        self.entityIdentity = ObjectIdentifier(entity)
        self.primaryKey = primaryKey
        self.storeBits = store.bits
    }

    @inline(__always) init(entityIdentity: ObjectIdentifier, primaryKey: Int64, storeBits: UInt) {
        self.entityIdentity = entityIdentity
        self.primaryKey = primaryKey
        self.storeBits = storeBits
    }

    /// Whether the key stands for a temporary ID (an object not saved yet).
    public var isTemporaryID: Bool { storeBits == 0 }

    /// The store's token, or `nil` for a temporary key.
    public var store: StoreToken? { storeBits == 0 ? nil : StoreToken.token(bits: storeBits) }

    /// Equal keys name the same row of the same entity in the same store.
    @inline(__always)
    public static func == (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        lhs.primaryKey == rhs.primaryKey && lhs.entityIdentity == rhs.entityIdentity && lhs.storeBits == rhs.storeBits
    }

    /// Hashes the one word of ``ManagedObjectID``'s hash (entity, primary key, temporary flag),
    /// so a key and its ID hash alike.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(hashWord)
    }

    /// The word mixed with a table's seed, without SipHash (see ``ManagedObjectID``).
    @inline(__always)
    public func _rawHashValue(seed: Int) -> Int {
        ManagedObjectID.mixedHash(hashWord, seed: seed)
    }

    /// The entity, primary key and temporary flag folded into one word (as an ID folds them).
    @inline(__always) var hashWord: UInt64 {
        ManagedObjectID.hashWord(entity: entityIdentity, primaryKey: primaryKey, isTemporary: storeBits == 0)
    }
}
