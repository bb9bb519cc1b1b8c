#ifndef PERSISTD_CEPOLL_SHIM_H
#define PERSISTD_CEPOLL_SHIM_H

// epoll and eventfd: Linux headers that Swift's Glibc module does not include. Wrapped once,
// in Sources/PersistServer/Socket/Epoll.swift.
#include <sys/epoll.h>
#include <sys/eventfd.h>

#endif
