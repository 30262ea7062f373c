/* SPDX-License-Identifier: Apache-2.0 */
/* pstate: the producer table of one partition and the idempotence rules of Kafka's
 * ProducerStateManager / ProducerAppendInfo — epoch fencing, duplicate detection over the
 * last 5 batches, sequence continuity with wrap-around at INT32_MAX — plus expiration and
 * truncation. Snapshot files are in snapshot.c. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "pstate/pstate.h"
#include "pstate/pstate_int.h"
#include "record/record.h"

#define MIN_SLOT_BITS 4

/* ---- the table ------------------------------------------------------------------------- */

/* Fibonacci hashing: producer ids are mostly consecutive, and the multiplication spreads
 * consecutive keys over the whole table. */
static size_t slot_of(const struct pstate *s, int64_t producer_id)
{
    return (size_t)(((uint64_t)producer_id * 0x9E3779B97F4A7C15ull) >> (64 - s->slot_bits));
}

static size_t n_slots(const struct pstate *s)
{
    return (size_t)1 << s->slot_bits;
}

static struct pstate_producer *find(const struct pstate *s, int64_t producer_id)
{
    size_t mask = n_slots(s) - 1;

    for (size_t i = slot_of(s, producer_id);; i = (i + 1) & mask) {
        uint32_t v = s->slots[i];
        if (v == 0)
            return NULL;
        if (s->prods[v - 1].producer_id == producer_id)
            return &s->prods[v - 1];
    }
}

/* Re-indexes every producer; the slot array must have room (load <= 1/2). */
static void rehash(struct pstate *s)
{
    size_t mask = n_slots(s) - 1;

    memset(s->slots, 0, n_slots(s) * sizeof *s->slots);
    for (size_t k = 0; k < s->n; k++) {
        size_t i = slot_of(s, s->prods[k].producer_id);
        while (s->slots[i] != 0)
            i = (i + 1) & mask;
        s->slots[i] = (uint32_t)(k + 1);
    }
}

struct pstate *pstate_new(void)
{
    struct pstate *s = calloc(1, sizeof *s);

    if (s == NULL)
        return NULL;
    s->slot_bits = MIN_SLOT_BITS;
    s->slots = calloc(n_slots(s), sizeof *s->slots);
    if (s->slots == NULL) {
        free(s);
        return NULL;
    }
    s->sorted = true;
    s->first_unstable = -1;
    return s;
}

void pstate_free(struct pstate *s)
{
    if (s == NULL)
        return;
    free(s->prods);
    free(s->cache);
    free(s->slots);
    free(s);
}

void pstate_int_clear(struct pstate *s)
{
    s->n = 0;
    s->sorted = true;
    s->cache_valid = false;
    s->first_unstable = -1;
    s->unstable_dirty = false;
    memset(s->slots, 0, n_slots(s) * sizeof *s->slots);
}

void pstate_int_move(struct pstate *to, struct pstate *from)
{
    struct pstate tmp = *to;

    *to = *from;
    *from = tmp;
    pstate_int_clear(from);
    to->cache_valid = false;
    to->unstable_dirty = true;
}

/* Makes room for one more producer: the arrays and, past load 1/2, a table twice as big. */
static int reserve_one(struct pstate *s)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        struct pstate_producer *p, *c;

        if (cap > UINT32_MAX / 2)
            return ERR_NOMEM;
        p = realloc(s->prods, cap * sizeof *p);
        if (p == NULL)
            return ERR_NOMEM;
        s->prods = p;
        c = realloc(s->cache, cap * sizeof *c);
        if (c == NULL)
            return ERR_NOMEM;
        s->cache = c;
        s->cache_valid = false;
        s->cap = cap;
    }
    if ((s->n + 1) * 2 > n_slots(s)) {
        uint32_t *slots = calloc(n_slots(s) * 2, sizeof *slots);

        if (slots == NULL)
            return ERR_NOMEM;
        free(s->slots);
        s->slots = slots;
        s->slot_bits++;
        rehash(s);
    }
    return 0;
}

struct pstate_producer *pstate_int_upsert(struct pstate *s, int64_t producer_id)
{
    struct pstate_producer *p = find(s, producer_id);
    size_t i;

