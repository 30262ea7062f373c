/* SPDX-License-Identifier: Apache-2.0 */
/* broker: construction, stop, and what the handlers share. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/purgatory.h"
#include "base/tclock.h"
#include "broker_int.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"

/* Every PROTO_ARRAY has this layout. */
struct any_array {
    void *v;
    int32_t n;
};

int broker_response_skeleton(struct arena *ar, const void *rq_topics, void *rs_topics,
                             const struct broker_shape *sh)
{
    const struct any_array *rq = rq_topics;
    struct any_array *rs = rs_topics;
    int32_t nt = rq->n > 0 ? rq->n : 0;

    rs->n = nt;
    rs->v = arena_alloc(ar, ((size_t)nt + 1) * sh->rs_topic);
    if (rs->v == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < nt; i++) {
        const char *rt = (const char *)rq->v + (size_t)i * sh->rq_topic;
        char *ot = (char *)rs->v + (size_t)i * sh->rs_topic;
        const struct any_array *rp = (const struct any_array *)(rt + sh->rq_parts);
        struct any_array *op = (struct any_array *)(ot + sh->rs_parts);
        int32_t np = rp->n > 0 ? rp->n : 0;

        char *name;
        memcpy(&name, rt + sh->rq_name, sizeof name);
        memcpy(ot + sh->rs_name, &name, sizeof name);
        op->n = np;
        op->v = arena_alloc(ar, ((size_t)np + 1) * sh->rs_part);
        if (op->v == NULL)
            return ERR_NOMEM;
        for (int32_t j = 0; j < np; j++)
            memcpy((char *)op->v + (size_t)j * sh->rs_part + sh->rs_index,
                   (const char *)rp->v + (size_t)j * sh->rq_part + sh->rq_index, sizeof(int32_t));
    }
    return 0;
}

struct broker *broker_new(const struct broker_options *opts)
{
    struct broker *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->loop = opts->loop;
    b->clock = opts->clock;
    b->replicas = opts->replicas;
    b->node_id = opts->node_id;
    b->txn_complete = opts->txn_complete;
    b->txn_complete_arg = opts->txn_complete_arg;
    b->out_of_touch = opts->out_of_touch;
    b->out_of_touch_arg = opts->out_of_touch_arg;
    b->meta = opts->meta;
    b->client = opts->client;
    b->txn_verify = opts->txn_verify;
    b->txn_state_partitions = opts->txn_state_partitions;
    /* Kafka's BrokerTopicMetrics (docs/metrics.md). */
    static const char *const topic[] = {"topic"};
    b->m_bytes_in =
        metrics_family_new(opts->metrics, METRICS_COUNTER, "tally_topic_bytes_in_total",
                           "Bytes of record batches appended by producers.", 1, topic, 0, NULL);
    b->m_records_in =
        metrics_family_new(opts->metrics, METRICS_COUNTER, "tally_topic_records_in_total",
                           "Records appended by producers (retries of a batch already in the "
                           "log not counted).",
                           1, topic, 0, NULL);
    b->m_bytes_out = metrics_family_new(
        opts->metrics, METRICS_COUNTER, "tally_topic_bytes_out_total",
        "Bytes of record batches sent to consumers in Fetch answers.", 1, topic, 0, NULL);
    b->m_replication_out = metrics_series0(metrics_family_new(
        opts->metrics, METRICS_COUNTER, "tally_replication_bytes_out_total",
        "Bytes of record batches sent to follower replicas in Fetch answers.", 0, NULL, 0, NULL));
    static const char *const topic_reason[] = {"topic", "reason"};
    b->m_produce_requests = metrics_family_new(
        opts->metrics, METRICS_COUNTER, "tally_topic_produce_requests_total",
        "Partition entries of Produce requests for partitions led here.", 1, topic, 0, NULL);
    b->m_fetch_requests = metrics_family_new(
        opts->metrics, METRICS_COUNTER, "tally_topic_fetch_requests_total",
        "Partition entries of consumers' Fetch requests for partitions led here.", 1, topic, 0,
        NULL);
    b->m_hanging = metrics_series0(metrics_family_new(
        opts->metrics, METRICS_COUNTER, "tally_txn_hanging_aborted_total",
        "Hanging transactions (open here, unknown to every coordinator) this broker found on "
        "partitions it leads and aborted.",
        0, NULL, 0, NULL));
    b->m_rejected = metrics_family_new(
        opts->metrics, METRICS_COUNTER, "tally_topic_rejected_batches_total",
        "Produced batches the leader refused, by topic and reason.", 2, topic_reason, 0, NULL);
    b->pg = purgatory_new(opts->clock);
    b->quotas = cq_table_new(opts->quota_window_num, opts->quota_window_ms);
    if (b->pg == NULL || b->quotas == NULL) {
        purgatory_free(b->pg);
        cq_table_free(b->quotas);
        free(b);
        return NULL;
    }
    if (broker_hanging_start(b, opts->hanging_check_ms, opts->hanging_after_ms) != 0) {
        purgatory_free(b->pg);
        cq_table_free(b->quotas);
        free(b);
        return NULL;
    }
    return b;
}

