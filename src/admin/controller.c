/* SPDX-License-Identifier: Apache-2.0 */
/* The broker-to-controller APIs, answered by the active controller only (any other node
 * answers NOT_CONTROLLER): BrokerRegistration writes the broker's registration record and
 * adds the broker to the metadata quorum as a non-voting standby, so that it receives the
 * metadata log; AllocateProducerIds hands a broker the next block of producer ids through a
 * PRODUCER_IDS record (the apply step refuses a block that overlaps an earlier one, so two
 * racing grants cannot overlap). */
#include <stdio.h>
#include <string.h>

#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"

/* Kafka's producer-id block size. */
#define PRODUCER_ID_BLOCK 1000
/* A grant that loses the race to another one re-reads the next free id and tries again. */
#define MAX_GRANT_TRIES 5

/* ---- BrokerRegistration ------------------------------------------------------------------ */

struct registration {
    struct admin *admin;
    struct net_request *req;
    int32_t broker_id;
    char raft_address[160]; /* "" when the broker named no CONTROLLER listener */
};

static void answer_registration(struct net_request *req, int err)
{
    struct BrokerRegistrationResponse *rs = arena_alloc(req->arena, sizeof *rs);
    if (rs == NULL) {
        net_close_connection(req);
        return;
    }
    rs->ErrorCode = (int16_t)err_wire(err);
    /* No broker epochs yet (heartbeats and fencing come later): 0 for every registration. */
    rs->BrokerEpoch = err ? -1 : 0;
    net_respond(req, rs);
}

static void on_standby_added(void *arg, int err)
{
    struct registration *r = arg;
    if (err)
        slog_warn("admin", "cannot add broker %d (%s) to the metadata quorum: %s", r->broker_id,
                  r->raft_address, err_name(err));
    else
        slog_info("admin", "broker %d added to the metadata quorum as a standby (%s)", r->broker_id,
                  r->raft_address);
    answer_registration(r->req, err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER : err);
}

static void on_registered(void *arg, int err)
{
    struct registration *r = arg;
    int rc;

    if (err) {
        answer_registration(r->req, err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER : err);
        return;
    }
    slog_info("admin", "broker %d registered", r->broker_id);
    if (r->raft_address[0] == '\0') {
        answer_registration(r->req, 0);
        return;
    }
    rc = meta_add_standby(r->admin->meta, r->broker_id, r->raft_address, on_standby_added, r);
    if (rc == ERR_EXISTS) /* a voter, or already a standby: it has the log */
        answer_registration(r->req, 0);
    else if (rc != 0)
        answer_registration(r->req, rc);
}