    if (p != NULL)
        return p;
    if (reserve_one(s) != 0)
        return NULL;
    p = &s->prods[s->n];
    memset(p, 0, sizeof *p);
    p->producer_id = producer_id;
    p->coordinator_epoch = -1;
    p->txn_first_offset = -1;
    p->last_timestamp = -1;
    p->last_write_mono_ms = -1;
    p->verify_epoch = -1;
    if (s->n > 0 && s->prods[s->n - 1].producer_id > producer_id)
        s->sorted = false;
    for (i = slot_of(s, producer_id); s->slots[i] != 0; i = (i + 1) & (n_slots(s) - 1))
        ;
    s->slots[i] = (uint32_t)(s->n + 1);
    s->n++;
    s->cache_valid = false;
    return p;
}

/* Ends a bulk removal that kept `w` producers (compacted in place, in order). */
static void finish_removal(struct pstate *s, size_t w)
{
    s->cache_valid = false;
    s->unstable_dirty = true;
    if (w != s->n) {
        s->n = w;
        rehash(s);
    }
}

const struct pstate_producer *pstate_get(const struct pstate *s, int64_t producer_id)
{
    return find(s, producer_id);
}

static int cmp_producer(const void *a, const void *b)
{
    int64_t x = ((const struct pstate_producer *)a)->producer_id;
    int64_t y = ((const struct pstate_producer *)b)->producer_id;
    return (x > y) - (x < y);
}

size_t pstate_count(const struct pstate *s)
{
    return s->n;
}

const struct pstate_producer *pstate_producers(const struct pstate *s, size_t *n)
{
    /* The cache is not part of the state, only a view of it; every struct pstate comes
     * from pstate_new's malloc, so writing to it through a cast is defined. */
    struct pstate *m = (struct pstate *)s;

    *n = s->n;
    if (s->sorted || s->n == 0)
        return s->prods;
    if (!s->cache_valid) {
        memcpy(m->cache, s->prods, s->n * sizeof *s->prods);
        qsort(m->cache, s->n, sizeof *s->cache, cmp_producer);
        m->cache_valid = true;
    }
    return s->cache;
}

/* ---- the rules ------------------------------------------------------------------------- */

int32_t pstate_int_last_seq(int32_t first, int32_t delta)
{
    int64_t last = (int64_t)first + delta;

    if (first >= 0 && last > INT32_MAX)
        last -= (int64_t)INT32_MAX + 1;
    return (int32_t)last;
}

static bool in_sequence(int32_t last_seq, int32_t next_seq)
{
    return (int64_t)next_seq == (int64_t)last_seq + 1 || (last_seq == INT32_MAX && next_seq == 0);
}

static bool is_control(const struct record_batch *b)
{
    return (b->attributes & RECORD_ATTR_CONTROL) != 0;
}

int pstate_check(const struct pstate *s, const struct record_batch *b, struct pstate_batch *dup)
{
    const struct pstate_producer *p;
    int32_t first = b->base_sequence;
    int32_t last = pstate_int_last_seq(first, b->last_offset_delta);

    if (b->producer_id < 0)
        return 0;
    p = find(s, b->producer_id);
    if (p == NULL)
        return is_control(b) || first == 0 ? 0 : ERR_UNKNOWN_PRODUCER_ID;
    if (b->producer_epoch < p->epoch)
        return ERR_INVALID_PRODUCER_EPOCH;
    /* A transaction marker carries no sequence: only its epoch is checked. */
    if (is_control(b))
        return 0;
    if (b->producer_epoch > p->epoch)
        return first == 0 ? 0 : ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
    if ((b->attributes & RECORD_ATTR_TRANSACTIONAL) == 0 && p->txn_first_offset >= 0)
        return ERR_INVALID_TXN_STATE;
    for (int32_t i = 0; i < p->n_batches; i++) {
        if (p->batches[i].first_seq == first && p->batches[i].last_seq == last) {
            if (dup != NULL)
                *dup = p->batches[i];
            return ERR_DUPLICATE_SEQUENCE_NUMBER;
        }
    }
    /* No batch of this epoch yet (all truncated, or only markers): the epoch starts at 0. */
    if (!in_sequence(p->n_batches > 0 ? p->batches[p->n_batches - 1].last_seq : -1, first))
        return ERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
    return 0;
}

/* Opens the producer's transaction at `offset` unless one is open. */
static void open_txn(struct pstate *s, struct pstate_producer *p, int64_t offset)
{
    if (p->txn_first_offset >= 0)
        return;
    p->txn_first_offset = offset;
    if (!s->unstable_dirty && (s->first_unstable < 0 || offset < s->first_unstable))
        s->first_unstable = offset;
}

