/* SPDX-License-Identifier: Apache-2.0 */
/* tallyd: wires the modules together. Start-up order: configuration, data dir, metadata
 * quorum (and, on a voter, the controller that acts while this node leads it), registration
 * with the controller (lifecycle.c), then, once the metadata is loaded, the partitions, the
 * coordinators and the Kafka listener — which serves clients only once the controller has
 * unfenced this broker. SIGTERM first asks the controller to move this broker's leaderships
 * away (controlled shutdown) and hands the controller role over, then stops everything in
 * the reverse order; a second signal stops at once. */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <uv.h>

#include "admin/admin.h"
#include "authz/authz.h"
#include "base/err.h"
#include "base/slog.h"
#include "base/props.h"
#include "base/sysio.h"
#include "base/tclock.h"
#include "broker/broker.h"
#include "base/fault.h"
#include "config/config.h"
#include "controller/controller.h"
#include "exporter/exporter.h"
#include "group/group.h"
#include "meta/meta.h"
#include "net/net.h"
#include "net/tls.h"
#include "replica/replica.h"
#include "server.h"
#include "txn/txn.h"

struct tallyd {
    uv_loop_t *loop;
    struct tclock *clock; /* the one time service every module is given */
    struct server_config cfg;
    struct meta *meta;
    struct admin *admin;
    struct replica_mgr *replicas;
    struct broker *broker;
    struct group_coord *group;
    struct txn *txn;
    struct net_client *client;       /* to the controller and other brokers */
    struct net_client *fetch_client; /* the follower fetcher's own connections */
    unsigned bootstrap_next;         /* round-robin over controller.bootstrap.servers */
    struct net_server *net;          /* the inter-broker (first) listener: nets[0] */
    struct net_server *nets[SERVER_MAX_LISTENERS]; /* one per Kafka listener, as cfg.listeners */
    struct dispatch dispatch;
    uv_signal_t sigterm, sigint;
    struct tclock_timer timer;
    struct controller *controller; /* on a voter */
    struct exporter *exporter;     /* the /metrics listener; NULL when metrics.listener is unset */
    struct lifecycle *lc;
    bool started, stopping, shutdown_asked;
    bool modules; /* partitions and coordinators started (own registration applied) */
    bool image_checked;
    bool tls_watching; /* subscribed to metadata for keystore rotation (on_tls_config) */
    int64_t start_ms, last_wait_log_ms; /* monotonic */
    int exit_code;
};

static void shutdown_tallyd(struct tallyd *t, int code);

static void on_net_stopped(void *arg)
{
    (void)arg;
}

static void on_meta_stopped(void *arg)
{
    struct tallyd *t = arg;
    t->meta = NULL;
}

static void on_replicas_stopped(void *arg)
{
    struct tallyd *t = arg;
    t->replicas = NULL;
    /* The metadata quorum goes last: partitions read the image until they are closed. */
    if (t->meta)
        meta_stop(t->meta, on_meta_stopped, t);
}

static void on_client_stopped(void *arg)
{
    (void)arg;
}

static void on_txn_stopped(void *arg)
{
    struct tallyd *t = arg;
    t->txn = NULL;
    /* After txn: its requests still out are answered with ERR_SHUTDOWN, which frees it. */
    if (t->client)
        net_client_stop(t->client, on_client_stopped, t);
    t->client = NULL;
    if (t->fetch_client)
        net_client_stop(t->fetch_client, on_client_stopped, t);
    t->fetch_client = NULL;
    if (t->replicas)
        replica_mgr_stop(t->replicas, on_replicas_stopped, t);
    else if (t->meta)
        meta_stop(t->meta, on_meta_stopped, t);
}

/* The transaction coordinator goes after the group one, before the partitions both append
 * to and before the client its requests go through. */
static void on_group_stopped(void *arg)
{
    struct tallyd *t = arg;
    t->group = NULL;
    if (t->txn)
        txn_stop(t->txn, on_txn_stopped, t);
    else
        on_txn_stopped(t);
}

/* The group coordinator answers its waiters and goes before the partitions it appends to. */
static void on_broker_stopped(void *arg)
{
    struct tallyd *t = arg;
    t->broker = NULL;
    if (t->group)
        group_coord_stop(t->group, on_group_stopped, t);
    else
        on_group_stopped(t);
}

/* broker_options.txn_complete: a COMMIT/ABORT marker made durable on a __consumer_offsets
 * partition reaches the group coordinator (the broker does not know groups). */
/* broker_options.out_of_touch. */
static bool out_of_touch(void *arg)
{
    struct tallyd *t = arg;
    return t->lc != NULL && lifecycle_out_of_touch(t->lc);
}

