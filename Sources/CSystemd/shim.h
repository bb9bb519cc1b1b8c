#ifndef PERSISTD_CSYSTEMD_SHIM_H
#define PERSISTD_CSYSTEMD_SHIM_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

/// `sd_journal_send` is variadic; this sends one message with a priority and a syslog identifier.
static inline int persist_journal_send(int priority, const char *identifier, const char *message) {
    return sd_journal_send("MESSAGE=%s", message,
                           "PRIORITY=%i", priority,
                           "SYSLOG_IDENTIFIER=%s", identifier,
                           NULL);
}

#endif
