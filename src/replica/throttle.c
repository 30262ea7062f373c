/* SPDX-License-Identifier: Apache-2.0 */
/* throttle: the replication quotas' meter, lists and budget (throttle.h). */
#include "replica/throttle.h"

#include <string.h>

void throttle_meter_init(struct throttle_meter *m)
{
    for (int i = 0; i < THROTTLE_SLOTS; i++) {
        m->slot_start[i] = -1;
        m->bytes[i] = 0;
    }
}

static int64_t slot_of(int64_t now_ms)
{
    return now_ms - (now_ms % THROTTLE_SLOT_MS + THROTTLE_SLOT_MS) % THROTTLE_SLOT_MS;
}

void throttle_record(struct throttle_meter *m, int64_t now_ms, int64_t bytes)
{
    int64_t start = slot_of(now_ms);
    int i = (int)((start / THROTTLE_SLOT_MS) % THROTTLE_SLOTS);
    if (i < 0)
        i += THROTTLE_SLOTS;
    if (m->slot_start[i] != start) {
        m->slot_start[i] = start;
        m->bytes[i] = 0;
    }
    if (bytes > 0)
        m->bytes[i] += bytes;
}

/* The bytes of the slots within the last `span` ms (whole slots) up to now_ms's. */
static int64_t bytes_within(const struct throttle_meter *m, int64_t now_ms, int64_t span)
{
    int64_t newest = slot_of(now_ms), sum = 0;
    for (int i = 0; i < THROTTLE_SLOTS; i++)
        if (m->slot_start[i] >= 0 && m->slot_start[i] <= newest && m->slot_start[i] > newest - span)
            sum += m->bytes[i];
    return sum;
}

int64_t throttle_window_bytes(const struct throttle_meter *m, int64_t now_ms)
{
    return bytes_within(m, now_ms, THROTTLE_WINDOW_MS);
}

int64_t throttle_headroom(const struct throttle_meter *m, int64_t now_ms, int64_t rate)
{
    int64_t window, burst;
    if (rate < 0 || rate > INT64_MAX / THROTTLE_WINDOW_MS)
        return INT64_MAX;
    window = rate * THROTTLE_WINDOW_MS / 1000 - bytes_within(m, now_ms, THROTTLE_WINDOW_MS);
    burst = rate * THROTTLE_BURST_MS / 1000 - bytes_within(m, now_ms, THROTTLE_BURST_MS);
    return window < burst ? window : burst;
}

/* A decimal number of [s, s + len), or -1 (not one, or empty). */
static int64_t number(const char *s, size_t len)
{
    int64_t v = 0;
    if (len == 0 || len > 10)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

bool throttle_listed(const char *list, int32_t partition, int32_t broker)
{
    const char *p = list;
    if (p == NULL)
        return false;
    while (*p == ' ')
        p++;
    if (*p == '*') {
        for (p++; *p == ' '; p++)
            ;
        return *p == '\0';
    }
    while (*p != '\0') {
        size_t len;
        const char *colon;
        while (*p == ' ')
            p++;
        len = strcspn(p, ",");
        while (len > 0 && p[len - 1] == ' ')
            len--;
        colon = memchr(p, ':', len);
        if (colon != NULL) {
            size_t a = (size_t)(colon - p);
            const char *b = colon + 1;
            size_t blen = len - a - 1;
            while (a > 0 && p[a - 1] == ' ')
                a--;
            while (blen > 0 && *b == ' ') {
                b++;
                blen--;
            }
            if (number(p, a) == partition && number(b, blen) == broker)
                return true;
        }
        p += strcspn(p, ",");
        if (*p == ',')
            p++;
    }
    return false;
}

int64_t throttle_budget(bool listed, bool in_sync, int64_t headroom, int64_t claimed,
                        int64_t budget)
{
    int64_t left;
    if (!listed || in_sync || headroom == INT64_MAX)
        return budget;
    left = headroom - claimed;
    if (left <= 0)
        return 0;
    return left < budget ? left : budget;
}
