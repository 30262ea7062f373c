/* SPDX-License-Identifier: Apache-2.0 */
/* tally partitions elect-leaders: ElectLeaders (API 43), as kafka-leader-election.sh (and
 * `partitions reassign`, tally_reassign.c, dispatched from here). Debian's
 * librdkafka 2.0.2 has no admin call for it, so the request goes to the controller over the
 * wire client (tally.h: tally_wire_call) with Tally's own codec; each partition's result is
 * printed with the leader the controller's Metadata shows afterwards. */
#include "tally.h"

#include "base/arena.h"
#include "base/err.h"
#include "cluster_view.h"
#include "proto/proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARENA_BYTES (64 << 20)
/* A controller that moved between the metadata look-up and the request answers NOT_CONTROLLER:
 * look it up again, this many times at most. */
#define CONTROLLER_TRIES 5
#define CONTROLLER_RETRY_MS 500

static const char partitions_usage[] =
    "usage: tally partitions COMMAND ...\n"
    "\n"
    "  elect-leaders [--preferred | --unclean] (--topic T [--partition P] | --all)\n"
    "      Ask the controller to elect leaders (ElectLeaders), as kafka-leader-election.sh.\n"
    "      --preferred (the default): give each partition back to its preferred replica,\n"
    "      the first of its replicas, when that one is in the ISR and not fenced.\n"
    "      --unclean: give a partition that has no leader one from outside the ISR when\n"
    "      no in-sync replica is left; whatever the old ISR had beyond the new leader's\n"
    "      log is lost. --topic T: every partition of T, or only P; --all: every\n"
    "      partition of the cluster. Prints each partition's result and leader; exits 1\n"
    "      when an election failed (ELECTION_NOT_NEEDED, a valid leader already leads,\n"
    "      is not a failure).\n"
    "  reassign (--generate | --execute | --verify | --cancel | --list) ...\n"
    "      Move replicas between brokers, as kafka-reassign-partitions.sh\n"
    "      (tally partitions reassign --help).\n";

static const char elect_usage[] = "usage: tally partitions elect-leaders [--preferred | --unclean] "
                                  "(--topic T [--partition P] | --all)\n";

struct elect_args {
    bool unclean, all;
    const char *topic;
    int partition; /* -1: every partition of topic */
};

static bool parse_partition(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 1000000)
        return false;
    *out = (int)v;
    return true;
}

static int parse_elect(int argc, char **argv, struct elect_args *a)
{
    bool preferred = false;

    *a = (struct elect_args){.partition = -1};
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--preferred") == 0) {
            preferred = true;
        } else if (strcmp(s, "--unclean") == 0) {
            a->unclean = true;
        } else if (strcmp(s, "--all") == 0) {
            a->all = true;
        } else if (strcmp(s, "--topic") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0')
                return tally_usage_error("--topic needs a topic name");
            a->topic = argv[++i];
        } else if (strcmp(s, "--partition") == 0) {
            if (i + 1 >= argc || !parse_partition(argv[i + 1], &a->partition))
                return tally_usage_error("--partition needs a partition number >= 0");
            i++;
        } else {
            return tally_usage_error("unexpected argument '%s'", s);
        }
    }
    if (preferred && a->unclean)
        return tally_usage_error("give one of --preferred and --unclean");
    if (a->all == (a->topic != NULL))
        return tally_usage_error("elect-leaders needs exactly one of --topic and --all");
    if (a->partition >= 0 && a->topic == NULL)
        return tally_usage_error("--partition needs --topic");
    return TALLY_OK;
}

struct result_row {
    const char *topic;
    int32_t partition;
    int16_t code;
    const char *message;
};

static int cmp_result(const void *x, const void *y)
{
    const struct result_row *a = x, *b = y;
    int c = strcmp(a->topic, b->topic);
    return c != 0 ? c : (a->partition > b->partition) - (a->partition < b->partition);
}

