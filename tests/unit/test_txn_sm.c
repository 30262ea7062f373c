/* SPDX-License-Identifier: Apache-2.0 */
/* txn_sm unit tests: every transition of the transactional-id state machine and the errors
 * Kafka gives, on explicit times (no clock, no sockets). */
#include "harness.h"

#include <string.h>

#include "base/err.h"
#include "txn/txn_sm.h"

#define T0 1700000000000LL

static struct txn_tp tp(const char *topic, int32_t p)
{
    return (struct txn_tp){(char *)topic, p};
}

/* Writes and applies a transit (the coordinator's path once the write is durable). */
static void commit_transit(struct txn_meta *m, struct txn_transit *t)
{
    CHECK(txn_sm_valid_transition(m->cur.state, t->state));
    txn_sm_begin(m, t);
    txn_sm_apply(m, t);
}

/* A new entry initialised to epoch 0 with one partition in an Ongoing transaction. */
static struct txn_meta *ongoing(int64_t pid, int64_t now)
{
    struct txn_meta *m = txn_meta_new("t", pid, 60000, now);
    struct txn_transit t;
    enum txn_init_action act;
    bool write;
    struct txn_tp parts[] = {tp("a", 0)};

    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, -1, -1, -1, now, &act, &t), 0);
    CHECK_EQ_INT(act, TXN_INIT_WRITE);
    commit_transit(m, &t);
    CHECK_EQ_INT(txn_sm_add_partitions(m, pid, 0, parts, 1, now, &write, &t), 0);
    CHECK(write);
    commit_transit(m, &t);
    return m;
}

TEST(txn_sm_state_names_and_transition_table)
{
    CHECK_EQ_STR(txn_state_name(TXN_PREPARE_EPOCH_FENCE), "PrepareEpochFence");
    CHECK_EQ_INT(txn_state_by_name("CompleteAbort"), TXN_COMPLETE_ABORT);
    CHECK_EQ_INT(txn_state_by_name("ongoing"), -1);
    CHECK(txn_sm_valid_transition(TXN_EMPTY, TXN_ONGOING));
    CHECK(txn_sm_valid_transition(TXN_ONGOING, TXN_ONGOING));
    CHECK(txn_sm_valid_transition(TXN_PREPARE_EPOCH_FENCE, TXN_PREPARE_ABORT));
    CHECK(!txn_sm_valid_transition(TXN_EMPTY, TXN_PREPARE_COMMIT));
    CHECK(!txn_sm_valid_transition(TXN_PREPARE_COMMIT, TXN_COMPLETE_ABORT));
    CHECK(!txn_sm_valid_transition(TXN_ONGOING, TXN_DEAD));
    CHECK(txn_sm_valid_transition(TXN_COMPLETE_COMMIT, TXN_DEAD));
}

TEST(txn_sm_init_new_entry_gets_epoch_zero_then_bumps)
{
    struct txn_meta *m = txn_meta_new("t", 1000, 60000, T0);
    struct txn_transit t;
    enum txn_init_action act;

    CHECK_EQ_INT(m->cur.producer_epoch, -1);
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 30000, -1, -1, -1, T0, &act, &t), 0);
    CHECK_EQ_INT(t.producer_epoch, 0);
    CHECK_EQ_INT(t.timeout_ms, 30000);
    CHECK_EQ_INT(t.state, TXN_EMPTY);
    /* While it is written, everything else waits. */
    txn_sm_begin(m, &t);
    struct txn_transit t2;
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 30000, -1, -1, -1, T0, &act, &t2),
                 ERR_CONCURRENT_TRANSACTIONS);
    txn_sm_apply(m, &t);
    CHECK_EQ_INT(m->cur.producer_epoch, 0);
    /* A second instance bumps the epoch (fencing the first). */
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 30000, -1, -1, -1, T0 + 1, &act, &t), 0);
    CHECK_EQ_INT(t.producer_epoch, 1);
    CHECK_EQ_INT(t.last_producer_epoch, -1);
    commit_transit(m, &t);
    txn_meta_free(m);
}

