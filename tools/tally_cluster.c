/* SPDX-License-Identifier: Apache-2.0 */
/* tally cluster: `describe` (the brokers with their racks and fencing, the controller, the
 * metadata quorum's voters and observers with their lag) and `new-id` (a cluster id for a new
 * cluster's cluster.id). Debian's librdkafka 2.0.2 has no admin call for DescribeQuorum nor
 * for DescribeCluster v2, so both go over the wire client (tally.h: tally_wire_call) with
 * Tally's own codec; librdkafka supplies the metadata (brokers, controller). */
#include "tally.h"

#include "base/arena.h"
#include "base/err.h"
#include "cluster_view.h"
#include "proto/proto.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define ARENA_BYTES (16 << 20)
#define METADATA_TOPIC "__cluster_metadata"

static const char cluster_usage[] =
    "usage: tally cluster COMMAND\n"
    "\n"
    "  describe\n"
    "      The cluster id, the controller, every registered broker (id, address, rack,\n"
    "      fenced or not: DescribeCluster v2, KIP-1073) and the metadata quorum\n"
    "      (DescribeQuorum, asked of the controller): its leader, epoch and high\n"
    "      watermark, and each voter and observer (non-voting broker) with its log end\n"
    "      offset, its lag behind the leader in metadata log entries, when it last\n"
    "      answered the leader and when it was last caught up. Broker epochs and the\n"
    "      controlled-shutdown state are in no Kafka client API, so they are not shown:\n"
    "      the controller logs them (docs/cluster.md).\n"
    "  new-id\n"
    "      Print a new random cluster id (Kafka's form: 22 characters of base64url), to\n"
    "      set as cluster.id on every node of a new cluster.\n";

static int64_t wall_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

const struct rd_kafka_metadata_broker *tally_md_broker(const struct rd_kafka_metadata *md,
                                                       int32_t id)
{
    for (int i = 0; i < md->broker_cnt; i++)
        if (md->brokers[i].id == id)
            return &md->brokers[i];
    return NULL;
}

int16_t tally_api_version(const struct tally_ctx *ctx, const char *host, int port, int16_t api_key,
                          int16_t want)
{
    struct arena *a = arena_new(1 << 20);
    struct ApiVersionsRequest rq = {0};
    void *out = NULL;
    int16_t got = -1;

    if (a == NULL)
        return -1;
    if (tally_wire_call(ctx, host, port, PROTO_API_ApiVersions, 0, &rq, a, &out, "ApiVersions") ==
        TALLY_OK) {
        const struct ApiVersionsResponse *r = out;
        for (int32_t i = 0; r->ErrorCode == 0 && i < r->ApiKeys.n; i++) {
            const struct ApiVersion *v = &r->ApiKeys.v[i];
            if (v->ApiKey == api_key && v->MinVersion <= want)
                got = v->MaxVersion < want ? v->MaxVersion : want;
        }
    }
    arena_free(a);
    return got;
}

/* ---- describe --------------------------------------------------------------------------- */

struct broker_row {
    int32_t id;
    const char *host;
    int32_t port;
    const char *rack;
    int fenced; /* 1, 0, or -1 when unknown (no DescribeCluster v2) */
};

static int cmp_row(const void *x, const void *y)
{
    const struct broker_row *a = x, *b = y;
    return (a->id > b->id) - (a->id < b->id);
}

/* The registered brokers, fenced ones included, from DescribeCluster v2 at `b`; *n = -1 when
 * that broker does not answer it (then the caller falls back on Metadata's unfenced ones). */
static struct broker_row *brokers_at(const struct tally_ctx *ctx,
                                     const struct rd_kafka_metadata_broker *b, struct arena *a,
                                     int *n)
{
    struct DescribeClusterRequest rq = {.EndpointType = 1, .IncludeFencedBrokers = true};
    void *out = NULL;
    char what[300];

    *n = -1;
    if (tally_api_version(ctx, b->host, b->port, PROTO_API_DescribeCluster, 2) != 2)
        return NULL;
    snprintf(what, sizeof what, "DescribeCluster to broker %d (%s:%d)", (int)b->id, b->host,
             b->port);
    if (tally_wire_call(ctx, b->host, b->port, PROTO_API_DescribeCluster, 2, &rq, a, &out, what) !=
        TALLY_OK)
        return NULL;
    const struct DescribeClusterResponse *r = out;
    if (r->ErrorCode != 0) {
        tally_fail("%s: %s", what, rd_kafka_err2name((rd_kafka_resp_err_t)r->ErrorCode));
        return NULL;
    }
    struct broker_row *rows = arena_alloc(a, ((size_t)r->Brokers.n + 1) * sizeof *rows);
    if (rows == NULL)
        return NULL;
    for (int32_t i = 0; i < r->Brokers.n; i++) {
        const struct DescribeClusterBroker *x = &r->Brokers.v[i];
        rows[i] = (struct broker_row){x->BrokerId, x->Host, x->Port, x->Rack, x->IsFenced};
    }
    *n = r->Brokers.n;
    return rows;
}

