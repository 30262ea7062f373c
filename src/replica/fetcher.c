/* SPDX-License-Identifier: Apache-2.0 */
/* fetcher: the follower side of replication. For every broker that leads partitions this
 * broker follows there is one session: the list of those partitions and at most one replica
 * Fetch in flight, on the fetcher's own client (replica_options.fetch_client), so that the
 * leader's long poll (replica.fetch.wait.max.ms) never holds up the coordinators' requests on
 * the shared client. A Fetch names, per partition, the follower's log end as FetchOffset, the
 * leader epoch it follows as CurrentLeaderEpoch and the epoch of its last batch as
 * LastFetchedEpoch, so that the leader checks divergence before it counts the position
 * (partition_sm.h). The answer is applied partition by partition — records appended
 * (partition_append_as_follower), a DivergingEpoch truncated (partition_diverging), an error
 * keeps that partition out for replica.fetch.backoff.ms (at most 50 ms when the leader has not
 * applied its leadership yet), OFFSET_OUT_OF_RANGE asks the leader where its log runs
 * (ListOffsets) and truncates or starts over as psm_out_of_range says — and the next Fetch
 * goes at once.
 *
 * A response for a partition whose role, leader or leader epoch changed since the request
 * went out is dropped: it answers a question this replica no longer asks. Catch-up is bounded
 * by replica.fetch.max.bytes per partition and replica.fetch.response.max.bytes per request. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "net/net.h"
#include "replica_int.h"

/* Fetch v13: topic ids, LastFetchedEpoch (v12) and the DivergingEpoch answer. */
#define REPLICA_FETCH_VERSION 13

/* One partition of a Fetch in flight: what was asked, to tell a stale answer. */
struct sent_part {
    struct partition *p; /* held until the answer */
    int32_t leader_epoch;
    int64_t fetch_offset;
    int32_t max_bytes; /* PartitionMaxBytes: replica.fetch.max.bytes, or less when throttled */
};

struct replica_fetch_session {
    struct replica_fetch_session *next;
    struct replica_mgr *rm;
    int32_t leader;
    struct partition *head; /* via fetch_prev / fetch_next */
    size_t n_parts;
    bool in_flight;
    int64_t backoff_until; /* monotonic ms: no Fetch before (after a failed one) */
    struct sent_part *sent;
    size_t n_sent;
};

static struct replica_fetch_session *session_of(struct replica_mgr *rm, int32_t leader, bool create)
{
    struct replica_fetch_session *s;
    for (s = rm->sessions; s; s = s->next)
        if (s->leader == leader)
            return s;
    if (!create)
        return NULL;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->rm = rm;
    s->leader = leader;
    s->next = rm->sessions;
    rm->sessions = s;
    return s;
}

static void session_unlink(struct replica_fetch_session *s, struct partition *p)
{
    if (p->fetch_prev)
        p->fetch_prev->fetch_next = p->fetch_next;
    else
        s->head = p->fetch_next;
    if (p->fetch_next)
        p->fetch_next->fetch_prev = p->fetch_prev;
    p->fetch_prev = p->fetch_next = NULL;
    s->n_parts--;
}

void replica_fetcher_remove(struct replica_mgr *rm, struct partition *p)
{
    struct replica_fetch_session *s;
    if (p->fetch_leader < 0)
        return;
    s = session_of(rm, p->fetch_leader, false);
    if (s)
        session_unlink(s, p);
    p->fetch_leader = -1;
}

void replica_fetcher_update(struct replica_mgr *rm, struct partition *p)
{
    int32_t leader = psm_leader(p->sm);
    struct replica_fetch_session *s;

    if (psm_role(p->sm) != PSM_FOLLOWER || leader < 0 || leader == rm->node_id ||
        rm->fetch_client == NULL || !p->online || rm->stopping)
        leader = -1;
    p->fetch_delay_until = 0; /* a new leader or epoch: ask at once */
    if (leader == p->fetch_leader) {
        rm->fetch_kick = leader >= 0;
        if (leader >= 0)
            replica_mgr_kick(rm);
        return;
    }
    replica_fetcher_remove(rm, p);
    if (leader < 0)
        return;
    s = session_of(rm, leader, true);
    if (s == NULL) {
        slog_error("replica", "out of memory: %s-%d does not fetch from broker %d", p->topic,
                   p->index, leader);
        return;
    }
    p->fetch_leader = leader;
    p->fetch_prev = NULL;
    p->fetch_next = s->head;
    if (s->head)
        s->head->fetch_prev = p;
    s->head = p;
    s->n_parts++;
    /* The Fetch goes out from the next idle turn: a metadata batch that moves thousands of
     * partitions to this leader then fills one request, not one per partition. */
    rm->fetch_kick = true;
    replica_mgr_kick(rm);
}

