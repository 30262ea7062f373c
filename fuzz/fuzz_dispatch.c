/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for whole requests: a real broker runs in this process on a temporary
 * data dir (metadata quorum of one voter, partitions, admin, broker, txn, the Kafka
 * listener, all on one uv loop, started as tallyd starts them), and every input goes to it
 * as one request over a loopback connection, through net and dispatch into the handlers.
 *
 * Input layout (so that most inputs reach a handler rather than the decoder's errors):
 *   byte 0     low 7 bits: the API key; a key without a handler picks one by key % number of
 *              handlers. Bit 7 (with TALLY_FUZZ_AUTHZ): the session, below.
 *              0xff: raw mode, the rest is a whole frame after its size (header + body).
 *   byte 1     low 7 bits: the version, min + b % (max - min + 1); bit 7 keeps record
 *              batch CRCs as sent (by default they are fixed up, so that a mutated batch
 *              gets past the CRC to the checks behind it).
 *   byte 2..   the request body at that version, after a well-formed header.
 * A body that decodes is re-encoded after bounding what would only exhaust this machine
 * (partition counts, Fetch wait times; issue 7's item 5 is about those) and steering what
 * random bytes would never hit (Fetch and DeleteRecords offsets far past the log end, Fetch
 * topic ids); one that does not decode is sent as it is, and the broker must close the
 * connection.
 *
 * Every request is followed by an ApiVersions request on the same connection: responses
 * come in request order, so once that one is answered the fuzzed request is finished
 * (answered, finished without an answer as acks=0 is, or its connection was closed).
 * Checks beyond the sanitizers: every response carries an expected correlation id and
 * decodes to exactly its own length at the request's version, and every request is
 * finished within TALLY_FUZZ_STALL_MS (default 30000 ms) of loop time.
 *
 * The disk and descriptors stay bounded: small segments and retention, and every 64 inputs
 * all topics are deleted once there are too many partitions, files or bytes. The data dir
 * is removed at exit. TALLY_FUZZ_LOG=info shows the broker's log (default: errors only);
 * TALLY_FUZZ_TRACE=1 prints the start of every response (to replay a sequence of inputs:
 * fuzz_dispatch file1 file2 ...). TALLY_FUZZ_AUTHZ=1 turns the authorizer on
 * (StandardAuthorizer with allow.everyone.if.no.acl.found, so that requests are served until
 * the inputs' own CreateAcls name their resources), so inputs reach the authorization paths
 * and the ACL APIs past SECURITY_DISABLED, and opens a SASL_PLAINTEXT listener beside the
 * PLAINTEXT one (PLAIN user alice, SCRAM-SHA-256/512 users from the inputs' own
 * AlterUserScramCredentials). Bit 7 of byte 0 then picks the session: clear, the PLAINTEXT
 * listener, principal User:ANONYMOUS; set, the SASL listener: SaslHandshake and
 * SaslAuthenticate go on a fresh unauthenticated connection (the exchange from its start),
 * every other API on a connection authenticated first as User:alice (PLAIN), so the same
 * requests are authorized for an authenticated principal too. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uv.h>

#include "admin/admin.h"
#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "base/props.h"
#include "base/tclock.h"
#include "broker/broker.h"
#include "group/group.h"
#include "meta/meta.h"
#include "net/net.h"
#include "proto/proto.h"
#include "record/record.h"
#include "replica/replica.h"
#include "server.h"
#include "txn/txn.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PARTITIONS_PER_REQUEST 16 /* per topic created or grown */
#define MAX_FETCH_WAIT_MS 5
#define CLEANUP_EVERY 64 /* inputs between checks of the bounds below */
#define MAX_HOSTED_PARTITIONS 128
#define MAX_OPEN_FDS 1500
#define MAX_DATA_BYTES (150LL << 20)
#define SENTINEL_VERSION 3 /* ApiVersions */

/* ---- the in-process broker ---------------------------------------------------------------- */

static struct {
    uv_loop_t loop;
    struct tclock *clock;
    char dir[64];
    struct server_config cfg;
    bool have_cfg;
    struct meta *meta;
    struct admin *admin;
    struct replica_mgr *replicas;
    struct broker *broker;
    struct group_coord *group;
    struct txn *txn;
    struct net_client *client; /* txn's producer-id blocks, over loopback as in tallyd */
    struct net_server *net;
    struct net_server *net_sasl; /* TALLY_FUZZ_AUTHZ: the SASL_PLAINTEXT listener */
    struct dispatch dispatch;
    bool registering, registered, start_failed, meta_stopped;
    bool trace; /* TALLY_FUZZ_TRACE set: print the start of every response */
    uint64_t stall_ms;
} srv;

__attribute__((noreturn)) static void die(const char *what)
{
    fprintf(stderr, "fuzz_dispatch: %s\n", what);
    abort();
}

static int free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
    if (fd < 0)
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static long long data_bytes;
static int add_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path;
    (void)flag;
    (void)ftw;
    data_bytes += (long long)st->st_blocks * 512;
    return 0;
}

/* The only node is the controller: its own listener. */
static int resolve_self(void *arg, int32_t id, char *host, size_t host_len, int *port)
{
    (void)arg;
    (void)id;
    snprintf(host, host_len, "%s", srv.cfg.adv_host);
    *port = srv.net ? net_server_port(srv.net) : srv.cfg.adv_port;
    return 0;
}

/* As tallyd: the coordinators' topics are created through admin. */
static int ensure_internal_topic(void *arg, const char *name, int32_t partitions,
                                 int16_t replication_factor, int32_t n_configs,
                                 const char *const *keys, const char *const *values)
{
    (void)arg;
    if (srv.admin == NULL)
        return ERR_COORDINATOR_NOT_AVAILABLE;
    return admin_ensure_internal_topic(srv.admin, name, partitions, replication_factor, n_configs,
                                       keys, values);
}

static void start_listener(void)
{
    struct admin_options ao = {
        .node_id = srv.cfg.node_id, .n_voters = (int32_t)srv.cfg.n_voters, .config = srv.cfg.props};
    struct net_options no = {
        .clock = srv.clock,
        .host = srv.cfg.host,
        .port = srv.cfg.port,
        .max_frame = srv.cfg.max_frame,
        .max_inflight = 64,
        .max_idle_ms = props_get_int(srv.cfg.props, "connections.max.idle.ms", 600000, NULL),
        .send_buffer_bytes =
            (int)props_get_int(srv.cfg.props, "socket.send.buffer.bytes", 102400, NULL),
        .recv_buffer_bytes =
            (int)props_get_int(srv.cfg.props, "socket.receive.buffer.bytes", 102400, NULL),
    };
    struct replica_options ro = {
        .loop = &srv.loop,
        .clock = srv.clock,
        .meta = srv.meta,
        .config = srv.cfg.props,
        .node_id = srv.cfg.node_id,
        .log_dir = srv.cfg.log_dir,
    };
    struct broker_options bo = {
        .loop = &srv.loop, .clock = srv.clock, .replicas = NULL, .node_id = srv.cfg.node_id};

    if (replica_mgr_start(&ro, &srv.replicas) != 0) {
        srv.start_failed = true;
        return;
    }
    bo.replicas = srv.replicas;
    srv.admin = admin_new(srv.meta, &ao);
    srv.broker = broker_new(&bo);
    struct net_client_options co = {.client_id = "fuzz-broker", .resolve = resolve_self};
    co.clock = srv.clock;
    if (net_client_new(&srv.loop, &co, &srv.client) != 0) {
        srv.start_failed = true;
        return;
    }
    struct txn_options to = {
        .loop = &srv.loop,
        .clock = srv.clock,
        .client = srv.client,
        .replicas = srv.replicas,
        .meta = srv.meta,
        .config = srv.cfg.props,
        .node_id = srv.cfg.node_id,
    };
    srv.txn = txn_new(&to);
    struct group_coord_options go = {
        .loop = &srv.loop,
        .clock = srv.clock,
        .replicas = srv.replicas,
        .meta = srv.meta,
        .config = srv.cfg.props,
        .node_id = srv.cfg.node_id,
        .ensure_topic = ensure_internal_topic,
        .ensure_arg = NULL,
    };
    srv.group = group_coord_new(&go);
    if (srv.admin == NULL || srv.broker == NULL || srv.txn == NULL || srv.group == NULL) {
        srv.start_failed = true;
        return;
    }
    srv.dispatch.admin = srv.admin;
    srv.dispatch.broker = srv.broker;
    srv.dispatch.group = srv.group;
    srv.dispatch.txn = srv.txn;
    srv.dispatch.serving = true; /* registered directly: no controller, no lifecycle */
    if (getenv("TALLY_FUZZ_AUTHZ") != NULL &&
        (props_set(srv.cfg.props, "allow.everyone.if.no.acl.found", "true") != 0 ||
         (srv.dispatch.authz = authz_new(srv.meta, srv.cfg.props)) == NULL)) {
        srv.start_failed = true;
        return;
    }
    if (net_server_start(&srv.loop, &no, dispatch_request, &srv.dispatch, &srv.net) != 0) {
        srv.start_failed = true;
        return;
    }
    /* The SASL listener (start_broker configured it with the authorizer): as tallyd's
     * start_listener, SCRAM users are the metadata image's. */
    srv.dispatch.cfg = &srv.cfg;
    for (size_t i = 0; i < srv.cfg.n_listeners; i++) {
        struct server_listener *l = &srv.cfg.listeners[i];
        if (l->security_protocol != SERVER_SASL_PLAINTEXT)
            continue;
        l->sasl.scram_lookup = dispatch_sasl_scram_lookup;
        l->sasl.scram_arg = srv.meta;
        no.host = l->host;
        no.port = l->port;
        no.listener = l->name;
        no.sasl = true;
        if (net_server_start(&srv.loop, &no, dispatch_request, &srv.dispatch, &srv.net_sasl) != 0)
            srv.start_failed = true;
    }
}

static void on_registered(void *arg, int err)
{
    (void)arg;
    srv.registering = false;
    if (err != 0)
        return; /* the timer retries */
    srv.registered = true;
    start_listener();
}

/* As tallyd: once the quorum is ready, register this broker, then open the partitions and
 * start the listener. */
static void on_start_timer(uv_timer_t *h)
{
    (void)h;
    if (srv.registered || srv.registering || srv.start_failed || !meta_ready(srv.meta) ||
        !meta_is_controller(srv.meta))
        return;
    struct meta_record rec = {.type = META_REC_REGISTER_BROKER};
    rec.u.broker.id = srv.cfg.node_id;
    rec.u.broker.host = srv.cfg.adv_host;
    rec.u.broker.port = srv.cfg.adv_port;
    if (meta_propose(srv.meta, &rec, 1, on_registered, NULL) == 0)
        srv.registering = true;
}

static void on_stopped(void *arg)
{
    *(bool *)arg = true;
}

static void run_until(const bool *flag, uint64_t ms);

static void on_replicas_stopped(void *arg)
{
    (void)arg;
    srv.replicas = NULL;
    meta_stop(srv.meta, on_stopped, &srv.meta_stopped);
}

static void on_txn_stopped(void *arg)
{
    (void)arg;
    srv.txn = NULL;
    net_client_stop(srv.client, NULL, NULL);
    srv.client = NULL;
    replica_mgr_stop(srv.replicas, on_replicas_stopped, NULL);
}

static void on_group_stopped(void *arg)
{
    (void)arg;
    srv.group = NULL;
    txn_stop(srv.txn, on_txn_stopped, NULL);
}

static void on_broker_stopped(void *arg)
{
    (void)arg;
    srv.broker = NULL;
    if (srv.group)
        group_coord_stop(srv.group, on_group_stopped, NULL);
    else
        on_group_stopped(NULL);
}

/* Stops the broker in tallyd's order (listener, data plane, partitions, quorum), so that
 * shutdown runs under the sanitizers too, then removes the data dir. */
static void stop_broker(void)
{
    bool net_done = false;

    if (srv.net == NULL || srv.broker == NULL)
        goto out;
    net_server_stop(srv.net, on_stopped, &net_done);
    srv.net = NULL;
    if (srv.net_sasl) {
        net_server_stop(srv.net_sasl, NULL, NULL);
        srv.net_sasl = NULL;
    }
    broker_stop(srv.broker, on_broker_stopped, NULL);
    run_until(&srv.meta_stopped, 20000);
    run_until(&net_done, 5000);
    if (srv.meta_stopped) {
        admin_free(srv.admin);
        srv.admin = NULL;
        authz_free(srv.dispatch.authz);
        srv.dispatch.authz = NULL;
    }
out:
    if (srv.dir[0])
        nftw(srv.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (srv.have_cfg)
        server_config_free(&srv.cfg);
    srv.have_cfg = false;
}

static void tick(uv_timer_t *t)
{
    (void)t;
}

/* Runs the loop until *flag or `ms` of loop time pass (a ticking timer bounds each
 * UV_RUN_ONCE). */
static void run_until(const bool *flag, uint64_t ms)
{
    uv_timer_t t;
    uint64_t deadline;

    uv_update_time(&srv.loop);
    deadline = uv_now(&srv.loop) + ms;
    uv_timer_init(&srv.loop, &t);
    uv_timer_start(&t, tick, 5, 5);
    while (!*flag && uv_now(&srv.loop) < deadline)
        uv_run(&srv.loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&srv.loop, UV_RUN_NOWAIT);
}

/* A crash skips atexit, so its data dir stays for a look; the next start removes the data
 * dirs of fuzzers that are no longer running (named /tmp/tally-fuzz-<pid>-XXXXXX). */
static void remove_stale_dirs(void)
{
    DIR *d = opendir("/tmp");
    struct dirent *e;
    char path[300];
    int pid;

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (sscanf(e->d_name, "tally-fuzz-%d-", &pid) != 1 || pid <= 0 || kill(pid, 0) == 0 ||
            errno != ESRCH)
            continue;
        snprintf(path, sizeof path, "/tmp/%s", e->d_name);
        nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    closedir(d);
}

static bool started(void)
{
    return srv.net != NULL || srv.start_failed;
}

static void start_broker(void)
{
    char plain[64], ctrl[64], listeners[240], voters[96], dirs[96];
    int p1 = free_port(), p2 = free_port(), p3 = -1;
    bool authz = getenv("TALLY_FUZZ_AUTHZ") != NULL;
    const char *lvl = getenv("TALLY_FUZZ_LOG");
    const char *stall = getenv("TALLY_FUZZ_STALL_MS");
    uv_timer_t timer;

    slog_set_level(lvl && strcasecmp(lvl, "info") == 0    ? SLOG_INFO
                   : lvl && strcasecmp(lvl, "debug") == 0 ? SLOG_DEBUG
                                                          : SLOG_ERROR);
    srv.stall_ms = stall ? strtoull(stall, NULL, 10) : 30000;
    srv.trace = getenv("TALLY_FUZZ_TRACE") != NULL;
    signal(SIGPIPE, SIG_IGN);
    remove_stale_dirs();
    snprintf(srv.dir, sizeof srv.dir, "/tmp/tally-fuzz-%d-XXXXXX", (int)getpid());
    for (int i = 0; i < 10 && p2 == p1; i++)
        p2 = free_port();
    for (int i = 0; authz && i < 10 && (p3 < 0 || p3 == p1 || p3 == p2); i++)
        p3 = free_port();
    if (mkdtemp(srv.dir) == NULL || p1 < 0 || p2 < 0 || p1 == p2 ||
        (authz && (p3 < 0 || p3 == p1 || p3 == p2)))
        die("cannot make a temporary data dir or find free ports");
    atexit(stop_broker);
    snprintf(plain, sizeof plain, "127.0.0.1:%d", p1);
    snprintf(ctrl, sizeof ctrl, "127.0.0.1:%d", p2);
    if (authz)
        snprintf(listeners, sizeof listeners,
                 "listeners=PLAINTEXT://%s,SASL_PLAINTEXT://127.0.0.1:%d,CONTROLLER://%s", plain,
                 p3, ctrl);
    else
        snprintf(listeners, sizeof listeners, "listeners=PLAINTEXT://%s,CONTROLLER://%s", plain,
                 ctrl);
    snprintf(voters, sizeof voters, "controller.quorum.voters=1@%s", ctrl);
    snprintf(dirs, sizeof dirs, "log.dirs=%s", srv.dir);
    /* Small segments and retention keep the data dir small whatever the inputs produce. */
    char *argv[] = {"fuzz_dispatch", "--set", "node.id=1", "--set", listeners, "--set", voters,
                    "--set", dirs, "--set", "log.segment.bytes=1048576", "--set",
                    "log.retention.bytes=4194304", "--set", "log.retention.check.interval.ms=1000",
                    /* With the authorizer: the SASL listener (and no delay before closing a
                     * failed authentication, which would only slow the inputs down). */
                    "--set",
                    "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,"
                    "SCRAM-SHA-512",
                    "--set",
                    "listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common."
                    "security.plain.PlainLoginModule required user_alice=\"alice-secret\";",
                    "--set", "connection.failed.authentication.delay.ms=0", NULL};
    int n_args = (int)(sizeof argv / sizeof *argv) - 1 - (authz ? 0 : 6);
    if (!authz)
        argv[n_args] = NULL;
    if (server_config_parse(n_args, argv, &srv.cfg) != 0)
        die("server_config_parse failed");
    srv.have_cfg = true;
    if (server_format_dir(&srv.cfg) != 0 || server_check_start(&srv.cfg) != 0)
        die("server_format_dir or server_check_start refused the data dir");
    if (uv_loop_init(&srv.loop) != 0 || (srv.clock = tclock_real_new(&srv.loop)) == NULL)
        die("uv_loop_init failed");
    struct meta_options mo = {
        .clock = srv.clock,
        .node_id = srv.cfg.node_id,
        .dir = srv.cfg.meta_dir,
        .cluster_id = srv.cfg.cluster_id,
        .n_voters = srv.cfg.n_voters,
        .voters = srv.cfg.voters,
        .listen_address = srv.cfg.controller,
    };
    if (meta_start(&srv.loop, &mo, &srv.meta) != 0)
        die("meta_start failed");
    uv_timer_init(&srv.loop, &timer);
    uv_timer_start(&timer, on_start_timer, 0, 20);
    uv_update_time(&srv.loop);
    uint64_t deadline = uv_now(&srv.loop) + 30000;
    while (!started() && uv_now(&srv.loop) < deadline)
        uv_run(&srv.loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&timer, NULL);
    uv_run(&srv.loop, UV_RUN_NOWAIT);
    if (srv.net == NULL)
        die("the broker did not start within 30 s");
}

/* ---- the client connection ----------------------------------------------------------------- */

static struct {
    uv_tcp_t *tcp; /* NULL when not connected */
    bool connected, closed;
    uint8_t *in;
    size_t in_len, in_cap;
    /* The request being waited for. */
    const struct proto_api *api;
    int16_t version;
    int32_t cid, sentinel_cid;
    bool check_response, done;
    /* The session (TALLY_FUZZ_AUTHZ): on the SASL listener, and authenticated there. */
    bool on_sasl, authed;
} cli;

static void on_client_closed(uv_handle_t *h)
{
    free(h);
}

static void client_close(void)
{
    if (cli.tcp && !uv_is_closing((uv_handle_t *)cli.tcp))
        uv_close((uv_handle_t *)cli.tcp, on_client_closed);
    cli.tcp = NULL;
    cli.connected = false;
    cli.closed = true;
    cli.authed = false;
    cli.in_len = 0;
}

static void on_connect(uv_connect_t *c, int status)
{
    uv_tcp_t *tcp = (uv_tcp_t *)c->handle;
    free(c);
    if (tcp != cli.tcp)
        return;
    if (status != 0)
        die("cannot connect to the in-process broker");
    cli.connected = true;
}

static size_t get_uvarint(const uint8_t *p, size_t len, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < len && i < 10; i++) {
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if ((p[i] & 0x80) == 0) {
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

/* The response to the fuzzed request must decode at its version, to exactly its length. */
static void check_response(const uint8_t *p, size_t len)
{
    const struct proto_api *api = cli.api;
    bool flexible = proto_api_flexible(api, cli.version);
    size_t pos = 4, consumed = 0;
    struct arena *a;
    void *out;

    /* Response header v1 (flexible, except ApiVersions) ends with tagged fields. */
    if (flexible && api->key != PROTO_API_ApiVersions) {
        uint64_t n, tag, sz;
        size_t k = get_uvarint(p + pos, len - pos, &n);
        if (k == 0)
            die("response header: bad tagged field count");
        pos += k;
        while (n--) {
            k = get_uvarint(p + pos, len - pos, &tag);
            if (k == 0)
                die("response header: bad tag");
            pos += k;
            k = get_uvarint(p + pos, len - pos, &sz);
            if (k == 0 || sz > len - pos - k)
                die("response header: bad tagged field size");
            pos += k + sz;
        }
    }
    a = arena_new(64 << 20);
    if (a == NULL || (out = arena_alloc(a, api->response->size)) == NULL)
        die("out of memory");
    int rc =
        proto_decode(api->response, cli.version, flexible, p + pos, len - pos, &consumed, out, a);
    if (rc != 0 || consumed != len - pos) {
        fprintf(stderr, "fuzz_dispatch: %s v%d response of %zu bytes: decode %s, %zu consumed\n",
                api->name, cli.version, len, err_name(rc), consumed);
        abort();
    }
    arena_free(a);
}

static void on_frame(const uint8_t *p, size_t len)
{
    int32_t cid;
    if (len < 4)
        die("response frame shorter than a correlation id");
    cid = (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
    if (cid == cli.sentinel_cid) {
        cli.done = true;
    } else if (cid == cli.cid) {
        if (cli.check_response)
            check_response(p, len);
        if (srv.trace) {
            fprintf(stderr, "fuzz_dispatch: %s v%d answered %zu bytes:",
                    cli.api ? cli.api->name : "raw request", cli.version, len);
            for (size_t i = 4; i < len && i < 68; i++)
                fprintf(stderr, " %02x", p[i]);
            fprintf(stderr, "\n");
        }
    } else {
        fprintf(stderr, "fuzz_dispatch: response with correlation id %d, expected %d or %d\n", cid,
                cli.cid, cli.sentinel_cid);
        abort();
    }
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)h;
    if (cli.in_cap - cli.in_len < 65536) {
        size_t cap = cli.in_cap ? cli.in_cap * 2 : 1 << 20;
        while (cap - cli.in_len < 65536)
            cap *= 2;
        uint8_t *n = realloc(cli.in, cap);
        if (n == NULL)
            die("out of memory");
        cli.in = n;
        cli.in_cap = cap;
    }
    (void)hint;
    buf->base = (char *)cli.in + cli.in_len;
    buf->len = cli.in_cap - cli.in_len;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    size_t pos = 0;
    (void)buf;
    if ((uv_tcp_t *)s != cli.tcp)
        return;
    if (n < 0) {
        client_close();
        return;
    }
    cli.in_len += (size_t)n;
    while (cli.in_len - pos >= 4) {
        const uint8_t *q = cli.in + pos;
        size_t flen = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
        if (cli.in_len - pos - 4 < flen)
            break;
        on_frame(q + 4, flen);
        pos += 4 + flen;
    }
    memmove(cli.in, cli.in + pos, cli.in_len - pos);
    cli.in_len -= pos;
}

static void client_connect(void)
{
    struct sockaddr_in sa;
    uv_connect_t *c = malloc(sizeof *c);

    cli.tcp = malloc(sizeof *cli.tcp);
    if (c == NULL || cli.tcp == NULL)
        die("out of memory");
    uv_tcp_init(&srv.loop, cli.tcp);
    uv_tcp_nodelay(cli.tcp, 1);
    uv_ip4_addr("127.0.0.1", net_server_port(cli.on_sasl ? srv.net_sasl : srv.net), &sa);
    cli.connected = cli.closed = false;
    cli.in_len = 0;
    if (uv_tcp_connect(c, cli.tcp, (struct sockaddr *)&sa, on_connect) != 0)
        die("uv_tcp_connect failed");
    run_until(&cli.connected, 10000);
    if (!cli.connected)
        die("no connection to the in-process broker within 10 s");
    uv_read_start((uv_stream_t *)cli.tcp, on_alloc, on_read);
}

struct write_req {
    uv_write_t w;
    uint8_t *frame;
};

static void on_written(uv_write_t *w, int status)
{
    struct write_req *wr = (struct write_req *)w;
    (void)status; /* a failed write shows as the connection closing */
    free(wr->frame);
    free(wr);
}

/* Queues a whole frame (size prefix included) on the connection; takes ownership of it. */
static void client_send(uint8_t *frame, size_t len)
{
    struct write_req *wr = malloc(sizeof *wr);
    uv_buf_t b = uv_buf_init((char *)frame, (unsigned)len);
    if (wr == NULL)
        die("out of memory");
    wr->frame = frame;
    if (uv_write(&wr->w, (uv_stream_t *)cli.tcp, &b, 1, on_written) != 0) {
        free(frame);
        free(wr);
        client_close();
    }
}

/* Sends one frame then the sentinel, and runs the loop until the sentinel is answered or
 * the connection closes. */
static void exchange(uint8_t *frame, size_t len, const struct proto_api *api, int16_t version,
                     int32_t cid, bool check)
{
    static const struct ApiVersionsRequest sentinel = {"fuzz", "1"};
    uint8_t *sframe;
    size_t slen;
    bool stop = false;

    if (cli.tcp == NULL)
        client_connect();
    cli.api = api;
    cli.version = version;
    cli.cid = cid;
    cli.sentinel_cid = cid ^ 0x40000000;
    cli.check_response = check;
    cli.done = false;
    if (proto_encode_request(proto_api_find(PROTO_API_ApiVersions), SENTINEL_VERSION,
                             cli.sentinel_cid, "fuzz", &sentinel, &sframe, &slen) != 0)
        die("out of memory");
    client_send(frame, len);
    if (cli.tcp)
        client_send(sframe, slen);
    else
        free(sframe);

    uv_timer_t t;
    uv_update_time(&srv.loop);
    uint64_t deadline = uv_now(&srv.loop) + srv.stall_ms;
    uv_timer_init(&srv.loop, &t);
    uv_timer_start(&t, tick, 5, 5);
    while (!cli.done && !cli.closed && !stop) {
        uv_run(&srv.loop, UV_RUN_ONCE);
        stop = uv_now(&srv.loop) >= deadline;
    }
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&srv.loop, UV_RUN_NOWAIT);
    if (!cli.done && !cli.closed && api == NULL) {
        /* A raw request is not bounded (a Fetch may wait as long as it asks): give up. */
        client_close();
    } else if (!cli.done && !cli.closed) {
        fprintf(stderr, "fuzz_dispatch: %s v%d not finished after %llu ms\n",
                api ? api->name : "raw request", version, (unsigned long long)srv.stall_ms);
        abort();
    }
}

/* ---- shaping the input into a request ------------------------------------------------------ */

static const int16_t handled_keys[] = {
    PROTO_API_Produce,
    PROTO_API_Fetch,
    PROTO_API_ListOffsets,
    PROTO_API_Metadata,
    PROTO_API_ApiVersions,
    PROTO_API_CreateTopics,
    PROTO_API_DeleteTopics,
    PROTO_API_DeleteRecords,
    PROTO_API_InitProducerId,
    PROTO_API_DescribeConfigs,
    PROTO_API_AlterConfigs,
    PROTO_API_CreatePartitions,
    PROTO_API_IncrementalAlterConfigs,
    PROTO_API_DescribeCluster,
    PROTO_API_DescribeProducers,
    PROTO_API_DescribeLogDirs,
    /* Security (issue 17): reachable past SECURITY_DISABLED with TALLY_FUZZ_AUTHZ. */
    PROTO_API_SaslHandshake,
    PROTO_API_SaslAuthenticate,
    PROTO_API_CreateAcls,
    PROTO_API_DescribeAcls,
    PROTO_API_DeleteAcls,
    PROTO_API_DescribeClientQuotas,
    PROTO_API_AlterClientQuotas,
    PROTO_API_DescribeUserScramCredentials,
    PROTO_API_AlterUserScramCredentials,
    /* KIP-590: a forwarded request unwrapped by the controller (this broker is one). */
    PROTO_API_Envelope,
};
#define N_HANDLED (sizeof handled_keys / sizeof *handled_keys)

static const struct proto_api *pick_api(uint8_t b)
{
    for (size_t i = 0; i < N_HANDLED; i++)
        if (handled_keys[i] == b)
            return proto_api_find(b);
    return proto_api_find(handled_keys[b % N_HANDLED]);
}

static int32_t bound_count(int32_t n)
{
    return n > MAX_PARTITIONS_PER_REQUEST ? 1 + n % MAX_PARTITIONS_PER_REQUEST : n;
}

/* Copies every RECORDS field's batches into the arena with their CRCs fixed up. */
static void fix_crcs(struct proto_bytes *r, struct arena *a)
{
    uint8_t *copy;
    size_t pos = 0;

    if (r->data == NULL || r->len < RECORD_BATCH_HEADER)
        return;
    copy = arena_alloc(a, (size_t)r->len);
    if (copy == NULL)
        return;
    memcpy(copy, r->data, (size_t)r->len);
    while ((size_t)r->len - pos >= RECORD_BATCH_HEADER) {
        uint8_t *b = copy + pos;
        size_t size =
            (size_t)((uint32_t)b[8] << 24 | (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11]) +
            RECORD_BATCH_OVERHEAD;
        if (size < RECORD_BATCH_HEADER || size > (size_t)r->len - pos)
            break;
        uint32_t crc = record_crc32c(0, b + 21, size - 21);
        b[17] = (uint8_t)(crc >> 24);
        b[18] = (uint8_t)(crc >> 16);
        b[19] = (uint8_t)(crc >> 8);
        b[20] = (uint8_t)crc;
        pos += size;
    }
    r->data = copy;
}

/* Random topic ids never name a topic: half of them (first byte < 0x80) are mapped onto an
 * existing topic's. Returns the topic the Fetch names (by name before v13), or NULL. */
static const struct meta_topic *known_topic(const char *name, struct proto_uuid *id)
{
    size_t n;
    const struct meta_topic *const *all = meta_topics(srv.meta, &n);
    const struct meta_topic *t;

    if (name && *name)
        return meta_topic_by_name(srv.meta, name);
    t = meta_topic_by_id(srv.meta, id->b);
    if (t == NULL && n > 0 && id->b[0] < 0x80) {
        t = all[id->b[1] % n];
        memcpy(id->b, t->id, 16);
    }
    return t;
}

/* An offset far past a partition's log end (random ones are) is moved into
 * [log start, log end], so that reads and deletions find records; the log end, one past it
 * and negative offsets are kept, so that the out-of-range paths stay reachable. */
static int64_t near_log(const char *topic, int32_t index, int64_t offset)
{
    struct partition *p = replica_partition(srv.replicas, topic, index);
    int64_t start, end;

    if (p == NULL)
        return offset;
    start = partition_log_start_offset(p);
    end = partition_log_end_offset(p);
    if (offset <= end + 1 || end < start)
        return offset;
    return start + (int64_t)((uint64_t)offset % (uint64_t)(end - start + 1));
}

/* num.partitions only matters for topics created automatically; bound it like a count. */
static void bound_config(const char *key, char **value)
{
    if (key && *value && strcmp(key, "num.partitions") == 0 &&
        strtol(*value, NULL, 10) > MAX_PARTITIONS_PER_REQUEST)
        *value = "4";
}

/* Bounds what would only exhaust the machine (not the broker's logic), and fixes CRCs. */
static void shape(int16_t key, void *body, bool fix, struct arena *a)
{
    switch (key) {
    case PROTO_API_Produce: {
        struct ProduceRequest *r = body;
        if (r->TimeoutMs > 1000)
            r->TimeoutMs = 1000;
        for (int32_t i = 0; fix && i < r->TopicData.n; i++)
            for (int32_t j = 0; j < r->TopicData.v[i].PartitionData.n; j++)
                fix_crcs(&r->TopicData.v[i].PartitionData.v[j].Records, a);
        break;
    }
    case PROTO_API_Fetch: {
        struct FetchRequest *r = body;
        if (r->MaxWaitMs > MAX_FETCH_WAIT_MS || r->MaxWaitMs < 0)
            r->MaxWaitMs = (int32_t)((uint32_t)r->MaxWaitMs % (MAX_FETCH_WAIT_MS + 1));
        for (int32_t i = 0; i < r->Topics.n; i++) {
            struct FetchTopic *t = &r->Topics.v[i];
            const struct meta_topic *mt = known_topic(t->Topic, &t->TopicId);
            for (int32_t j = 0; mt && j < t->Partitions.n; j++)
                t->Partitions.v[j].FetchOffset = near_log(mt->name, t->Partitions.v[j].Partition,
                                                          t->Partitions.v[j].FetchOffset);
        }
        break;
    }
    case PROTO_API_DeleteRecords: {
        struct DeleteRecordsRequest *r = body;
        for (int32_t i = 0; i < r->Topics.n; i++)
            for (int32_t j = 0; r->Topics.v[i].Name && j < r->Topics.v[i].Partitions.n; j++)
                r->Topics.v[i].Partitions.v[j].Offset =
                    near_log(r->Topics.v[i].Name, r->Topics.v[i].Partitions.v[j].PartitionIndex,
                             r->Topics.v[i].Partitions.v[j].Offset);
        break;
    }
    case PROTO_API_CreateTopics: {
        struct CreateTopicsRequest *r = body;
        for (int32_t i = 0; i < r->Topics.n; i++) {
            struct CreatableTopic *t = &r->Topics.v[i];
            t->NumPartitions = bound_count(t->NumPartitions);
            if (t->Assignments.n > MAX_PARTITIONS_PER_REQUEST)
                t->Assignments.n = MAX_PARTITIONS_PER_REQUEST;
            for (int32_t j = 0; j < t->Assignments.n; j++)
                t->Assignments.v[j].PartitionIndex =
                    bound_count(t->Assignments.v[j].PartitionIndex);
            for (int32_t j = 0; j < t->Configs.n; j++)
                bound_config(t->Configs.v[j].Name, &t->Configs.v[j].Value);
        }
        break;
    }
    case PROTO_API_CreatePartitions: {
        struct CreatePartitionsRequest *r = body;
        for (int32_t i = 0; i < r->Topics.n; i++) {
            r->Topics.v[i].Count = bound_count(r->Topics.v[i].Count);
            if (r->Topics.v[i].Assignments.n > MAX_PARTITIONS_PER_REQUEST)
                r->Topics.v[i].Assignments.n = MAX_PARTITIONS_PER_REQUEST;
        }
        break;
    }
    case PROTO_API_AlterConfigs: {
        struct AlterConfigsRequest *r = body;
        for (int32_t i = 0; i < r->Resources.n; i++)
            for (int32_t j = 0; j < r->Resources.v[i].Configs.n; j++)
                bound_config(r->Resources.v[i].Configs.v[j].Name,
                             &r->Resources.v[i].Configs.v[j].Value);
        break;
    }
    case PROTO_API_IncrementalAlterConfigs: {
        struct IncrementalAlterConfigsRequest *r = body;
        for (int32_t i = 0; i < r->Resources.n; i++)
            for (int32_t j = 0; j < r->Resources.v[i].Configs.n; j++)
                bound_config(r->Resources.v[i].Configs.v[j].Name,
                             &r->Resources.v[i].Configs.v[j].Value);
        break;
    }
    }
}

/* A request header (v2 when flexible, else v1) followed by `body` as it is: a frame with its
 * size prefix, malloc()ed. */
static uint8_t *raw_frame(const struct proto_api *api, int16_t version, int32_t cid,
                          const uint8_t *body, size_t body_len, size_t *len)
{
    static const char id[] = "fuzz";
    bool flexible = proto_api_flexible(api, version);
    size_t hdr = 2 + 2 + 4 + 2 + (sizeof id - 1) + (flexible ? 1 : 0);
    size_t n = 4 + hdr + body_len;
    uint8_t *f = malloc(n), *p;
    if (f == NULL)
        die("out of memory");
    p = f;
    *p++ = (uint8_t)((n - 4) >> 24);
    *p++ = (uint8_t)((n - 4) >> 16);
    *p++ = (uint8_t)((n - 4) >> 8);
    *p++ = (uint8_t)(n - 4);
    *p++ = (uint8_t)(api->key >> 8);
    *p++ = (uint8_t)api->key;
    *p++ = (uint8_t)(version >> 8);
    *p++ = (uint8_t)version;
    *p++ = (uint8_t)((uint32_t)cid >> 24);
    *p++ = (uint8_t)((uint32_t)cid >> 16);
    *p++ = (uint8_t)((uint32_t)cid >> 8);
    *p++ = (uint8_t)cid;
    *p++ = 0;
    *p++ = (uint8_t)(sizeof id - 1);
    memcpy(p, id, sizeof id - 1);
    p += sizeof id - 1;
    if (flexible)
        *p++ = 0; /* no tagged fields */
    if (body_len)
        memcpy(p, body, body_len);
    *len = n;
    return f;
}

/* ---- keeping the disk and descriptors bounded ---------------------------------------------- */

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d == NULL)
        return 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static int32_t next_cid = 1;

/* Deletes every topic through a DeleteTopics request when the broker holds too much. */
static void bound_resources(void)
{
    size_t n;
    const struct meta_topic *const *topics = meta_topics(srv.meta, &n);
    const struct proto_api *api = proto_api_find(PROTO_API_DeleteTopics);
    struct DeleteTopicsRequest req = {.TimeoutMs = 30000};
    uint8_t *frame;
    size_t len;

    data_bytes = 0;
    nftw(srv.dir, add_entry, 16, FTW_PHYS);
    if (n == 0 || (replica_count(srv.replicas) <= MAX_HOSTED_PARTITIONS &&
                   count_fds() <= MAX_OPEN_FDS && data_bytes <= MAX_DATA_BYTES))
        return;
    req.TopicNames.v = malloc(n * sizeof *req.TopicNames.v);
    if (req.TopicNames.v == NULL)
        die("out of memory");
    for (size_t i = 0; i < n; i++)
        req.TopicNames.v[i] = topics[i]->name;
    req.TopicNames.n = (int32_t)n;
    if (proto_encode_request(api, 5, next_cid, "fuzz-cleanup", &req, &frame, &len) != 0)
        die("out of memory");
    free(req.TopicNames.v);
    exchange(frame, len, api, 5, next_cid++ & 0x3fffffff, true);
}

/* ---- sessions ------------------------------------------------------------------------------ */

/* One request of the harness's own on the current connection, answered before it returns. */
static void own_request(int16_t key, int16_t version, const void *req)
{
    const struct proto_api *api = proto_api_find(key);
    int32_t cid = next_cid++ & 0x3fffffff;
    uint8_t *frame;
    size_t len;
    if (proto_encode_request(api, version, cid, "fuzz", req, &frame, &len) != 0)
        die("out of memory");
    exchange(frame, len, api, version, cid, true);
}

/* Puts the connection in the session the input asks for (see the top of this file): the
 * PLAINTEXT listener, a fresh unauthenticated SASL connection for the SASL APIs, or one
 * authenticated as User:alice for every other API. */
static void use_session(bool sasl, int16_t key)
{
    bool sasl_api = key == PROTO_API_SaslHandshake || key == PROTO_API_SaslAuthenticate;
    bool want_authed = sasl && !sasl_api;

    sasl = sasl && srv.net_sasl != NULL;
    if (cli.tcp && cli.on_sasl == sasl && (!sasl || (want_authed && cli.authed)))
        return;
    client_close();
    cli.on_sasl = sasl;
    client_connect();
    if (!sasl || !want_authed)
        return;
    static const char token[] = "\0alice\0alice-secret";
    struct SaslHandshakeRequest hs = {(char *)"PLAIN"};
    struct SaslAuthenticateRequest au = {{(const uint8_t *)token, (int32_t)sizeof token - 1, NULL}};
    own_request(PROTO_API_SaslHandshake, 1, &hs);
    if (cli.tcp)
        own_request(PROTO_API_SaslAuthenticate, 2, &au);
    if (cli.tcp == NULL)
        die("the SASL listener refused User:alice's PLAIN login");
    cli.authed = true;
}

/* ---- libFuzzer ----------------------------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    start_broker();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned inputs;
    const struct proto_api *api;
    int16_t version;
    int32_t cid = next_cid++ & 0x3fffffff;
    struct arena *a;
    void *body = NULL;
    uint8_t *frame;
    size_t len;

    if (size < 2)
        return 0;
    if (data[0] == 0xff) {
        /* Raw mode: the frame as given, no response check (it may not even name an API). */
        len = size - 1 + 4;
        frame = malloc(len);
        if (frame == NULL)
            die("out of memory");
        frame[0] = (uint8_t)((size - 1) >> 24);
        frame[1] = (uint8_t)((size - 1) >> 16);
        frame[2] = (uint8_t)((size - 1) >> 8);
        frame[3] = (uint8_t)(size - 1);
        memcpy(frame + 4, data + 1, size - 1);
        /* Its correlation id is whatever the input says; accept it as the one expected. */
        if (size - 1 >= 8)
            cid = (int32_t)((uint32_t)data[5] << 24 | (uint32_t)data[6] << 16 |
                            (uint32_t)data[7] << 8 | data[8]);
        use_session(false, -1);
        exchange(frame, len, NULL, 0, cid, false);
        goto out;
    }

    api = pick_api(data[0] & 0x7f);
    use_session((data[0] & 0x80) != 0, api->key);
    version =
        (int16_t)(api->min_version + (data[1] & 0x7f) % (api->max_version - api->min_version + 1));
    a = arena_new(1 << 20);
    if (a == NULL)
        die("out of memory");
    if (proto_decode_request(api, version, data + 2, size - 2, &body, a) == 0) {
        shape(api->key, body, (data[1] & 0x80) == 0, a);
        if (proto_encode_request(api, version, cid, "fuzz", body, &frame, &len) != 0)
            die("out of memory");
    } else {
        frame = raw_frame(api, version, cid, data + 2, size - 2, &len);
    }
    exchange(frame, len, api, version, cid, true);
    arena_free(a);
out:
    if (++inputs % CLEANUP_EVERY == 0)
        bound_resources();
    return 0;
}
