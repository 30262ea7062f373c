/* SPDX-License-Identifier: Apache-2.0 */
/* The per-transactional-id state machine (see txn_sm.h): Kafka's TransactionMetadata rules,
 * pure. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "txn_sm.h"

static const char *const names[TXN_N_STATES] = {
    "Empty",          "Ongoing",       "PrepareCommit", "PrepareAbort",
    "CompleteCommit", "CompleteAbort", "Dead",          "PrepareEpochFence",
};

const char *txn_state_name(enum txn_state s)
{
    return (unsigned)s < TXN_N_STATES ? names[s] : "Unknown";
}

int txn_state_by_name(const char *name)
{
    for (int i = 0; name && i < TXN_N_STATES; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

bool txn_sm_valid_transition(enum txn_state from, enum txn_state to)
{
    switch (to) {
    case TXN_EMPTY:
    case TXN_DEAD:
        return from == TXN_EMPTY || from == TXN_COMPLETE_COMMIT || from == TXN_COMPLETE_ABORT;
    case TXN_ONGOING:
        return from == TXN_ONGOING || from == TXN_EMPTY || from == TXN_COMPLETE_COMMIT ||
               from == TXN_COMPLETE_ABORT;
    case TXN_PREPARE_COMMIT:
    case TXN_PREPARE_EPOCH_FENCE:
        return from == TXN_ONGOING;
    case TXN_PREPARE_ABORT:
        return from == TXN_ONGOING || from == TXN_PREPARE_EPOCH_FENCE;
    case TXN_COMPLETE_COMMIT:
        return from == TXN_PREPARE_COMMIT;
    case TXN_COMPLETE_ABORT:
        return from == TXN_PREPARE_ABORT;
    }
    return false;
}

bool txn_epoch_exhausted(int16_t epoch)
{
    return epoch >= INT16_MAX - 1;
}

/* ---- transits ----------------------------------------------------------------------------- */

void txn_transit_clear(struct txn_transit *t)
{
    for (int32_t i = 0; i < t->n_parts; i++)
        free(t->parts[i].topic);
    free(t->parts);
    t->parts = NULL;
    t->n_parts = 0;
}

static int tp_cmp(const struct txn_tp *a, const char *topic, int32_t partition)
{
    int c = strcmp(a->topic, topic);
    if (c != 0)
        return c;
    return a->partition < partition ? -1 : a->partition > partition ? 1 : 0;
}

