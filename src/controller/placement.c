/* SPDX-License-Identifier: Apache-2.0 */
/* placement: replicas for new partitions, Kafka's rack-alternating round robin. The usable
 * brokers are arranged so that consecutive ones sit in different racks (the first broker of
 * each rack in rack order, then the second of each, ...); partition p's first replica is
 * broker (p + start) of that list, so preferred leaders rotate over the brokers; the others
 * follow at a shift that grows once per round of partitions, skipping brokers whose rack
 * already holds a replica until every rack does. Without racks the same walk without the
 * rack rule. A broker without a rack, in a cluster where others have one, counts as a rack of
 * its own (Kafka refuses such a cluster unless told to ignore racks). */
#include "controller/controller_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"

struct placed {
    int32_t id;
    const char *rack; /* NULL = none */
    int32_t rack_no;  /* index of its rack in rack order */
};

static int rack_cmp(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

/* A 32-bit mixer, so that neighbouring seeds give unrelated starts. */
static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* The broker `idx` steps after the first replica, at the given shift: never the first
 * replica itself, and n - 1 consecutive steps visit every other broker once. */
static int32_t step(int32_t first, int64_t shift, int64_t idx, int32_t n)
{
    return (int32_t)((first + 1 + (shift + idx) % (n - 1)) % n);
}

static int by_rack_then_id(const void *x, const void *y)
{
    const struct placed *a = x, *b = y;
    int c = rack_cmp(a->rack, b->rack);
    if (c != 0)
        return c;
    return (a->id > b->id) - (a->id < b->id);
}

/* Arranges the usable brokers (in id order in `all`) into `list`, rack-alternating when there
 * are racks; returns the number of racks (0 = none at all). `all` is reordered. */
static int32_t arrange(struct placed *all, int32_t n, struct placed *list)
{
    int32_t n_racks = 0, k = 0, *rack_start;
    bool any_rack = false;

    for (int32_t i = 0; i < n; i++)
        any_rack |= all[i].rack != NULL;
    if (!any_rack) {
        memcpy(list, all, (size_t)n * sizeof *list);
        return 0;
    }
    qsort(all, (size_t)n, sizeof *all, by_rack_then_id);
    for (int32_t i = 0; i < n; i++) {
        if (i > 0 && rack_cmp(all[i - 1].rack, all[i].rack) != 0)
            n_racks++;
        all[i].rack_no = n_racks;
    }
    n_racks++;
    /* rack_start[r]: where rack r begins in `all`; rack_start[n_racks] = n. */
    rack_start = malloc(((size_t)n_racks + 1) * sizeof *rack_start);
    if (rack_start == NULL)
        return -1;
    for (int32_t i = n - 1; i >= 0; i--)
        rack_start[all[i].rack_no] = i;
    rack_start[n_racks] = n;
    /* Round r takes the r-th broker of every rack that has one. */
    for (int32_t round = 0; k < n; round++)
        for (int32_t r = 0; r < n_racks; r++)
            if (rack_start[r] + round < rack_start[r + 1])
                list[k++] = all[rack_start[r] + round];
    free(rack_start);
    return n_racks;
}

int ctl_place_replicas(const struct meta_image *img, int32_t n_partitions, int32_t rf,
                       int32_t first_partition, uint32_t seed, int32_t *out)
{
    size_t nb;
    const struct meta_broker *b = meta_image_brokers(img, &nb);
    struct placed *all, *list;
    bool *rack_used = NULL, *used = NULL;
    int32_t n = 0, n_racks, start, rv = 0;
    int64_t shift;

    for (size_t i = 0; i < nb; i++)
        n += !b[i].fenced && !b[i].shutting_down;
    if (rf < 1 || rf > n)
        return ERR_INVALID_REPLICATION_FACTOR;
    if (n_partitions <= 0)
        return 0;
    all = calloc((size_t)n, sizeof *all);
    list = calloc((size_t)n, sizeof *list);
    used = calloc((size_t)n, sizeof *used);
    rack_used = calloc((size_t)n, sizeof *rack_used);
    if (all == NULL || list == NULL || used == NULL || rack_used == NULL) {
        rv = ERR_NOMEM;
        goto out;
    }
    n = 0;
    for (size_t i = 0; i < nb; i++)
        if (!b[i].fenced && !b[i].shutting_down)
            all[n++] = (struct placed){b[i].id, b[i].rack, 0};
    n_racks = arrange(all, n, list);
    if (n_racks < 0) {
        rv = ERR_NOMEM;
        goto out;
    }

    start = (int32_t)(mix(seed) % (uint32_t)n);
    shift = mix(seed ^ 0x9e3779b9u) % (uint32_t)n;
    for (int32_t p = 0; p < n_partitions; p++) {
        int64_t pid = (int64_t)first_partition + p;
        int32_t first = (int32_t)((pid + start) % n), racks_in = 0, k = 0;
        int32_t *reps = &out[(size_t)p * (size_t)rf];

        /* Each round of n partitions moves the followers one step further round. */
        if (pid > 0 && pid % n == 0)
            shift++;
        memset(used, 0, (size_t)n * sizeof *used);
        memset(rack_used, 0, (size_t)n * sizeof *rack_used);
        reps[0] = list[first].id;
        used[first] = true;
        rack_used[list[first].rack_no] = true;
        racks_in = 1;
        for (int32_t r = 1; r < rf; r++) {
            for (;; k++) {
                int32_t at = n_racks ? step(first, shift * n_racks, k, n) : step(first, shift, k, n);
                bool rack_ok = n_racks == 0 || !rack_used[list[at].rack_no] || racks_in == n_racks;
                if (!used[at] && rack_ok) {
                    reps[r] = list[at].id;
                    used[at] = true;
                    if (n_racks && !rack_used[list[at].rack_no]) {
                        rack_used[list[at].rack_no] = true;
                        racks_in++;
                    }
                    k++;
                    break;
                }
            }
        }
    }
out:
    free(all);
    free(list);
    free(used);
    free(rack_used);
    return rv;
}