static void on_group_txn_marker(void *arg, int32_t partition, int64_t producer_id, bool commit)
{
    struct tallyd *t = arg;
    if (t->group)
        group_txn_complete(t->group, partition, producer_id, commit);
}

/* group_ensure_topic_fn: the coordinators' topics are created through admin (the active
 * controller proposes them; any other broker asks the controller). */
static int ensure_internal_topic(void *arg, const char *name, int32_t partitions,
                                 int16_t replication_factor, int32_t n_configs,
                                 const char *const *keys, const char *const *values)
{
    struct tallyd *t = arg;
    if (t->admin == NULL)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    return admin_ensure_internal_topic(t->admin, name, partitions, replication_factor, n_configs,
                                       keys, values);
}

/* A listener name in lower case, as listener.name.<l>. prefixes write it. */
static const char *name_lower(const char *name, char *out, size_t len)
{
    size_t k;
    for (k = 0; name[k] && k + 1 < len; k++)
        out[k] = (char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
    out[k] = '\0';
    return out;
}

/* Whether authorizer.class.name names an authorizer (its value was checked at parse time),
 * logging the rules once when it does. */
static bool authz_wanted(struct tallyd *t)
{
    char why[256];
    bool on = false;
    if (authz_config(t->cfg.props, &on, why, sizeof why) != 0 || !on)
        return false;
    slog_info("main",
              "authorizer on (StandardAuthorizer rules): super.users '%s', "
              "allow.everyone.if.no.acl.found %s",
              props_get(t->cfg.props, "super.users") ? props_get(t->cfg.props, "super.users") : "",
              props_get_bool(t->cfg.props, "allow.everyone.if.no.acl.found", false, NULL)
                  ? "true"
                  : "false");
    return true;
}

static void on_running(void *arg);
static void on_tls_config(void *arg, const struct meta_record *recs, size_t n);
static int start_one_listener(struct tallyd *t, const struct server_listener *l,
                              struct net_server **out);

/* The Kafka listener, as soon as the metadata is loaded: until this broker serves, it answers
 * only ApiVersions and the broker-to-controller APIs (the controller's own registration comes
 * in through it). */
static void start_listener(struct tallyd *t)
{
    t->dispatch.controller = t->controller;
    t->dispatch.cfg = &t->cfg;
    t->dispatch.clock = t->clock; /* SASL session lifetimes (KIP-368) */
    for (size_t i = 0; i < t->cfg.n_listeners; i++) {
        /* SCRAM users are the metadata image's. */
        t->cfg.listeners[i].sasl.scram_lookup = dispatch_sasl_scram_lookup;
        t->cfg.listeners[i].sasl.scram_arg = t->meta;
    }
    for (size_t i = 0; i < t->cfg.n_listeners; i++) {
        const struct server_listener *l = &t->cfg.listeners[i];
        if (start_one_listener(t, l, &t->nets[i]) != 0) {
            t->nets[i] = NULL;
            shutdown_tallyd(t, 1);
            return;
        }
        slog_info("main",
                  "node %d: %s %s:%d listening (%s%s); serving clients once the controller "
                  "unfences this broker",
                  t->cfg.node_id, l->name, l->host, net_server_port(t->nets[i]),
                  (const char *const[]){"PLAINTEXT", "SSL", "SASL_PLAINTEXT",
                                        "SASL_SSL"}[l->security_protocol],
                  i == 0 ? ", inter-broker" : "");
    }
    t->net = t->nets[0];
    for (size_t i = 0; i < t->cfg.n_listeners; i++)
        exporter_add_listener(t->exporter, t->cfg.listeners[i].name, t->nets[i]);
    for (size_t i = 0; i < t->cfg.n_listeners; i++)
        if (t->cfg.listeners[i].tls && !t->tls_watching)
            t->tls_watching = meta_subscribe(t->meta, on_tls_config, t) == 0;
    /* Values altered while this broker was down are in the image already. */
    if (t->tls_watching)
        on_tls_config(t, NULL, 0);
}

/* server_dynamic_fn: this broker's AlterConfigs values. */
static const char *broker_dynamic(void *arg, const char *key)
{
    struct tallyd *t = arg;
    char node[16];
    snprintf(node, sizeof node, "%d", t->cfg.node_id);
    return meta_config_get(t->meta, RESOURCE_BROKER, node, key);
}

/* Keystore rotation (KIP-226): a listener.name.<l>.ssl.* config altered on this broker
 * rebuilds listener l's TLS context from its settings; new connections get it, open ones
 * keep theirs. A context that does not build keeps the old one, with a line naming the key.
 * With recs NULL, every TLS listener with dynamic ssl.* values is rebuilt (at start). */
static void on_tls_config(void *arg, const struct meta_record *recs, size_t n)
{
    struct tallyd *t = arg;
    char node[16], prefix[96];
    snprintf(node, sizeof node, "%d", t->cfg.node_id);
    for (size_t li = 0; li < t->cfg.n_listeners; li++) {
        struct server_listener *l = &t->cfg.listeners[li];
        if (l->tls == NULL || t->nets[li] == NULL)
            continue;
        char lower[64];
        snprintf(prefix, sizeof prefix, "listener.name.%s.ssl.",
                 name_lower(l->name, lower, sizeof lower));
        bool changed = false;
        if (recs == NULL) {
            int32_t nset;
            const struct meta_config_entry *e = meta_configs(t->meta, RESOURCE_BROKER, node, &nset);
            for (int32_t i = 0; i < nset && !changed; i++)
                changed = strncmp(e[i].key, prefix, strlen(prefix)) == 0;
        }
        for (size_t i = 0; recs && i < n && !changed; i++) {
            const struct meta_record *r = &recs[i];
            changed =
                r->type == META_REC_CONFIG && r->u.config.resource_type == RESOURCE_BROKER &&
                strcmp(r->u.config.resource_name ? r->u.config.resource_name : "", node) == 0 &&
                strncmp(r->u.config.key, prefix, strlen(prefix)) == 0;
        }
        if (!changed)
            continue;
        struct tls_ctx *ctx = NULL;
        char why[512];
        if (server_tls_ctx_build(t->cfg.props, l, broker_dynamic, t, &ctx, why, sizeof why) != 0) {
            slog_error("main",
                       "listener %s: the altered TLS settings do not apply (%s); new "
                       "connections keep the previous certificate",
                       l->name, why);
            continue;
        }
        net_server_set_tls(t->nets[li], ctx);
        tls_ctx_free(l->tls); /* open connections hold their own references */
        l->tls = ctx;
        slog_info("main", "listener %s: TLS settings reloaded; new connections use them", l->name);
    }
}

/* One Kafka listener: its connections carry the listener's name and whether they must
 * authenticate (net_session). */
static int start_one_listener(struct tallyd *t, const struct server_listener *l,
                              struct net_server **out)
{
    /* listener.name.<l>.connections.max.idle.ms over connections.max.idle.ms (Kafka's
     * scoping); on a TLS listener it also bounds the handshake. */
    char key[128], lower[64];
    snprintf(key, sizeof key, "listener.name.%s.connections.max.idle.ms",
             name_lower(l->name, lower, sizeof lower));
    int64_t idle_ms = props_get_int(t->cfg.props, "connections.max.idle.ms", 600000, NULL);
    idle_ms = props_get_int(t->cfg.props, key, idle_ms, NULL);
    struct net_options no = {
        .clock = t->clock,
        .host = l->host,
        .port = l->port,
        .listener = l->name,
        .sasl = l->security_protocol == SERVER_SASL_PLAINTEXT ||
                l->security_protocol == SERVER_SASL_SSL,
        .tls = l->tls,
        .max_frame = t->cfg.max_frame,
        .max_inflight = 64,
        .max_idle_ms = idle_ms,
        .send_buffer_bytes =
            (int)props_get_int(t->cfg.props, "socket.send.buffer.bytes", 102400, NULL),
        /* Not Kafka's 102400: on Linux a fixed SO_RCVBUF turns off receive-window
         * autotuning, which cost about 40 % of produce throughput on loopback
         * (bench/README.md, client_view). */
        .recv_buffer_bytes =
            (int)props_get_int(t->cfg.props, "socket.receive.buffer.bytes", -1, NULL),
        /* Error codes of every answer, for /metrics. */
        .on_response = t->exporter ? exporter_response : NULL,
        .on_response_arg = t->exporter,
        .on_sent = t->exporter ? exporter_sent : NULL,
        .on_sent_arg = t->exporter,
    };
    return net_server_start(t->loop, &no, dispatch_request, &t->dispatch, out);
}

/* The partitions and the coordinators, once this broker's own registration is in its image:
 * only then does the image fence what an earlier incarnation of this broker led (a restarted
 * broker must never act as the leader its old image still names: it could write records at
 * offsets its followers already hold from that epoch, which no divergence check catches). */
static void start_modules(struct tallyd *t)
{
    struct admin_options ao = {
        .node_id = t->cfg.node_id,
        .n_voters = (int32_t)t->cfg.n_voters,
        .config = t->cfg.props,
        /* What a non-controller forwards goes through the shared client. */
        .client = t->client,
        .clock = t->clock,
        .forward_timeout_ms = props_get_int(t->cfg.props, "request.timeout.ms", 30000, NULL),
    };
    struct replica_options ro = {
        .loop = t->loop,
        .clock = t->clock,
        .meta = t->meta,
        .config = t->cfg.props,
        .node_id = t->cfg.node_id,
        .log_dir = t->cfg.log_dir,
        .client = t->client,
        .fetch_client = t->fetch_client,
        .metrics = exporter_metrics(t->exporter),
    };
    if (replica_mgr_start(&ro, &t->replicas) != 0) {
        t->replicas = NULL;
        slog_error("main", "cannot open the partition logs in %s", t->cfg.log_dir);
        shutdown_tallyd(t, 1);
        return;
    }
    exporter_set_replicas(t->exporter, t->replicas);
    struct broker_options bo = {
        .loop = t->loop, .clock = t->clock, .replicas = t->replicas, .node_id = t->cfg.node_id};
    bo.metrics = exporter_metrics(t->exporter);
    /* Transactions, partition side: KIP-890 verification through the outbound client. */
    bo.meta = t->meta;
    bo.client = t->client;
    bo.txn_verify =
        props_get_bool(t->cfg.props, "transaction.partition.verification.enable", true, NULL);
    bo.txn_state_partitions =
        (int32_t)props_get_int(t->cfg.props, "transaction.state.log.num.partitions", 50, NULL);
    /* Self-healing of hanging transactions: checked as often as the coordinator checks for
     * timed-out ones, and only past the longest timeout any coordinator allows plus a margin
     * (the coordinator's own abort comes first). */
    bo.quota_window_num = (int)props_get_int(t->cfg.props, "quota.window.num", 11, NULL);
    bo.quota_window_ms = 1000 * props_get_int(t->cfg.props, "quota.window.size.seconds", 1, NULL);
    bo.hanging_check_ms = props_get_int(
        t->cfg.props, "transaction.abort.timed.out.transaction.cleanup.interval.ms", 10000, NULL);
    int64_t margin = BROKER_HANGING_MARGIN_MS;
#ifdef TALLY_TEST_HOOKS
    /* Test builds only: a shorter margin, so that the hanging-transaction process tests do
     * not wait a minute each (tests/integration/test_txn_e2e.py). */
    const char *test_margin = getenv("TALLY_TEST_HANGING_MARGIN_MS");
    if (test_margin != NULL && *test_margin != '\0')
        margin = atoll(test_margin);
#endif
    bo.hanging_after_ms =
        props_get_int(t->cfg.props, "transaction.max.timeout.ms", 900000, NULL) + margin;
    bo.txn_complete = on_group_txn_marker;
    bo.txn_complete_arg = t;
    bo.out_of_touch = out_of_touch;
    bo.out_of_touch_arg = t;
    t->admin = admin_new(t->meta, &ao);
    t->broker = broker_new(&bo);
    exporter_set_broker(t->exporter, t->broker);
    struct txn_options to = {
        .loop = t->loop,
        .clock = t->clock,
        .client = t->client,
        .replicas = t->replicas,
        .meta = t->meta,
        .config = t->cfg.props,
        .node_id = t->cfg.node_id,
        .metrics = exporter_metrics(t->exporter),
    };
    t->txn = txn_new(&to);
    exporter_set_txn(t->exporter, t->txn);
    struct group_coord_options go = {
        .loop = t->loop,
        .clock = t->clock,
        .replicas = t->replicas,
        .meta = t->meta,
        .config = t->cfg.props,
        .node_id = t->cfg.node_id,
        .ensure_topic = ensure_internal_topic,
        .ensure_arg = t,
    };
    if (t->admin && t->broker)
        t->group = group_coord_new(&go);
    exporter_set_groups(t->exporter, t->group);
    if (t->admin == NULL || t->broker == NULL || t->txn == NULL || t->group == NULL) {
        slog_error("main", "out of memory");
        shutdown_tallyd(t, 1);
        return;
    }
    t->dispatch.admin = t->admin;
    t->dispatch.broker = t->broker;
    t->dispatch.group = t->group;
    t->dispatch.txn = t->txn;
    t->modules = true;
    if (lifecycle_running(t->lc))
        on_running(t);
}

/* lifecycle: the controller unfenced this broker for the first time. */
static void on_running(void *arg)
{
    struct tallyd *t = arg;
    if (t->stopping || t->net == NULL || !t->modules || t->dispatch.serving)
        return;
    t->dispatch.serving = true;
    slog_info("main",
              "tallyd node %d started: cluster %s, %s %s:%d (advertised %s:%d), "
              "data in %s",
              t->cfg.node_id, t->cfg.cluster_id, t->cfg.listeners[0].name, t->cfg.host,
              net_server_port(t->net), t->cfg.adv_host, t->cfg.adv_port, t->cfg.log_dir);
}

static void on_fatal(void *arg)
{
    shutdown_tallyd(arg, 1);
}

/* net_client_resolve_cb: a broker's advertised listener from the metadata image; the
 * controller's likewise once the image names it, else (a broker that is not yet part of the
 * quorum) the entries of controller.bootstrap.servers in turn. Those entries stand for the
 * controller only: a broker the image does not know, or knows as fenced, has no address yet
 * (the caller backs off and asks again). Answering another broker's address for it would
 * leave a connection labelled with this id on the wrong broker for good: a follower's
 * fetcher then asks a broker that does not lead the partition, forever. */
static int resolve_node(void *arg, int32_t id, char *host, size_t host_len, int *port)
{
    struct tallyd *t = arg;
    const struct meta_broker *b;
    const char *list;

    bool controller = id == NET_CLIENT_CONTROLLER;
    if (controller)
        id = t->meta ? meta_controller_id(t->meta) : -1;
    /* This node's own controller: its own listener, as bound (its registration may not be
     * in the image yet: it is what is being sent; and the advertised address may be a proxy
     * or a name only clients use). */
    if (id == t->cfg.node_id && t->net != NULL) {
        const char *h = t->cfg.host;
        if (strcmp(h, "0.0.0.0") == 0)
            h = "127.0.0.1";
        else if (strcmp(h, "::") == 0)
            h = "::1";
        snprintf(host, host_len, "%s", h);
        *port = net_server_port(t->net);
        return 0;
    }
    b = id >= 0 && t->meta ? meta_broker_by_id(t->meta, id) : NULL;
    /* The controller is reached while fenced too (its broker may be catching up); another
     * broker only once unfenced. */
    if (b && (!b->fenced || controller)) {
        snprintf(host, host_len, "%s", b->host);
        *port = b->port;
        return 0;
    }
    if (!controller)
        return -1;
    list = props_get(t->cfg.props, "controller.bootstrap.servers");
    if (list == NULL || *list == '\0')
        return -1;
    /* host:port[,host:port...]; pick entry bootstrap_next modulo their count. */
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    size_t want = t->bootstrap_next++ % n;
    const char *e = list;
    for (size_t i = 0; i < want; i++)
        e = strchr(e, ',') + 1;
    size_t len = strcspn(e, ",");
    const char *colon = memrchr(e, ':', len);
    if (colon == NULL || (size_t)(colon - e) >= host_len)
        return -1;
    memcpy(host, e, (size_t)(colon - e));
    host[colon - e] = '\0';
    *port = atoi(colon + 1);
    return *port > 0 ? 0 : -1;
}

/* A one-voter quorum this node leads is ready within milliseconds unless its log is damaged
 * in a way libraft does not report (it then never elects itself). So a sole voter gives up
 * after STARTUP_LIMIT_MS with an error; a node that waits for other voters only says, every
 * STARTUP_LOG_MS, that it is waiting. */
#define STARTUP_LIMIT_MS 60000
#define STARTUP_LOG_MS 10000

static void watch_startup(struct tallyd *t)
{
    int64_t now = tclock_mono_ms(t->clock), waited = now - t->start_ms;
    bool sole_voter = t->cfg.n_voters == 1 && t->cfg.voters[0].id == t->cfg.node_id;

    if (sole_voter && waited >= STARTUP_LIMIT_MS) {
        slog_error("main",
                   "the metadata quorum in %s did not become ready within %d s although this "
                   "node is its only voter: the metadata log is probably damaged; refusing to "
                   "start (see docs/operations.md, \"Start-up refusals\")",
                   t->cfg.meta_dir, STARTUP_LIMIT_MS / 1000);
        shutdown_tallyd(t, 1);
        return;
    }
    if (waited >= STARTUP_LOG_MS && now - t->last_wait_log_ms >= STARTUP_LOG_MS) {
        t->last_wait_log_ms = now;
        slog_warn("main", "still waiting for the metadata quorum after %llu s (controller %d)",
                  (unsigned long long)(waited / 1000), meta_controller_id(t->meta));
    }
}

/* Once the metadata is loaded and before this broker registers: partition directories on
 * disk with no topic at all in the metadata mean the metadata log lost its contents (a
 * damaged or truncated segment); starting would delete them all as orphans. */
static int check_image(struct tallyd *t)
{
    size_t ntopics, nparts;
    meta_topics(t->meta, &ntopics);
    if (ntopics > 0)
        return 0;
    nparts = server_count_partition_dirs(&t->cfg);
    if (nparts == 0)
        return 0;
    slog_error("main",
               "the metadata log in %s holds no topics but %s holds %zu partition directories: "
               "the metadata is damaged or lost; refusing to start (restore the metadata "
               "directory, or move the partition directories away; see docs/operations.md)",
               t->cfg.meta_dir, t->cfg.log_dir, nparts);
    return 1;
}

/* Polls until the metadata is loaded, then opens the listener, and once this broker's
 * registration is in the image the partitions and the coordinators (registration and
 * heartbeats go on meanwhile in lifecycle.c). */
static void on_timer(struct tclock_timer *h)
{
    struct tallyd *t = h->data;

    const struct meta_broker *self;

    if (t->stopping || t->modules)
        return;
    if (!meta_ready(t->meta)) {
        watch_startup(t);
        return;
    }
    if (!t->image_checked) {
        if (check_image(t) != 0) {
            shutdown_tallyd(t, 1);
            return;
        }
        t->image_checked = true;
    }
    if (!t->started) {
        t->started = true;
        start_listener(t);
        return;
    }
    self = meta_broker_by_id(t->meta, t->cfg.node_id);
    if (self != NULL && self->epoch == lifecycle_epoch(t->lc))
        start_modules(t);
}

/* Controlled shutdown. The active controller first hands the controller role to another voter
 * (so that the moves of its own leaderships are decided, and the quorum goes on, without an
 * election timeout), then the broker asks the (new) controller to move its leaderships away,
 * then everything stops. */
static void on_transferred_last(void *arg, int err)
{
    struct tallyd *t = arg;
    (void)err;
    shutdown_tallyd(t, 0);
}

static void on_shutdown_done(void *arg)
{
    struct tallyd *t = arg;
    if (t->stopping)
        return;
    /* Still the controller (there was no one to hand it to, or it came back): one last try. */
    if (t->meta && meta_is_controller(t->meta) &&
        meta_transfer_leadership(t->meta, on_transferred_last, t) == 0)
        return;
    shutdown_tallyd(t, 0);
}

static void on_transferred_first(void *arg, int err)
{
    struct tallyd *t = arg;
    (void)err;
    if (!t->stopping)
        lifecycle_controlled_shutdown(t->lc);
}

static void on_signal(uv_signal_t *h, int signum)
{
    struct tallyd *t = h->data;
    slog_info("main", "received %s; shutting down", signum == SIGTERM ? "SIGTERM" : "SIGINT");
    if (t->shutdown_asked || t->lc == NULL) {
        shutdown_tallyd(t, 0); /* a second signal: at once */
        return;
    }
    t->shutdown_asked = true;
    if (!props_get_bool(t->cfg.props, "controlled.shutdown.enable", true, NULL)) {
        shutdown_tallyd(t, 0);
        return;
    }
    if (t->meta && meta_is_controller(t->meta) &&
        meta_transfer_leadership(t->meta, on_transferred_first, t) == 0)
        return;
    lifecycle_controlled_shutdown(t->lc);
}

static void shutdown_tallyd(struct tallyd *t, int code)
{
    if (t->stopping)
        return;
    t->stopping = true;
    t->exit_code = code;
    /* First: no scrape may read a module that is stopping. */
    exporter_stop(t->exporter);
    t->dispatch.exporter = NULL;
    lifecycle_stop(t->lc);
    admin_stop(t->admin); /* before the outbound client its forwards go through stops */
    controller_stop(t->controller);
    t->dispatch.serving = false;
    /* Clients first, then the data plane, then partitions (flushed, checkpointed, marked
     * clean), then the metadata quorum; each step starts the next when done. */
    if (t->tls_watching && t->meta)
        meta_unsubscribe(t->meta, on_tls_config, t);
    t->tls_watching = false;
    for (size_t i = 0; i < SERVER_MAX_LISTENERS; i++) {
        if (t->nets[i])
            net_server_stop(t->nets[i], on_net_stopped, t);
        t->nets[i] = NULL;
    }
    t->net = NULL;
    if (t->broker)
        broker_stop(t->broker, on_broker_stopped, t);
    else
        on_broker_stopped(t);
    tclock_timer_close(&t->timer);
    uv_close((uv_handle_t *)&t->sigterm, NULL);
    uv_close((uv_handle_t *)&t->sigint, NULL);
}

int main(int argc, char **argv)
{
    struct tallyd t;
    const char *lvl = getenv("TALLY_LOG_LEVEL");
    int rc;

    memset(&t, 0, sizeof t);
    fault_init();             /* test-only crash points (TALLY_TEST_FAULT), read once */
    sysio_mark_loop_thread(); /* test builds: count the loop's reads of cold pages */
    if (lvl && strcasecmp(lvl, "debug") == 0)
        slog_set_level(SLOG_DEBUG);
    rc = server_config_parse(argc, argv, &t.cfg);
    if (rc != 0) {
        server_config_free(&t.cfg);
        return rc == 1 ? 0 : 2;
    }
    if (server_format_dir(&t.cfg) != 0 || server_check_start(&t.cfg) != 0) {
        server_config_free(&t.cfg);
        return 1;
    }
    /* libuv's thread pool runs Tally's own fsyncs, checkpoint and snapshot writes and the
     * reads moved off the loop (ListOffsets, old-version fetches, the cleaner) — not
     * libraft's term and vote fsyncs, nor a Fetch's index reads and sendfile(), which run on
     * the loop (docs/operations.md, "Threads"); it starts with the first piece of work, at
     * its size then. Kafka's num.io.threads sets it
     * (default 8, not libuv's 4, so that several slow disks cannot hold every thread);
     * UV_THREADPOOL_SIZE in the environment wins, as libuv documents it. */
    if (getenv("UV_THREADPOOL_SIZE") == NULL) {
        char n[16];
        int64_t threads = props_get_int(t.cfg.props, "num.io.threads", 8, NULL);
        snprintf(n, sizeof n, "%lld",
                 (long long)(threads < 1      ? 1
                             : threads > 1024 ? 1024
                                              : threads));
        setenv("UV_THREADPOOL_SIZE", n, 1);
    }
    slog_info("main", "thread pool: %s threads", getenv("UV_THREADPOOL_SIZE"));
    /* A peer that vanishes mid-write must cost a connection, not the process. */
    signal(SIGPIPE, SIG_IGN);
    /* Request frames of up to a few MiB are allocated and freed at line rate. Above glibc's
     * default threshold each one would be a fresh mmap: page faults and zeroing of every
     * byte, which measurably raised the CPU cost per ingested GiB. Keep them on the heap. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);

    t.loop = uv_default_loop();
    t.clock = tclock_real_new(t.loop);
    if (t.clock == NULL) {
        slog_error("main", "out of memory");
        server_config_free(&t.cfg);
        return 1;
    }
    uv_signal_init(t.loop, &t.sigterm);
    uv_signal_init(t.loop, &t.sigint);
    t.sigterm.data = t.sigint.data = &t;
    uv_signal_start(&t.sigterm, on_signal, SIGTERM);
    uv_signal_start(&t.sigint, on_signal, SIGINT);
    tclock_timer_init(t.clock, &t.timer, on_timer, &t);

    /* Kafka's metadata.log.dir keeps the quorum's log apart from the data (default: the
     * first log dir). */
    struct meta_options mo = {
        .clock = t.clock,
        .node_id = t.cfg.node_id,
        .dir = t.cfg.meta_dir,
        .cluster_id = t.cfg.cluster_id,
        .n_voters = t.cfg.n_voters,
        .voters = t.cfg.voters,
        .listen_address = t.cfg.controller,
    };
    struct net_client_options co = {
        .clock = t.clock,
        .resolve = resolve_node,
        .resolve_arg = &t,
        .max_frame = t.cfg.max_frame,
        .connect_timeout_ms = t.cfg.connect_timeout_ms,
        .connect_timeout_max_ms = t.cfg.connect_timeout_max_ms,
        .tls = t.cfg.ib_tls,
        .tls_verify_host = t.cfg.ib_verify_host,
        .sasl_mechanism = t.cfg.ib_sasl_mech[0] ? t.cfg.ib_sasl_mech : NULL,
        .sasl_username = t.cfg.ib_sasl_user,
        .sasl_password = t.cfg.ib_sasl_pass,
    };
    char client_id[48];
    snprintf(client_id, sizeof client_id, ADMIN_BROKER_CLIENT_ID_PREFIX "%d", t.cfg.node_id);
    co.client_id = client_id;
    int crc = net_client_new(t.loop, &co, &t.client);
    if (crc == 0) {
        /* Replica fetches long-poll for replica.fetch.wait.max.ms: their own connections. */
        char fetch_id[48];
        snprintf(fetch_id, sizeof fetch_id, ADMIN_BROKER_CLIENT_ID_PREFIX "%d-fetcher",
                 t.cfg.node_id);
        co.client_id = fetch_id;
        crc = net_client_new(t.loop, &co, &t.fetch_client);
        if (crc != 0)
            t.fetch_client = NULL;
    } else
        t.client = NULL;
    /* console.authentication=plain: the PLAIN users of every SASL listener (the exporter
     * copies them). */
    size_t n_plain = 0;
    for (size_t i = 0; i < t.cfg.n_listeners; i++)
        if (sasl_config_enabled(&t.cfg.listeners[i].sasl, SASL_MECH_PLAIN))
            n_plain += t.cfg.listeners[i].sasl.n_users;
    const struct sasl_user **plain = calloc(n_plain + 1, sizeof *plain);
    n_plain = 0;
    for (size_t i = 0; plain && i < t.cfg.n_listeners; i++)
        if (sasl_config_enabled(&t.cfg.listeners[i].sasl, SASL_MECH_PLAIN))
            for (size_t k = 0; k < t.cfg.listeners[i].sasl.n_users; k++)
                plain[n_plain++] = &t.cfg.listeners[i].sasl.users[k];
    if (crc != 0 || plain == NULL) {
        slog_error("main", "out of memory");
        shutdown_tallyd(&t, 1);
    } else if (meta_start(t.loop, &mo, &t.meta) != 0) {
        t.meta = NULL;
        shutdown_tallyd(&t, 1);
    } else if (exporter_wanted(t.cfg.props) &&
               exporter_start(&(struct exporter_options){.loop = t.loop,
                                                         .config = t.cfg.props,
                                                         .meta = t.meta,
                                                         .node_id = t.cfg.node_id,
                                                         .create_topic = ensure_internal_topic,
                                                         .create_topic_arg = &t,
                                                         .plain_users = plain,
                                                         .n_plain_users = n_plain},
                              &t.exporter) != 0) {
        t.exporter = NULL;
        shutdown_tallyd(&t, 1);
    } else if (authz_wanted(&t) && (t.dispatch.authz = authz_new(t.meta, t.cfg.props)) == NULL) {
        slog_error("main", "out of memory");
        shutdown_tallyd(&t, 1);
    } else {
        t.dispatch.exporter = t.exporter;
        dispatch_sasl_metrics(&t.dispatch, exporter_metrics(t.exporter));
        struct controller_options cto = {
            .loop = t.loop,
            .clock = t.clock,
            .meta = t.meta,
            .config = t.cfg.props,
            .node_id = t.cfg.node_id,
            .cluster_id = t.cfg.cluster_id,
        };
        struct lifecycle_options lo = {
            .clock = t.clock,
            .meta = t.meta,
            .client = t.client,
            .cfg = &t.cfg,
            .on_running = on_running,
            .on_shutdown_done = on_shutdown_done,
            .on_fatal = on_fatal,
            .arg = &t,
            /* Read now: the replica manager removes the clean-shutdown marker when it opens
             * the logs, and that comes only after the registration this is for. */
            .previous_broker_epoch = replica_previous_broker_epoch(t.cfg.log_dir),
        };
        if (lo.previous_broker_epoch >= 0)
            slog_info("main",
                      "the logs in %s lost nothing since broker epoch %lld (a clean stop, or a "
                      "crash of this process alone): registering with it",
                      t.cfg.log_dir, (long long)lo.previous_broker_epoch);
        else
            slog_info("main",
                      "registering without a previous broker epoch: a first start, or the logs "
                      "in %s may have lost unflushed records (this broker leaves every eligible "
                      "leader replica set)",
                      t.cfg.log_dir);
        t.start_ms = tclock_mono_ms(t.clock);
        if ((!t.cfg.broker_only && controller_new(&cto, &t.controller) != 0) ||
            lifecycle_start(&lo, &t.lc) != 0 || tclock_timer_start(&t.timer, 0, 20) != 0) {
            slog_error("main", "out of memory");
            shutdown_tallyd(&t, 1);
        }
    }
    free(plain); /* the exporter copied what it needs */

    uv_run(t.loop, UV_RUN_DEFAULT);
    /* The quorum and the clients have stopped: nothing can call into these any more. */
    controller_free(t.controller);
    lifecycle_free(t.lc);
    exporter_free(t.exporter);
    authz_free(t.dispatch.authz);
    admin_free(t.admin);
    uv_loop_close(t.loop);
    tclock_free(t.clock);
    slog_info("main", "tallyd node %d stopped", t.cfg.node_id);
    server_config_free(&t.cfg);
    return t.exit_code;
}
