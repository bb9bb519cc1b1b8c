// The "persist-fault" VFS: see include/CFaultVFS.h.
//
// Layout: a FaultFile is what SQLite allocates (szOsFile); the wrapped unix file follows it in
// the same allocation. Watched files (under a scope directory) point to a Track, one per path
// and scope, which holds the undo/redo log of the writes since that path's last sync.

#include "CFaultVFS.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SCOPES 64
#define SECTOR 512

/// One change to a file since its last sync: a write (data at offset) or a truncate (to offset).
typedef struct Change {
    int isTruncate;
    int64_t offset;
    int64_t length;        // bytes written (0 for a truncate)
    int64_t sizeBefore;    // the file's size before the change
    unsigned char *before; // the bytes the change overwrote or cut off (within sizeBefore)
    int64_t beforeLength;
    unsigned char *data;   // the bytes written
} Change;

typedef struct Track {
    char *path;
    Change *changes;
    int64_t count;
    int64_t capacity;
    struct Track *next;
} Track;

typedef struct Scope {
    int inUse;
    uint64_t generation; // tells a reopened slot from the scope a file was opened in
    char *directory; // resolved, no trailing slash
    size_t directoryLength;
    int64_t writes;
    int64_t syncs;
    int64_t reads;
    int faultKind;
    int64_t faultAt;
    int faultError;
    int faultPersistent;
    int64_t injected;
    int64_t powerCutAt; // 0: not armed
    int64_t powerOps;
    int poweredOff;
    Track *tracks;
} Scope;

typedef struct FaultFile {
    sqlite3_file base;
    int scope;      // -1: not watched
    uint64_t generation;
    Track *track;   // NULL: not watched; valid while the scope (same generation) is open
    sqlite3_file *real;
} FaultFile;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Scope scopes[MAX_SCOPES];
static sqlite3_vfs faultVFS;
static sqlite3_vfs *realVFS;
static int registered;
static uint64_t generations;

// MARK: - Logs

static void freeChanges(Track *track) {
    for (int64_t i = 0; i < track->count; i++) {
        free(track->changes[i].before);
        free(track->changes[i].data);
    }
    track->count = 0;
}

static Change *appendChange(Track *track) {
    if (track->count == track->capacity) {
        int64_t capacity = track->capacity ? track->capacity * 2 : 16;
        Change *grown = realloc(track->changes, (size_t)capacity * sizeof(Change));
        if (!grown) return NULL;
        track->changes = grown;
        track->capacity = capacity;
    }
    Change *change = &track->changes[track->count++];
    memset(change, 0, sizeof *change);
    return change;
}

static Track *trackFor(Scope *scope, const char *path) {
    for (Track *track = scope->tracks; track; track = track->next) {
        if (strcmp(track->path, path) == 0) return track;
    }
    Track *track = calloc(1, sizeof *track);
    if (!track) return NULL;
    track->path = strdup(path);
    if (!track->path) { free(track); return NULL; }
    track->next = scope->tracks;
    scope->tracks = track;
    return track;
}

static int scopeFor(const char *path) {
    if (!path) return -1;
    for (int i = 0; i < MAX_SCOPES; i++) {
        Scope *scope = &scopes[i];
        if (scope->inUse && strncmp(path, scope->directory, scope->directoryLength) == 0
            && path[scope->directoryLength] == '/') {
            return i;
        }
    }
    return -1;
}

/// Reads `length` bytes at `offset` of the real file into a new buffer (zero past its end).
static unsigned char *readReal(sqlite3_file *real, int64_t offset, int64_t length) {
    unsigned char *buffer = calloc(1, (size_t)(length > 0 ? length : 1));
    if (!buffer || length <= 0) return buffer;
    int rc = real->pMethods->xRead(real, buffer, (int)length, offset);
    if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) { free(buffer); return NULL; }
    return buffer;
}

// MARK: - Fault decisions (called with the lock held)

/// The scope `f` is watched in, or NULL if it is not watched or its scope was closed since
/// (its track is freed then: the file passes straight through).
static Scope *watching(const FaultFile *f) {
    if (!f->track) return NULL;
    Scope *scope = &scopes[f->scope];
    return scope->inUse && scope->generation == f->generation ? scope : NULL;
}