int32_t broker_client_throttle(struct broker *b, struct net_request *req, int key, int64_t bytes)
{
    const char *principal = req->session->principal;
    const char *user = strncmp(principal, "User:", 5) == 0 ? principal + 5 : principal;
    double quota;

    if (b->meta == NULL || !meta_quota_lookup(b->meta, user, req->hdr.ClientId, key, &quota))
        return 0;
    enum cq_kind kind = key == META_QUOTA_PRODUCER_BYTE_RATE ? CQ_PRODUCE : CQ_FETCH;
    int64_t ms = cq_table_record(b->quotas, principal, req->hdr.ClientId, kind,
                                 tclock_mono_ms(b->clock), (double)bytes, quota);
    if (ms <= 0)
        return 0;
    net_mute(req, ms);
    return ms > INT32_MAX ? INT32_MAX : (int32_t)ms;
}

bool broker_request_time_begin(struct broker *b, struct net_request *req,
                               struct broker_request_time *t)
{
    const char *principal = req->session->principal;
    const char *user = strncmp(principal, "User:", 5) == 0 ? principal + 5 : principal;
    int64_t now = tclock_mono_ms(b->clock);

    if (b->meta == NULL || !meta_quota_lookup(b->meta, user, req->hdr.ClientId,
                                              META_QUOTA_REQUEST_PERCENTAGE, &t->quota))
        return false;
    t->entry = cq_table_entry(b->quotas, principal, req->hdr.ClientId, now);
    if (t->entry == NULL)
        return false;
    /* Recording nothing asks what the time recorded so far earns. */
    int64_t ms = cq_entry_record(b->quotas, t->entry, CQ_REQUEST, now, 0, t->quota);
    if (ms > 0) {
        net_mute(req, ms);
        req->throttle_ms = ms > INT32_MAX ? INT32_MAX : (int32_t)ms;
    }
    return true;
}

void broker_request_time_end(struct broker *b, const struct broker_request_time *t, uint64_t ns)
{
    /* Percent-seconds of one thread: ns / 1e9 s at 100 %. */
    cq_entry_record(b->quotas, t->entry, CQ_REQUEST, tclock_mono_ms(b->clock), (double)ns * 1e-7,
                    t->quota);
}

int broker_check_epoch(int32_t current, int32_t client)
{
    if (client < 0 || client == current)
        return 0;
    return client < current ? ERR_FENCED_LEADER_EPOCH : ERR_UNKNOWN_LEADER_EPOCH;
}

void broker_maybe_finish_stop(struct broker *b)
{
    if (!b->stopping || b->releasing || purgatory_waiting(b->pg) > 0 || b->live_fetches > 0 ||
        b->live_lookups > 0 || b->live_produces > 0)
        return;
    void (*cb)(void *) = b->stop_cb;
    void *arg = b->stop_arg;
    purgatory_free(b->pg);
    cq_table_free(b->quotas);
    free(b);
    if (cb)
        cb(arg);
}

void broker_stop(struct broker *b, void (*cb)(void *arg), void *arg)
{
    b->stopping = true;
    b->stop_cb = cb;
    b->stop_arg = arg;
    /* An answer to a closed connection is "sent" at once, which may bring the counts to
     * zero inside the loop below: the broker is freed only after it. */
    b->releasing = true;
    broker_hanging_stop(b);
    broker_verify_stop_all(b);
    purgatory_complete_all(b->pg);
    b->releasing = false;
    broker_maybe_finish_stop(b);
}

size_t broker_waiting(const struct broker *b)
{
    return b ? purgatory_waiting(b->pg) : 0;
}