/* DescribeQuorum of the metadata log at broker `b`: 0 and *out, or TALLY_FAIL (printed). */
static int quorum_at(const struct tally_ctx *ctx, const char *host, int port, int32_t id,
                     struct arena *a, const struct DescribeQuorumResponsePartitionData **out)
{
    struct DescribeQuorumRequestPartitionData part = {.PartitionIndex = 0};
    struct DescribeQuorumRequestTopicData topic = {.TopicName = METADATA_TOPIC,
                                                   .Partitions = {&part, 1}};
    struct DescribeQuorumRequest rq = {.Topics = {&topic, 1}};
    void *resp = NULL;
    char what[300];

    snprintf(what, sizeof what, "DescribeQuorum to broker %d (%s:%d)", (int)id, host, port);
    int16_t v = tally_api_version(ctx, host, port, PROTO_API_DescribeQuorum, 1);
    if (v < 0)
        return tally_fail("%s: the broker does not serve DescribeQuorum", what);
    if (tally_wire_call(ctx, host, port, PROTO_API_DescribeQuorum, v, &rq, a, &resp, what) !=
        TALLY_OK)
        return TALLY_FAIL;
    const struct DescribeQuorumResponse *r = resp;
    if (r->ErrorCode != 0)
        return tally_fail("%s: %s", what, rd_kafka_err2name((rd_kafka_resp_err_t)r->ErrorCode));
    for (int32_t i = 0; i < r->Topics.n; i++) {
        const struct DescribeQuorumResponseTopicData *t = &r->Topics.v[i];
        if (t->TopicName == NULL || strcmp(t->TopicName, METADATA_TOPIC) != 0)
            continue;
        for (int32_t j = 0; j < t->Partitions.n; j++)
            if (t->Partitions.v[j].PartitionIndex == 0) {
                *out = &t->Partitions.v[j];
                return TALLY_OK;
            }
    }
    return tally_fail("%s: no answer for %s-0", what, METADATA_TOPIC);
}

