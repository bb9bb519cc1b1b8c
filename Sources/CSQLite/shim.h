#ifndef PERSISTD_CSQLITE_SHIM_H
#define PERSISTD_CSQLITE_SHIM_H

#include <sqlite3.h>
#include <sys/vfs.h>

/// `SQLITE_TRANSIENT` is a macro around a function-pointer cast that Swift cannot import.
/// It tells SQLite to copy a bound buffer before `sqlite3_bind_*` returns.
static inline sqlite3_destructor_type persist_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// `sqlite3_db_config` is variadic; this wraps the integer form of it.
static inline int persist_sqlite_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

/// `sqlite3_config(SQLITE_CONFIG_MEMSTATUS, enabled)`: `sqlite3_config` is variadic. It takes
/// effect only before SQLite initializes (else it returns `SQLITE_MISUSE` and changes nothing).
static inline int persist_sqlite_config_memstatus(int enabled) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, enabled);
}

/// The type of the file system holding `path` (`statfs`'s `f_type`, as `EXT4_SUPER_MAGIC`),
/// or 0 when it cannot be examined. `statfs` is not among the C functions Swift's Glibc module
/// brings in.
static inline long persist_filesystem_type(const char *path) {
    struct statfs info;
    return statfs(path, &info) == 0 ? (long)info.f_type : 0;
}

#endif