static void release_sent(struct replica_fetch_session *s)
{
    for (size_t i = 0; i < s->n_sent; i++)
        partition_release(s->sent[i].p);
    free(s->sent);
    s->sent = NULL;
    s->n_sent = 0;
}

static int cmp_sent(const void *a, const void *b)
{
    const struct sent_part *x = a, *y = b;
    int c = memcmp(x->p->topic_id, y->p->topic_id, 16);
    return c != 0 ? c : (x->p->index > y->p->index) - (x->p->index < y->p->index);
}

/* The sent entry for (topic id, index) in the sorted `sent` array, or NULL. */
static struct sent_part *find_sent(struct replica_fetch_session *s, const uint8_t id[16],
                                   int32_t index)
{
    size_t lo = 0, hi = s->n_sent;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct partition *p = s->sent[mid].p;
        int c = memcmp(p->topic_id, id, 16);
        if (c == 0)
            c = (p->index > index) - (p->index < index);
        if (c == 0)
            return &s->sent[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Whether the partition still asks what `sp` asked: a follower of this session's leader at
 * the same leader epoch and log end. */
static bool still_asked(const struct replica_fetch_session *s, const struct sent_part *sp)
{
    const struct partition *p = sp->p;
    return p->online && p->fetch_leader == s->leader && psm_role(p->sm) == PSM_FOLLOWER &&
           psm_leader_epoch(p->sm) == sp->leader_epoch &&
           partition_log_end_offset(p) == sp->fetch_offset;
}

static void delay_for(struct replica_mgr *rm, struct partition *p, int64_t ms)
{
    p->fetch_delay_until = tclock_mono_ms(rm->clock) + ms;
}

static void delay(struct replica_mgr *rm, struct partition *p)
{
    delay_for(rm, p, rm->fetch_backoff_ms);
}

/* How soon a follower asks again a leader that does not lead yet at the epoch the follower
 * follows (NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH): it has not applied the partition
 * record this replica has, and will within milliseconds. Kafka waits replica.fetch.backoff.ms
 * (1 s) here, and every acks=all write on the new leader waits for this replica meanwhile:
 * a controlled shutdown's first write on the new leader took 1.1 s instead of 0.15 s
 * (bench/failover.py). When it is this replica that is behind, its own metadata brings the
 * change and resets the delay. */
#define FETCH_LEADER_BEHIND_MS 50

/* ---- OFFSET_OUT_OF_RANGE: where the leader's log runs --------------------------------------
 *
 * As Kafka's follower does (fetchOffsetAndTruncate), the leader is asked with ListOffsets as
 * a replica (ReplicaId = this broker, so that "latest" is its log end, not its HW) for its
 * log end first, and for its start only when the end does not decide and the Fetch answer
 * did not carry it (a Tally leader fills LogStartOffset in that answer, a Kafka leader -1).
 * Fetch has no field for the leader's log end, so even a Tally leader is asked: one round
 * trip more, on a rare path. The partition is left out of Fetches meanwhile; an answer for a
 * partition whose leader, epoch or log end changed since is dropped. */
#define REPLICA_LIST_OFFSETS_VERSION 4 /* CurrentLeaderEpoch */
#define LIST_LATEST -1
#define LIST_EARLIEST -2

struct oor_lookup {
    struct replica_mgr *rm;
    struct partition *p; /* held until the lookup ends */
    int32_t leader, leader_epoch;
    int64_t log_end;      /* this replica's when it asked */
    int64_t leader_start; /* -1 until known */
    int64_t leader_end;   /* -1 until known */
};

static bool lookup_current(const struct oor_lookup *lk)
{
    const struct partition *p = lk->p;
    return !lk->rm->stopping && p->online && p->fetch_leader == lk->leader &&
           psm_role(p->sm) == PSM_FOLLOWER && psm_leader_epoch(p->sm) == lk->leader_epoch &&
           partition_log_end_offset(p) == lk->log_end;
}

static void lookup_done(struct oor_lookup *lk, bool ok)
{
    struct replica_mgr *rm = lk->rm;
    struct partition *p = lk->p;

    rm->fetches_in_flight--;
    if (lookup_current(lk)) {
        if (ok) {
            p->fetch_delay_until = 0;
            partition_out_of_range(p, lk->leader_start, lk->leader_end);
        } else {
            delay(rm, p);
        }
        rm->fetch_kick = true;
        replica_mgr_kick(rm);
    }
    partition_release(p);
    free(lk);
    replica_mgr_check_stop(rm);
}

static void on_list_answer(void *arg, int err, const void *resp);

static int lookup_send(struct oor_lookup *lk, int64_t timestamp)
{
    struct partition *p = lk->p;
    struct ListOffsetsPartition part = {
        .PartitionIndex = p->index,
        .CurrentLeaderEpoch = lk->leader_epoch,
        .Timestamp = timestamp,
        .MaxNumOffsets = 1,
    };
    struct ListOffsetsTopic t = {.Name = p->topic};
    struct ListOffsetsRequest rq = {.ReplicaId = lk->rm->node_id, .IsolationLevel = 0};
    t.Partitions.v = &part;
    t.Partitions.n = 1;
    rq.Topics.v = &t;
    rq.Topics.n = 1;
    return net_client_send(lk->rm->fetch_client, lk->leader, PROTO_API_ListOffsets,
                           REPLICA_LIST_OFFSETS_VERSION, &rq, on_list_answer, lk);
}

static void on_list_answer(void *arg, int err, const void *resp)
{
    struct oor_lookup *lk = arg;
    const struct ListOffsetsResponse *rs = resp;
    int64_t off = -1;
    int rc = err;

    if (rc == 0) {
        rc = ERR_UNKNOWN_TOPIC_OR_PARTITION;
        for (int32_t i = 0; i < rs->Topics.n; i++)
            for (int32_t j = 0; j < rs->Topics.v[i].Partitions.n; j++) {
                const struct ListOffsetsPartitionResponse *pr = &rs->Topics.v[i].Partitions.v[j];
                if (pr->PartitionIndex == lk->p->index) {
                    rc = pr->ErrorCode;
                    off = pr->Offset;
                }
            }
        if (rc == 0 && off < 0)
            rc = ERR_OFFSET_NOT_AVAILABLE;
    }
    if (rc != 0) {
        static struct slog_limit lim;
        slog_warn_limited(&lim, 10000, "replica",
                          "%s-%d: cannot ask leader %d where its log runs after "
                          "OFFSET_OUT_OF_RANGE: %s; fetching again after the backoff",
                          lk->p->topic, lk->p->index, lk->leader, err_name(rc));
        lookup_done(lk, false);
        return;
    }
    if (lk->leader_end < 0) {
        lk->leader_end = off;
        if (off >= lk->log_end && lk->leader_start < 0 && lookup_current(lk)) {
            rc = lookup_send(lk, LIST_EARLIEST);
            if (rc == 0)
                return;
            lookup_done(lk, false);
            return;
        }
    } else {
        lk->leader_start = off;
    }
    lookup_done(lk, true);
}

/* Starts the lookup for a partition answered OFFSET_OUT_OF_RANGE; `leader_start` is the
 * answer's LogStartOffset (-1 from a Kafka leader). 0, or an error: then the caller backs
 * off as for any error. */
static int lookup_start(struct replica_fetch_session *s, const struct sent_part *sp,
                        int64_t leader_start)
{
    struct oor_lookup *lk = calloc(1, sizeof *lk);
    int rc;

    if (lk == NULL)
        return ERR_NOMEM;
    *lk = (struct oor_lookup){s->rm,        sp->p, s->leader, sp->leader_epoch, sp->fetch_offset,
                              leader_start, -1};
    partition_hold(lk->p);
    s->rm->fetches_in_flight++;
    rc = lookup_send(lk, LIST_LATEST);
    if (rc != 0) {
        s->rm->fetches_in_flight--;
        partition_release(lk->p);
        free(lk);
        return rc;
    }
    lk->p->fetch_delay_until = INT64_MAX; /* until the lookup ends, or a new leader or epoch */
    return 0;
}

/* One partition's answer. */
static void apply_part(struct replica_fetch_session *s, struct sent_part *sp,
                       const struct FetchPartitionData *d)
{
    struct replica_mgr *rm = s->rm;
    struct partition *p = sp->p;
    int rc;

    if (!still_asked(s, sp))
        return;
    switch (d->ErrorCode) {
    case 0:
        if (d->DivergingEpoch.Epoch >= 0 && d->DivergingEpoch.EndOffset >= 0) {
            partition_diverging(p, d->DivergingEpoch.Epoch, d->DivergingEpoch.EndOffset);
            return;
        }
        /* What a throttled partition fetched counts toward follower.replication.throttled.
         * rate, in sync or not. */
        if (d->Records.len > 0)
            partition_follower_fetched(p, (size_t)d->Records.len);
        rc = partition_append_as_follower(p, (uint8_t *)d->Records.data,
                                          d->Records.len > 0 ? (size_t)d->Records.len : 0,
                                          d->HighWatermark, d->LogStartOffset);
        if (rc != 0) {
            static struct slog_limit lim;
            slog_warn_limited(&lim, 10000, "replica",
                              "%s-%d: cannot append what leader %d sent at offset %lld: %s",
                              p->topic, p->index, s->leader, (long long)sp->fetch_offset,
                              err_name(rc));
            delay(rm, p);
        }
        return;
    case ERR_OFFSET_OUT_OF_RANGE:
        /* The leader's log starts past this replica's end (retention, DeleteRecords while it
         * was away), or ends before it (an unclean election chose a shorter log), or the
         * leader knows no epoch at or below LastFetchedEpoch: its log end tells which. */
        if (lookup_start(s, sp, d->LogStartOffset) == 0)
            return;
        break;
    default:
        break;
    }
    /* NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, unknown topic ...:
     * the metadata will say what changed; until then ask again only after a backoff. */
    slog_debug("replica", "%s-%d: fetch from leader %d: %s", p->topic, p->index, s->leader,
               err_name(d->ErrorCode));
    if (d->ErrorCode == ERR_NOT_LEADER_OR_FOLLOWER || d->ErrorCode == ERR_UNKNOWN_LEADER_EPOCH)
        delay_for(rm, p,
                  rm->fetch_backoff_ms < FETCH_LEADER_BEHIND_MS ? rm->fetch_backoff_ms
                                                                : FETCH_LEADER_BEHIND_MS);
    else
        delay(rm, p);
}

static void send_fetch(struct replica_fetch_session *s);

static void on_answer(void *arg, int err, const void *resp)
{
    struct replica_fetch_session *s = arg;
    struct replica_mgr *rm = s->rm;
    const struct FetchResponse *rs = resp;

    s->in_flight = false;
    rm->fetches_in_flight--;
    if (err == 0 && rs->ErrorCode != 0)
        err = rs->ErrorCode;
    if (err != 0 || rm->stopping) {
        if (err != ERR_SHUTDOWN && !rm->stopping) {
            static struct slog_limit lim;
            slog_warn_limited(&lim, 10000, "replica",
                              "replica fetch from broker %d failed: %s; retrying in %lld ms",
                              s->leader, err_name(err), (long long)rm->fetch_backoff_ms);
            s->backoff_until = tclock_mono_ms(rm->clock) + rm->fetch_backoff_ms;
        }
        release_sent(s);
        replica_mgr_check_stop(rm);
        return;
    }
    s->backoff_until = 0;
    for (int32_t i = 0; i < rs->Responses.n; i++) {
        const struct FetchableTopicResponse *t = &rs->Responses.v[i];
        for (int32_t j = 0; j < t->Partitions.n; j++) {
            const struct FetchPartitionData *d = &t->Partitions.v[j];
            struct sent_part *sp = find_sent(s, t->TopicId.b, d->PartitionIndex);
            if (sp)
                apply_part(s, sp, d);
        }
    }
    release_sent(s);
    send_fetch(s);
}

/* Sends the session's next Fetch: every partition not kept out by a backoff. */
static void send_fetch(struct replica_fetch_session *s)
{
    struct replica_mgr *rm = s->rm;
    int64_t now = tclock_mono_ms(rm->clock);
    struct FetchRequest rq = {0};
    struct arena *ar = NULL;
    size_t n = 0, nt = 0;
    int64_t claimed = 0; /* by throttled partitions of this request */
    int rc;

    if (s->in_flight || s->n_parts == 0 || now < s->backoff_until || rm->stopping)
        return;
    s->sent = calloc(s->n_parts, sizeof *s->sent);
    if (s->sent == NULL)
        goto oom;
    for (struct partition *p = s->head; p; p = p->fetch_next) {
        bool counted;
        int64_t max;
        if (p->fetch_delay_until > now)
            continue;
        /* A follower's position counts toward the HW only once its flush policy is met: in
         * Kafka the follower's append flushes (flush.messages, flush.ms) before its next Fetch
         * names the new log end. Here the flush runs on the pool (started by the append),
         * and the partition stays out of Fetches until it is done (flush_after kicks). */
        if (partition_flush_required(p)) {
            partition_maybe_flush(p, false);
            continue;
        }
        /* Replication throttles (Kafka's ReplicaFetcherThread): a replica out of the ISR of a
         * throttled partition asks only for what follower.replication.throttled.rate still
         * allows, and is left out once it is spent (the housekeeping tick sends again). */
        max = partition_follower_throttle(p, rm->fetch_max_bytes, claimed, &counted);
        if (max == 0)
            continue;
        if (counted && !partition_in_isr(p, rm->node_id))
            claimed += max;
        s->sent[n++] = (struct sent_part){p, psm_leader_epoch(p->sm), partition_log_end_offset(p),
                                          (int32_t)max};
    }
    if (n == 0) {
        free(s->sent);
        s->sent = NULL;
        return;
    }
    qsort(s->sent, n, sizeof *s->sent, cmp_sent);
    ar = arena_new(4096 + n * (sizeof(struct FetchPartition) + sizeof(struct FetchTopic)));
    if (ar == NULL)
        goto oom;
    for (size_t i = 0; i < n; i++)
        nt += i == 0 || memcmp(s->sent[i].p->topic_id, s->sent[i - 1].p->topic_id, 16) != 0;
    rq.Topics.v = arena_alloc(ar, nt * sizeof *rq.Topics.v);
    struct FetchPartition *parts = arena_alloc(ar, n * sizeof *parts);
    if (rq.Topics.v == NULL || parts == NULL)
        goto oom;
    rq.ReplicaId = rm->node_id;
    rq.MaxWaitMs = rm->fetch_wait_ms;
    rq.MinBytes = rm->fetch_min_bytes;
    rq.MaxBytes = rm->fetch_response_max_bytes;
    rq.IsolationLevel = 0;
    rq.SessionId = 0;
    rq.SessionEpoch = -1;
    rq.RackId = "";
    rq.ForgottenTopicsData.n = 0;
    for (size_t i = 0; i < n; i++) {
        struct sent_part *sp = &s->sent[i];
        struct partition *p = sp->p;
        if (i == 0 || memcmp(p->topic_id, s->sent[i - 1].p->topic_id, 16) != 0) {
            struct FetchTopic *t = &rq.Topics.v[rq.Topics.n++];
            memset(t, 0, sizeof *t);
            memcpy(t->TopicId.b, p->topic_id, 16);
            t->Topic = p->topic;
            t->Partitions.v = &parts[i];
        }
        rq.Topics.v[rq.Topics.n - 1].Partitions.n++;
        parts[i] = (struct FetchPartition){
            .Partition = p->index,
            .CurrentLeaderEpoch = sp->leader_epoch,
            .FetchOffset = sp->fetch_offset,
            .LastFetchedEpoch = partition_fetch_last_epoch(p),
            .LogStartOffset = partition_log_start_offset(p),
            .PartitionMaxBytes = sp->max_bytes,
        };
        partition_hold(p);
    }
    s->n_sent = n;
    rc = net_client_send(rm->fetch_client, s->leader, PROTO_API_Fetch, REPLICA_FETCH_VERSION, &rq,
                         on_answer, s);
    arena_free(ar);
    if (rc != 0) {
        slog_error("replica", "cannot send a replica fetch to broker %d: %s", s->leader,
                   err_name(rc));
        release_sent(s);
        s->backoff_until = now + rm->fetch_backoff_ms;
        return;
    }
    s->in_flight = true;
    rm->fetches_in_flight++;
    return;

oom:
    arena_free(ar);
    free(s->sent);
    s->sent = NULL;
    s->n_sent = 0;
    s->backoff_until = now + rm->fetch_backoff_ms;
    slog_error("replica", "out of memory building a replica fetch to broker %d", s->leader);
}

void replica_fetcher_kick(struct replica_mgr *rm)
{
    struct replica_fetch_session **pp = &rm->sessions;
    while (*pp) {
        struct replica_fetch_session *s = *pp;
        /* A session with nothing to fetch and nothing out goes. */
        if (s->n_parts == 0 && !s->in_flight) {
            *pp = s->next;
            free(s);
            continue;
        }
        send_fetch(s);
        pp = &s->next;
    }
}

void replica_fetcher_free(struct replica_mgr *rm)
{
    while (rm->sessions) {
        struct replica_fetch_session *s = rm->sessions;
        rm->sessions = s->next;
        release_sent(s);
        free(s);
    }
}

void replica_fetcher_stop(struct replica_mgr *rm)
{
    /* Partitions leave their sessions when they close; a session whose Fetch is out is freed
     * by the kick after its answer (the stop waits for it: fetches_in_flight). */
    for (struct replica_fetch_session *s = rm->sessions; s; s = s->next)
        while (s->head) {
            struct partition *p = s->head;
            session_unlink(s, p);
            p->fetch_leader = -1;
        }
}
