/* SPDX-License-Identifier: Apache-2.0 */
/* controller: the broker-to-controller APIs answered by the active controller, and its
 * periodic look (controller.h). Every decision comes from controller_sm (pure); this file
 * only turns requests into its calls, proposes the records it returns through meta/, and
 * answers once they applied, reading the answer off the image. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/props.h"
#include "base/slog.h"
#include "base/tclock.h"
#include "controller.h"
#include "controller_sm.h"
#include "meta/meta.h"
#include "net/net.h"

/* Kafka's producer-id block size. */
#define PRODUCER_ID_BLOCK 1000
/* A grant that loses the race to another one re-reads the next free id and tries again. */
#define MAX_GRANT_TRIES 5

struct controller {
    uv_loop_t *loop;
    struct tclock *clock;
    struct meta *meta;
    int32_t node_id;
    struct ctl_sm *sm;
    struct tclock_timer timer;
    bool active;         /* deciding: this node leads and applied its barrier */
    bool tick_in_flight; /* the periodic look's batch is being proposed */
    bool stopped;
    struct slog_limit propose_warn;
    /* The brokers the periodic batch in flight fences (their sessions expired), logged once it
     * applied: a dead broker cannot say so itself. */
    struct {
        int32_t id;
        int64_t epoch;
    } fencing[16];
    int n_fencing;
};

static int64_t now_ms(const struct controller *c)
{
    return tclock_mono_ms(c->clock);
}

static void on_tick_applied(void *arg, int err)
{
    struct controller *c = arg;
    c->tick_in_flight = false;
    if (err != 0 && err != ERR_SHUTDOWN && err != ERR_NOT_CONTROLLER)
        /* Another decision changed the same partition first: the next look decides again. */
        slog_debug("controller", "periodic batch not applied: %s", err_name(err));
    for (int i = 0; err == 0 && i < c->n_fencing; i++)
        slog_info("controller",
                  "broker %d (epoch %lld) fenced: no heartbeat for a session; it left every ISR "
                  "and its leaderships moved",
                  c->fencing[i].id, (long long)c->fencing[i].epoch);
    c->n_fencing = 0;
}

/* Notes the brokers a periodic batch fences, for on_tick_applied. */
static void note_fencing(struct controller *c, const struct ctl_out *out)
{
    c->n_fencing = 0;
    for (size_t i = 0; i < out->n; i++) {
        const struct meta_record *r = &out->recs[i];
        if (r->type != META_REC_BROKER_CHANGE || r->u.broker_change.fenced != 1 ||
            c->n_fencing == (int)(sizeof c->fencing / sizeof c->fencing[0]))
            continue;
        c->fencing[c->n_fencing].id = r->u.broker_change.id;
        c->fencing[c->n_fencing].epoch = r->u.broker_change.epoch;
        c->n_fencing++;
    }
}

static void on_timer(struct tclock_timer *t)
{
    struct controller *c = t->data;
    bool ready = !c->stopped && meta_controller_ready(c->meta);
    struct ctl_out out;

    if (ready && !c->active) {
        c->active = true;
        ctl_sm_activate(c->sm, meta_get_image(c->meta), now_ms(c));
        slog_info("controller",
                  "node %d is the active controller: every registered broker has "
                  "a new session",
                  c->node_id);
    } else if (!ready && c->active) {
        c->active = false;
        slog_info("controller", "node %d is no longer the active controller", c->node_id);
    }
    if (!c->active || c->tick_in_flight)
        return;
    ctl_out_init(&out);
    ctl_sm_tick(c->sm, meta_get_image(c->meta), now_ms(c), &out);
    if (out.oom)
        slog_warn_limited(&c->propose_warn, 10000, "controller",
                          "out of memory deciding the periodic changes; retried");
    else if (out.n > 0) {
        note_fencing(c, &out);
        if (meta_propose(c->meta, out.recs, out.n, on_tick_applied, c) == 0)
            c->tick_in_flight = true;
        else
            c->n_fencing = 0;
    }
    ctl_out_free(&out);
}

int controller_new(const struct controller_options *o, struct controller **out)
{
    struct controller *c = calloc(1, sizeof *c);
    int64_t interval_s;
    struct ctl_config cfg = {0};

    if (c == NULL)
        return ERR_NOMEM;
    c->loop = o->loop;
    c->clock = o->clock;
    c->meta = o->meta;
    c->node_id = o->node_id;
    interval_s = props_get_int(o->config, "leader.imbalance.check.interval.seconds", 300, NULL);
    cfg.cluster_id = o->cluster_id;
    cfg.session_timeout_ms = props_get_int(o->config, "broker.session.timeout.ms", 9000, NULL);
    cfg.unclean_leader_election =
        props_get_bool(o->config, "unclean.leader.election.enable", false, NULL);
    cfg.auto_leader_rebalance =
        props_get_bool(o->config, "auto.leader.rebalance.enable", true, NULL);
    cfg.leader_imbalance_interval_ms = interval_s * 1000;
    cfg.rebalance_batch = 4;
    cfg.min_insync_replicas = (int32_t)props_get_int(o->config, "min.insync.replicas", 1, NULL);
    c->sm = ctl_sm_new(&cfg);
    if (c->sm == NULL) {
        free(c);
        return ERR_NOMEM;
    }
    tclock_timer_init(c->clock, &c->timer, on_timer, c);
    if (tclock_timer_start(&c->timer, 0, CONTROLLER_TICK_MS) != 0) {
        tclock_timer_close(&c->timer);
        ctl_sm_free(c->sm);
        free(c);
        return ERR_NOMEM;
    }
    *out = c;
    return 0;
}