/* An offset or a count, "-" when unknown (negative). */
static void format_offset(int64_t v, char *buf, size_t cap)
{
    if (v < 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%" PRId64, v);
}

static void print_replicas(const char *role, const struct DescribeQuorumReplicaState *r, int32_t n,
                           int32_t leader, int64_t leader_end, int64_t now)
{
    for (int32_t i = 0; i < n; i++) {
        char end[24], lag[24], fetch[48], caught[48];
        int64_t l = tally_quorum_lag(leader_end, r[i].LogEndOffset);
        format_offset(r[i].LogEndOffset, end, sizeof end);
        format_offset(l, lag, sizeof lag);
        tally_format_ago(now, r[i].LastFetchTimestamp, fetch, sizeof fetch);
        tally_format_ago(now, r[i].LastCaughtUpTimestamp, caught, sizeof caught);
        printf("  %-6d %-9s %-10s %-8s %-16s %s\n", (int)r[i].ReplicaId,
               r[i].ReplicaId == leader ? "Leader" : role, end, lag, fetch, caught);
    }
}

static int64_t leader_end_of(const struct DescribeQuorumResponsePartitionData *p)
{
    for (int32_t i = 0; i < p->CurrentVoters.n; i++)
        if (p->CurrentVoters.v[i].ReplicaId == p->LeaderId)
            return p->CurrentVoters.v[i].LogEndOffset;
    return -1;
}

static int cluster_describe(const struct tally_ctx *ctx)
{
    int rc = TALLY_FAIL;
    struct arena *a = NULL;
    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;

    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    a = arena_new(ARENA_BYTES);
    if (a == NULL) {
        tally_fail("out of memory");
        goto out_md;
    }
    /* The metadata just fetched carries both ids, so these return at once. */
    char *cluster_id = rd_kafka_clusterid(rk, ctx->timeout_ms);
    int32_t controller = rd_kafka_controllerid(rk, ctx->timeout_ms);
    const struct rd_kafka_metadata_broker *cb = tally_md_broker(md, controller);

    printf("Cluster ID: %s\n", cluster_id != NULL ? cluster_id : "(none)");
    if (controller >= 0)
        printf("Controller: %d\n", (int)controller);
    else
        printf("Controller: (none)\n");
    if (cluster_id != NULL)
        rd_kafka_mem_free(rk, cluster_id);

    /* The brokers as the controller's image has them; any other broker's would do. */
    int n = -1;
    struct broker_row *rows = NULL;
    if (cb != NULL)
        rows = brokers_at(ctx, cb, a, &n);
    for (int i = 0; n < 0 && i < md->broker_cnt; i++)
        if (&md->brokers[i] != cb)
            rows = brokers_at(ctx, &md->brokers[i], a, &n);
    const char *source = "DescribeCluster v2";
    if (n < 0) {
        source = "Metadata: unfenced brokers only, no broker answered DescribeCluster v2";
        rows = arena_alloc(a, ((size_t)md->broker_cnt + 1) * sizeof *rows);
        if (rows == NULL) {
            tally_fail("out of memory");
            goto out_md;
        }
        for (n = 0; n < md->broker_cnt; n++)
            rows[n] = (struct broker_row){md->brokers[n].id, md->brokers[n].host,
                                          md->brokers[n].port, NULL, -1};
    }
    qsort(rows, (size_t)n, sizeof *rows, cmp_row);
    printf("Brokers: %d (%s)\n", n, source);
    printf("  %-6s %-24s %-10s %s\n", "ID", "ADDRESS", "RACK", "STATE");
    for (int i = 0; i < n; i++) {
        char addr[300];
        snprintf(addr, sizeof addr, "%s:%d", rows[i].host ? rows[i].host : "?", (int)rows[i].port);
        printf("  %-6d %-24s %-10s %s%s\n", (int)rows[i].id, addr,
               rows[i].rack != NULL ? rows[i].rack : "-",
               rows[i].fenced < 0 ? "-"
               : rows[i].fenced   ? "fenced"
                                  : "unfenced",
               rows[i].id == controller ? " (controller)" : "");
    }

    /* The quorum's state lives on its leader: ask the controller, then whichever node it
     * names as the leader. */
    const struct DescribeQuorumResponsePartitionData *p = NULL;
    if (cb == NULL) {
        tally_fail("no controller in the metadata: cannot describe the metadata quorum");
        goto out_md;
    }
    if (quorum_at(ctx, cb->host, cb->port, cb->id, a, &p) != TALLY_OK)
        goto out_md;
    if (p->ErrorCode == ERR_NOT_LEADER_OR_FOLLOWER && p->LeaderId >= 0 && p->LeaderId != cb->id) {
        const struct rd_kafka_metadata_broker *lb = tally_md_broker(md, p->LeaderId);
        if (lb != NULL && quorum_at(ctx, lb->host, lb->port, lb->id, a, &p) != TALLY_OK)
            goto out_md;
    }
    if (p->ErrorCode != 0) {
        tally_fail("DescribeQuorum: %s (leader %d)",
                   rd_kafka_err2name((rd_kafka_resp_err_t)p->ErrorCode), (int)p->LeaderId);
        goto out_md;
    }
    int64_t leader_end = leader_end_of(p), max_lag = 0;
    for (int32_t i = 0; i < p->CurrentVoters.n; i++) {
        int64_t l = tally_quorum_lag(leader_end, p->CurrentVoters.v[i].LogEndOffset);
        if (l > max_lag)
            max_lag = l;
    }
    printf("Metadata quorum (%s-0):\n", METADATA_TOPIC);
    printf("  Leader: %d\tLeaderEpoch: %d\tHighWatermark: %" PRId64 "\tMaxFollowerLag: %" PRId64
           "\n",
           (int)p->LeaderId, (int)p->LeaderEpoch, p->HighWatermark, max_lag);
    printf("  %-6s %-9s %-10s %-8s %-16s %s\n", "NODE", "STATUS", "LOG-END", "LAG", "LAST-FETCH",
           "LAST-CAUGHT-UP");
    int64_t now = wall_ms();
    print_replicas("Follower", p->CurrentVoters.v, p->CurrentVoters.n, p->LeaderId, leader_end,
                   now);
    print_replicas("Observer", p->Observers.v, p->Observers.n, p->LeaderId, leader_end, now);
    rc = TALLY_OK;

out_md:
    rd_kafka_metadata_destroy(md);
out:
    arena_free(a);
    rd_kafka_destroy(rk);
    return rc;
}

static int cluster_new_id(void)
{
    char id[TALLY_CLUSTER_ID_LEN + 1];
    if (tally_cluster_id_new(id) != 0)
        return tally_fail("no randomness available for a cluster id");
    printf("%s\n", id);
    return TALLY_OK;
}

int tally_cluster_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc < 2 || tally_is_help(argv[1])) {
        fputs(cluster_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? TALLY_USAGE : TALLY_OK;
    }
    bool describe = strcmp(argv[1], "describe") == 0;
    if (!describe && strcmp(argv[1], "new-id") != 0)
        return tally_usage_error("unknown cluster command '%s'", argv[1]);
    for (int i = 2; i < argc; i++) {
        if (tally_is_help(argv[i])) {
            fputs(cluster_usage, stdout);
            return TALLY_OK;
        }
        return tally_usage_error("unexpected argument '%s'", argv[i]);
    }
    return describe ? cluster_describe(ctx) : cluster_new_id();
}
