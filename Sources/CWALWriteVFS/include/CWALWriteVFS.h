#ifndef PERSISTD_CWALWRITEVFS_H
#define PERSISTD_CWALWRITEVFS_H

/// A SQLite VFS that writes a transaction's WAL frames with one system call where SQLite makes
/// two per frame: "persist-wal" over the default VFS, "persist-wal+<name>" over another.
///
/// SQLite appends each frame to the WAL as two `xWrite` calls (its 24-byte header, then the
/// page), so a commit of five pages costs ten `pwrite`s. Files opened through this VFS pass
/// straight to the VFS below (the database, its journal, the wal-index), except the WAL: its
/// writes that continue the previous one are gathered in a buffer and written together, at the
/// latest with the page of a commit frame. So a commit's frames are all written, in one call,
/// before `xWrite` returns for its last page: before SQLite publishes the commit in the
/// wal-index, before its `COMMIT` returns; a failure to write them fails that `xWrite`, and
/// with it the commit, as a failed `pwrite` would. Any other use of the WAL file (a read, a
/// sync, its size, a truncation, a write elsewhere, closing it) first writes what is gathered.
///
/// Every function is thread-safe. A file is used by one connection at a time, as SQLite uses it.

#include <sqlite3.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The name of the VFS over the default VFS: "persist-wal".
#define PERSIST_WAL_VFS_NAME "persist-wal"

/// Registers (not as the default; once per VFS below, later calls find it) the VFS that
/// coalesces WAL writes over the VFS named `below`, or over the default VFS when `below` is
/// NULL, and sets `*name` to its name (valid for the life of the process). Returns an SQLite
/// result code: SQLITE_NOTFOUND when no VFS is named `below`.
int persist_wal_vfs_register(const char *below, const char **name);

/// The counts of the WAL of connection `db`'s main database: the `xWrite` calls SQLite made
/// (`received`) and the writes passed to the VFS below (`issued`). Returns SQLITE_NOTFOUND when
/// the connection has no WAL open through this VFS.
int persist_wal_vfs_counts(sqlite3 *db, int64_t *received, int64_t *issued);

#ifdef __cplusplus
}
#endif

#endif