void controller_stop(struct controller *c)
{
    if (c == NULL || c->stopped)
        return;
    c->stopped = true;
    c->active = false;
    tclock_timer_close(&c->timer);
}

void controller_free(struct controller *c)
{
    if (c == NULL)
        return;
    controller_stop(c);
    ctl_sm_free(c->sm);
    free(c);
}

/* NULL (a broker-only node, which is never the controller) is inactive: every handler then
 * answers NOT_CONTROLLER. */
bool controller_active(const struct controller *c)
{
    return c != NULL && c->active && !c->stopped && meta_controller_ready(c->meta);
}

/* Arena memory for a request's pending state; closes the connection when out of memory. */
static void *req_alloc(struct net_request *req, size_t size)
{
    void *p = arena_alloc(req->arena, size);
    if (p != NULL)
        memset(p, 0, size);
    return p;
}

/* ---- BrokerRegistration ------------------------------------------------------------------ */

struct registration {
    struct controller *c;
    struct net_request *req;
    int32_t broker_id;
    int64_t previous_epoch; /* PreviousBrokerEpoch */
    bool clean;             /* ... the epoch the image held for it: a clean shutdown */
    char raft_address[160]; /* "" when the broker named no CONTROLLER listener */
};

static void answer_registration(struct net_request *req, int err, int64_t epoch)
{
    struct BrokerRegistrationResponse *rs = req_alloc(req, sizeof *rs);
    if (rs == NULL) {
        net_close_connection(req);
        return;
    }
    rs->ErrorCode = (int16_t)err_wire(err);
    rs->BrokerEpoch = err ? -1 : epoch;
    net_respond(req, rs);
}

static int64_t epoch_of(struct controller *c, int32_t id)
{
    const struct meta_broker *b = meta_broker_by_id(c->meta, id);
    return b ? b->epoch : -1;
}

static void on_standby_added(void *arg, int err)
{
    struct registration *r = arg;
    if (err)
        slog_warn("controller", "cannot add broker %d (%s) to the metadata quorum: %s",
                  r->broker_id, r->raft_address, err_name(err));
    else
        slog_info("controller", "broker %d added to the metadata quorum as a standby (%s)",
                  r->broker_id, r->raft_address);
    answer_registration(r->req, err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER : err,
                        epoch_of(r->c, r->broker_id));
}

/* The broker's registration is in the image: a node outside the voters is added to the raft
 * configuration as a standby so that it receives the metadata log. */
static void registered(struct registration *r)
{
    int rc;
    if (r->raft_address[0] == '\0') {
        answer_registration(r->req, 0, epoch_of(r->c, r->broker_id));
        return;
    }
    rc = meta_add_standby(r->c->meta, r->broker_id, r->raft_address, on_standby_added, r);
    if (rc == ERR_EXISTS) /* a voter, or already a standby: it has the log */
        answer_registration(r->req, 0, epoch_of(r->c, r->broker_id));
    else if (rc != 0)
        answer_registration(r->req, rc, -1);
}

static void on_registered(void *arg, int err)
{
    struct registration *r = arg;
    if (err) {
        answer_registration(r->req, err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER : err, -1);
        return;
    }
    if (r->clean)
        slog_info("controller",
                  "broker %d registered at epoch %lld after a clean shutdown at "
                  "epoch %lld",
                  r->broker_id, (long long)epoch_of(r->c, r->broker_id),
                  (long long)r->previous_epoch);
    else
        slog_info("controller",
                  "broker %d registered at epoch %lld (previous broker epoch %lld: as after an "
                  "unclean shutdown, out of every ELR)",
                  r->broker_id, (long long)epoch_of(r->c, r->broker_id),
                  (long long)r->previous_epoch);
    registered(r);
}

/* The controller's APIs are authorized on the cluster: CLUSTER_ACTION for the brokers' own
 * (registration, heartbeats, ISR changes, producer-id blocks), ALTER / DESCRIBE for the
 * operators' (elections, reassignments), as Kafka checks them. */
static bool cluster_allowed(struct net_request *req, int8_t op)
{
    return authz_allowed(req, op, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER);
}

