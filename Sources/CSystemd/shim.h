#ifndef PERSISTD_CSYSTEMD_SHIM_H
#define PERSISTD_CSYSTEMD_SHIM_H

// Without this, <systemd/sd-journal.h> turns sd_journal_send/sendv into macros that add this
// header's own CODE_FILE/CODE_LINE; persistd passes the Swift caller's location itself.
#define SD_JOURNAL_SUPPRESS_LOCATION 1

#include <sys/uio.h>
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
