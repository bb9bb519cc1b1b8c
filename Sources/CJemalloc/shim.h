#ifndef PERSISTD_CJEMALLOC_SHIM_H
#define PERSISTD_CJEMALLOC_SHIM_H

// persistd links jemalloc for its malloc (docs/daemon.md, "Memory allocator"): importing this
// module is what puts libjemalloc.so.2 among persistd's libraries, ahead of glibc, so that
// every malloc and free of the process (the Swift runtime's, Foundation's, SQLite's) is
// jemalloc's. No function of it is called by name.
#include <jemalloc/jemalloc.h>

#endif
