/* SPDX-License-Identifier: Apache-2.0 */
/* lifecycle: this broker's standing with the controller, as Kafka's BrokerLifecycleManager
 * keeps it. It registers (BrokerRegistration: a random incarnation id per process, its
 * listeners, rack and log-dir id), then heartbeats (BrokerHeartbeat: broker epoch and how
 * far it has applied the metadata log). A registered broker starts fenced: the controller
 * unfences it once it has applied its own registration, and until then this broker serves
 * no client (main.c gates the listener). Heartbeats go every broker.heartbeat.interval.ms
 * once running, every LC_FAST_MS while fenced or shutting down. A broker the controller no
 * longer knows at its epoch (STALE_BROKER_EPOCH: fenced and re-registered meanwhile, e.g.
 * after a long pause) registers again; each registration names the epoch of the previous
 * one when the logs lost nothing since (PreviousBrokerEpoch, KIP-966) and is noted in the
 * log directory for the next start (replica.h). Controlled shutdown asks with WantShutDown
 * until the controller says ShouldShutDown (its leaderships have moved), bounded by
 * broker.session.timeout.ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/err.h"
#include "base/props.h"
#include "base/slog.h"
#include "base/tclock.h"
#include "meta/meta.h"
#include "net/net.h"
#include "replica/replica.h"
#include "server.h"

#define LC_FAST_MS 100
#define LC_REGISTER_RETRY_MS 500
#define LC_REGISTRATION_VERSION 3
/* A controlled shutdown with no controller answering (the quorum is gone or cut off) waits
 * this long, not a whole session. */
#define LC_SHUTDOWN_SILENCE_MS 2000

enum lc_state {
    LC_REGISTERING,
    LC_REGISTERED, /* has an epoch; fenced or not as the last heartbeat said */
    LC_STOPPED,
};

struct lifecycle {
    struct lifecycle_options o;
    enum lc_state state;
    uint8_t incarnation[16];
    int64_t epoch;
    bool in_flight;
    bool fenced;
    bool ran;      /* unfenced at least once: on_running was called */
    bool shutting; /* controlled shutdown asked */
    bool shutdown_told;
    /* Monotonic: when the heartbeat last answered was sent. The answer says what the
     * controller knew at some moment after that, no later than the send can vouch for: an
     * answer that waited out a network cut in TCP's retransmissions arrives at the heal
     * saying "not fenced" as of before the cut, while the controller has fenced this broker
     * since and moved its leaderships. Counting from the answer's arrival, such an answer
     * made a zombie leader think itself in touch again for a moment (and answer a client's
     * sequence gap with the fatal sequence error); counting from the send, it does not. */
    int64_t last_answer_ms;
    int64_t hb_sent_ms; /* monotonic: when the heartbeat in flight was sent */
    int64_t shutdown_deadline;
    int64_t next_ms;         /* monotonic: no request before */
    int32_t controller_seen; /* the controller this node's quorum view last named (-1: none) */
    struct tclock_timer timer;
};

static int64_t mono(const struct lifecycle *lc)
{
    return tclock_mono_ms(lc->o.clock);
}

bool lifecycle_out_of_touch(const struct lifecycle *lc)
{
    int64_t session = props_get_int(lc->o.cfg->props, "broker.session.timeout.ms", 9000, NULL);
    /* Fenced after running: the controller fenced it for a missed session (its leaderships
     * moved) and it has not caught up with the metadata log since. */
    return lc->ran && lc->state != LC_STOPPED &&
           (lc->fenced || mono(lc) - lc->last_answer_ms > session);
}

static void shutdown_done(struct lifecycle *lc, const char *why)
{
    if (lc->shutdown_told)
        return;
    lc->shutdown_told = true;
    slog_info("main", "controlled shutdown: %s", why);
    if (lc->o.on_shutdown_done)
        lc->o.on_shutdown_done(lc->o.arg);
}

static void on_heartbeat(void *arg, int err, const void *resp)
{
    struct lifecycle *lc = arg;
    const struct BrokerHeartbeatResponse *rs = resp;
    int64_t interval = props_get_int(lc->o.cfg->props, "broker.heartbeat.interval.ms", 2000, NULL);

    lc->in_flight = false;
    if (lc->state == LC_STOPPED)
        return;
    if (err == 0)
        err = rs->ErrorCode;
    if (err == ERR_NOT_CONTROLLER || err == ERR_NETWORK_EXCEPTION || err == ERR_REQUEST_TIMED_OUT)
        net_client_disconnect(lc->o.client, NET_CLIENT_CONTROLLER);
    if (err == ERR_STALE_BROKER_EPOCH || err == ERR_BROKER_NOT_AVAILABLE) {
        slog_warn("main",
                  "the controller no longer knows this broker at epoch %lld (%s); "
                  "registering again",
                  (long long)lc->epoch, err_name(err));
        lc->state = LC_REGISTERING;
        lc->next_ms = 0;
        return;
    }
    if (err != 0) {
        static struct slog_limit lim;
        slog_warn_limited(&lim, 10000, "main", "broker heartbeat failed: %s", err_name(err));
        lc->next_ms = mono(lc) + LC_FAST_MS;
        return;
    }
    lc->last_answer_ms = lc->hb_sent_ms;
    if (rs->IsFenced != lc->fenced)
        slog_info("main", "the controller %s this broker", rs->IsFenced ? "fenced" : "unfenced");
    lc->fenced = rs->IsFenced;
    if (!lc->fenced && !lc->ran) {
        lc->ran = true;
        if (lc->o.on_running)
            lc->o.on_running(lc->o.arg);
    }
    if (lc->shutting && rs->ShouldShutDown)
        shutdown_done(lc, "the controller moved this broker's leaderships away");
    lc->next_ms = mono(lc) + (lc->fenced || lc->shutting ? LC_FAST_MS : interval);
}