TEST(txn_sm_init_with_ongoing_transaction_fences_with_an_abort_first)
{
    struct txn_meta *m = ongoing(1000, T0);
    struct txn_transit t;
    enum txn_init_action act;

    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, -1, -1, -1, T0 + 5, &act, &t), 0);
    CHECK_EQ_INT(act, TXN_INIT_FENCE);
    CHECK_EQ_INT(t.state, TXN_PREPARE_ABORT);
    CHECK_EQ_INT(t.producer_epoch, 1);
    CHECK_EQ_INT(t.n_parts, 1);
    commit_transit(m, &t);
    /* The old instance is fenced from now on. */
    bool write;
    struct txn_tp parts[] = {tp("b", 0)};
    CHECK_EQ_INT(txn_sm_add_partitions(m, 1000, 0, parts, 1, T0 + 6, &write, &t),
                 ERR_PRODUCER_FENCED);
    /* Prepare*: the retry waits. */
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, -1, -1, -1, T0 + 6, &act, &t),
                 ERR_CONCURRENT_TRANSACTIONS);
    CHECK_EQ_INT(txn_sm_complete(m, T0 + 7, &t), 0);
    CHECK_EQ_INT(t.state, TXN_COMPLETE_ABORT);
    CHECK_EQ_INT(t.n_parts, 0);
    commit_transit(m, &t);
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, -1, -1, -1, T0 + 8, &act, &t), 0);
    CHECK_EQ_INT(act, TXN_INIT_WRITE);
    CHECK_EQ_INT(t.producer_epoch, 2);
    commit_transit(m, &t);
    txn_meta_free(m);
}

TEST(txn_sm_kip360_recovery_bumps_and_retry_gets_the_same_epoch)
{
    struct txn_meta *m = txn_meta_new("t", 7, 60000, T0);
    struct txn_transit t;
    enum txn_init_action act;

    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, -1, -1, -1, T0, &act, &t), 0);
    commit_transit(m, &t); /* epoch 0 */
    /* The producer recovers from an abortable error naming its id and epoch. */
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, 7, 0, -1, T0, &act, &t), 0);
    CHECK_EQ_INT(t.producer_epoch, 1);
    CHECK_EQ_INT(t.last_producer_epoch, 0);
    commit_transit(m, &t);
    /* Its answer was lost: the retry names epoch 0 again and gets epoch 1 again. */
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, 7, 0, -1, T0, &act, &t), 0);
    CHECK_EQ_INT(t.producer_epoch, 1);
    txn_transit_clear(&t);
    /* An older epoch, or another id, is fenced. */
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, 7, 5, -1, T0, &act, &t), ERR_PRODUCER_FENCED);
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, 8, 1, -1, T0, &act, &t), ERR_PRODUCER_FENCED);
    txn_meta_free(m);
}

TEST(txn_sm_exhausted_epoch_rotates_the_producer_id)
{
    struct txn_meta *m = txn_meta_new("t", 7, 60000, T0);
    struct txn_transit t;
    enum txn_init_action act;

    m->cur.producer_epoch = INT16_MAX - 1;
    CHECK(txn_epoch_exhausted(m->cur.producer_epoch));
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, -1, -1, -1, T0, &act, &t), 0);
    CHECK_EQ_INT(act, TXN_INIT_NEED_NEW_ID);
    txn_transit_clear(&t);
    /* A recovering producer (KIP-360) names its id and exhausted epoch. */
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, 7, INT16_MAX - 1, 99, T0, &act, &t), 0);
    CHECK_EQ_INT(act, TXN_INIT_WRITE);
    CHECK_EQ_INT(t.last_producer_epoch, INT16_MAX - 1);
    CHECK_EQ_INT(t.producer_id, 99);
    CHECK_EQ_INT(t.producer_epoch, 0);
    CHECK_EQ_INT(t.last_producer_id, 7);
    commit_transit(m, &t);
    /* The old id's retry with its exhausted epoch is accepted (it lost the answer). */
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, 7, INT16_MAX - 1, -1, T0, &act, &t), 0);
    txn_transit_clear(&t);
    txn_meta_free(m);
}

