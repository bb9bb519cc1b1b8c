import Foundation
import Synchronization

/// A compact, universal identifier for a managed object, valid across contexts and threads.
///
/// The corresponding Core Data class is `NSManagedObjectID`. An object inserted but not yet
/// saved has a temporary ID; saving (or ``ManagedObjectContext/obtainPermanentIDs(for:)``)
/// gives it a permanent one, made of the store's identifier and the row's primary key.
public final class ManagedObjectID: Sendable, Hashable, CustomStringConvertible {
    /// The entity of the identified object (its concrete entity, never an abstract superentity).
    public let entity: EntityDescription
    /// The identifier (UUID string) of the store holding the object; `nil` while temporary.
    public let storeIdentifier: String?
    /// The row's primary key (`Z_PK`) for a permanent ID; for a temporary ID, a process-unique counter.
    public let primaryKey: Int64
    /// The address of the store's ``StoreToken`` once known (0 until then, and for a temporary
    /// ID): IDs made by a store carry it from the start, others intern their identifier at
    /// the first ``key`` asked. Declared before the flag so the instance stays 64 bytes.
    private let storeTokenBits: Atomic<UInt>
    /// Whether the ID is temporary: the object has not been saved yet.
    public let isTemporaryID: Bool

    private static let temporaryCounter = Atomic<Int64>(0)

    /// A permanent ID for the row `primaryKey` of `entity` in the store `storeIdentifier`.
    public init(entity: EntityDescription, storeIdentifier: String, primaryKey: Int64) {
        self.entity = entity
        self.storeIdentifier = storeIdentifier
        self.primaryKey = primaryKey
        self.storeTokenBits = Atomic(0)
        self.isTemporaryID = false
    }

    /// A permanent ID for the row `primaryKey` of `entity` in the store of `store`: no
    /// interning later, as the token is known.
    public init(entity: EntityDescription, store: StoreToken, primaryKey: Int64) {
        self.entity = entity
        self.storeIdentifier = store.identifier
        self.primaryKey = primaryKey
        self.storeTokenBits = Atomic(store.bits)
        self.isTemporaryID = false
    }

    /// The ID of `key`, whose entity is `entity` (a permanent key's store token names its store).
    init(entity: EntityDescription, key: ObjectKey) {
        self.entity = entity
        self.primaryKey = key.primaryKey
        self.storeTokenBits = Atomic(key.storeBits)
        if key.storeBits == 0 {
            self.storeIdentifier = nil
            self.isTemporaryID = true
        } else {
            self.storeIdentifier = StoreToken.token(bits: key.storeBits).identifier
            self.isTemporaryID = false
        }
    }

    /// The key a context's registry files the object under (``ObjectKey``).
    public var key: ObjectKey {
        @inline(__always) get {
            ObjectKey(entityIdentity: ObjectIdentifier(entity), primaryKey: primaryKey, storeBits: storeBits)
        }
    }

    /// The store token's address (0 for a temporary ID), interned at the first call for an ID
    /// made from an identifier string. Racing first calls intern the same token.
    var storeBits: UInt {
        @inline(__always) get {
            let known = storeTokenBits.load(ordering: .acquiring)
            if known != 0 || isTemporaryID { return known }
            return internStoreToken()
        }
    }

    @inline(never) private func internStoreToken() -> UInt {
        guard let storeIdentifier else { return 0 }
        let bits = StoreToken.forIdentifier(storeIdentifier).bits
        storeTokenBits.store(bits, ordering: .releasing)
        return bits
    }

    /// A new temporary ID for a newly inserted object of `entity`.
    init(temporaryFor entity: EntityDescription) {
        self.entity = entity
        self.storeIdentifier = nil
        self.primaryKey = ManagedObjectID.nextTemporaryNumber()
        self.storeTokenBits = Atomic(0)
        self.isTemporaryID = true
    }

    /// The number of a new temporary ID (process-unique), for an object that makes its ID later.
    @inline(__always) static func nextTemporaryNumber() -> Int64 {
        temporaryCounter.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// The ID as a URI: `x-coredata://<store UUID>/<Entity>/p<primary key>` for a permanent ID,
    /// `x-coredata:///<Entity>/t<number>` for a temporary one, as Core Data writes them.
    public func uriRepresentation() -> URL {
        let name = entity.name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "_"
        let text: String
        if let storeIdentifier, !isTemporaryID {
            text = "x-coredata://\(storeIdentifier)/\(name)/p\(primaryKey)"
        } else {
            text = "x-coredata:///\(name)/t\(primaryKey)"
        }
        // Force-unwrap: the text is a fixed scheme, a store UUID (hex digits and dashes), a
        // percent-encoded entity name and digits, all of which URL(string:) accepts.
        return URL(string: text)!
    }

    /// `<x-coredata://…/Beer/p1>`.
    public var description: String { "<\(uriRepresentation().absoluteString)>" }

    /// Two IDs are equal when they name the same row of the same entity in the same store.
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs === rhs || (lhs.primaryKey == rhs.primaryKey && lhs.isTemporaryID == rhs.isTemporaryID
            && lhs.entity === rhs.entity && lhs.storeIdentifier == rhs.storeIdentifier)
    }

    /// Hashes the entity and primary key.
    ///
    /// The three are folded into one word before hashing (the primary key spread by a
    /// multiplication, the entity's address, the temporary flag), so a context's registry pays
    /// for one `Hasher` round instead of three; the `Hasher` still mixes that word fully.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(hashWord)
    }

    /// The hash that `Dictionary` and `Set` ask for first, with their per-table seed: the one
    /// word of ``hash(into:)`` mixed with the seed by ``mixedHash(_:seed:)``, which skips
    /// SipHash (about 70 instructions per probe under callgrind, several probes per fetched
    /// row). Equal IDs have equal words, so equal hashes.
    public func _rawHashValue(seed: Int) -> Int {
        Self.mixedHash(hashWord, seed: seed)
    }

    /// `word` and a hash table's `seed` mixed by SplitMix64's finalizer: every input bit moves
    /// about half the output bits, so sequential primary keys and object addresses spread over
    /// a table's buckets; the per-table seed still varies the layout from table to table. Used
    /// for IDs and objects, whose words are primary keys and addresses (not strings a client
    /// chooses), where SipHash's resistance to chosen keys buys nothing.
    @inline(__always) static func mixedHash(_ word: UInt64, seed: Int) -> Int {
        var x = word ^ UInt64(bitPattern: Int64(seed)) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(bitPattern: UInt(x ^ (x >> 31)))
    }

    /// The entity, primary key and temporary flag folded into one word.
    @inline(__always) private var hashWord: UInt64 {
        Self.hashWord(entity: ObjectIdentifier(entity), primaryKey: primaryKey, isTemporary: isTemporaryID)
    }

    /// The one word an ID and its ``ObjectKey`` hash: the primary key spread by a
    /// multiplication, the entity's address, the temporary flag.
    @inline(__always)
    static func hashWord(entity: ObjectIdentifier, primaryKey: Int64, isTemporary: Bool) -> UInt64 {
        let key = UInt64(bitPattern: primaryKey) &* 0x9E37_79B9_7F4A_7C15
        let entityBits = UInt64(UInt(bitPattern: entity))
        return key ^ entityBits ^ (isTemporary ? 1 : 0)
    }
}
