import Foundation

extension SQLiteStore {
    /// The entity number whose `Z_PRIMARYKEY` row holds the key sequence of `layout`'s table:
    /// the table's root entity's, as Core Data keeps one sequence per table.
    func keySequence(of layout: SQLiteSchema.EntityLayout) -> Int {
        schema.layout(of: schema.tables[layout.tableIndex].root)?.number ?? layout.number
    }

    /// Reserves `count` primary keys from the key sequence `sequence` (see
    /// ``keySequence(of:)``) inside the caller's write transaction, and returns the first: the
    /// keys reserved are the first and the `count - 1` after it.
    ///
    /// Read, then write: the caller's transaction holds the write lock (`BEGIN IMMEDIATE`), so
    /// no other connection can come between. Two plain statements cost SQLite about a third of
    /// one `UPDATE … RETURNING`, which buffers its output in a temporary table.
    func reserveKeys(_ count: Int64, sequence: Int, _ connection: SQLiteConnection) throws -> Int64 {
        let read = try connection.cachedStatement(key: SQLiteWriteStatementKey.readKeyMaximum) {
            "SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" = ?"
        }
        try read.bind(.integer(Int64(sequence)), at: 1)
        let current: Int64? = try read.step() && !read.isNull(0) ? read.int64(0) : nil
        read.reset()
        guard let current else {
            throw PersistenceError(.persistentStoreSave, "Z_PRIMARYKEY has no row for entity number \(sequence)", path: url?.path)
        }
        let write = try connection.cachedStatement(key: SQLiteWriteStatementKey.writeKeyMaximum) {
            "UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = ? WHERE \"Z_ENT\" = ?"
        }
        try write.execute([.integer(current + count), .integer(Int64(sequence))])
        return current + 1
    }
}