/* Closes the producer's transaction (if open) with the marker at `marker_offset`. */
static void close_txn(struct pstate *s, struct pstate_producer *p, int64_t marker_offset,
                      struct pstate_txn_end *end)
{
    int64_t first = p->txn_first_offset;

    p->txn_first_offset = -1;
    p->verify_token = 0;
    p->verify_epoch = -1;
    p->verified = false;
    if (first >= 0)
        s->unstable_dirty = true;
    if (end != NULL) {
        int64_t lso = pstate_first_unstable_offset(s);
        end->first_offset = first;
        end->last_stable_offset = lso >= 0 ? lso : marker_offset + 1;
    }
}

int64_t pstate_first_unstable_offset(const struct pstate *s)
{
    /* A view of the state, like the sorted cache: see pstate_producers. */
    struct pstate *m = (struct pstate *)s;

    if (s->unstable_dirty) {
        int64_t min = -1;
        for (size_t k = 0; k < s->n; k++) {
            int64_t f = s->prods[k].txn_first_offset;
            if (f >= 0 && (min < 0 || f < min))
                min = f;
        }
        m->first_unstable = min;
        m->unstable_dirty = false;
    }
    return s->first_unstable;
}

bool pstate_txn_verified(const struct pstate *s, int64_t producer_id, int16_t epoch)
{
    const struct pstate_producer *p = find(s, producer_id);

    if (p == NULL)
        return false;
    if (p->txn_first_offset >= 0 && p->epoch == epoch)
        return true;
    return p->verified && p->verify_epoch == epoch;
}

uint32_t pstate_verify_begin(struct pstate *s, int64_t producer_id, int16_t epoch)
{
    struct pstate_producer *p = pstate_int_upsert(s, producer_id);

    if (p == NULL)
        return 0;
    /* A check of this epoch already out (or done) is shared, as Kafka shares its
     * verification guard: a second request pipelined behind the first must not void it. */
    if (p->verify_token != 0 && p->verify_epoch == epoch)
        return p->verify_token;
    if (++s->next_token == 0)
        s->next_token = 1;
    p->verify_token = s->next_token;
    p->verify_epoch = epoch;
    p->verified = false;
    return p->verify_token;
}

bool pstate_verify_park(struct pstate *s, int64_t producer_id, int delta)
{
    struct pstate_producer *p =
        delta > 0 ? pstate_int_upsert(s, producer_id) : find(s, producer_id);

    if (p == NULL)
        return delta <= 0;
    if (delta > 0)
        p->verify_parked++;
    else if (p->verify_parked > 0)
        p->verify_parked--;
    return true;
}

uint32_t pstate_verify_parked(const struct pstate *s, int64_t producer_id)
{
    const struct pstate_producer *p = find(s, producer_id);
    return p ? p->verify_parked : 0;
}

bool pstate_verify_done(struct pstate *s, int64_t producer_id, int16_t epoch, uint32_t token)
{
    struct pstate_producer *p = find(s, producer_id);

    if (p == NULL || token == 0 || p->verify_token != token || p->verify_epoch != epoch)
        return false;
    p->verified = true;
    return true;
}

int pstate_check_marker(const struct pstate *s, int64_t producer_id, int16_t epoch,
                        int32_t coordinator_epoch)
{
    const struct pstate_producer *p = find(s, producer_id);

    if (p == NULL)
        return 0;
    if (epoch < p->epoch)
        return ERR_INVALID_PRODUCER_EPOCH;
    if (coordinator_epoch < p->coordinator_epoch)
        return ERR_TRANSACTION_COORDINATOR_FENCED;
    return 0;
}

/* The entry of b's producer (created when new), stamped with b: a new epoch starts a new
 * sequence space (the old batches can never match again). NULL when out of memory. */
static struct pstate_producer *touch(struct pstate *s, const struct record_batch *b, int64_t now_ms)
{
    struct pstate_producer *p = pstate_int_upsert(s, b->producer_id);
    if (p == NULL)
        return NULL;
    if (b->producer_epoch != p->epoch) {
        p->epoch = b->producer_epoch;
        p->n_batches = 0;
    }
    p->last_timestamp = b->max_timestamp;
    p->last_update_ms = now_ms;
    s->cache_valid = false;
    return p;
}

