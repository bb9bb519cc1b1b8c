// The "persist-wal" VFS: see include/CWALWriteVFS.h.
//
// Layout: SQLite allocates szOsFile bytes for each file. A file other than a WAL is opened by
// the VFS below straight into those bytes (its own methods, no wrapper in between). A WAL is a
// WALFile, and the file of the VFS below follows it in the same allocation.

#include "CWALWriteVFS.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/// At most this many VFSes below (the default and, in tests, the fault-injecting one).
#define MAX_BELOW 4
/// The buffer of one WAL: 31 frames of 4 KiB pages (4,120 bytes each with their headers).
#define BUFFER_CAPACITY (128 * 1024)
/// A WAL frame's header: page number, database size after a commit (0 when not a commit), salts, checksums.
#define FRAME_HEADER_SIZE 24

typedef struct WALFile {
    sqlite3_file base;
    /// The file of the VFS below, right after this struct.
    sqlite3_file *below;
    /// Writes gathered and not yet written: `length` bytes meant for offset `start`.
    unsigned char *buffer;
    sqlite3_int64 start;
    int length;
    /// The last write was the header of a commit frame: the next one, its page, writes everything.
    int commitPageNext;
    int64_t received;
    int64_t issued;
} WALFile;

typedef struct Registered {
    sqlite3_vfs vfs;
    char name[96];
} Registered;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Registered registered[MAX_BELOW];
static int registeredCount;

static sqlite3_vfs *belowVFS(sqlite3_vfs *vfs) {
    return (sqlite3_vfs *)vfs->pAppData;
}

// MARK: - The WAL's methods

/// Writes what is gathered, if anything; the buffer is empty afterwards, written or not (as a
/// failed `pwrite` leaves nothing to retry).
static int flush(WALFile *f) {
    if (f->length == 0) return SQLITE_OK;
    int length = f->length;
    f->length = 0;
    f->issued += 1;
    return f->below->pMethods->xWrite(f->below, f->buffer, length, f->start);
}

static int walClose(sqlite3_file *file) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    int closed = f->below->pMethods ? f->below->pMethods->xClose(f->below) : SQLITE_OK;
    sqlite3_free(f->buffer);
    f->buffer = NULL;
    return rc != SQLITE_OK ? rc : closed;
}

static int walRead(sqlite3_file *file, void *data, int amount, sqlite3_int64 offset) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->below->pMethods->xRead(f->below, data, amount, offset);
}

/// Gathers `amount` bytes meant for `offset` after what is gathered, or, when they do not
/// continue it or do not fit, writes that first and starts again with them; a write larger than
/// the buffer (or any, when the buffer cannot be had) goes down by itself.
static int gather(WALFile *f, const void *data, int amount, sqlite3_int64 offset) {
    int continues = f->length > 0 && offset == f->start + f->length && f->length + amount <= BUFFER_CAPACITY;
    if (!continues) {
        int rc = flush(f);
        if (rc != SQLITE_OK) return rc;
        if (!f->buffer && amount <= BUFFER_CAPACITY) f->buffer = sqlite3_malloc(BUFFER_CAPACITY);
        if (!f->buffer || amount > BUFFER_CAPACITY) {
            f->issued += 1;
            return f->below->pMethods->xWrite(f->below, data, amount, offset);
        }
        f->start = offset;
    }
    memcpy(f->buffer + f->length, data, (size_t)amount);
    f->length += amount;
    return SQLITE_OK;
}

static int walWrite(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    WALFile *f = (WALFile *)file;
    f->received += 1;
    int rc = gather(f, data, amount, offset);
    // A commit frame's page: the commit is written before this returns.
    if (rc == SQLITE_OK && f->commitPageNext) rc = flush(f);
    // A commit frame's header names the database's size after the commit (bytes 4 to 7).
    const unsigned char *header = data;
    f->commitPageNext = rc == SQLITE_OK && amount == FRAME_HEADER_SIZE && (header[4] | header[5] | header[6] | header[7]) != 0;
    return rc;
}

static int walTruncate(sqlite3_file *file, sqlite3_int64 size) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->below->pMethods->xTruncate(f->below, size);
}

static int walSync(sqlite3_file *file, int flags) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->below->pMethods->xSync(f->below, flags);
}

static int walFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->below->pMethods->xFileSize(f->below, size);
}

static int walLock(sqlite3_file *file, int level) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->below->pMethods->xLock(f->below, level);
}

