import CSQLite

/// The process-wide settings PersistKit gives the SQLite library, once, before SQLite
/// initializes.
///
/// SQLite keeps memory statistics by default (`SQLITE_DEFAULT_MEMSTATUS`, on in Debian's
/// build): every allocation and every free inside SQLite then takes one process-wide mutex to
/// update the counters, whichever connection or thread it is on. SQLite lists turning them off
/// among its recommended options for speed; its allocations then go straight to `malloc`. With
/// Debian's SQLite built without lookaside memory, a save in persistd makes about 16 of them
/// (cursors, records, the savepoint's bit vector). Turned off, `sqlite3_memory_used()`,
/// `sqlite3_memory_highwater()` and the memory figures of `sqlite3_status64()` stay at 0, and
/// the soft and hard heap limits have nothing to measure; PersistKit uses none of them.
///
/// The setting belongs to the process and can be made only before SQLite initializes: when
/// something in the process used SQLite first, ``prepare()`` changes nothing and says so.
/// `docs/stores.md` ("SQLite's memory statistics") has the measurements.
public enum SQLiteLibrary {
    /// What ``prepare()`` did.
    public enum Preparation: Sendable, Equatable {
        /// SQLite's memory statistics are off for this process.
        case configured
        /// SQLite had initialized before (`code` is what `sqlite3_config` returned, normally
        /// `SQLITE_MISUSE`): its settings are the ones it had.
        case alreadyInitialized(code: Int32)
    }

    /// Gives SQLite PersistKit's process-wide settings if it has not initialized yet; every
    /// ``SQLiteConnection`` calls it before it opens, so a program calls it itself only to
    /// apply them before using SQLite in some other way. The first call decides; later calls
    /// return its result.
    @discardableResult
    public static func prepare() -> Preparation { preparation }

    /// The first call's outcome (Swift runs a static's initializer once, whichever thread
    /// asks first).
    private static let preparation: Preparation = {
        let code = persist_sqlite_config_memstatus(0)
        return code == SQLITE_OK ? .configured : .alreadyInitialized(code: code)
    }()
}