int pstate_update_marker(struct pstate *s, const struct record_batch *b, int32_t coordinator_epoch,
                         int64_t now_ms, struct pstate_txn_end *end)
{
    struct pstate_producer *p;

    if (end != NULL) {
        end->first_offset = -1;
        end->last_stable_offset = b->base_offset + 1;
    }
    if (b->producer_id < 0)
        return 0;
    p = touch(s, b, now_ms);
    if (p == NULL)
        return ERR_NOMEM;
    if (coordinator_epoch > p->coordinator_epoch)
        p->coordinator_epoch = coordinator_epoch;
    close_txn(s, p, b->base_offset, end);
    return 0;
}

int pstate_update(struct pstate *s, const struct record_batch *b, int64_t now_ms)
{
    struct pstate_producer *p;

    if (b->producer_id < 0)
        return 0;
    p = touch(s, b, now_ms);
    if (p == NULL)
        return ERR_NOMEM;

    if (is_control(b)) {
        /* A COMMIT or ABORT marker ends the producer's transaction and has no sequence, so
         * it stays out of the window (a marker's sequence -1 would break continuity). */
        close_txn(s, p, b->base_offset, NULL);
        return 0;
    }
    if ((b->attributes & RECORD_ATTR_TRANSACTIONAL) != 0)
        open_txn(s, p, b->base_offset);

    /* The window is ordered: a producer's batches are appended in the order of the log, at
     * increasing offsets — the log assigns each append the offset past the last, a replay
     * reads the log forward from a snapshot whose batches all lie below its offset (checked
     * at load), and a truncation drops the batches at or past the cut first. A batch at or
     * below the last one's end is a bug of the caller (a replay from the wrong offset, a
     * batch applied twice), and duplicate detection would then match the wrong batch. */
    assert(b->base_offset >= 0 && record_batch_last_offset(b) >= b->base_offset);
    assert(p->n_batches == 0 || b->base_offset > p->batches[p->n_batches - 1].last_offset);
    if (p->n_batches == PSTATE_MAX_BATCHES) {
        /* Shifting four 32-byte entries keeps the public oldest-first layout, which lets
         * pstate_get hand out the entry itself; it costs no more than ring arithmetic. */
        memmove(&p->batches[0], &p->batches[1], (PSTATE_MAX_BATCHES - 1) * sizeof p->batches[0]);
        p->n_batches--;
    }
    p->batches[p->n_batches++] = (struct pstate_batch){
        .first_seq = b->base_sequence,
        .last_seq = pstate_int_last_seq(b->base_sequence, b->last_offset_delta),
        .first_offset = b->base_offset,
        .last_offset = record_batch_last_offset(b),
        .timestamp = b->max_timestamp,
    };
    return 0;
}

void pstate_note_write(struct pstate *s, int64_t producer_id, int64_t mono_ms)
{
    struct pstate_producer *p = find(s, producer_id);
    if (p != NULL)
        p->last_write_mono_ms = mono_ms;
}

/* ---- removal --------------------------------------------------------------------------- */

size_t pstate_expire(struct pstate *s, int64_t now_ms, int64_t expiration_ms)
{
    size_t w = 0, removed;

    for (size_t k = 0; k < s->n; k++) {
        const struct pstate_producer *p = &s->prods[k];
        if (p->txn_first_offset < 0 && now_ms - p->last_update_ms > expiration_ms)
            continue;
        s->prods[w++] = *p;
    }
    removed = s->n - w;
    finish_removal(s, w);
    return removed;
}

void pstate_truncate(struct pstate *s, int64_t offset)
{
    size_t w = 0;

    for (size_t k = 0; k < s->n; k++) {
        struct pstate_producer *p = &s->prods[k];
        int32_t keep = 0;

        /* Batches are in offset order: keep those wholly below the cut. */
        while (keep < p->n_batches && p->batches[keep].last_offset < offset)
            keep++;
        if (p->txn_first_offset >= offset)
            p->txn_first_offset = -1;
        if (keep < p->n_batches) {
            if (keep == 0)
                continue; /* it only had batches past the cut */
            p->n_batches = keep;
            p->last_timestamp = p->batches[keep - 1].timestamp;
        }
        s->prods[w++] = *p;
    }
    finish_removal(s, w);
}