TEST(txn_sm_add_partitions_errors_and_the_already_added_shortcut)
{
    struct txn_meta *m = ongoing(1000, T0);
    struct txn_transit t;
    bool write;
    struct txn_tp same[] = {tp("a", 0)}, more[] = {tp("b", 1), tp("a", 0), tp("a", 3)};

    CHECK_EQ_INT(txn_sm_add_partitions(m, 1001, 0, same, 1, T0, &write, &t),
                 ERR_INVALID_PRODUCER_ID_MAPPING);
    CHECK_EQ_INT(txn_sm_add_partitions(m, 1000, 1, same, 1, T0, &write, &t), ERR_PRODUCER_FENCED);
    CHECK_EQ_INT(txn_sm_add_partitions(m, 1000, 0, same, 1, T0, &write, &t), 0);
    CHECK(!write);
    CHECK_EQ_INT(txn_sm_add_partitions(m, 1000, 0, more, 3, T0 + 9, &write, &t), 0);
    CHECK(write);
    CHECK_EQ_INT(t.n_parts, 3);
    CHECK_EQ_STR(t.parts[0].topic, "a");
    CHECK_EQ_INT(t.parts[1].partition, 3);
    CHECK_EQ_STR(t.parts[2].topic, "b");
    CHECK_EQ_INT(t.start_ms, T0); /* an ongoing transaction keeps its start */
    txn_sm_begin(m, &t);
    struct txn_transit t2;
    CHECK_EQ_INT(txn_sm_add_partitions(m, 1000, 0, same, 1, T0, &write, &t2),
                 ERR_CONCURRENT_TRANSACTIONS);
    txn_sm_cancel(m);
    CHECK_EQ_INT(m->cur.n_parts, 1); /* a failed write changes nothing */
    txn_transit_clear(&t);
    txn_meta_free(m);
}