/* The leader of topic-partition in the controller's Metadata answer wm, or -1. */
static int32_t leader_in(const struct MetadataResponse *wm, const char *topic, int32_t partition)
{
    for (int32_t i = 0; wm != NULL && i < wm->Topics.n; i++) {
        const struct MetadataResponseTopic *t = &wm->Topics.v[i];
        if (t->Name == NULL || strcmp(t->Name, topic) != 0)
            continue;
        for (int32_t j = 0; j < t->Partitions.n; j++)
            if (t->Partitions.v[j].PartitionIndex == partition)
                return t->Partitions.v[j].LeaderId;
    }
    return -1;
}

/* One ElectLeaders round trip to the controller named by rk's metadata. TALLY_OK with *out
 * (possibly carrying a top-level error), or TALLY_FAIL (printed). *md gets the metadata used
 * (the caller destroys it). */
static int elect_at_controller(rd_kafka_t *rk, const struct tally_ctx *ctx,
                               const struct ElectLeadersRequest *rq, struct arena *a,
                               const struct rd_kafka_metadata **md, int32_t *controller,
                               const struct ElectLeadersResponse **out)
{
    char what[300];
    void *resp = NULL;

    *controller = rd_kafka_controllerid(rk, ctx->timeout_ms);
    const struct rd_kafka_metadata_broker *cb = tally_md_broker(*md, *controller);
    if (cb == NULL)
        return tally_fail("no controller in the metadata");
    int16_t v = tally_api_version(ctx, cb->host, cb->port, PROTO_API_ElectLeaders, 2);
    if (v < 0 || (rq->ElectionType != 0 && v < 1))
        return tally_fail("the controller (broker %d) does not serve ElectLeaders%s", (int)cb->id,
                          v < 0 ? "" : " with an election type (v1+)");
    snprintf(what, sizeof what, "ElectLeaders to the controller, broker %d (%s:%d)", (int)cb->id,
             cb->host, cb->port);
    if (tally_wire_call(ctx, cb->host, cb->port, PROTO_API_ElectLeaders, v, rq, a, &resp, what) !=
        TALLY_OK)
        return TALLY_FAIL;
    *out = resp;
    return TALLY_OK;
}