void controller_broker_registration(struct controller *c, struct net_request *req)
{
    struct BrokerRegistrationRequest *rq = req->body;
    struct registration *r = req_alloc(req, sizeof *r);
    int32_t n = rq->Listeners.n > 0 ? rq->Listeners.n : 0, k = 0;
    struct meta_listener *ls = req_alloc(req, ((size_t)n + 1) * sizeof *ls);
    struct ctl_registration reg = {0};
    struct ctl_out out;
    int rc;

    if (r == NULL || ls == NULL) {
        net_close_connection(req);
        return;
    }
    if (!cluster_allowed(req, PROTO_ACL_OP_CLUSTER_ACTION)) {
        answer_registration(req, ERR_CLUSTER_AUTHORIZATION_FAILED, -1);
        return;
    }
    if (!controller_active(c)) {
        answer_registration(req, ERR_NOT_CONTROLLER, -1);
        return;
    }
    r->c = c;
    r->req = req;
    r->broker_id = rq->BrokerId;
    /* The Kafka listeners become the registration in the broker's order (its inter-broker
     * listener first: the broker's address); the CONTROLLER one is the broker's raft address,
     * for the quorum. */
    int32_t first = -1;
    for (int32_t i = 0; i < n && first < 0; i++)
        if (strcmp(rq->Listeners.v[i].Name, "CONTROLLER") != 0)
            first = i;
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < n; i++) {
            const struct BrokerRegistrationListener *l = &rq->Listeners.v[i];
            bool plain = i == first;
            if (strcmp(l->Name, "CONTROLLER") == 0) {
                if (pass == 0)
                    snprintf(r->raft_address, sizeof r->raft_address, "%s:%u", l->Host,
                             (unsigned)l->Port);
                continue;
            }
            if (plain != (pass == 0))
                continue;
            ls[k++] = (struct meta_listener){l->Name, l->Host, l->Port, l->SecurityProtocol};
        }
    reg.broker_id = rq->BrokerId;
    reg.cluster_id = rq->ClusterId;
    memcpy(reg.incarnation, rq->IncarnationId.b, 16);
    reg.n_listeners = k;
    reg.listeners = ls;
    reg.rack = rq->Rack;
    reg.n_dirs = rq->LogDirs.n > 0 ? rq->LogDirs.n : 0;
    reg.dirs = (const uint8_t(*)[16])rq->LogDirs.v;
    /* v0-2 have no such field: the decoder leaves its default, -1 (an unclean shutdown, as
     * far as the controller can tell). */
    reg.previous_broker_epoch = rq->PreviousBrokerEpoch;
    r->previous_epoch = reg.previous_broker_epoch;
    r->clean = ctl_sm_clean_shutdown(meta_get_image(c->meta), &reg);
    ctl_out_init(&out);
    rc = ctl_sm_register(c->sm, meta_get_image(c->meta), &reg, now_ms(c), &out);
    if (rc == 0 && out.oom)
        rc = ERR_NOMEM;
    if (rc != 0) {
        if (rc == ERR_INCONSISTENT_CLUSTER_ID || rc == ERR_DUPLICATE_BROKER_REGISTRATION)
            slog_warn_limited(&c->propose_warn, 10000, "controller",
                              "refused the registration of broker %d from %s: %s",
                              (int)rq->BrokerId, req->peer, err_name(rc));
        answer_registration(req, rc, -1);
    } else if (out.n == 0) {
        registered(r); /* the same incarnation again: a retry */
    } else if ((rc = meta_propose(c->meta, out.recs, out.n, on_registered, r)) != 0) {
        answer_registration(req, rc, -1);
    }
    ctl_out_free(&out);
}

/* ---- BrokerHeartbeat --------------------------------------------------------------------- */

struct heartbeat {
    struct controller *c;
    struct net_request *req;
    struct ctl_heartbeat_answer ans;
    int32_t broker_id;
};

static void answer_heartbeat(struct heartbeat *h, int err)
{
    struct BrokerHeartbeatResponse *rs = req_alloc(h->req, sizeof *rs);
    const struct meta_broker *b;
    if (rs == NULL) {
        net_close_connection(h->req);
        return;
    }
    if (err == 0)
        err = h->ans.error;
    rs->ErrorCode = (int16_t)err_wire(err);
    /* A broker-only node has no controller (h->c NULL): it answers NOT_CONTROLLER. */
    b = h->c ? meta_broker_by_id(h->c->meta, h->broker_id) : NULL;
    /* As the image now says: the batch decided with the heartbeat has applied (or failed). */
    rs->IsFenced = b == NULL || b->fenced;
    rs->IsCaughtUp = err == 0 && h->ans.is_caught_up;
    rs->ShouldShutDown = err == 0 && h->ans.should_shutdown;
    net_respond(h->req, rs);
}

static void on_heartbeat_applied(void *arg, int err)
{
    struct heartbeat *h = arg;
    /* A refused batch (a concurrent change) is decided again at the next heartbeat. */
    answer_heartbeat(h, err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER
                                            : (err == ERR_NOT_CONTROLLER ? err : 0));
}

void controller_broker_heartbeat(struct controller *c, struct net_request *req)
{
    struct BrokerHeartbeatRequest *rq = req->body;
    struct heartbeat *h = req_alloc(req, sizeof *h);
    struct ctl_heartbeat hb;
    struct ctl_out out;

    if (h == NULL) {
        net_close_connection(req);
        return;
    }
    h->c = c;
    h->req = req;
    h->broker_id = rq->BrokerId;
    if (!cluster_allowed(req, PROTO_ACL_OP_CLUSTER_ACTION)) {
        answer_heartbeat(h, ERR_CLUSTER_AUTHORIZATION_FAILED);
        return;
    }
    if (!controller_active(c)) {
        answer_heartbeat(h, ERR_NOT_CONTROLLER);
        return;
    }
    hb = (struct ctl_heartbeat){
        .broker_id = rq->BrokerId,
        .broker_epoch = rq->BrokerEpoch,
        .metadata_offset = rq->CurrentMetadataOffset,
        .want_fence = rq->WantFence,
        .want_shutdown = rq->WantShutDown,
    };
    ctl_out_init(&out);
    ctl_sm_heartbeat(c->sm, meta_get_image(c->meta), &hb, now_ms(c), &out, &h->ans);
    if (out.oom)
        answer_heartbeat(h, ERR_UNKNOWN_SERVER_ERROR);
    else if (out.n == 0 || h->ans.error != 0)
        answer_heartbeat(h, 0);
    else if (meta_propose(c->meta, out.recs, out.n, on_heartbeat_applied, h) != 0)
        answer_heartbeat(h, ERR_NOT_CONTROLLER);
    ctl_out_free(&out);
}

