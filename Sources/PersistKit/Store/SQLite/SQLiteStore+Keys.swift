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

    /// `count` primary keys of the key sequence `sequence` for a save, inside the caller's write
    /// transaction of a group commit; returns the first of them, consecutive.
    ///
    /// Taken from the keys the connection reserved ahead when enough are left (no statement
    /// runs); otherwise reserved with ``reserveKeys(_:sequence:_:)``, with as many more ahead as
    /// ``SQLiteKeyReservations`` says. `Z_MAX` stays at or above every key handed out, since the
    /// update that reserved a block committed before any key of it is used in a later
    /// transaction (a rollback makes the group commit forget the blocks).
    func takeKeys(_ count: Int64, sequence: Int, _ connection: SQLiteConnection) throws -> Int64 {
        if let first = connection.keyReservations.take(count, sequence: sequence) { return first }
        let ahead = connection.keyReservations.ahead(of: sequence)
        let first = try reserveKeys(count + ahead, sequence: sequence, connection)
        connection.keyReservations.reserved(sequence: sequence, next: first + count, last: first + count + ahead - 1)
        return first
    }
}