/// Counts an operation of `kind` on a watched file; returns the error to fail it with, or SQLITE_OK.
static int countOperation(Scope *scope, int kind) {
    if (scope->poweredOff) return SQLITE_IOERR;
    int64_t count = kind == PERSIST_FAULT_WRITE ? ++scope->writes : ++scope->syncs;
    if (scope->powerCutAt > 0 && ++scope->powerOps >= scope->powerCutAt) {
        scope->poweredOff = 1;
        return SQLITE_IOERR;
    }
    if (scope->faultKind == kind && (count == scope->faultAt || (scope->faultPersistent && count > scope->faultAt))) {
        scope->injected++;
        return scope->faultError;
    }
    return SQLITE_OK;
}

/// Counts a read of a watched file; returns the error to fail it with, or SQLITE_OK. Reads
/// are not writes or syncs: a power cut leaves them alone.
static int countRead(Scope *scope) {
    int64_t count = ++scope->reads;
    if (scope->faultKind == PERSIST_FAULT_READ && (count == scope->faultAt || (scope->faultPersistent && count > scope->faultAt))) {
        scope->injected++;
        return scope->faultError;
    }
    return SQLITE_OK;
}

// MARK: - I/O methods

static int faultClose(sqlite3_file *file) {
    FaultFile *f = (FaultFile *)file;
    int rc = f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
    f->real->pMethods = NULL;
    return rc;
}

static int faultRead(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *f = (FaultFile *)file;
    if (f->track) {
        pthread_mutex_lock(&lock);
        Scope *scope = watching(f);
        int rc = scope ? countRead(scope) : SQLITE_OK;
        pthread_mutex_unlock(&lock);
        // A failed read fills nothing in.
        if (rc != SQLITE_OK) return rc;
    }
    return f->real->pMethods->xRead(f->real, buffer, amount, offset);
}

