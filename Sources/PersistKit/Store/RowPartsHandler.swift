/// What ``PersistentStore/fetch(_:eachRowParts:)`` hands each row to: the parts of a
/// ``RowSnapshot`` a context makes an object of.
///
/// - Parameters:
///   - key: the key the row's object is filed under (``RowSnapshot/key``).
///   - entity: the row's entity, lent for the call.
///   - objectID: the ID the row was made with, or `nil` for a row read by key (the object
///     makes its ID when first asked).
///   - version: the row's optimistic-locking version (`Z_OPT`).
///   - values: the row's slot values, which the callee takes (moving them out and leaving
///     empty values, `SlotValues()`) or leaves for the store to drop.
///
/// The values are `inout` rather than `consuming`: a callee that keeps them on one path only
/// (a context keeps a row for a fault, not for an object it has already) is compiled to
/// borrow a consumed parameter and copy what it keeps (a retain, and a release in the
/// caller); taken out of an `inout`, they move.
public typealias RowPartsHandler = (_ key: ObjectKey, _ entity: EntityDescription, _ objectID: ManagedObjectID?,
                                    _ version: Int64, _ values: inout SlotValues) throws -> Void