/* ---- AlterPartition ---------------------------------------------------------------------- */

struct alter {
    struct controller *c;
    struct net_request *req;
    struct AlterPartitionResponse *rs;
    int16_t batch_err; /* the proposal's verdict, for every partition that had a record */
};

static const uint8_t *topic_id_of(struct controller *c,
                                  const struct AlterPartitionRequestTopicData *t, int16_t version)
{
    const struct meta_topic *mt;
    if (version >= 2)
        return t->TopicId.b;
    mt = t->TopicName ? meta_topic_by_name(c->meta, t->TopicName) : NULL;
    return mt ? mt->id : NULL;
}

/* Each partition that had a record gets its state from the image (or the batch's error). */
static void answer_alter(struct alter *a)
{
    struct AlterPartitionResponse *rs = a->rs;
    for (int32_t i = 0; i < rs->Topics.n; i++) {
        struct AlterPartitionResponseTopicData *t = &rs->Topics.v[i];
        const struct meta_topic *mt = meta_topic_by_id(a->c->meta, t->TopicId.b);
        if (mt == NULL && t->TopicName)
            mt = meta_topic_by_name(a->c->meta, t->TopicName);
        for (int32_t j = 0; j < t->Partitions.n; j++) {
            struct AlterPartitionResponsePartitionData *o = &t->Partitions.v[j];
            const struct meta_partition *mp;
            if (o->ErrorCode == 0 && a->batch_err != 0)
                o->ErrorCode = a->batch_err;
            if (o->ErrorCode != 0 || mt == NULL || o->PartitionIndex < 0 ||
                o->PartitionIndex >= mt->n_partitions) {
                if (o->ErrorCode == 0)
                    o->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
                o->LeaderId = -1;
                o->Isr.n = 0;
                continue;
            }
            mp = &mt->partitions[o->PartitionIndex];
            o->LeaderId = mp->leader;
            o->LeaderEpoch = mp->leader_epoch;
            o->PartitionEpoch = mp->partition_epoch;
            o->LeaderRecoveryState = mp->leader_recovery_state;
            o->Isr.v = arena_alloc(a->req->arena, ((size_t)mp->n_isr + 1) * sizeof *o->Isr.v);
            if (o->Isr.v == NULL) {
                net_close_connection(a->req);
                return;
            }
            memcpy(o->Isr.v, mp->isr, (size_t)mp->n_isr * sizeof *o->Isr.v);
            o->Isr.n = mp->n_isr;
        }
    }
    net_respond(a->req, rs);
}

static void on_alter_applied(void *arg, int err)
{
    struct alter *a = arg;
    a->batch_err = (int16_t)(err == 0              ? 0
                             : err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER
                                                   : err_wire(err));
    answer_alter(a);
}

