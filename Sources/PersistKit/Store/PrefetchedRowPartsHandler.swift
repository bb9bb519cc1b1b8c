/// What ``PersistentStore/prefetchDestinations(of:relationship:expect:eachRowParts:)`` hands
/// each destination row to: the index in the sources of the row's source, then the row's parts
/// as a ``RowPartsHandler`` takes them (its key, its entity lent for the call, the ID it was
/// made with or `nil`, its version, and its values, which the callee takes or leaves).
public typealias PrefetchedRowPartsHandler = (_ sourceIndex: Int, _ key: ObjectKey, _ entity: EntityDescription,
                                              _ objectID: ManagedObjectID?, _ version: Int64,
                                              _ values: inout SlotValues) throws -> Void