static int walUnlock(sqlite3_file *file, int level) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->below->pMethods->xUnlock(f->below, level);
}

static int walCheckReservedLock(sqlite3_file *file, int *result) {
    WALFile *f = (WALFile *)file;
    return f->below->pMethods->xCheckReservedLock(f->below, result);
}

static int walFileControl(sqlite3_file *file, int op, void *argument) {
    WALFile *f = (WALFile *)file;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    return f->below->pMethods->xFileControl(f->below, op, argument);
}

static int walSectorSize(sqlite3_file *file) {
    WALFile *f = (WALFile *)file;
    return f->below->pMethods->xSectorSize(f->below);
}

static int walDeviceCharacteristics(sqlite3_file *file) {
    WALFile *f = (WALFile *)file;
    return f->below->pMethods->xDeviceCharacteristics(f->below);
}

// SQLite uses shared memory and memory maps through the database file, never through its WAL;
// these pass on what the VFS below would say.

static int walShmMap(sqlite3_file *file, int page, int size, int extend, void volatile **memory) {
    WALFile *f = (WALFile *)file;
    if (f->below->pMethods->iVersion < 2) return SQLITE_IOERR_SHMMAP;
    return f->below->pMethods->xShmMap(f->below, page, size, extend, memory);
}

static int walShmLock(sqlite3_file *file, int offset, int n, int flags) {
    WALFile *f = (WALFile *)file;
    if (f->below->pMethods->iVersion < 2) return SQLITE_IOERR_SHMLOCK;
    return f->below->pMethods->xShmLock(f->below, offset, n, flags);
}

static void walShmBarrier(sqlite3_file *file) {
    WALFile *f = (WALFile *)file;
    if (f->below->pMethods->iVersion >= 2) f->below->pMethods->xShmBarrier(f->below);
}

static int walShmUnmap(sqlite3_file *file, int deleteFlag) {
    WALFile *f = (WALFile *)file;
    if (f->below->pMethods->iVersion < 2) return SQLITE_OK;
    return f->below->pMethods->xShmUnmap(f->below, deleteFlag);
}

static int walFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
    WALFile *f = (WALFile *)file;
    *pointer = NULL;
    int rc = flush(f);
    if (rc != SQLITE_OK) return rc;
    if (f->below->pMethods->iVersion < 3) return SQLITE_OK;
    return f->below->pMethods->xFetch(f->below, offset, amount, pointer);
}

static int walUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    WALFile *f = (WALFile *)file;
    if (f->below->pMethods->iVersion < 3) return SQLITE_OK;
    return f->below->pMethods->xUnfetch(f->below, offset, pointer);
}

static const sqlite3_io_methods walMethods = {
    3,
    walClose,
    walRead,
    walWrite,
    walTruncate,
    walSync,
    walFileSize,
    walLock,
    walUnlock,
    walCheckReservedLock,
    walFileControl,
    walSectorSize,
    walDeviceCharacteristics,
    walShmMap,
    walShmLock,
    walShmBarrier,
    walShmUnmap,
    walFetch,
    walUnfetch,
};

// MARK: - VFS methods

static int vfsOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    sqlite3_vfs *below = belowVFS(vfs);
    if (!(flags & SQLITE_OPEN_WAL)) {
        // Not a WAL: the file below is the file, with its own methods.
        return below->xOpen(below, name, file, flags, outFlags);
    }
    WALFile *f = (WALFile *)file;
    memset(f, 0, sizeof *f);
    f->below = (sqlite3_file *)(f + 1);
    int rc = below->xOpen(below, name, f->below, flags, outFlags);
    // "If the xOpen method sets the sqlite3_file.pMethods element to a non-NULL value, then the
    // xClose method will be invoked even if the xOpen reported that it failed."
    if (rc == SQLITE_OK || f->below->pMethods) f->base.pMethods = &walMethods;
    return rc;
}

static int vfsDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    return belowVFS(vfs)->xDelete(belowVFS(vfs), name, syncDirectory);
}

static int vfsAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    return belowVFS(vfs)->xAccess(belowVFS(vfs), name, flags, result);
}

static int vfsFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    return belowVFS(vfs)->xFullPathname(belowVFS(vfs), name, size, out);
}

static void *vfsDlOpen(sqlite3_vfs *vfs, const char *name) {
    return belowVFS(vfs)->xDlOpen(belowVFS(vfs), name);
}

