/* SPDX-License-Identifier: Apache-2.0 */
/* pstate internals: the producer table shared by pstate.c (rules, table) and snapshot.c
 * (file format). */
#ifndef TALLY_PSTATE_INT_H
#define TALLY_PSTATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pstate/pstate.h"

/* The producers live in one dense array, `prods`, in insertion order; an open-addressing
 * hash table (linear probing, load <= 1/2) maps a producer id to its index, so check and
 * update are O(1) expected. Producer ids are handed out in increasing blocks, so new
 * producers usually arrive in id order: `sorted` stays true and pstate_producers returns
 * `prods` itself. Otherwise it sorts a copy into `cache`, which is reserved as `prods`
 * grows so that the listing never allocates (it has no way to report a failure). Removal
 * only happens in bulk (expiration, truncation), which compacts `prods` keeping its order
 * and rebuilds the hash table, so the table needs no tombstones. */
struct pstate {
    struct pstate_producer *prods;
    size_t n, cap;
    uint32_t *slots; /* index into prods + 1; 0 = empty */
    unsigned slot_bits;
    bool sorted; /* prods is in producer-id order */
    struct pstate_producer *cache;
    bool cache_valid;
    /* pstate_first_unstable_offset's answer (-1 = no open transaction), valid unless
     * `unstable_dirty` (a transaction closed, producers were removed or replaced). */
    int64_t first_unstable;
    bool unstable_dirty;
    uint32_t next_token; /* pstate_verify_begin's */
};

/* Returns the producer's entry, creating it (epoch 0, no batches, no transaction,
 * timestamps -1 and 0) if needed. NULL on allocation failure. */
struct pstate_producer *pstate_int_upsert(struct pstate *s, int64_t producer_id);

/* Moves every producer of `from` into `to` (which must be empty) and leaves `from` empty. */
void pstate_int_move(struct pstate *to, struct pstate *from);

/* Empties the state (keeps the allocations). */
void pstate_int_clear(struct pstate *s);

/* Last sequence of a batch of `delta` + 1 records starting at `first`: sequences wrap from
 * INT32_MAX to 0, as Kafka's DefaultRecordBatch.incrementSequence does. */
int32_t pstate_int_last_seq(int32_t first, int32_t delta);

#endif
