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
    /// The row's primary key (`Z_PK`) for a permanent ID; for a temporary ID, a process-unique counter.
    public let primaryKey: Int64
    /// The address of the store's interned ``StoreToken`` (0 for a temporary ID). The token
    /// holds the identifier string, so an ID holds no string of its own: making one retains
    /// and copies nothing but its entity, and two IDs of one store compare one word.
    let storeBits: UInt
    /// Whether the ID is temporary: the object has not been saved yet.
    public let isTemporaryID: Bool

    private static let temporaryCounter = Atomic<Int64>(0)

    /// The identifier (UUID string) of the store holding the object; `nil` while temporary.
    public var storeIdentifier: String? {
        storeBits == 0 ? nil : StoreToken.token(bits: storeBits).identifier
    }

    /// A permanent ID for the row `primaryKey` of `entity` in the store `storeIdentifier`.
    ///
    /// Interns the identifier's ``StoreToken``: cheap for the identifier asked for last (IDs
    /// are made by the thousand from one store's string), a lock and a hash otherwise. Where
    /// the store's token is at hand, ``init(entity:store:primaryKey:)`` does neither.
    public init(entity: EntityDescription, storeIdentifier: String, primaryKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.storeBits = StoreToken.forIdentifier(storeIdentifier).bits
        self.isTemporaryID = false
    }

    /// A permanent ID for the row `primaryKey` of `entity` in the store of `store`.
    public init(entity: EntityDescription, store: StoreToken, primaryKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.storeBits = store.bits
        self.isTemporaryID = false
    }

    /// The ID of `key`, whose entity is `entity` (a permanent key's store token names its store).
    init(entity: EntityDescription, key: ObjectKey) {
        self.entity = entity
        self.primaryKey = key.primaryKey
        self.storeBits = key.storeBits
        self.isTemporaryID = key.storeBits == 0
    }

    /// The key a context's registry files the object under (``ObjectKey``).
    public var key: ObjectKey {
        @inline(__always) get {
            ObjectKey(entityIdentity: ObjectIdentifier(entity), primaryKey: primaryKey, storeBits: storeBits)
        }
    }

    /// A new temporary ID for a newly inserted object of `entity`.
    init(temporaryFor entity: EntityDescription) {
        self.entity = entity
        self.primaryKey = ManagedObjectID.nextTemporaryNumber()
        self.storeBits = 0
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
        if !isTemporaryID, let storeIdentifier {
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

    /// Two IDs are equal when they name the same row of the same entity in the same store
    /// (tokens are interned: one per identifier, so equal tokens are equal identifiers).
    public static func == (lhs: ManagedObjectID, rhs: ManagedObjectID) -> Bool {
        lhs === rhs || (lhs.primaryKey == rhs.primaryKey && lhs.isTemporaryID == rhs.isTemporaryID
            && lhs.entity === rhs.entity && lhs.storeBits == rhs.storeBits)
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