static int faultWrite(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *f = (FaultFile *)file;
    if (!f->track) return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
    pthread_mutex_lock(&lock);
    Scope *scope = watching(f);
    if (!scope) {
        pthread_mutex_unlock(&lock);
        return f->real->pMethods->xWrite(f->real, buffer, amount, offset);
    }
    int rc = countOperation(scope, PERSIST_FAULT_WRITE);
    if (rc == SQLITE_OK) {
        sqlite3_int64 size = 0;
        rc = f->real->pMethods->xFileSize(f->real, &size);
        Change *change = rc == SQLITE_OK ? appendChange(f->track) : NULL;
        if (rc == SQLITE_OK && !change) rc = SQLITE_NOMEM;
        if (change) {
            change->offset = offset;
            change->length = amount;
            change->sizeBefore = size;
            change->beforeLength = offset < size ? (size - offset < amount ? size - offset : amount) : 0;
            change->before = readReal(f->real, offset, change->beforeLength);
            change->data = malloc((size_t)(amount > 0 ? amount : 1));
            if (!change->before || !change->data) {
                free(change->before);
                free(change->data);
                f->track->count--;
                rc = SQLITE_NOMEM;
            } else {
                memcpy(change->data, buffer, (size_t)amount);
                rc = f->real->pMethods->xWrite(f->real, buffer, amount, offset);
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int faultTruncate(sqlite3_file *file, sqlite3_int64 size) {
    FaultFile *f = (FaultFile *)file;
    if (!f->track) return f->real->pMethods->xTruncate(f->real, size);
    pthread_mutex_lock(&lock);
    Scope *scope = watching(f);
    if (!scope) {
        pthread_mutex_unlock(&lock);
        return f->real->pMethods->xTruncate(f->real, size);
    }
    int rc = scope->poweredOff ? SQLITE_IOERR_TRUNCATE : SQLITE_OK;
    if (rc == SQLITE_OK) {
        sqlite3_int64 before = 0;
        rc = f->real->pMethods->xFileSize(f->real, &before);
        Change *change = rc == SQLITE_OK ? appendChange(f->track) : NULL;
        if (rc == SQLITE_OK && !change) rc = SQLITE_NOMEM;
        if (change) {
            change->isTruncate = 1;
            change->offset = size;
            change->sizeBefore = before;
            change->beforeLength = before > size ? before - size : 0;
            change->before = readReal(f->real, size, change->beforeLength);
            if (!change->before) {
                f->track->count--;
                rc = SQLITE_NOMEM;
            } else {
                rc = f->real->pMethods->xTruncate(f->real, size);
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int faultSync(sqlite3_file *file, int flags) {
    FaultFile *f = (FaultFile *)file;
    if (!f->track) return f->real->pMethods->xSync(f->real, flags);
    pthread_mutex_lock(&lock);
    Scope *scope = watching(f);
    if (!scope) {
        pthread_mutex_unlock(&lock);
        return f->real->pMethods->xSync(f->real, flags);
    }
    int rc = countOperation(scope, PERSIST_FAULT_SYNC);
    if (rc == SQLITE_OK) {
        rc = f->real->pMethods->xSync(f->real, flags);
        // Durable now: whatever was written to this path is on disk.
        if (rc == SQLITE_OK) freeChanges(f->track);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int faultFileSize(sqlite3_file *file, sqlite3_int64 *size) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xFileSize(f->real, size);
}

static int faultLock(sqlite3_file *file, int level) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xLock(f->real, level);
}

static int faultUnlock(sqlite3_file *file, int level) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xUnlock(f->real, level);
}

static int faultCheckReservedLock(sqlite3_file *file, int *result) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, result);
}

static int faultFileControl(sqlite3_file *file, int op, void *argument) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xFileControl(f->real, op, argument);
}

static int faultSectorSize(sqlite3_file *file) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int faultDeviceCharacteristics(sqlite3_file *file) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int faultShmMap(sqlite3_file *file, int page, int size, int extend, void volatile **memory) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xShmMap(f->real, page, size, extend, memory);
}

static int faultShmLock(sqlite3_file *file, int offset, int n, int flags) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}

static void faultShmBarrier(sqlite3_file *file) {
    FaultFile *f = (FaultFile *)file;
    f->real->pMethods->xShmBarrier(f->real);
}

static int faultShmUnmap(sqlite3_file *file, int deleteFlag) {
    FaultFile *f = (FaultFile *)file;
    return f->real->pMethods->xShmUnmap(f->real, deleteFlag);
}

static int faultFetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **pointer) {
    FaultFile *f = (FaultFile *)file;
    // Watched files are read through xRead only, so every read sees what xWrite wrote.
    if (f->track || f->real->pMethods->iVersion < 3) { *pointer = NULL; return SQLITE_OK; }
    return f->real->pMethods->xFetch(f->real, offset, amount, pointer);
}

static int faultUnfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    FaultFile *f = (FaultFile *)file;
    if (f->real->pMethods->iVersion < 3) return SQLITE_OK;
    return f->real->pMethods->xUnfetch(f->real, offset, pointer);
}

static const sqlite3_io_methods faultMethods = {
    3,
    faultClose,
    faultRead,
    faultWrite,
    faultTruncate,
    faultSync,
    faultFileSize,
    faultLock,
    faultUnlock,
    faultCheckReservedLock,
    faultFileControl,
    faultSectorSize,
    faultDeviceCharacteristics,
    faultShmMap,
    faultShmLock,
    faultShmBarrier,
    faultShmUnmap,
    faultFetch,
    faultUnfetch,
};

// MARK: - VFS methods

static int faultOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    FaultFile *f = (FaultFile *)file;
    f->real = (sqlite3_file *)(f + 1);
    f->scope = -1;
    f->generation = 0;
    f->track = NULL;
    f->base.pMethods = NULL;
    int rc = realVFS->xOpen(realVFS, name, f->real, flags, outFlags);
    if (rc != SQLITE_OK) {
        // "If the xOpen method sets the sqlite3_file.pMethods element to a non-NULL value, then
        // the xClose method will be invoked even if the xOpen reported that it failed."
        if (f->real->pMethods) { f->base.pMethods = &faultMethods; }
        return rc;
    }
    int watchedKinds = SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL;
    if (name && (flags & watchedKinds)) {
        pthread_mutex_lock(&lock);
        f->scope = scopeFor(name);
        if (f->scope >= 0) {
            f->generation = scopes[f->scope].generation;
            f->track = trackFor(&scopes[f->scope], name);
        }
        if (!f->track) f->scope = -1;
        pthread_mutex_unlock(&lock);
    }
    f->base.pMethods = &faultMethods;
    return SQLITE_OK;
}

