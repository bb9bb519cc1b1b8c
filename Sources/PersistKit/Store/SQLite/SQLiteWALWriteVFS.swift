import CSQLite
import CWALWriteVFS

/// The VFS a store's connections open through: the one named in ``StoreOptions/sqliteVFSName``
/// (SQLite's default when none is), with the WAL's writes of a transaction gathered and written
/// with one system call (`CWALWriteVFS`; docs/stores.md, "WAL writes").
///
/// SQLite writes each WAL frame as two `pwrite`s, its header and its page. A save of one object
/// with persistent history commits five pages, ten calls; through this VFS it makes one, written
/// before SQLite publishes the commit, so nothing acknowledged as saved waits in a buffer.
enum SQLiteWALWriteVFS {
    /// The name of the VFS over the default one, registered at first use; `nil` when SQLite
    /// refused to register it (the store then opens through the default VFS).
    private static let overDefault: String? = register(below: nil)

    /// The name to open a store's connections with when ``StoreOptions/sqliteVFSName`` is
    /// `below`: the WAL-writing VFS over it, or `below` itself when that VFS cannot be registered
    /// (an unknown name then fails the open as it would have).
    static func name(over below: String?) -> String? {
        guard let below else { return overDefault }
        return register(below: below) ?? below
    }

    /// The `xWrite` calls SQLite made on `connection`'s WAL and the writes passed on to the VFS
    /// below; `nil` when the connection has no WAL open through this VFS.
    static func counts(of connection: SQLiteConnection) -> (received: Int64, issued: Int64)? {
        var received: Int64 = 0
        var issued: Int64 = 0
        guard persist_wal_vfs_counts(connection.handle, &received, &issued) == SQLITE_OK else { return nil }
        return (received, issued)
    }

    /// Registers the VFS over the VFS named `below` (the default when `nil`) and returns its name.
    private static func register(below: String?) -> String? {
        SQLiteLibrary.prepare()
        var name: UnsafePointer<CChar>?
        guard persist_wal_vfs_register(below, &name) == SQLITE_OK, let name else { return nil }
        return String(cString: name)
    }
}