static void vfsDlError(sqlite3_vfs *vfs, int size, char *message) {
    belowVFS(vfs)->xDlError(belowVFS(vfs), size, message);
}

static void (*vfsDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    return belowVFS(vfs)->xDlSym(belowVFS(vfs), handle, symbol);
}

static void vfsDlClose(sqlite3_vfs *vfs, void *handle) {
    belowVFS(vfs)->xDlClose(belowVFS(vfs), handle);
}

static int vfsRandomness(sqlite3_vfs *vfs, int size, char *out) {
    return belowVFS(vfs)->xRandomness(belowVFS(vfs), size, out);
}

static int vfsSleep(sqlite3_vfs *vfs, int microseconds) {
    return belowVFS(vfs)->xSleep(belowVFS(vfs), microseconds);
}

static int vfsCurrentTime(sqlite3_vfs *vfs, double *now) {
    return belowVFS(vfs)->xCurrentTime(belowVFS(vfs), now);
}

static int vfsGetLastError(sqlite3_vfs *vfs, int size, char *out) {
    sqlite3_vfs *below = belowVFS(vfs);
    return below->xGetLastError ? below->xGetLastError(below, size, out) : 0;
}

static int vfsCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    sqlite3_vfs *below = belowVFS(vfs);
    if (below->iVersion >= 2 && below->xCurrentTimeInt64) return below->xCurrentTimeInt64(below, now);
    double days = 0;
    int rc = below->xCurrentTime(below, &days);
    *now = (sqlite3_int64)(days * 86400000.0);
    return rc;
}

// MARK: - Registration

int persist_wal_vfs_register(const char *belowName, const char **name) {
    int rc = sqlite3_initialize();
    if (rc != SQLITE_OK) return rc;
    sqlite3_vfs *below = sqlite3_vfs_find(belowName);
    if (!below) return SQLITE_NOTFOUND;
    pthread_mutex_lock(&lock);
    for (int index = 0; index < registeredCount; index += 1) {
        if (registered[index].vfs.pAppData == below) {
            *name = registered[index].name;
            pthread_mutex_unlock(&lock);
            return SQLITE_OK;
        }
    }
    if (registeredCount == MAX_BELOW) {
        pthread_mutex_unlock(&lock);
        return SQLITE_FULL;
    }
    Registered *entry = &registered[registeredCount];
    if (belowName) {
        int written = snprintf(entry->name, sizeof entry->name, "%s+%s", PERSIST_WAL_VFS_NAME, belowName);
        if (written < 0 || (size_t)written >= sizeof entry->name) {
            pthread_mutex_unlock(&lock);
            return SQLITE_TOOBIG;
        }
    } else {
        snprintf(entry->name, sizeof entry->name, "%s", PERSIST_WAL_VFS_NAME);
    }
    sqlite3_vfs *vfs = &entry->vfs;
    memset(vfs, 0, sizeof *vfs);
    vfs->iVersion = 2;
    vfs->szOsFile = (int)sizeof(WALFile) + below->szOsFile;
    vfs->mxPathname = below->mxPathname;
    vfs->zName = entry->name;
    vfs->pAppData = below;
    vfs->xOpen = vfsOpen;
    vfs->xDelete = vfsDelete;
    vfs->xAccess = vfsAccess;
    vfs->xFullPathname = vfsFullPathname;
    vfs->xDlOpen = vfsDlOpen;
    vfs->xDlError = vfsDlError;
    vfs->xDlSym = vfsDlSym;
    vfs->xDlClose = vfsDlClose;
    vfs->xRandomness = vfsRandomness;
    vfs->xSleep = vfsSleep;
    vfs->xCurrentTime = vfsCurrentTime;
    vfs->xGetLastError = vfsGetLastError;
    vfs->xCurrentTimeInt64 = vfsCurrentTimeInt64;
    rc = sqlite3_vfs_register(vfs, 0);
    if (rc == SQLITE_OK) {
        registeredCount += 1;
        *name = entry->name;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int persist_wal_vfs_counts(sqlite3 *db, int64_t *received, int64_t *issued) {
    sqlite3_file *file = NULL;
    int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file);
    if (rc != SQLITE_OK || !file || file->pMethods != &walMethods) return SQLITE_NOTFOUND;
    const WALFile *f = (const WALFile *)file;
    *received = f->received;
    *issued = f->issued;
    return SQLITE_OK;
}