void admin_broker_registration(struct admin *a, struct net_request *req)
{
    struct BrokerRegistrationRequest *rq = req->body;
    struct registration *r = arena_alloc(req->arena, sizeof *r);
    const struct BrokerRegistrationListener *plain = NULL;
    const struct meta_broker *old;
    struct meta_record rec = {.type = META_REC_REGISTER_BROKER};
    int rc;

    if (r == NULL) {
        net_close_connection(req);
        return;
    }
    if (!meta_is_controller(a->meta)) {
        answer_registration(req, ERR_NOT_CONTROLLER);
        return;
    }
    memset(r, 0, sizeof *r);
    r->admin = a;
    r->req = req;
    r->broker_id = rq->BrokerId;
    for (int32_t i = 0; i < rq->Listeners.n; i++) {
        const struct BrokerRegistrationListener *l = &rq->Listeners.v[i];
        if (strcmp(l->Name, "PLAINTEXT") == 0)
            plain = l;
        else if (strcmp(l->Name, "CONTROLLER") == 0)
            snprintf(r->raft_address, sizeof r->raft_address, "%s:%u", l->Host, (unsigned)l->Port);
    }
    /* Kafka answers a foreign cluster id with INCONSISTENT_CLUSTER_ID, which Tally's error
     * list does not have yet; INVALID_REQUEST refuses it just as firmly. */
    if (rq->BrokerId < 0 || plain == NULL || plain->Host[0] == '\0' || plain->Port == 0 ||
        strcmp(rq->ClusterId, meta_cluster_id(a->meta)) != 0) {
        answer_registration(req, ERR_INVALID_REQUEST);
        return;
    }
    /* Without broker sessions (heartbeats) there is no way to tell a restarted broker from
     * an impostor, so a registration may not move a registered broker to another address,
     * and no one registers the controller but the controller itself: one request must not
     * be able to point every client at a wrong address. Kafka refuses a second live
     * registration with DUPLICATE_BROKER_REGISTRATION likewise. */
    old = meta_broker_by_id(a->meta, rq->BrokerId);
    if (rq->BrokerId == a->node_id ||
        (old && (old->port != plain->Port || strcmp(old->host, plain->Host) != 0))) {
        slog_warn_limited(&a->registration_warn, 10000, "admin",
                          "refused a registration of broker %d at %s:%u from %s: broker %d is "
                          "registered at another address",
                          (int)rq->BrokerId, plain->Host, (unsigned)plain->Port, req->peer,
                          (int)rq->BrokerId);
        answer_registration(req, ERR_DUPLICATE_BROKER_REGISTRATION);
        return;
    }
    rec.u.broker.id = rq->BrokerId;
    rec.u.broker.host = plain->Host;
    rec.u.broker.port = plain->Port;
    rec.u.broker.rack = rq->Rack;
    rc = meta_propose(a->meta, &rec, 1, on_registered, r);
    if (rc)
        answer_registration(req, rc);
}

/* ---- AllocateProducerIds ----------------------------------------------------------------- */

struct grant {
    struct admin *admin;
    struct net_request *req;
    int32_t broker_id;
    int64_t first_id;
    int tries;
};

static void answer_grant(struct net_request *req, int err, int64_t first, int32_t len)
{
    struct AllocateProducerIdsResponse *rs = arena_alloc(req->arena, sizeof *rs);
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
        slog_warn("admin", "cannot grant producer ids to broker %d: %s", g->broker_id,
                  err_name(err));
        answer_grant(g->req, err == ERR_SHUTDOWN ? ERR_NOT_CONTROLLER : err, -1, 0);
        return;
    }
    slog_info("admin", "producer ids [%lld, %lld) granted to broker %d", (long long)g->first_id,
              (long long)(g->first_id + PRODUCER_ID_BLOCK), g->broker_id);
    answer_grant(g->req, 0, g->first_id, PRODUCER_ID_BLOCK);
}

static void propose_grant(struct grant *g)
{
    struct meta_record rec = {.type = META_REC_PRODUCER_IDS};
    int rc;

    g->first_id = meta_next_producer_id(g->admin->meta);
    rec.u.producer_ids.broker_id = g->broker_id;
    rec.u.producer_ids.first_id = g->first_id;
    rec.u.producer_ids.size = PRODUCER_ID_BLOCK;
    rc = meta_propose(g->admin->meta, &rec, 1, on_granted, g);
    if (rc)
        answer_grant(g->req, rc, -1, 0);
}

void admin_allocate_producer_ids(struct admin *a, struct net_request *req)
{
    struct AllocateProducerIdsRequest *rq = req->body;
    struct grant *g = arena_alloc(req->arena, sizeof *g);

    if (g == NULL) {
        net_close_connection(req);
        return;
    }
    if (!meta_is_controller(a->meta)) {
        answer_grant(req, ERR_NOT_CONTROLLER, -1, 0);
        return;
    }
    if (rq->BrokerId < 0) {
        answer_grant(req, ERR_INVALID_REQUEST, -1, 0);
        return;
    }
    memset(g, 0, sizeof *g);
    g->admin = a;
    g->req = req;
    g->broker_id = rq->BrokerId;
    propose_grant(g);
}
