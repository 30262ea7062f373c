/* SPDX-License-Identifier: Apache-2.0 */
/* clean_marker: what the log directory tells the next start about how the previous process
 * of this broker ended, for BrokerRegistration's PreviousBrokerEpoch (KIP-966): the broker
 * names the epoch it was registered at only when its logs cannot have lost a tail since,
 * and the controller keeps a broker that does not out of every ELR.
 *
 * Two files in the log directory:
 *
 **   .kafka_cleanshutdown   written at the end of a clean stop, once every log is flushed
 **                          and checkpointed, and removed at start (replica_mgr_start).
 **                          Kafka's form: {"version":0,"brokerEpoch":N}, N the epoch the
 **                          note below holds (-1 without one). An empty file (the marker
 **                          of older versions) names no epoch.
 **   .tally_broker_epoch    rewritten at every registration (a temporary file renamed over
 **                          it): one line "<boot id> <broker epoch>\n", the boot id being
 **                          the kernel's /proc/sys/kernel/random/boot_id.
 *
 * The note is what lets a process crash count as clean: a process killed on a machine that
 * stays up loses nothing it had written (the page cache keeps it and the kernel writes it
 * back), and the boot id tells that the machine did not restart since the note was written.
 * A crash of the machine itself brings a new boot id (the unflushed tail may be gone: -1).
 * That is also why the note is not fsynced: it is believed without the marker only on the
 * same boot, when the page cache holds it; after a machine crash it may be lost, torn or old
 * and is not believed anyway. The marker carries its own epoch because it may outlive its
 * truth: if the unlink at start is lost in a machine crash, the marker comes back naming the
 * epoch of the stop before, which the controller no longer holds for this broker (every
 * registration gets a new epoch), so it still counts as unclean. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fault.h"
#include "base/slog.h"
#include "replica_int.h"

#define NOTE ".tally_broker_epoch"
#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
#define BOOT_ID_MAX 64
#define MARKER_EPOCH_KEY "\"brokerEpoch\":"

/* Reads up to cap - 1 bytes of a small file, NUL-terminated; the length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n, got = 0;
    if (fd < 0)
        return -1;
    while ((size_t)got < cap - 1 && (n = read(fd, buf + got, cap - 1 - (size_t)got)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close(fd);
            return -1;
        }
        got += n;
    }
    close(fd);
    buf[got] = '\0';
    return got;
}

/* This machine's boot id into out[BOOT_ID_MAX] (without the newline); false if unknown. */
static bool boot_id(char *out)
{
    ssize_t n = read_small(BOOT_ID_PATH, out, BOOT_ID_MAX);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
        out[--n] = '\0';
    return n > 0;
}

/* A non-negative decimal epoch at s, ending at a character in `ends`; -1 if it is not one. */
static int64_t parse_epoch(const char *s, const char *ends)
{
    char *end;
    long long v;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || v < 0 || *end == '\0' || strchr(ends, *end) == NULL)
        return -1;
    return (int64_t)v;
}

/* The note's epoch, with the boot id it was written on into boot[BOOT_ID_MAX]; -1 when there
 * is no well-formed note. */
static int64_t read_note(const char *log_dir, char *boot)
{
    char path[PATH_MAX], buf[160];
    const char *sp;
    snprintf(path, sizeof path, "%s/%s", log_dir, NOTE);
    if (read_small(path, buf, sizeof buf) <= 0 || (sp = strchr(buf, ' ')) == NULL || sp == buf ||
        (size_t)(sp - buf) >= BOOT_ID_MAX)
        return -1;
    memcpy(boot, buf, (size_t)(sp - buf));
    boot[sp - buf] = '\0';
    return parse_epoch(sp + 1, "\n");
}

int64_t replica_previous_broker_epoch(const char *log_dir)
{
    char path[PATH_MAX], buf[160], noted[BOOT_ID_MAX], now[BOOT_ID_MAX];
    const char *at;
    int64_t epoch;

    snprintf(path, sizeof path, "%s/%s", log_dir, REPLICA_CLEAN_MARKER);
    if (read_small(path, buf, sizeof buf) >= 0) {
        /* Stopped cleanly: the epoch the marker names, if any. */
        at = strstr(buf, MARKER_EPOCH_KEY);
        return at ? parse_epoch(at + strlen(MARKER_EPOCH_KEY), ",}") : -1;
    }
    /* Killed: clean only if the machine kept its page cache (the same boot). */
    epoch = read_note(log_dir, noted);
    if (epoch < 0 || !boot_id(now) || strcmp(noted, now) != 0)
        return -1;
#ifdef TALLY_TEST_HOOKS
    /* The logs lose their unflushed tails at this start (log.c): as after a machine crash,
     * the note is from another boot. */
    if (fault_armed("log:lose_unflushed_tail")) {
        slog_warn("replica",
                  "TALLY_TEST_FAULT: log:lose_unflushed_tail: taking %s/%s (broker epoch %" PRId64
                  ") as written before a machine crash",
                  log_dir, NOTE, epoch);
        return -1;
    }
#endif
    return epoch;
}

int replica_note_broker_epoch(const char *log_dir, int64_t epoch)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8], boot[BOOT_ID_MAX], line[BOOT_ID_MAX + 32];
    int fd, n;
    ssize_t w;

    /* Without a boot id the note could never be believed: write none, and remove an old
     * one so that it is not believed either. */
    snprintf(path, sizeof path, "%s/%s", log_dir, NOTE);
    if (!boot_id(boot)) {
        unlink(path);
        return ERR_IO;
    }
    n = snprintf(line, sizeof line, "%s %" PRId64 "\n", boot, epoch);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return ERR_IO;
    do
        w = write(fd, line, (size_t)n);
    while (w < 0 && errno == EINTR);
    if (close(fd) != 0 || w != n || rename(tmp, path) != 0) {
        unlink(tmp);
        return ERR_IO;
    }
    return 0;
}

int replica_write_clean_marker(const char *log_dir)
{
    char path[PATH_MAX], noted[BOOT_ID_MAX];
    int64_t epoch = read_note(log_dir, noted);
    FILE *f;
    int rc;

    snprintf(path, sizeof path, "%s/%s", log_dir, REPLICA_CLEAN_MARKER);
    f = fopen(path, "w");
    if (f == NULL)
        return ERR_IO;
    rc = fprintf(f, "{\"version\":0,\"brokerEpoch\":%" PRId64 "}", epoch) < 0;
    if (fclose(f) != 0 || rc) {
        unlink(path);
        return ERR_IO;
    }
    return 0;
}