static void send_heartbeat(struct lifecycle *lc)
{
    struct BrokerHeartbeatRequest rq = {0};
    rq.BrokerId = lc->o.cfg->node_id;
    rq.BrokerEpoch = lc->epoch;
    rq.CurrentMetadataOffset = meta_offset(lc->o.meta);
    rq.WantFence = false;
    rq.WantShutDown = lc->shutting;
    lc->hb_sent_ms = mono(lc);
    if (net_client_send(lc->o.client, NET_CLIENT_CONTROLLER, PROTO_API_BrokerHeartbeat, 0, &rq,
                        on_heartbeat, lc) == 0)
        lc->in_flight = true;
    else
        lc->next_ms = mono(lc) + LC_FAST_MS;
}

static void on_registered(void *arg, int err, const void *resp)
{
    struct lifecycle *lc = arg;
    const struct BrokerRegistrationResponse *rs = resp;

    lc->in_flight = false;
    if (lc->state == LC_STOPPED)
        return;
    if (err == 0)
        err = rs->ErrorCode;
    if (err == ERR_NOT_CONTROLLER || err == ERR_NETWORK_EXCEPTION || err == ERR_REQUEST_TIMED_OUT)
        net_client_disconnect(lc->o.client, NET_CLIENT_CONTROLLER); /* look it up again */
    if (err == ERR_INCONSISTENT_CLUSTER_ID) {
        slog_error("main",
                   "the controller belongs to another cluster than this node's cluster.id %s "
                   "(INCONSISTENT_CLUSTER_ID); refusing to start: give every node the same "
                   "cluster.id",
                   lc->o.cfg->cluster_id);
        lc->state = LC_STOPPED;
        if (lc->o.on_fatal)
            lc->o.on_fatal(lc->o.arg);
        return;
    }
    if (err != 0) {
        static struct slog_limit lim;
        slog_warn_limited(&lim, 10000, "main",
                          "the controller did not register this broker (%s); "
                          "retrying",
                          err_name(err));
        lc->next_ms = mono(lc) + LC_REGISTER_RETRY_MS;
        return;
    }
    lc->epoch = rs->BrokerEpoch;
    lc->state = LC_REGISTERED;
    lc->fenced = true;
    /* So that the next start can name this epoch, if nothing is lost meanwhile. */
    if (replica_note_broker_epoch(lc->o.cfg->log_dir, lc->epoch) != 0)
        slog_warn("main",
                  "cannot note broker epoch %lld in %s: a restart after a crash will register "
                  "as after an unclean shutdown",
                  (long long)lc->epoch, lc->o.cfg->log_dir);
    slog_info("main",
              "registered with the controller at broker epoch %lld; fenced until "
              "caught up with the metadata log",
              (long long)lc->epoch);
    lc->next_ms = 0;
    send_heartbeat(lc);
}

static void send_registration(struct lifecycle *lc)
{
    const struct server_config *cfg = lc->o.cfg;
    struct BrokerRegistrationRequest rq = {0};
    struct BrokerRegistrationListener ls[SERVER_MAX_LISTENERS + 1] = {{0}};
    struct proto_uuid dir;
    char chost[160];
    const char *colon;

    snprintf(chost, sizeof chost, "%s", cfg->controller);
    colon = strrchr(chost, ':');
    if (colon == NULL)
        return;
    chost[colon - chost] = '\0';
    /* Every Kafka listener, the inter-broker one first (the image's address of a broker is
     * its first listener), then the raft one. */
    size_t n = cfg->n_listeners;
    for (size_t i = 0; i < n; i++) {
        const struct server_listener *l = &cfg->listeners[i];
        ls[i] = (struct BrokerRegistrationListener){(char *)l->name, (char *)l->adv_host,
                                                    (uint16_t)l->adv_port, l->security_protocol};
    }
    ls[n] = (struct BrokerRegistrationListener){"CONTROLLER", chost, (uint16_t)atoi(colon + 1), 0};
    memcpy(dir.b, cfg->dir_id, 16);
    rq.BrokerId = cfg->node_id;
    rq.ClusterId = (char *)cfg->cluster_id;
    memcpy(rq.IncarnationId.b, lc->incarnation, 16);
    rq.Listeners.v = ls;
    rq.Listeners.n = (int32_t)n + 1;
    rq.Features.n = 0;
    rq.Rack = (char *)props_get(cfg->props, "broker.rack");
    rq.LogDirs.v = &dir;
    rq.LogDirs.n = 1;
    /* KIP-966: the controller keeps a broker that does not name the epoch it last registered
     * at out of every ELR, since its logs may have lost their unflushed tails. A process
     * registering again (fenced meanwhile) lost nothing; a new one knows from the log
     * directory. */
    rq.PreviousBrokerEpoch = lc->epoch > 0 ? lc->epoch : lc->o.previous_broker_epoch;
    if (net_client_send(lc->o.client, NET_CLIENT_CONTROLLER, PROTO_API_BrokerRegistration,
                        LC_REGISTRATION_VERSION, &rq, on_registered, lc) == 0)
        lc->in_flight = true;
    else
        lc->next_ms = mono(lc) + LC_REGISTER_RETRY_MS;
}