static int elect_leaders(const struct tally_ctx *ctx, const struct elect_args *args)
{
    int rc = TALLY_FAIL;
    struct arena *a = NULL;
    struct ElectLeadersTopicPartitions tp = {0};
    struct ElectLeadersRequest rq = {
        .ElectionType = args->unclean ? 1 : 0,
        .TopicPartitions = {NULL, -1}, /* null: every partition */
        .TimeoutMs = ctx->timeout_ms,
    };
    const struct ElectLeadersResponse *rs = NULL;
    int32_t controller = -1;
    struct result_row *rows = NULL;
    size_t n_rows = 0;

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    /* All topics: asking for just this one would auto-create it on brokers that do that. */
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    a = arena_new(ARENA_BYTES);
    if (a == NULL) {
        tally_fail("out of memory");
        goto out_md;
    }
    if (args->topic != NULL) {
        const struct rd_kafka_metadata_topic *mt = NULL;
        for (int i = 0; i < md->topic_cnt; i++)
            if (strcmp(md->topics[i].topic, args->topic) == 0)
                mt = &md->topics[i];
        if (mt == NULL || mt->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
            tally_fail("topic '%s' does not exist", args->topic);
            goto out_md;
        }
        if (args->partition >= mt->partition_cnt) {
            tally_fail("topic '%s' has no partition %d (it has %d)", args->topic, args->partition,
                       mt->partition_cnt);
            goto out_md;
        }
        int32_t np = args->partition >= 0 ? 1 : mt->partition_cnt;
        int32_t *parts = arena_alloc(a, ((size_t)np + 1) * sizeof *parts);
        if (parts == NULL) {
            tally_fail("out of memory");
            goto out_md;
        }
        for (int32_t i = 0; i < np; i++)
            parts[i] = args->partition >= 0 ? args->partition : i;
        tp.Topic = (char *)args->topic;
        tp.Partitions.v = parts;
        tp.Partitions.n = np;
        rq.TopicPartitions.v = &tp;
        rq.TopicPartitions.n = 1;
    }

    for (int tries = 1;; tries++) {
        if (elect_at_controller(rk, ctx, &rq, a, &md, &controller, &rs) != TALLY_OK)
            goto out_md;
        if (rs->ErrorCode != ERR_NOT_CONTROLLER || tries == CONTROLLER_TRIES)
            break;
        /* The controller moved: look it up again. */
        usleep(CONTROLLER_RETRY_MS * 1000);
        rd_kafka_metadata_destroy(md);
        md = tally_metadata(rk, ctx, NULL);
        if (md == NULL)
            goto out;
    }
    if (rs->ErrorCode != 0) {
        tally_fail("ElectLeaders: %s", rd_kafka_err2name((rd_kafka_resp_err_t)rs->ErrorCode));
        goto out_md;
    }

    for (int32_t i = 0; i < rs->ReplicaElectionResults.n; i++)
        n_rows += (size_t)(rs->ReplicaElectionResults.v[i].PartitionResult.n > 0
                               ? rs->ReplicaElectionResults.v[i].PartitionResult.n
                               : 0);
    rows = calloc(n_rows + 1, sizeof *rows);
    if (rows == NULL) {
        tally_fail("out of memory");
        goto out_md;
    }
    n_rows = 0;
    for (int32_t i = 0; i < rs->ReplicaElectionResults.n; i++) {
        const struct ReplicaElectionResult *t = &rs->ReplicaElectionResults.v[i];
        for (int32_t j = 0; j < t->PartitionResult.n; j++)
            rows[n_rows++] = (struct result_row){
                t->Topic ? t->Topic : "?", t->PartitionResult.v[j].PartitionId,
                t->PartitionResult.v[j].ErrorCode, t->PartitionResult.v[j].ErrorMessage};
    }
    qsort(rows, n_rows, sizeof *rows, cmp_result);

    /* The controller answers once the new leaders are in its image: its Metadata shows them. */
    const struct MetadataResponse *wm = NULL;
    if (tally_wire_metadata(ctx, md, controller, a, &wm) != TALLY_OK)
        wm = NULL;
    bool failed = false;
    for (size_t i = 0; i < n_rows; i++) {
        enum tally_elect_outcome oc = tally_elect_outcome(rows[i].code);
        int32_t leader = leader_in(wm, rows[i].topic, rows[i].partition);
        printf("Topic: %s\tPartition: %d\tResult: %s", rows[i].topic, (int)rows[i].partition,
               oc == TALLY_ELECTED ? (args->unclean ? "elected (unclean)" : "elected (preferred)")
                                   : rd_kafka_err2name((rd_kafka_resp_err_t)rows[i].code));
        if (rows[i].message != NULL && rows[i].message[0] != '\0')
            printf(" (%s)", rows[i].message);
        if (leader >= 0)
            printf("\tLeader: %d\n", (int)leader);
        else
            printf("\tLeader: none\n");
        failed = failed || oc == TALLY_ELECTION_FAILED;
    }
    rc = failed ? TALLY_FAIL : TALLY_OK;

out_md:
    free(rows);
    if (md != NULL)
        rd_kafka_metadata_destroy(md);
out:
    arena_free(a);
    rd_kafka_destroy(rk);
    return rc;
}

int tally_partitions_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc < 2 || tally_is_help(argv[1])) {
        fputs(partitions_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? TALLY_USAGE : TALLY_OK;
    }
    if (strcmp(argv[1], "reassign") == 0)
        return tally_reassign_main(ctx, argc, argv);
    if (strcmp(argv[1], "elect-leaders") != 0)
        return tally_usage_error("unknown partitions command '%s'", argv[1]);
    for (int i = 2; i < argc; i++)
        if (tally_is_help(argv[i])) {
            fputs(elect_usage, stdout);
            return TALLY_OK;
        }
    struct elect_args args;
    int rc = parse_elect(argc, argv, &args);
    if (rc != TALLY_OK)
        return rc;
    return elect_leaders(ctx, &args);
}