void controller_alter_partition(struct controller *c, struct net_request *req)
{
    struct AlterPartitionRequest *rq = req->body;
    int16_t version = req->hdr.RequestApiVersion;
    struct alter *a = req_alloc(req, sizeof *a);
    struct AlterPartitionResponse *rs = req_alloc(req, sizeof *rs);
    int32_t nt = rq->Topics.n > 0 ? rq->Topics.n : 0;
    struct ctl_out out;
    bool any = false;

    if (a == NULL || rs == NULL ||
        (rs->Topics.v = req_alloc(req, ((size_t)nt + 1) * sizeof *rs->Topics.v)) == NULL) {
        net_close_connection(req);
        return;
    }
    a->c = c;
    a->req = req;
    a->rs = rs;
    rs->Topics.n = nt;
    bool isr_allowed = cluster_allowed(req, PROTO_ACL_OP_CLUSTER_ACTION);
    if (!isr_allowed || !controller_active(c)) {
        rs->ErrorCode = isr_allowed ? ERR_NOT_CONTROLLER : ERR_CLUSTER_AUTHORIZATION_FAILED;
        rs->Topics.n = 0;
        net_respond(req, rs);
        return;
    }
    ctl_out_init(&out);
    for (int32_t i = 0; i < nt; i++) {
        const struct AlterPartitionRequestTopicData *t = &rq->Topics.v[i];
        struct AlterPartitionResponseTopicData *tr = &rs->Topics.v[i];
        const uint8_t *id = topic_id_of(c, t, version);
        int32_t np = t->Partitions.n > 0 ? t->Partitions.n : 0;
        tr->TopicName = t->TopicName;
        tr->TopicId = t->TopicId;
        if (id != NULL)
            memcpy(tr->TopicId.b, id, 16);
        tr->Partitions.v = req_alloc(req, ((size_t)np + 1) * sizeof *tr->Partitions.v);
        if (tr->Partitions.v == NULL) {
            ctl_out_free(&out);
            net_close_connection(req);
            return;
        }
        tr->Partitions.n = np;
        for (int32_t j = 0; j < np; j++) {
            const struct AlterPartitionRequestPartitionData *pd = &t->Partitions.v[j];
            struct AlterPartitionResponsePartitionData *o = &tr->Partitions.v[j];
            int32_t n_isr = version >= 3 ? pd->NewIsrWithEpochs.n : pd->NewIsr.n;
            int32_t *isr = req_alloc(req, ((size_t)(n_isr > 0 ? n_isr : 0) + 1) * sizeof *isr);
            int64_t *epochs =
                req_alloc(req, ((size_t)(n_isr > 0 ? n_isr : 0) + 1) * sizeof *epochs);
            size_t before = out.n;
            o->PartitionIndex = pd->PartitionIndex;
            if (isr == NULL || epochs == NULL) {
                ctl_out_free(&out);
                net_close_connection(req);
                return;
            }
            if (id == NULL) {
                o->ErrorCode = version >= 2 ? ERR_UNKNOWN_TOPIC_ID : ERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            for (int32_t k = 0; k < n_isr; k++) {
                isr[k] = version >= 3 ? pd->NewIsrWithEpochs.v[k].BrokerId : pd->NewIsr.v[k];
                epochs[k] = version >= 3 ? pd->NewIsrWithEpochs.v[k].BrokerEpoch : -1;
            }
            struct ctl_alter_partition ap = {
                .broker_id = rq->BrokerId,
                .broker_epoch = rq->BrokerEpoch,
                .partition = pd->PartitionIndex,
                .leader_epoch = pd->LeaderEpoch,
                .partition_epoch = pd->PartitionEpoch,
                .n_isr = n_isr > 0 ? n_isr : 0,
                .isr = isr,
                .isr_epochs = version >= 3 ? epochs : NULL,
                .leader_recovery_state = version >= 1 ? pd->LeaderRecoveryState : 0,
            };
            memcpy(ap.topic_id, id, 16);
            o->ErrorCode =
                (int16_t)ctl_sm_alter_partition(c->sm, meta_get_image(c->meta), &ap, &out);
            any = any || out.n > before;
        }
    }
    if (out.oom) {
        a->batch_err = ERR_UNKNOWN_SERVER_ERROR;
        answer_alter(a);
    } else if (!any) {
        answer_alter(a);
    } else if (meta_propose(c->meta, out.recs, out.n, on_alter_applied, a) != 0) {
        a->batch_err = ERR_NOT_CONTROLLER;
        answer_alter(a);
    }
    ctl_out_free(&out);
}

/* ---- ElectLeaders ------------------------------------------------------------------------ */

struct elect {
    struct controller *c;
    struct net_request *req;
    struct ElectLeadersResponse *rs;
};

static void on_elect_applied(void *arg, int err)
{
    struct elect *e = arg;
    if (err != 0)
        for (int32_t i = 0; i < e->rs->ReplicaElectionResults.n; i++) {
            struct ReplicaElectionResult *t = &e->rs->ReplicaElectionResults.v[i];
            for (int32_t j = 0; j < t->PartitionResult.n; j++)
                if (t->PartitionResult.v[j].ErrorCode == 0)
                    t->PartitionResult.v[j].ErrorCode =
                        (int16_t)(err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER : err_wire(err));
        }
    net_respond(e->req, e->rs);
}

/* One partition's election, its record (if any) into `out`. */
static void elect_one(struct controller *c, const struct meta_topic *t, int32_t index, bool unclean,
                      struct ElectLeadersPartitionResult *o, struct ctl_out *out)
{
    o->PartitionId = index;
    if (t == NULL || index < 0 || index >= t->n_partitions) {
        o->ErrorCode = ERR_UNKNOWN_TOPIC_OR_PARTITION;
        return;
    }
    o->ErrorCode =
        (int16_t)ctl_sm_elect(c->sm, meta_get_image(c->meta), t->id, index, unclean, out);
}

void controller_elect_leaders(struct controller *c, struct net_request *req)
{
    struct ElectLeadersRequest *rq = req->body;
    struct elect *e = req_alloc(req, sizeof *e);
    struct ElectLeadersResponse *rs = req_alloc(req, sizeof *rs);
    bool unclean = req->hdr.RequestApiVersion >= 1 && rq->ElectionType == 1;
    struct ctl_out out;
    size_t nt;

    if (e == NULL || rs == NULL) {
        net_close_connection(req);
        return;
    }
    e->c = c;
    e->req = req;
    e->rs = rs;
    bool elect_allowed = cluster_allowed(req, PROTO_ACL_OP_ALTER);
    if (!elect_allowed || !controller_active(c)) {
        /* In every named partition too, as Kafka's error answer: v0 has no top-level error,
         * and a broker forwarding the request must see the refusal to retry elsewhere. */
        int16_t refusal = elect_allowed ? ERR_NOT_CONTROLLER : ERR_CLUSTER_AUTHORIZATION_FAILED;
        rs->ErrorCode = refusal;
        int32_t n = rq->TopicPartitions.n > 0 ? rq->TopicPartitions.n : 0;
        rs->ReplicaElectionResults.v =
            req_alloc(req, ((size_t)n + 1) * sizeof *rs->ReplicaElectionResults.v);
        if (rs->ReplicaElectionResults.v == NULL) {
            net_close_connection(req);
            return;
        }
        rs->ReplicaElectionResults.n = n;
        for (int32_t i = 0; i < n; i++) {
            const struct ElectLeadersTopicPartitions *tp = &rq->TopicPartitions.v[i];
            struct ReplicaElectionResult *r = &rs->ReplicaElectionResults.v[i];
            int32_t np = tp->Partitions.n > 0 ? tp->Partitions.n : 0;
            r->Topic = tp->Topic;
            r->PartitionResult.v = req_alloc(req, ((size_t)np + 1) * sizeof *r->PartitionResult.v);
            if (r->PartitionResult.v == NULL) {
                net_close_connection(req);
                return;
            }
            r->PartitionResult.n = np;
            for (int32_t j = 0; j < np; j++) {
                r->PartitionResult.v[j].PartitionId = tp->Partitions.v[j];
                r->PartitionResult.v[j].ErrorCode = refusal;
            }
        }
        net_respond(req, rs);
        return;
    }
    ctl_out_init(&out);
    if (rq->TopicPartitions.n < 0) {
        /* Null: every partition (Kafka's "all partitions" election). */
        const struct meta_topic *const *topics = meta_topics(c->meta, &nt);
        rs->ReplicaElectionResults.v =
            req_alloc(req, (nt + 1) * sizeof *rs->ReplicaElectionResults.v);
        if (rs->ReplicaElectionResults.v == NULL)
            goto oom;
        for (size_t i = 0; i < nt; i++) {
            const struct meta_topic *t = topics[i];
            struct ReplicaElectionResult *r = &rs->ReplicaElectionResults.v[i];
            r->Topic = t->name;
            r->PartitionResult.v =
                req_alloc(req, ((size_t)t->n_partitions + 1) * sizeof *r->PartitionResult.v);
            if (r->PartitionResult.v == NULL)
                goto oom;
            r->PartitionResult.n = t->n_partitions;
            for (int32_t j = 0; j < t->n_partitions; j++)
                elect_one(c, t, j, unclean, &r->PartitionResult.v[j], &out);
        }
        rs->ReplicaElectionResults.n = (int32_t)nt;
    } else {
        int32_t n = rq->TopicPartitions.n;
        rs->ReplicaElectionResults.v =
            req_alloc(req, ((size_t)n + 1) * sizeof *rs->ReplicaElectionResults.v);
        if (rs->ReplicaElectionResults.v == NULL)
            goto oom;
        rs->ReplicaElectionResults.n = n;
        for (int32_t i = 0; i < n; i++) {
            const struct ElectLeadersTopicPartitions *tp = &rq->TopicPartitions.v[i];
            struct ReplicaElectionResult *r = &rs->ReplicaElectionResults.v[i];
            const struct meta_topic *t = tp->Topic ? meta_topic_by_name(c->meta, tp->Topic) : NULL;
            int32_t np = tp->Partitions.n > 0 ? tp->Partitions.n : 0;
            r->Topic = tp->Topic;
            r->PartitionResult.v = req_alloc(req, ((size_t)np + 1) * sizeof *r->PartitionResult.v);
            if (r->PartitionResult.v == NULL)
                goto oom;
            r->PartitionResult.n = np;
            for (int32_t j = 0; j < np; j++)
                elect_one(c, t, tp->Partitions.v[j], unclean, &r->PartitionResult.v[j], &out);
        }
    }
    if (out.oom)
        goto oom;
    if (out.n == 0 || meta_propose(c->meta, out.recs, out.n, on_elect_applied, e) != 0) {
        if (out.n > 0)
            on_elect_applied(e, ERR_NOT_CONTROLLER);
        else
            net_respond(req, rs);
    }
    ctl_out_free(&out);
    return;

oom:
    ctl_out_free(&out);
    net_close_connection(req);
}

/* ---- AllocateProducerIds ----------------------------------------------------------------- */

struct grant {
    struct controller *c;
    struct net_request *req;
    int32_t broker_id;
    int64_t first_id;
    int tries;
};

static void answer_grant(struct net_request *req, int err, int64_t first, int32_t len)
{
    struct AllocateProducerIdsResponse *rs = req_alloc(req, sizeof *rs);
    if (rs == NULL) {
        net_close_connection(req);
        return;
    }
    rs->ErrorCode = (int16_t)err_wire(err);
    rs->ProducerIdStart = err ? -1 : first;
    rs->ProducerIdLen = err ? 0 : len;
    net_respond(req, rs);
}

static void propose_grant(struct grant *g);

static void on_granted(void *arg, int err)
{
    struct grant *g = arg;
    if (err == ERR_DUPLICATE_RESOURCE && ++g->tries < MAX_GRANT_TRIES) {
        propose_grant(g);
        return;
    }
    if (err) {
        slog_warn("controller", "cannot grant producer ids to broker %d: %s", g->broker_id,
                  err_name(err));
        answer_grant(g->req, err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER : err, -1, 0);
        return;
    }
    slog_info("controller", "producer ids [%lld, %lld) granted to broker %d",
              (long long)g->first_id, (long long)(g->first_id + PRODUCER_ID_BLOCK), g->broker_id);
    answer_grant(g->req, 0, g->first_id, PRODUCER_ID_BLOCK);
}

static void propose_grant(struct grant *g)
{
    struct meta_record rec = {.type = META_REC_PRODUCER_IDS};
    int rc;

    g->first_id = meta_next_producer_id(g->c->meta);
    rec.u.producer_ids.broker_id = g->broker_id;
    rec.u.producer_ids.first_id = g->first_id;
    rec.u.producer_ids.size = PRODUCER_ID_BLOCK;
    rc = meta_propose(g->c->meta, &rec, 1, on_granted, g);
    if (rc)
        answer_grant(g->req, rc, -1, 0);
}

void controller_allocate_producer_ids(struct controller *c, struct net_request *req)
{
    struct AllocateProducerIdsRequest *rq = req->body;
    struct grant *g = req_alloc(req, sizeof *g);
    const struct meta_broker *b;

    if (g == NULL) {
        net_close_connection(req);
        return;
    }
    if (!cluster_allowed(req, PROTO_ACL_OP_CLUSTER_ACTION)) {
        answer_grant(req, ERR_CLUSTER_AUTHORIZATION_FAILED, -1, 0);
        return;
    }
    if (!controller_active(c)) {
        answer_grant(req, ERR_NOT_CONTROLLER, -1, 0);
        return;
    }
    b = meta_broker_by_id(c->meta, rq->BrokerId);
    if (rq->BrokerId < 0) {
        answer_grant(req, ERR_INVALID_REQUEST, -1, 0);
        return;
    }
    /* A request naming an epoch must name the broker's current one (a zombie incarnation
     * gets nothing); -1 is an older client that does not say. */
    if (rq->BrokerEpoch >= 0 && (b == NULL || rq->BrokerEpoch != b->epoch)) {
        answer_grant(req, ERR_STALE_BROKER_EPOCH, -1, 0);
        return;
    }
    g->c = c;
    g->req = req;
    g->broker_id = rq->BrokerId;
    propose_grant(g);
}

/* ---- AlterPartitionReassignments, ListPartitionReassignments ------------------------------ */

struct reassign {
    struct controller *c;
    struct net_request *req;
    struct AlterPartitionReassignmentsResponse *rs;
};

/* Logs what a reassignment request changed, once applied: each partition's replicas as the
 * image now holds them. */
static void log_reassignments(struct reassign *r)
{
    const struct AlterPartitionReassignmentsRequest *rq = r->req->body;
    for (int32_t i = 0; i < r->rs->Responses.n; i++) {
        const struct ReassignableTopicResponse *t = &r->rs->Responses.v[i];
        const struct meta_topic *mt = t->Name ? meta_topic_by_name(r->c->meta, t->Name) : NULL;
        for (int32_t j = 0; mt && j < t->Partitions.n; j++) {
            const struct ReassignablePartitionResponse *o = &t->Partitions.v[j];
            const struct meta_partition *p;
            char reps[128];
            size_t k = 0;
            if (o->ErrorCode != 0 || o->PartitionIndex < 0 || o->PartitionIndex >= mt->n_partitions)
                continue;
            p = &mt->partitions[o->PartitionIndex];
            reps[0] = '\0';
            for (int32_t x = 0; x < p->n_replicas && k + 12 < sizeof reps; x++)
                k += (size_t)snprintf(reps + k, sizeof reps - k, "%s%d", x ? "," : "",
                                      p->replicas[x]);
            slog_info("controller", "%s-%d: reassignment %s: replicas [%s], %d adding, %d removing",
                      t->Name, o->PartitionIndex,
                      rq->Topics.v[i].Partitions.v[j].Replicas.n < 0 ? "cancelled" : "accepted",
                      reps, p->n_adding, p->n_removing);
        }
    }
}

static void on_reassign_applied(void *arg, int err)
{
    struct reassign *r = arg;
    int16_t code = (int16_t)(err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER : err_wire(err));
    if (err != 0) {
        /* Refused whole (a concurrent change of one of its partitions won the compare-and-set,
         * or leadership was lost): every partition that had a change says so; the client
         * retries. */
        for (int32_t i = 0; i < r->rs->Responses.n; i++) {
            struct ReassignableTopicResponse *t = &r->rs->Responses.v[i];
            for (int32_t j = 0; j < t->Partitions.n; j++)
                if (t->Partitions.v[j].ErrorCode == 0)
                    t->Partitions.v[j].ErrorCode = code;
        }
    } else {
        log_reassignments(r);
    }
    net_respond(r->req, r->rs);
}

void controller_alter_partition_reassignments(struct controller *c, struct net_request *req)
{
    struct AlterPartitionReassignmentsRequest *rq = req->body;
    struct reassign *r = req_alloc(req, sizeof *r);
    struct AlterPartitionReassignmentsResponse *rs = req_alloc(req, sizeof *rs);
    int32_t nt = rq->Topics.n > 0 ? rq->Topics.n : 0;
    bool active = controller_active(c);
    bool reassign_allowed = cluster_allowed(req, PROTO_ACL_OP_ALTER);
    struct ctl_out out;
    char why[512];

    if (r == NULL || rs == NULL ||
        (rs->Responses.v = req_alloc(req, ((size_t)nt + 1) * sizeof *rs->Responses.v)) == NULL) {
        net_close_connection(req);
        return;
    }
    r->c = c;
    r->req = req;
    r->rs = rs;
    rs->Responses.n = nt;
    /* Not the controller: the error at the top and in every partition, as Kafka's error
     * answer, so that a broker forwarding it sees the refusal and retries elsewhere. */
    if (!reassign_allowed)
        rs->ErrorCode = ERR_CLUSTER_AUTHORIZATION_FAILED;
    else if (!active)
        rs->ErrorCode = ERR_NOT_CONTROLLER;
    ctl_out_init(&out);
    for (int32_t i = 0; i < nt; i++) {
        const struct ReassignableTopic *t = &rq->Topics.v[i];
        struct ReassignableTopicResponse *tr = &rs->Responses.v[i];
        int32_t np = t->Partitions.n > 0 ? t->Partitions.n : 0;
        tr->Name = t->Name;
        tr->Partitions.v = req_alloc(req, ((size_t)np + 1) * sizeof *tr->Partitions.v);
        if (tr->Partitions.v == NULL)
            goto oom;
        tr->Partitions.n = np;
        for (int32_t j = 0; j < np; j++) {
            const struct ReassignablePartition *pd = &t->Partitions.v[j];
            struct ReassignablePartitionResponse *o = &tr->Partitions.v[j];
            int rc;
            o->PartitionIndex = pd->PartitionIndex;
            if (!reassign_allowed || !active) {
                o->ErrorCode = (int16_t)rs->ErrorCode;
                continue;
            }
            rc = ctl_sm_reassign(c->sm, meta_get_image(c->meta), t->Name, pd->PartitionIndex,
                                 pd->Replicas.v, pd->Replicas.n < 0 ? -1 : pd->Replicas.n, &out,
                                 why, sizeof why);
            if (rc == ERR_NOMEM || out.oom)
                goto oom;
            o->ErrorCode = (int16_t)err_wire(rc);
            if (rc != 0 && why[0] != '\0' &&
                (o->ErrorMessage = arena_strndup(req->arena, why, strlen(why))) == NULL)
                goto oom;
        }
    }
    if (out.n == 0)
        net_respond(req, rs);
    else if (meta_propose(c->meta, out.recs, out.n, on_reassign_applied, r) != 0)
        on_reassign_applied(r, ERR_NOT_CONTROLLER);
    ctl_out_free(&out);
    return;

oom:
    ctl_out_free(&out);
    slog_error("controller", "out of memory in AlterPartitionReassignments from %s; closing",
               req->peer);
    net_close_connection(req);
}

/* One topic's partitions in progress among `idx` (NULL: all of them) into `o`; false when
 * out of memory. o->Partitions.n is 0 when none is. */
static bool list_topic(struct net_request *req, const struct meta_topic *t, const int32_t *idx,
                       int32_t n_idx, struct OngoingTopicReassignment *o)
{
    int32_t n = idx ? n_idx : t->n_partitions;
    o->Name = t->name;
    o->Partitions.n = 0;
    o->Partitions.v = req_alloc(req, ((size_t)(n > 0 ? n : 0) + 1) * sizeof *o->Partitions.v);
    if (o->Partitions.v == NULL)
        return false;
    for (int32_t k = 0; k < n; k++) {
        int32_t i = idx ? idx[k] : k;
        const struct meta_partition *p;
        struct OngoingPartitionReassignment *x;
        if (i < 0 || i >= t->n_partitions || !ctl_reassigning(&t->partitions[i]))
            continue;
        p = &t->partitions[i];
        x = &o->Partitions.v[o->Partitions.n++];
        x->PartitionIndex = i;
        /* The image's arrays stay valid until control returns to the loop: the answer is
         * encoded before that. */
        x->Replicas.v = p->replicas;
        x->Replicas.n = p->n_replicas;
        x->AddingReplicas.v = p->adding;
        x->AddingReplicas.n = p->n_adding;
        x->RemovingReplicas.v = p->removing;
        x->RemovingReplicas.n = p->n_removing;
    }
    return true;
}

void controller_list_partition_reassignments(struct controller *c, struct net_request *req)
{
    struct ListPartitionReassignmentsRequest *rq = req->body;
    struct ListPartitionReassignmentsResponse *rs = req_alloc(req, sizeof *rs);
    const struct meta_topic *const *topics = NULL;
    size_t n_topics = 0;
    int32_t n;

    if (rs == NULL) {
        net_close_connection(req);
        return;
    }
    if (!cluster_allowed(req, PROTO_ACL_OP_DESCRIBE)) {
        rs->ErrorCode = ERR_CLUSTER_AUTHORIZATION_FAILED;
        net_respond(req, rs);
        return;
    }
    if (!controller_active(c)) {
        rs->ErrorCode = ERR_NOT_CONTROLLER;
        net_respond(req, rs);
        return;
    }
    /* Null: every reassignment in progress (Kafka's listing of all); else the topics named,
     * those unknown left out. */
    if (rq->Topics.n < 0)
        topics = meta_topics(c->meta, &n_topics);
    n = rq->Topics.n < 0 ? (int32_t)n_topics : rq->Topics.n;
    rs->Topics.v = req_alloc(req, ((size_t)n + 1) * sizeof *rs->Topics.v);
    if (rs->Topics.v == NULL) {
        net_close_connection(req);
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        const struct ListPartitionReassignmentsTopics *want =
            rq->Topics.n < 0 ? NULL : &rq->Topics.v[i];
        const struct meta_topic *t =
            want ? (want->Name ? meta_topic_by_name(c->meta, want->Name) : NULL) : topics[i];
        struct OngoingTopicReassignment *o = &rs->Topics.v[rs->Topics.n];
        if (t == NULL)
            continue;
        if (!list_topic(req, t, want ? want->PartitionIndexes.v : NULL,
                        want ? want->PartitionIndexes.n : 0, o)) {
            net_close_connection(req);
            return;
        }
        if (o->Partitions.n > 0)
            rs->Topics.n++;
    }
    net_respond(req, rs);
}