static void on_timer(struct tclock_timer *t)
{
    struct lifecycle *lc = t->data;
    int64_t now = mono(lc);

    if (lc->state == LC_STOPPED)
        return;
    /* The controller moved. What was written to the old one — this heartbeat, an
     * AlterPartition, a forwarded request — would wait out its request timeout on that
     * connection (a cut-off controller answers nothing, and TCP says nothing for minutes),
     * while the new controller fences every broker whose heartbeat does not come within a
     * session: cutting the controller off fenced all brokers for 30 s. Dropping the
     * connection fails those requests with NETWORK_EXCEPTION now; they go again, and
     * NET_CLIENT_CONTROLLER resolves to the new controller. */
    int32_t ctl = meta_controller_id(lc->o.meta);
    if (ctl >= 0 && ctl != lc->controller_seen) {
        if (lc->controller_seen >= 0)
            net_client_disconnect(lc->o.client, NET_CLIENT_CONTROLLER);
        lc->controller_seen = ctl;
    }
    if (lc->shutting && !lc->shutdown_told &&
        (now >= lc->shutdown_deadline || now - lc->last_answer_ms > LC_SHUTDOWN_SILENCE_MS)) {
        shutdown_done(lc, now >= lc->shutdown_deadline
                              ? "the controller did not move the leaderships in time; stopping "
                                "anyway"
                              : "no controller answers; stopping anyway");
        return; /* the stop may have begun: nothing more goes out */
    }
    if (lc->in_flight || now < lc->next_ms)
        return;
    if (lc->state == LC_REGISTERING)
        send_registration(lc);
    else
        send_heartbeat(lc);
}

int lifecycle_start(const struct lifecycle_options *o, struct lifecycle **out)
{
    struct lifecycle *lc = calloc(1, sizeof *lc);
    if (lc == NULL)
        return ERR_NOMEM;
    lc->o = *o;
    lc->epoch = -1;
    lc->fenced = true;
    lc->controller_seen = -1;
    if (getrandom(lc->incarnation, sizeof lc->incarnation, 0) != (ssize_t)sizeof lc->incarnation)
        for (size_t i = 0; i < sizeof lc->incarnation; i++)
            lc->incarnation[i] = (uint8_t)rand();
    tclock_timer_init(o->clock, &lc->timer, on_timer, lc);
    if (tclock_timer_start(&lc->timer, 0, 20) != 0) {
        tclock_timer_close(&lc->timer);
        free(lc);
        return ERR_NOMEM;
    }
    *out = lc;
    return 0;
}

int64_t lifecycle_epoch(const struct lifecycle *lc)
{
    return lc != NULL && lc->state == LC_REGISTERED ? lc->epoch : -2;
}

bool lifecycle_running(const struct lifecycle *lc)
{
    return lc != NULL && lc->ran;
}

void lifecycle_controlled_shutdown(struct lifecycle *lc)
{
    if (lc->shutting)
        return;
    lc->shutting = true;
    lc->last_answer_ms = mono(lc); /* the silence counts from now */
    lc->shutdown_deadline =
        mono(lc) + props_get_int(lc->o.cfg->props, "broker.session.timeout.ms", 9000, NULL);
    /* A broker that never ran leads nothing: nothing to move. */
    if (lc->state != LC_REGISTERED || !lc->ran) {
        shutdown_done(lc, "this broker was not serving yet");
        return;
    }
    slog_info("main", "controlled shutdown: asking the controller to move this broker's "
                      "leaderships away");
    lc->next_ms = 0;
}

void lifecycle_stop(struct lifecycle *lc)
{
    if (lc == NULL || lc->state == LC_STOPPED)
        return;
    lc->state = LC_STOPPED;
    tclock_timer_close(&lc->timer);
}

void lifecycle_free(struct lifecycle *lc)
{
    if (lc == NULL)
        return;
    lifecycle_stop(lc);
    free(lc);
}
