/// The permanent keys a save gave the new rows of its request, by position in
/// ``StoreSaveRequest/inserted``: what ``InTransactionKeyAssigning/saveAssigningKeys(_:)``
/// returns.
///
/// Most saves of new objects are given one run of consecutive keys, held here as the first
/// key and the count: no ``ManagedObjectID`` is made for each new object. A context moves its
/// objects to their new keys (``ObjectKey``) and each object makes its permanent ID only when
/// asked for it; only an object whose temporary ID was made (and may be held by a reference)
/// gets its permanent ID at once.
struct AssignedKeys: Sendable {
    private enum Storage: Sendable {
        /// Row `i` has key `first + i`, for `i` in `0..<count`.
        case consecutive(first: Int64, count: Int)
        /// Row `i` has key `keys[i]`, or kept its own ID (`nil`).
        case keys([Int64?])
        /// Row `i` has the ID `ids[i]`, or kept its own (`nil`); IDs made elsewhere (a conflict
        /// resolved by taking the stored object's ID, `obtainPermanentIDs(for:)`).
        case ids([ManagedObjectID?])
    }

    private let storage: Storage
    /// The store every key is of (unused for ``init(ids:)``, whose IDs name their stores).
    private let storeBits: UInt

    /// No row was given a key.
    static let none = AssignedKeys(storage: .keys([]), storeBits: 0)

    private init(storage: Storage, storeBits: UInt) {
        self.storage = storage
        self.storeBits = storeBits
    }

    /// Keys `first`, `first + 1`, … for rows `0..<count`, of `store`.
    init(consecutiveFrom first: Int64, count: Int, store: StoreToken) {
        self.init(storage: .consecutive(first: first, count: count), storeBits: store.bits)
    }

    /// `keys[i]` for row `i` (`nil`: the row kept its ID), of `store`.
    init(keys: [Int64?], store: StoreToken) {
        self.init(storage: .keys(keys), storeBits: store.bits)
    }

    /// `ids[i]` for row `i` (`nil`: the row kept its ID).
    init(ids: [ManagedObjectID?]) {
        self.init(storage: .ids(ids), storeBits: 0)
    }

    /// The number of positions (rows given a key, and rows between them that kept theirs).
    var count: Int {
        switch storage {
        case .consecutive(_, let count): count
        case .keys(let keys): keys.count
        case .ids(let ids): ids.count
        }
    }

    /// Whether no row was given a key.
    var isEmpty: Bool { count == 0 }

    /// The primary key given to row `position`, or `nil` when it kept its ID (or is beyond
    /// ``count``).
    @inline(__always) func primaryKey(at position: Int) -> Int64? {
        switch storage {
        case .consecutive(let first, let count):
            return position < count ? first + Int64(position) : nil
        case .keys(let keys):
            return position < keys.count ? keys[position] : nil
        case .ids(let ids):
            return position < ids.count ? ids[position]?.primaryKey : nil
        }
    }

    /// The registry key of row `position`, an object of `entity`, or `nil` when it kept its ID.
    @inline(__always) func objectKey(at position: Int, entity: EntityDescription) -> ObjectKey? {
        if case .ids(let ids) = storage {
            return position < ids.count ? ids[position]?.key : nil
        }
        guard let key = primaryKey(at: position) else { return nil }
        return ObjectKey(entityIdentity: ObjectIdentifier(entity), primaryKey: key, storeBits: storeBits)
    }

    /// The permanent ID of row `position`, an object of `entity`, made here unless it was given
    /// as an ID; `nil` when the row kept its ID.
    func objectID(at position: Int, entity: EntityDescription) -> ManagedObjectID? {
        if case .ids(let ids) = storage {
            return position < ids.count ? ids[position] : nil
        }
        guard let key = objectKey(at: position, entity: entity) else { return nil }
        return ManagedObjectID(entity: entity, key: key)
    }

    /// The permanent IDs of `rows` (the request's inserted rows) by position, made here: for
    /// the rare save whose other rows or to-many changes point at new objects.
    func objectIDs(of rows: [RowSnapshot]) -> [ManagedObjectID?] {
        if case .ids(let ids) = storage { return ids }
        return rows.indices.prefix(count).map { objectID(at: $0, entity: rows[$0].entity) }
    }
}
