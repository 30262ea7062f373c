/* SPDX-License-Identifier: Apache-2.0 */
/* alter: a leader's ISR changes on their way to the controller. A partition whose
 * replication state machine wants the ISR shrunk, grown or its recovery confirmed
 * (psm_effects.send_alter) is queued here; one AlterPartition at a time, at v3, carries every
 * queued partition (NewIsrWithEpochs names each member with its broker epoch as this broker's
 * image knows it, so the controller refuses a member that re-registered meanwhile). Each
 * partition's answer goes back to its state machine (psm_alter_answered), which also decides
 * when to send again after a retriable failure. The metadata that the controller writes for
 * an accepted change reaches every broker as usual; the answer only lets the leader act on
 * it without waiting for the metadata log. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"
#include "replica_int.h"

#define ALTER_PARTITION_VERSION 3

/* The partitions of the request in flight, held until its answer. */
struct alter_call {
    struct replica_mgr *rm;
    size_t n;
    struct partition **parts;
};

void replica_alter_remove(struct replica_mgr *rm, struct partition *p)
{
    struct partition **pp = &rm->alter_head;
    if (!p->alter_queued)
        return;
    while (*pp && *pp != p)
        pp = &(*pp)->alter_next;
    if (*pp)
        *pp = p->alter_next;
    p->alter_next = NULL;
    p->alter_queued = false;
}

static void send_alter(struct replica_mgr *rm);

static int64_t broker_epoch(struct replica_mgr *rm, int32_t id)
{
    const struct meta_broker *b = meta_broker_by_id(rm->meta, id);
    return b ? b->epoch : -1;
}

/* Hands a partition's answer (err, and on success its new state) to its state machine. */
static void answer_part(struct replica_mgr *rm, struct partition *p, int16_t err,
                        const struct AlterPartitionResponsePartitionData *d)
{
    struct psm_assignment a;
    struct psm_effects fx;
    int32_t n_rep;

    if (!p->online)
        return;
    if (err == 0 && d != NULL) {
        a = (struct psm_assignment){
            .leader = d->LeaderId,
            .leader_epoch = d->LeaderEpoch,
            .partition_epoch = d->PartitionEpoch,
            .n_isr = d->Isr.n > 0 ? d->Isr.n : 0,
            .isr = d->Isr.v,
            .leader_recovery_state = d->LeaderRecoveryState,
        };
        a.replicas = psm_replicas(p->sm, &n_rep);
        a.n_replicas = n_rep;
        psm_alter_answered(p->sm, 0, &a, tclock_mono_ms(rm->clock), &fx);
    } else {
        psm_alter_answered(p->sm, err, NULL, tclock_mono_ms(rm->clock), &fx);
    }
    if (err != 0 && err != ERR_NOT_CONTROLLER) {
        static struct slog_limit lim;
        slog_warn_limited(&lim, 10000, "replica",
                          "%s-%d: the controller refused the ISR change: %s", p->topic, p->index,
                          err_name(err));
    }
    partition_effects(p, &fx);
}

static void on_answer(void *arg, int err, const void *resp)
{
    struct alter_call *c = arg;
    struct replica_mgr *rm = c->rm;
    const struct AlterPartitionResponse *rs = resp;

    rm->alter_in_flight = false;
    if (err == 0 && rs->ErrorCode != 0)
        err = rs->ErrorCode;
    if (err == ERR_NOT_CONTROLLER && rm->client)
        net_client_disconnect(rm->client, NET_CLIENT_CONTROLLER); /* look it up again */
    for (size_t i = 0; i < c->n; i++) {
        struct partition *p = c->parts[i];
        const struct AlterPartitionResponsePartitionData *d = NULL;
        int16_t perr = (int16_t)(err != 0 ? err : ERR_UNKNOWN_SERVER_ERROR);
        for (int32_t t = 0; err == 0 && d == NULL && t < rs->Topics.n; t++) {
            const struct AlterPartitionResponseTopicData *td = &rs->Topics.v[t];
            if (memcmp(td->TopicId.b, p->topic_id, 16) != 0)
                continue;
            for (int32_t k = 0; k < td->Partitions.n; k++)
                if (td->Partitions.v[k].PartitionIndex == p->index) {
                    d = &td->Partitions.v[k];
                    perr = d->ErrorCode;
                    break;
                }
        }
        if (!rm->stopping && err != ERR_SHUTDOWN)
            answer_part(rm, p, perr, d);
        partition_release(p);
    }
    free(c->parts);
    free(c);
    if (rm->stopping)
        replica_mgr_check_stop(rm);
    else if (err == 0)
        send_alter(rm);
}

