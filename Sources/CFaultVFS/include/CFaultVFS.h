#ifndef PERSISTD_CFAULTVFS_H
#define PERSISTD_CFAULTVFS_H

/// A fault-injecting SQLite VFS for tests: "persist-fault", a thin wrapper around the default
/// (unix) VFS.
///
/// Files opened through it whose full path lies under a *scope* directory (see
/// `persist_fault_scope_open`) are watched: their reads, writes and syncs are counted, a chosen
/// read, write or sync can be made to fail with a chosen error, and every write not yet made durable by a sync
/// is remembered, so a test can produce the file a power loss could leave behind (unsynced writes
/// dropped, kept or torn sector by sector). Files outside every scope pass straight through.
///
/// Every function is thread-safe (one process-wide pthread mutex). Scopes keep parallel tests
/// apart: each test works in its own directory and arms faults only there.
///
/// Test support only: never linked into persistd or persistctl.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The name the VFS is registered under: "persist-fault".
#define PERSIST_FAULT_VFS_NAME "persist-fault"

/// What a fault or a count is about.
enum {
    /// `xWrite` on the main database, its WAL or its rollback journal.
    PERSIST_FAULT_WRITE = 1,
    /// `xSync` on the same files.
    PERSIST_FAULT_SYNC = 2,
    /// `xRead` on the same files (the database, its WAL, its journal). A read failed with
    /// SQLITE_BUSY makes SQLite report the store locked in the middle of a statement, as no
    /// busy handler can wait out (for tests of what a reader does then).
    PERSIST_FAULT_READ = 3,
};

/// How `persist_fault_crash_image` treats the writes not yet synced.
enum {
    /// Every unsynced write is lost (the file is as of its last sync).
    PERSIST_FAULT_DROP_ALL = 0,
    /// Each unsynced write is kept, lost, or torn (each of its 512-byte sectors kept, lost, or
    /// kept up to a random byte), at random from the seed.
    PERSIST_FAULT_RANDOM = 1,
};

/// What `persist_fault_crash_image` did to the unsynced writes of one file.
typedef struct {
    int64_t kept;
    int64_t dropped;
    int64_t torn;
} persist_fault_image_stats;

/// Registers the VFS (not as the default); idempotent. Returns an SQLite result code.
int persist_fault_vfs_register(void);

/// Starts watching every file under `directory` (resolved with realpath; it must exist).
/// Returns a scope handle >= 0, or -1 if the directory cannot be resolved or all scopes are taken.
int persist_fault_scope_open(const char *directory);

/// Stops watching the scope's files and forgets their unsynced writes.
void persist_fault_scope_close(int scope);

/// Arms a fault: the `n`-th operation of `kind` (counted from now, from 1) in the scope fails
/// with `error` (for example SQLITE_IOERR_WRITE, SQLITE_IOERR_FSYNC, SQLITE_FULL); with
/// `persistent` set, every later one too, until disarmed (a full disk stays full). Resets the
/// scope's counters. A failing operation does nothing to the file.
void persist_fault_arm(int scope, int kind, int64_t n, int error, int persistent);

/// Disarms the scope's fault (counters keep counting).
void persist_fault_disarm(int scope);

/// Operations of `kind` in the scope since the last arm (or since the scope was opened).
int64_t persist_fault_count(int scope, int kind);

/// Faults injected in the scope since it was opened.
int64_t persist_fault_injected(int scope);

/// The writes and truncates made to the file at `path` (or, for NULL, to every file of the
/// scope) not yet made durable by a sync: 0 means a power loss now would lose none of them.
/// In WAL mode the WAL is what makes a commit durable: the database file's writes between
/// checkpoints need no sync, the WAL keeps their pages until a checkpoint has synced them.
int64_t persist_fault_unsynced(int scope, const char *path);

/// Cuts the power at the `n`-th write or sync (both counted together, from now, from 1): that
/// operation and every later write, sync, truncate and delete in the scope fails with
/// SQLITE_IOERR and leaves the disk alone, so the files stay as the cut left them.
/// `n` = 0 cuts it now. Resets the counters.
void persist_fault_arm_power_cut(int scope, int64_t n);

/// Whether the power of the scope is cut.
int persist_fault_is_powered_off(int scope);

/// Writes to `destination` what the file at `path` (in the scope) could hold after a power loss
/// now: its content as of its last sync, then each write since, per `mode`, in order. The
/// writes are drawn from `seed`. A file the scope never wrote is copied as is. Returns 0, or
/// an errno value. `stats`, if not NULL, gets what was done to the unsynced writes.
int persist_fault_crash_image(int scope, const char *path, const char *destination, uint64_t seed, int mode,
                              persist_fault_image_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