/* Index of topic-partition in the sorted array, or -(insertion point) - 1. */
static int32_t tp_find(const struct txn_tp *v, int32_t n, const char *topic, int32_t partition)
{
    int32_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int c = tp_cmp(&v[mid], topic, partition);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

bool txn_transit_has(const struct txn_transit *t, const char *topic, int32_t partition)
{
    return tp_find(t->parts, t->n_parts, topic, partition) >= 0;
}

int txn_transit_copy(struct txn_transit *to, const struct txn_transit *from)
{
    *to = *from;
    to->parts = NULL;
    to->n_parts = 0;
    if (from->n_parts == 0)
        return 0;
    to->parts = calloc((size_t)from->n_parts, sizeof *to->parts);
    if (to->parts == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < from->n_parts; i++) {
        to->parts[i].topic = strdup(from->parts[i].topic);
        to->parts[i].partition = from->parts[i].partition;
        to->n_parts = i + 1;
        if (to->parts[i].topic == NULL) {
            txn_transit_clear(to);
            return ERR_NOMEM;
        }
    }
    return 0;
}

int txn_transit_add(struct txn_transit *t, const char *topic, int32_t partition)
{
    int32_t at = tp_find(t->parts, t->n_parts, topic, partition);
    if (at >= 0)
        return 0;
    at = -at - 1;
    struct txn_tp *v = realloc(t->parts, ((size_t)t->n_parts + 1) * sizeof *v);
    if (v == NULL)
        return ERR_NOMEM;
    t->parts = v;
    char *dup = strdup(topic);
    if (dup == NULL)
        return ERR_NOMEM;
    memmove(&v[at + 1], &v[at], (size_t)(t->n_parts - at) * sizeof *v);
    v[at].topic = dup;
    v[at].partition = partition;
    t->n_parts++;
    return 0;
}

/* ---- entries ------------------------------------------------------------------------------ */

struct txn_meta *txn_meta_new(const char *tid, int64_t producer_id, int32_t timeout_ms, int64_t now)
{
    struct txn_meta *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->tid = strdup(tid);
    if (m->tid == NULL) {
        free(m);
        return NULL;
    }
    m->cur = (struct txn_transit){
        .producer_id = producer_id,
        .last_producer_id = -1,
        .producer_epoch = -1,
        .last_producer_epoch = -1,
        .timeout_ms = timeout_ms,
        .state = TXN_EMPTY,
        .start_ms = -1,
        .update_ms = now,
    };
    return m;
}

void txn_meta_free(struct txn_meta *m)
{
    if (m == NULL)
        return;
    txn_transit_clear(&m->cur);
    free(m->tid);
    free(m);
}

/* A transit equal to the current state, without partitions. */
static void base_transit(const struct txn_meta *m, int64_t now, struct txn_transit *out)
{
    *out = m->cur;
    out->parts = NULL;
    out->n_parts = 0;
    out->update_ms = now;
}

/* ---- rules -------------------------------------------------------------------------------- */

int txn_sm_init_producer_id(const struct txn_meta *m, int32_t timeout_ms, int64_t expected_pid,
                            int16_t expected_epoch, int64_t new_pid, int64_t now,
                            enum txn_init_action *action, struct txn_transit *out)
{
    const struct txn_transit *c = &m->cur;
    bool expected = expected_pid >= 0;

    memset(out, 0, sizeof *out);
    if (m->pending)
        return ERR_CONCURRENT_TRANSACTIONS;
    /* KIP-360: a caller naming its id and epoch is fenced unless the entry is new, the id is
     * the current one (the epoch is checked below), or it is the id before a rotation and its
     * epoch was exhausted (a retry whose answer was lost). */
    if (expected && !(c->producer_epoch == -1 || expected_pid == c->producer_id ||
                      (expected_pid == c->last_producer_id && txn_epoch_exhausted(expected_epoch))))
        return ERR_PRODUCER_FENCED;
    switch (c->state) {
    case TXN_PREPARE_COMMIT:
    case TXN_PREPARE_ABORT:
        return ERR_CONCURRENT_TRANSACTIONS;
    case TXN_ONGOING:
        /* Abort it first at a bumped epoch (the previous instance is fenced by the markers);
         * the caller retries and gets the epoch bumped once more. */
        if (txn_transit_copy(out, c) != 0)
            return ERR_NOMEM;
        out->state = TXN_PREPARE_ABORT;
        out->producer_epoch =
            c->producer_epoch < INT16_MAX ? (int16_t)(c->producer_epoch + 1) : c->producer_epoch;
        out->last_producer_epoch = -1;
        out->update_ms = now;
        *action = TXN_INIT_FENCE;
        return 0;
    case TXN_EMPTY:
    case TXN_COMPLETE_COMMIT:
    case TXN_COMPLETE_ABORT:
        break;
    default:
        return ERR_INVALID_TXN_STATE; /* Dead / PrepareEpochFence are never current */
    }
    base_transit(m, now, out);
    out->state = TXN_EMPTY;
    out->timeout_ms = timeout_ms;
    out->start_ms = -1;
    if (txn_epoch_exhausted(c->producer_epoch)) {
        if (expected && expected_epoch != c->producer_epoch &&
            expected_epoch != c->last_producer_epoch)
            return ERR_PRODUCER_FENCED;
        if (new_pid < 0) {
            *action = TXN_INIT_NEED_NEW_ID;
            return 0;
        }
        out->last_producer_id = c->producer_id;
        out->producer_id = new_pid;
        out->producer_epoch = 0;
        out->last_producer_epoch = expected ? c->producer_epoch : -1;
        *action = TXN_INIT_WRITE;
        return 0;
    }
    int16_t bumped = (int16_t)(c->producer_epoch + 1);
    if (!expected) {
        out->producer_epoch = bumped;
        out->last_producer_epoch = -1;
    } else if (c->producer_epoch == -1 || expected_epoch == c->producer_epoch) {
        out->producer_epoch = bumped;
        out->last_producer_epoch = c->producer_epoch;
    } else if (expected_epoch == c->last_producer_epoch) {
        /* A retry of a bump that succeeded: the same epoch again. */
        out->producer_epoch = c->producer_epoch;
        out->last_producer_epoch = c->last_producer_epoch;
    } else {
        return ERR_PRODUCER_FENCED;
    }
    *action = TXN_INIT_WRITE;
    return 0;
}

/* The checks add_partitions and verify share. */
static int check_producer(const struct txn_meta *m, int64_t producer_id, int16_t epoch)
{
    if (m->cur.producer_id != producer_id)
        return ERR_INVALID_PRODUCER_ID_MAPPING;
    if (m->cur.producer_epoch != epoch)
        return ERR_PRODUCER_FENCED;
    return 0;
}

int txn_sm_add_partitions(const struct txn_meta *m, int64_t producer_id, int16_t epoch,
                          const struct txn_tp *parts, int32_t n, int64_t now, bool *write,
                          struct txn_transit *out)
{
    const struct txn_transit *c = &m->cur;
    int rc;

    memset(out, 0, sizeof *out);
    *write = false;
    if ((rc = check_producer(m, producer_id, epoch)) != 0)
        return rc;
    if (m->pending || c->state == TXN_PREPARE_COMMIT || c->state == TXN_PREPARE_ABORT)
        return ERR_CONCURRENT_TRANSACTIONS;
    if (c->state == TXN_ONGOING) {
        bool all = true;
        for (int32_t i = 0; i < n && all; i++)
            all = txn_transit_has(c, parts[i].topic, parts[i].partition);
        if (all)
            return 0;
    }
    if (!txn_sm_valid_transition(c->state, TXN_ONGOING))
        return ERR_INVALID_TXN_STATE;
    if (txn_transit_copy(out, c) != 0)
        return ERR_NOMEM;
    for (int32_t i = 0; i < n; i++) {
        if (txn_transit_add(out, parts[i].topic, parts[i].partition) != 0) {
            txn_transit_clear(out);
            return ERR_NOMEM;
        }
    }
    if (c->state != TXN_ONGOING)
        out->start_ms = now;
    out->state = TXN_ONGOING;
    out->update_ms = now;
    *write = true;
    return 0;
}

int64_t txn_sm_hold_ms(const struct txn_meta *m, int rc, int64_t since, int64_t now,
                       int64_t bound_ms)
{
    enum txn_state s = m->cur.state;
    int64_t left = since + bound_ms - now;

    if (rc != ERR_CONCURRENT_TRANSACTIONS ||
        !(m->pending || s == TXN_PREPARE_COMMIT || s == TXN_PREPARE_ABORT))
        return 0;
    return left > 0 ? left : 0;
}

int txn_sm_verify(const struct txn_meta *m, int64_t producer_id, int16_t epoch, const char *topic,
                  int32_t partition)
{
    int rc = check_producer(m, producer_id, epoch);
    if (rc != 0)
        return rc;
    if (m->cur.state == TXN_PREPARE_COMMIT || m->cur.state == TXN_PREPARE_ABORT)
        return ERR_CONCURRENT_TRANSACTIONS;
    if (m->cur.state == TXN_ONGOING && txn_transit_has(&m->cur, topic, partition))
        return 0;
    return ERR_INVALID_TXN_STATE;
}

int txn_sm_end(const struct txn_meta *m, int64_t producer_id, int16_t epoch, bool commit,
               bool from_client, int64_t now, bool *write, struct txn_transit *out)
{
    const struct txn_transit *c = &m->cur;

    memset(out, 0, sizeof *out);
    *write = false;
    if (c->producer_id != producer_id)
        return ERR_INVALID_PRODUCER_ID_MAPPING;
    /* A client's epoch must be the current one; the coordinator's own abort may be newer. */
    if ((from_client && epoch != c->producer_epoch) || epoch < c->producer_epoch)
        return ERR_PRODUCER_FENCED;
    if (m->pending)
        return ERR_CONCURRENT_TRANSACTIONS;
    switch (c->state) {
    case TXN_ONGOING:
        if (txn_transit_copy(out, c) != 0)
            return ERR_NOMEM;
        out->state = commit ? TXN_PREPARE_COMMIT : TXN_PREPARE_ABORT;
        out->producer_epoch = epoch;
        out->update_ms = now;
        *write = true;
        return 0;
    case TXN_COMPLETE_COMMIT:
        return commit ? 0 : ERR_INVALID_TXN_STATE;
    case TXN_COMPLETE_ABORT:
        return commit ? ERR_INVALID_TXN_STATE : 0;
    case TXN_PREPARE_COMMIT:
        return commit ? ERR_CONCURRENT_TRANSACTIONS : ERR_INVALID_TXN_STATE;
    case TXN_PREPARE_ABORT:
        return commit ? ERR_INVALID_TXN_STATE : ERR_CONCURRENT_TRANSACTIONS;
    default:
        return ERR_INVALID_TXN_STATE;
    }
}

int txn_sm_complete(const struct txn_meta *m, int64_t now, struct txn_transit *out)
{
    enum txn_state s = m->cur.state;
    memset(out, 0, sizeof *out);
    if (s != TXN_PREPARE_COMMIT && s != TXN_PREPARE_ABORT)
        return ERR_INVALID_TXN_STATE;
    base_transit(m, now, out);
    out->state = s == TXN_PREPARE_COMMIT ? TXN_COMPLETE_COMMIT : TXN_COMPLETE_ABORT;
    return 0;
}

bool txn_sm_timed_out(const struct txn_meta *m, int64_t now)
{
    return !m->pending && m->cur.state == TXN_ONGOING && m->cur.start_ms + m->cur.timeout_ms < now;
}

int txn_sm_abort_timed_out(const struct txn_meta *m, int64_t now, struct txn_transit *out)
{
    memset(out, 0, sizeof *out);
    if (m->pending)
        return ERR_CONCURRENT_TRANSACTIONS;
    if (m->cur.state != TXN_ONGOING)
        return ERR_INVALID_TXN_STATE;
    if (txn_transit_copy(out, &m->cur) != 0)
        return ERR_NOMEM;
    out->state = TXN_PREPARE_ABORT;
    if (out->producer_epoch < INT16_MAX)
        out->producer_epoch++;
    out->last_producer_epoch = -1;
    out->update_ms = now;
    return 0;
}

bool txn_sm_expired(const struct txn_meta *m, int64_t now, int64_t expiration_ms)
{
    enum txn_state s = m->cur.state;
    return !m->pending && (s == TXN_EMPTY || s == TXN_COMPLETE_COMMIT || s == TXN_COMPLETE_ABORT) &&
           m->cur.update_ms <= now - expiration_ms;
}

int txn_sm_dead(const struct txn_meta *m, int64_t now, struct txn_transit *out)
{
    memset(out, 0, sizeof *out);
    if (m->pending)
        return ERR_CONCURRENT_TRANSACTIONS;
    if (!txn_sm_valid_transition(m->cur.state, TXN_DEAD))
        return ERR_INVALID_TXN_STATE;
    base_transit(m, now, out);
    out->state = TXN_DEAD;
    return 0;
}

void txn_sm_begin(struct txn_meta *m, const struct txn_transit *t)
{
    /* Every transit is made by a rule above from the current state, and each rule makes only
     * the transitions the header lists (checked with txn_sm_valid_transition or by its switch):
     * a transit that is not one of them is a bug in a rule, and writing it would put a state
     * into __transaction_state that no coordinator can continue from. A pending transit is
     * begun again only as itself (a Complete* written again after a failed write). */
    assert(txn_sm_valid_transition(m->cur.state, t->state));
    assert(!m->pending || m->pending_state == t->state);
    m->pending = true;
    m->pending_state = t->state;
}

void txn_sm_apply(struct txn_meta *m, struct txn_transit *t)
{
    /* A live write applies the transit it began (which was allowed then, and the state has not
     * moved since: every other request is refused while it is pending). A replay of the log
     * applies what the log says, pending nothing: a record is data, not a transition to check
     * here. */
    assert(!m->pending ||
           (t->state == m->pending_state && txn_sm_valid_transition(m->cur.state, t->state)));
    txn_transit_clear(&m->cur);
    m->cur = *t;
    memset(t, 0, sizeof *t);
    m->pending = false;
}

void txn_sm_cancel(struct txn_meta *m)
{
    m->pending = false;
}