static int faultDelete(sqlite3_vfs *vfs, const char *name, int syncDirectory) {
    (void)vfs;
    pthread_mutex_lock(&lock);
    int scope = scopeFor(name);
    if (scope >= 0 && scopes[scope].poweredOff) {
        pthread_mutex_unlock(&lock);
        return SQLITE_IOERR_DELETE;
    }
    int rc = realVFS->xDelete(realVFS, name, syncDirectory);
    if (rc == SQLITE_OK && scope >= 0) {
        // The file is gone; deleting is treated as durable (SQLite syncs the directory when it matters).
        for (Track *track = scopes[scope].tracks; track; track = track->next) {
            if (strcmp(track->path, name) == 0) freeChanges(track);
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int faultAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return realVFS->xAccess(realVFS, name, flags, result);
}

static int faultFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return realVFS->xFullPathname(realVFS, name, size, out);
}

static void *faultDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return realVFS->xDlOpen(realVFS, name);
}

static void faultDlError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    realVFS->xDlError(realVFS, size, message);
}

static void (*faultDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return realVFS->xDlSym(realVFS, handle, symbol);
}

static void faultDlClose(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    realVFS->xDlClose(realVFS, handle);
}

static int faultRandomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return realVFS->xRandomness(realVFS, size, out);
}

static int faultSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return realVFS->xSleep(realVFS, microseconds);
}

static int faultCurrentTime(sqlite3_vfs *vfs, double *now) {
    (void)vfs;
    return realVFS->xCurrentTime(realVFS, now);
}

static int faultGetLastError(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return realVFS->xGetLastError ? realVFS->xGetLastError(realVFS, size, out) : 0;
}

static int faultCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    return realVFS->xCurrentTimeInt64(realVFS, now);
}

// MARK: - Controls