TEST(txn_sm_verify_only_answers_per_partition)
{
    struct txn_meta *m = ongoing(1000, T0);
    CHECK_EQ_INT(txn_sm_verify(m, 1000, 0, "a", 0), 0);
    CHECK_EQ_INT(txn_sm_verify(m, 1000, 0, "a", 1), ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(txn_sm_verify(m, 1000, 1, "a", 0), ERR_PRODUCER_FENCED);
    CHECK_EQ_INT(txn_sm_verify(m, 5, 0, "a", 0), ERR_INVALID_PRODUCER_ID_MAPPING);
    txn_meta_free(m);
}

TEST(txn_sm_end_commit_prepare_complete_and_retries)
{
    struct txn_meta *m = ongoing(1000, T0);
    struct txn_transit t;
    bool write;

    CHECK_EQ_INT(txn_sm_end(m, 1000, 1, true, true, T0, &write, &t), ERR_PRODUCER_FENCED);
    CHECK_EQ_INT(txn_sm_end(m, 9, 0, true, true, T0, &write, &t), ERR_INVALID_PRODUCER_ID_MAPPING);
    CHECK_EQ_INT(txn_sm_end(m, 1000, 0, true, true, T0 + 1, &write, &t), 0);
    CHECK(write);
    CHECK_EQ_INT(t.state, TXN_PREPARE_COMMIT);
    commit_transit(m, &t);
    CHECK_EQ_INT(txn_sm_end(m, 1000, 0, true, true, T0, &write, &t), ERR_CONCURRENT_TRANSACTIONS);
    CHECK_EQ_INT(txn_sm_end(m, 1000, 0, false, true, T0, &write, &t), ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(txn_sm_complete(m, T0 + 2, &t), 0);
    commit_transit(m, &t);
    CHECK_EQ_INT(m->cur.state, TXN_COMPLETE_COMMIT);
    /* A retried commit is answered NONE without a write; an abort now is invalid. */
    CHECK_EQ_INT(txn_sm_end(m, 1000, 0, true, true, T0, &write, &t), 0);
    CHECK(!write);
    CHECK_EQ_INT(txn_sm_end(m, 1000, 0, false, true, T0, &write, &t), ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(txn_sm_complete(m, T0, &t), ERR_INVALID_TXN_STATE);
    txn_meta_free(m);
}

TEST(txn_sm_end_with_no_transaction_is_invalid_txn_state)
{
    struct txn_meta *m = txn_meta_new("t", 1, 60000, T0);
    struct txn_transit t;
    enum txn_init_action act;
    bool write;
    CHECK_EQ_INT(txn_sm_init_producer_id(m, 60000, -1, -1, -1, T0, &act, &t), 0);
    commit_transit(m, &t);
    CHECK_EQ_INT(txn_sm_end(m, 1, 0, true, true, T0, &write, &t), ERR_INVALID_TXN_STATE);
    CHECK_EQ_INT(txn_sm_end(m, 1, 0, false, true, T0, &write, &t), ERR_INVALID_TXN_STATE);
    txn_meta_free(m);
}

TEST(txn_sm_timeout_abort_bumps_the_epoch)
{
    struct txn_meta *m = ongoing(1000, T0);
    struct txn_transit t;

    CHECK(!txn_sm_timed_out(m, T0 + 60000));
    CHECK(txn_sm_timed_out(m, T0 + 60001));
    CHECK_EQ_INT(txn_sm_abort_timed_out(m, T0 + 60001, &t), 0);
    CHECK_EQ_INT(t.state, TXN_PREPARE_ABORT);
    CHECK_EQ_INT(t.producer_epoch, 1);
    txn_sm_begin(m, &t);
    CHECK(!txn_sm_timed_out(m, T0 + 70000)); /* pending: not twice */
    txn_sm_apply(m, &t);
    bool write;
    struct txn_transit t2;
    /* The producer's own EndTxn at its old epoch is fenced. */
    CHECK_EQ_INT(txn_sm_end(m, 1000, 0, true, true, T0, &write, &t2), ERR_PRODUCER_FENCED);
    txn_meta_free(m);
}

TEST(txn_sm_idle_ids_expire_to_dead)
{
    struct txn_meta *m = txn_meta_new("t", 1, 60000, T0);
    struct txn_transit t;
    CHECK(!txn_sm_expired(m, T0 + 999, 1000));
    CHECK(txn_sm_expired(m, T0 + 1000, 1000));
    CHECK_EQ_INT(txn_sm_dead(m, T0 + 1000, &t), 0);
    CHECK_EQ_INT(t.state, TXN_DEAD);
    txn_meta_free(m);
    m = ongoing(1, T0);
    CHECK(!txn_sm_expired(m, T0 + 10000000, 1000)); /* an ongoing transaction never expires */
    CHECK_EQ_INT(txn_sm_dead(m, T0, &t), ERR_INVALID_TXN_STATE);
    txn_meta_free(m);
}

/* The held-request rule: an add answered CONCURRENT_TRANSACTIONS while the previous
 * transaction completes (Prepare*, or its Complete* being written) or while any transit is
 * written may wait, for what is left of its bound since it first came; at Complete* the same
 * request is served (a new transaction); an add of a fenced epoch, or any other error, is
 * never held. */
TEST(txn_sm_add_is_held_while_the_previous_transaction_completes)
{
    struct txn_meta *m = ongoing(1000, T0);
    struct txn_transit t, pc;
    struct txn_tp next[] = {tp("b", 1)};
    bool write;
    int rc;

    /* Ongoing, nothing pending: served at once, nothing to hold. */
    rc = txn_sm_add_partitions(m, 1000, 0, next, 1, T0, &write, &t);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(txn_sm_hold_ms(m, rc, T0, T0, 5000), 0);
    txn_transit_clear(&t);
    /* EndTxn: PrepareCommit being written (pending), then durable (markers out). */
    CHECK_EQ_INT(txn_sm_end(m, 1000, 0, true, true, T0, &write, &pc), 0);
    txn_sm_begin(m, &pc);
    rc = txn_sm_add_partitions(m, 1000, 0, next, 1, T0 + 1, &write, &t);
    CHECK_EQ_INT(rc, ERR_CONCURRENT_TRANSACTIONS);
    CHECK_EQ_INT(txn_sm_hold_ms(m, rc, T0 + 1, T0 + 1, 5000), 5000);
    txn_sm_apply(m, &pc);
    CHECK_EQ_INT(m->cur.state, TXN_PREPARE_COMMIT);
    rc = txn_sm_add_partitions(m, 1000, 0, next, 1, T0 + 10, &write, &t);
    CHECK_EQ_INT(rc, ERR_CONCURRENT_TRANSACTIONS);
    /* Served again at T0 + 10 after arriving at T0 + 1: 4991 ms left; none at the bound. */
    CHECK_EQ_INT(txn_sm_hold_ms(m, rc, T0 + 1, T0 + 10, 5000), 4991);
    CHECK_EQ_INT(txn_sm_hold_ms(m, rc, T0 + 1, T0 + 5001, 5000), 0);
    CHECK_EQ_INT(txn_sm_hold_ms(m, rc, T0 + 1, T0 + 9000, 5000), 0);
    /* Complete* being written (the markers landed): still held. */
    CHECK_EQ_INT(txn_sm_complete(m, T0 + 20, &t), 0);
    txn_sm_begin(m, &t);
    rc = txn_sm_add_partitions(m, 1000, 0, next, 1, T0 + 20, &write, &pc);
    CHECK_EQ_INT(rc, ERR_CONCURRENT_TRANSACTIONS);
    CHECK(txn_sm_hold_ms(m, rc, T0 + 1, T0 + 20, 5000) > 0);
    /* A fenced epoch or a stranger's id is answered at once, held or not. */
    rc = txn_sm_add_partitions(m, 1000, 7, next, 1, T0 + 20, &write, &pc);
    CHECK_EQ_INT(rc, ERR_PRODUCER_FENCED);
    CHECK_EQ_INT(txn_sm_hold_ms(m, rc, T0 + 1, T0 + 20, 5000), 0);
    rc = txn_sm_add_partitions(m, 1001, 0, next, 1, T0 + 20, &write, &pc);
    CHECK_EQ_INT(rc, ERR_INVALID_PRODUCER_ID_MAPPING);
    CHECK_EQ_INT(txn_sm_hold_ms(m, rc, T0 + 1, T0 + 20, 5000), 0);
    /* CompleteCommit: the held request is served, a new transaction with only its partition. */
    txn_sm_apply(m, &t);
    rc = txn_sm_add_partitions(m, 1000, 0, next, 1, T0 + 30, &write, &t);
    CHECK_EQ_INT(rc, 0);
    CHECK(write);
    CHECK_EQ_INT(t.state, TXN_ONGOING);
    CHECK_EQ_INT(t.n_parts, 1);
    CHECK_EQ_INT(t.start_ms, T0 + 30);
    txn_transit_clear(&t);
    txn_meta_free(m);
}

/* A held add whose producer is fenced meanwhile (here the coordinator's own abort of a
 * timed-out transaction, at epoch + 1) answers PRODUCER_FENCED when served again, not held. */
TEST(txn_sm_held_add_of_a_fenced_producer_is_answered_fenced)
{
    struct txn_meta *m = ongoing(1000, T0);
    struct txn_transit ab, t;
    struct txn_tp next[] = {tp("b", 1)};
    bool write;
    int rc;

    CHECK_EQ_INT(txn_sm_abort_timed_out(m, T0 + 70000, &ab), 0);
    txn_sm_begin(m, &ab);
    /* While the abort is written the request (epoch 0, still current) waits... */
    rc = txn_sm_add_partitions(m, 1000, 0, next, 1, T0 + 70000, &write, &t);
    CHECK_EQ_INT(rc, ERR_CONCURRENT_TRANSACTIONS);
    CHECK(txn_sm_hold_ms(m, rc, T0 + 70000, T0 + 70000, 5000) > 0);
    txn_sm_apply(m, &ab);
    CHECK_EQ_INT(m->cur.producer_epoch, 1);
    /* ...and once it is applied is fenced, not held again. */
    rc = txn_sm_add_partitions(m, 1000, 0, next, 1, T0 + 70001, &write, &t);
    CHECK_EQ_INT(rc, ERR_PRODUCER_FENCED);
    CHECK_EQ_INT(txn_sm_hold_ms(m, rc, T0 + 70000, T0 + 70001, 5000), 0);
    txn_meta_free(m);
}