/* Sends every queued partition's pending change in one request. */
static void send_alter(struct replica_mgr *rm)
{
    struct AlterPartitionRequest rq = {0};
    struct alter_call *c = NULL;
    struct arena *ar = NULL;
    size_t n = 0;
    int rc;

    if (rm->alter_in_flight || rm->alter_head == NULL || rm->client == NULL || rm->stopping)
        return;
    for (struct partition *p = rm->alter_head; p; p = p->alter_next)
        n++;
    c = calloc(1, sizeof *c);
    ar = arena_new(4096 + n * 512);
    if (c == NULL || ar == NULL || (c->parts = calloc(n, sizeof *c->parts)) == NULL)
        goto oom;
    c->rm = rm;
    /* One topic entry per partition: the controller takes repeated topics as Kafka's does. */
    rq.Topics.v = arena_alloc(ar, n * sizeof *rq.Topics.v);
    if (rq.Topics.v == NULL)
        goto oom;
    rq.BrokerId = rm->node_id;
    rq.BrokerEpoch = broker_epoch(rm, rm->node_id);
    while (rm->alter_head) {
        struct partition *p = rm->alter_head;
        struct psm_alter_request ar_req;
        rm->alter_head = p->alter_next;
        p->alter_next = NULL;
        p->alter_queued = false;
        if (!psm_alter_pending(p->sm) || !p->online)
            continue;
        psm_alter_request(p->sm, &ar_req);
        struct AlterPartitionRequestTopicData *td = &rq.Topics.v[rq.Topics.n];
        struct AlterPartitionRequestPartitionData *pd = arena_alloc(ar, sizeof *pd);
        struct BrokerState *isr = arena_alloc(ar, ((size_t)ar_req.n_isr + 1) * sizeof *isr);
        if (pd == NULL || isr == NULL)
            goto oom;
        memset(td, 0, sizeof *td);
        memset(pd, 0, sizeof *pd);
        memcpy(td->TopicId.b, p->topic_id, 16);
        td->TopicName = p->topic;
        td->Partitions.v = pd;
        td->Partitions.n = 1;
        pd->PartitionIndex = p->index;
        pd->LeaderEpoch = ar_req.leader_epoch;
        pd->PartitionEpoch = ar_req.partition_epoch;
        pd->LeaderRecoveryState = ar_req.leader_recovery_state;
        for (int32_t i = 0; i < ar_req.n_isr; i++)
            isr[i] = (struct BrokerState){ar_req.isr[i], broker_epoch(rm, ar_req.isr[i])};
        pd->NewIsrWithEpochs.v = isr;
        pd->NewIsrWithEpochs.n = ar_req.n_isr;
        pd->NewIsr.n = 0;
        rq.Topics.n++;
        partition_hold(p);
        c->parts[c->n++] = p;
    }
    if (c->n == 0) {
        arena_free(ar);
        free(c->parts);
        free(c);
        return;
    }
    rc = net_client_send(rm->client, NET_CLIENT_CONTROLLER, PROTO_API_AlterPartition,
                         ALTER_PARTITION_VERSION, &rq, on_answer, c);
    arena_free(ar);
    if (rc != 0) {
        /* Each partition hears of it and asks again after its retry interval. */
        slog_error("replica", "cannot send AlterPartition: %s", err_name(rc));
        for (size_t i = 0; i < c->n; i++) {
            answer_part(rm, c->parts[i], ERR_NETWORK_EXCEPTION, NULL);
            partition_release(c->parts[i]);
        }
        free(c->parts);
        free(c);
        return;
    }
    rm->alter_in_flight = true;
    return;

oom:
    slog_error("replica", "out of memory building an AlterPartition request; retried later");
    if (c) {
        for (size_t i = 0; i < c->n; i++)
            partition_release(c->parts[i]);
        free(c->parts);
    }
    free(c);
    arena_free(ar);
}

void replica_alter_queue(struct replica_mgr *rm, struct partition *p)
{
    if (rm->client == NULL || rm->stopping)
        return;
    if (!p->alter_queued) {
        p->alter_queued = true;
        p->alter_next = rm->alter_head;
        rm->alter_head = p;
    }
    send_alter(rm);
}