int persist_fault_vfs_register(void) {
    pthread_mutex_lock(&lock);
    int rc = SQLITE_OK;
    if (!registered) {
        rc = sqlite3_initialize();
        realVFS = rc == SQLITE_OK ? sqlite3_vfs_find(NULL) : NULL;
        if (!realVFS) {
            rc = rc == SQLITE_OK ? SQLITE_ERROR : rc;
        } else {
            memset(&faultVFS, 0, sizeof faultVFS);
            faultVFS.iVersion = 2;
            faultVFS.szOsFile = (int)sizeof(FaultFile) + realVFS->szOsFile;
            faultVFS.mxPathname = realVFS->mxPathname;
            faultVFS.zName = PERSIST_FAULT_VFS_NAME;
            faultVFS.xOpen = faultOpen;
            faultVFS.xDelete = faultDelete;
            faultVFS.xAccess = faultAccess;
            faultVFS.xFullPathname = faultFullPathname;
            faultVFS.xDlOpen = faultDlOpen;
            faultVFS.xDlError = faultDlError;
            faultVFS.xDlSym = faultDlSym;
            faultVFS.xDlClose = faultDlClose;
            faultVFS.xRandomness = faultRandomness;
            faultVFS.xSleep = faultSleep;
            faultVFS.xCurrentTime = faultCurrentTime;
            faultVFS.xGetLastError = faultGetLastError;
            faultVFS.xCurrentTimeInt64 = faultCurrentTimeInt64;
            rc = sqlite3_vfs_register(&faultVFS, 0);
            registered = rc == SQLITE_OK;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static Scope *scopeAt(int scope) {
    return scope >= 0 && scope < MAX_SCOPES && scopes[scope].inUse ? &scopes[scope] : NULL;
}

int persist_fault_scope_open(const char *directory) {
    char resolved[PATH_MAX];
    if (!directory || !realpath(directory, resolved)) return -1;
    size_t length = strlen(resolved);
    while (length > 1 && resolved[length - 1] == '/') resolved[--length] = 0;
    pthread_mutex_lock(&lock);
    int found = -1;
    for (int i = 0; i < MAX_SCOPES && found < 0; i++) {
        if (!scopes[i].inUse) {
            char *copy = strdup(resolved);
            if (!copy) break;
            memset(&scopes[i], 0, sizeof scopes[i]);
            scopes[i].inUse = 1;
            scopes[i].directory = copy;
            scopes[i].directoryLength = length;
            scopes[i].generation = ++generations;
            found = i;
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

void persist_fault_scope_close(int handle) {
    pthread_mutex_lock(&lock);
    Scope *scope = scopeAt(handle);
    if (scope) {
        Track *track = scope->tracks;
        while (track) {
            Track *next = track->next;
            freeChanges(track);
            free(track->changes);
            free(track->path);
            free(track);
            track = next;
        }
        free(scope->directory);
        memset(scope, 0, sizeof *scope);
    }
    pthread_mutex_unlock(&lock);
}

void persist_fault_arm(int handle, int kind, int64_t n, int error, int persistent) {
    pthread_mutex_lock(&lock);
    Scope *scope = scopeAt(handle);
    if (scope) {
        scope->writes = 0;
        scope->syncs = 0;
        scope->reads = 0;
        scope->faultKind = kind;
        scope->faultAt = n;
        scope->faultError = error;
        scope->faultPersistent = persistent;
    }
    pthread_mutex_unlock(&lock);
}

void persist_fault_disarm(int handle) {
    pthread_mutex_lock(&lock);
    Scope *scope = scopeAt(handle);
    if (scope) scope->faultKind = 0;
    pthread_mutex_unlock(&lock);
}

int64_t persist_fault_count(int handle, int kind) {
    pthread_mutex_lock(&lock);
    Scope *scope = scopeAt(handle);
    int64_t count = !scope ? 0
        : kind == PERSIST_FAULT_WRITE ? scope->writes
        : kind == PERSIST_FAULT_SYNC ? scope->syncs
        : kind == PERSIST_FAULT_READ ? scope->reads : 0;
    pthread_mutex_unlock(&lock);
    return count;
}

int64_t persist_fault_injected(int handle) {
    pthread_mutex_lock(&lock);
    Scope *scope = scopeAt(handle);
    int64_t count = scope ? scope->injected : 0;
    pthread_mutex_unlock(&lock);
    return count;
}

int64_t persist_fault_unsynced(int handle, const char *path) {
    char resolved[PATH_MAX];
    if (path && !realpath(path, resolved)) return 0;
    pthread_mutex_lock(&lock);
    Scope *scope = scopeAt(handle);
    int64_t count = 0;
    for (Track *track = scope ? scope->tracks : NULL; track; track = track->next) {
        if (!path || strcmp(track->path, resolved) == 0) count += track->count;
    }
    pthread_mutex_unlock(&lock);
    return count;
}

void persist_fault_arm_power_cut(int handle, int64_t n) {
    pthread_mutex_lock(&lock);
    Scope *scope = scopeAt(handle);
    if (scope) {
        scope->writes = 0;
        scope->syncs = 0;
        scope->powerOps = 0;
        scope->powerCutAt = n;
        if (n == 0) scope->poweredOff = 1;
    }
    pthread_mutex_unlock(&lock);
}

int persist_fault_is_powered_off(int handle) {
    pthread_mutex_lock(&lock);
    Scope *scope = scopeAt(handle);
    int off = scope ? scope->poweredOff : 0;
    pthread_mutex_unlock(&lock);
    return off;
}

// MARK: - Crash images

/// A growable byte buffer holding a file's image.
typedef struct Image {
    unsigned char *bytes;
    int64_t size;
    int64_t capacity;
} Image;

static int imageResize(Image *image, int64_t size) {
    if (size > image->capacity) {
        int64_t capacity = image->capacity ? image->capacity : 4096;
        while (capacity < size) capacity *= 2;
        unsigned char *grown = realloc(image->bytes, (size_t)capacity);
        if (!grown) return ENOMEM;
        image->bytes = grown;
        image->capacity = capacity;
    }
    if (size > image->size) memset(image->bytes + image->size, 0, (size_t)(size - image->size));
    image->size = size;
    return 0;
}

static int imagePut(Image *image, int64_t offset, const unsigned char *bytes, int64_t length) {
    if (offset + length > image->size) {
        int rc = imageResize(image, offset + length);
        if (rc) return rc;
    }
    memcpy(image->bytes + offset, bytes, (size_t)length);
    return 0;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int readWholeFile(const char *path, Image *image) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    struct stat info;
    int rc = fstat(fd, &info) == 0 ? imageResize(image, info.st_size) : errno;
    int64_t done = 0;
    while (rc == 0 && done < image->size) {
        ssize_t n = pread(fd, image->bytes + done, (size_t)(image->size - done), done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { rc = n < 0 ? errno : EIO; break; }
        done += n;
    }
    close(fd);
    return rc;
}

static int writeWholeFile(const char *path, const Image *image) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    int rc = 0;
    int64_t done = 0;
    while (done < image->size) {
        ssize_t n = pwrite(fd, image->bytes + done, (size_t)(image->size - done), done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { rc = n < 0 ? errno : EIO; break; }
        done += n;
    }
    if (close(fd) != 0 && rc == 0) rc = errno;
    return rc;
}

int persist_fault_crash_image(int handle, const char *path, const char *destination, uint64_t seed, int mode,
                              persist_fault_image_stats *stats) {
    char resolved[PATH_MAX];
    if (!path || !destination || !realpath(path, resolved)) return path && destination ? errno : EINVAL;
    if (stats) memset(stats, 0, sizeof *stats);
    Image image = { 0 };
    pthread_mutex_lock(&lock);
    int rc = readWholeFile(resolved, &image);
    Scope *scope = scopeAt(handle);
    Track *track = NULL;
    for (Track *t = scope ? scope->tracks : NULL; t; t = t->next) {
        if (strcmp(t->path, resolved) == 0) track = t;
    }
    if (rc == 0 && track) {
        // Back to the content as of the last sync: undo every change, newest first.
        for (int64_t i = track->count - 1; i >= 0 && rc == 0; i--) {
            const Change *change = &track->changes[i];
            rc = imageResize(&image, change->sizeBefore);
            if (rc == 0 && change->beforeLength > 0) rc = imagePut(&image, change->offset, change->before, change->beforeLength);
        }
        // Then what the disk may have kept of each change since, oldest first.
        uint64_t state = seed;
        for (int64_t i = 0; i < track->count && rc == 0; i++) {
            const Change *change = &track->changes[i];
            int choice = mode == PERSIST_FAULT_RANDOM ? (int)(splitmix64(&state) % 3) : 1;
            if (choice == 0 || (choice == 2 && change->isTruncate)) {
                if (stats) stats->kept++;
                rc = change->isTruncate ? imageResize(&image, change->offset)
                                        : imagePut(&image, change->offset, change->data, change->length);
            } else if (choice == 1) {
                if (stats) stats->dropped++;
            } else {
                if (stats) stats->torn++;
                // Each sector the write touches is kept, lost, or kept in part (its first bytes:
                // a sector torn as the power fell) on its own.
                int64_t start = change->offset;
                int64_t end = change->offset + change->length;
                for (int64_t sector = start - start % SECTOR; sector < end && rc == 0; sector += SECTOR) {
                    uint64_t draw = splitmix64(&state);
                    if (draw % 3 == 1) continue;
                    int64_t from = sector > start ? sector : start;
                    int64_t to = sector + SECTOR < end ? sector + SECTOR : end;
                    if (draw % 3 == 2) to = from + (int64_t)((draw >> 8) % (uint64_t)(to - from));
                    if (to > from) rc = imagePut(&image, from, change->data + (from - start), to - from);
                }
            }
        }
    }
    pthread_mutex_unlock(&lock);
    if (rc == 0) rc = writeWholeFile(destination, &image);
    free(image.bytes);
    return rc;
}
