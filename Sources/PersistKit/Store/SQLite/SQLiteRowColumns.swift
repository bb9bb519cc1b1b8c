/// An entity layout's slot columns and integer columns (``SQLiteSchema/EntityLayout``) in
/// memory of their own, which the row decoder reads through plain pointers (``View``).
///
/// The decoder looks a row's layout up by its entity number. Read from the layout's arrays,
/// the columns cost a retain and a release of each array a row: four atomic operations of the
/// 23 a fetched object cost (workload 2, counted with callgrind). A ``View`` is two pointers,
/// copied out of the layout with no reference count touched.
final class SQLiteRowColumns: @unchecked Sendable {
    // @unchecked Sendable: the memory is written once, in init, then only read, on any thread;
    // it is freed in deinit, once no layout holds this object (and so no view is in use).

    /// The columns of a row, as the decoder reads them. Valid while a layout holding the
    /// ``SQLiteRowColumns`` it came from exists: the decoder reads it from the store's schema,
    /// which lives as long as the store.
    struct View: @unchecked Sendable {
        // @unchecked Sendable: read-only pointers into memory that never changes (see above).

        /// One entry per slot of the entity (``SQLiteSchema/EntityLayout/slotColumns``).
        let slots: UnsafeBufferPointer<SQLiteSchema.SlotColumn>
        /// One entry per slot: the statement column (after `Z_PK`, `Z_ENT`, `Z_OPT`) of an
        /// integer attribute, -1 for any other slot. Plain integers, read by the decoder's
        /// inlined common case without switching over a ``SQLiteSchema/SlotColumn``.
        let integerColumns: UnsafeBufferPointer<Int32>
        /// The layout's entity, unretained: the layout holds it. A fetch hands it to the
        /// context with each row (``PersistentStore/fetch(_:eachRowParts:)``) without a
        /// retain and a release per row.
        let entity: Unmanaged<EntityDescription>
    }

    /// The pointers the decoder reads.
    let view: View
    private let slots: UnsafeMutableBufferPointer<SQLiteSchema.SlotColumn>
    private let integerColumns: UnsafeMutableBufferPointer<Int32>

    /// The columns of `slotColumns`, copied, of the layout of `entity` (which the layout holds).
    init(_ slotColumns: [SQLiteSchema.SlotColumn], entity: EntityDescription) {
        slots = .allocate(capacity: slotColumns.count)
        _ = slots.initialize(from: slotColumns)
        integerColumns = .allocate(capacity: slotColumns.count)
        for (index, slot) in slotColumns.enumerated() {
            var column: Int32 = -1
            if case .attribute(let attributeIndex, let type) = slot, type.isInteger { column = Int32(attributeIndex + 3) }
            integerColumns.initializeElement(at: index, to: column)
        }
        view = View(slots: UnsafeBufferPointer(slots), integerColumns: UnsafeBufferPointer(integerColumns),
                    entity: .passUnretained(entity))
    }

    deinit {
        // Both element types are trivial: nothing to deinitialize.
        slots.deallocate()
        integerColumns.deallocate()
    }
}
