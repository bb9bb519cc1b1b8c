/// The stored state of one object: its ID, its version and its slot values.
///
/// `values` is laid out by the concrete entity's ``EntityDescription/slots``: attributes and
/// to-one relationships (as ``StoreValue/object(_:)`` or ``StoreValue/null``), inherited first.
/// Transient slots are ``StoreValue/null`` in a store. To-many relationships are not in a row;
/// stores answer them with ``PersistentStore/destinations(of:relationship:)``.
public struct RowSnapshot: Sendable, Hashable {
    /// The object's permanent ID.
    public var objectID: ManagedObjectID
    /// The optimistic-locking version (`Z_OPT`): 1 when first saved, one more at each update.
    public var version: Int64
    /// The slot values.
    public var values: [StoreValue]

    /// Creates a row snapshot.
    public init(objectID: ManagedObjectID, version: Int64, values: [StoreValue]) {
        self.objectID = objectID
        self.version = version
        self.values = values
    }
}
