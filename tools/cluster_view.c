/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_view: cluster ids, partition health, quorum lag and election outcomes for the
 * cluster commands (cluster_view.h). */
#include "cluster_view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#define ELECTION_NOT_NEEDED 84 /* Kafka's code (base/err.h: ERR_ELECTION_NOT_NEEDED) */

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void tally_cluster_id_encode(const uint8_t uuid[16], char out[TALLY_CLUSTER_ID_LEN + 1])
{
    int o = 0;
    /* Five whole groups of three bytes make 20 characters; the last byte makes two more
     * (its 8 bits over 12, the low 4 zero), which is where padding would start. */
    for (int i = 0; i < 15; i += 3) {
        uint32_t v = (uint32_t)uuid[i] << 16 | (uint32_t)uuid[i + 1] << 8 | uuid[i + 2];
        for (int k = 3; k >= 0; k--)
            out[o++] = b64url[(v >> (6 * k)) & 63];
    }
    out[o++] = b64url[uuid[15] >> 2];
    out[o++] = b64url[(uuid[15] & 3) << 4];
    out[o] = '\0';
}

static int b64_value(char c)
{
    const char *p = c != '\0' ? strchr(b64url, c) : NULL;
    return p != NULL ? (int)(p - b64url) : -1;
}

int tally_cluster_id_decode(const char *s, uint8_t out[16])
{
    int v[TALLY_CLUSTER_ID_LEN];

    if (strlen(s) != TALLY_CLUSTER_ID_LEN)
        return -1;
    for (int i = 0; i < TALLY_CLUSTER_ID_LEN; i++)
        if ((v[i] = b64_value(s[i])) < 0)
            return -1;
    /* The last character carries 2 bits of the last byte and 4 that must be zero. */
    if (v[21] & 15)
        return -1;
    for (int g = 0, o = 0; g < 5; g++) {
        uint32_t x = (uint32_t)v[4 * g] << 18 | (uint32_t)v[4 * g + 1] << 12 |
                     (uint32_t)v[4 * g + 2] << 6 | (uint32_t)v[4 * g + 3];
        out[o++] = (uint8_t)(x >> 16);
        out[o++] = (uint8_t)(x >> 8);
        out[o++] = (uint8_t)x;
    }
    out[15] = (uint8_t)(v[20] << 2 | v[21] >> 4);
    return 0;
}

bool tally_cluster_id_from_random(const uint8_t random[16], char out[TALLY_CLUSTER_ID_LEN + 1])
{
    uint8_t u[16];
    bool zero = true;

    memcpy(u, random, sizeof u);
    /* RFC 4122 version 4 (random) and variant bits, as java.util.UUID.randomUUID sets them. */
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
    for (int i = 0; i < 16; i++)
        zero = zero && u[i] == 0;
    tally_cluster_id_encode(u, out);
    return !zero && out[0] != '-';
}

int tally_cluster_id_new(char out[TALLY_CLUSTER_ID_LEN + 1])
{
    uint8_t r[16];

    /* Half of all ids start with a character other than '-': a few draws at most. */
    for (int tries = 0; tries < 64; tries++) {
        ssize_t n;
        do
            n = getrandom(r, sizeof r, 0);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof r)
            return -1;
        if (tally_cluster_id_from_random(r, out))
            return 0;
    }
    return -1;
}

unsigned tally_partition_flags(int32_t leader, int32_t n_replicas, int32_t n_isr,
                               const int32_t *live, int32_t n_live)
{
    unsigned flags = 0;
    bool leader_live = false;

    if (n_isr < n_replicas)
        flags |= TALLY_PART_UNDER_REPLICATED;
    for (int32_t i = 0; i < n_live && leader >= 0; i++)
        leader_live = leader_live || live[i] == leader;
    if (!leader_live)
        flags |= TALLY_PART_OFFLINE;
    return flags;
}

const char *tally_partition_status(unsigned flags)
{
    if ((flags & TALLY_PART_OFFLINE) && (flags & TALLY_PART_UNDER_REPLICATED))
        return "offline,under-replicated";
    if (flags & TALLY_PART_OFFLINE)
        return "offline";
    if (flags & TALLY_PART_UNDER_REPLICATED)
        return "under-replicated";
    return "ok";
}

int64_t tally_quorum_lag(int64_t leader_end, int64_t end)
{
    if (leader_end < 0 || end < 0)
        return -1;
    return end >= leader_end ? 0 : leader_end - end;
}

void tally_format_ago(int64_t now_ms, int64_t ts_ms, char *buf, size_t cap)
{
    if (ts_ms < 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%" PRId64 " ms ago", now_ms > ts_ms ? now_ms - ts_ms : 0);
}

enum tally_elect_outcome tally_elect_outcome(int16_t error_code)
{
    if (error_code == 0)
        return TALLY_ELECTED;
    if (error_code == ELECTION_NOT_NEEDED)
        return TALLY_ELECTION_NOT_NEEDED;
    return TALLY_ELECTION_FAILED;
}
