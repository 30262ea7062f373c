/* SPDX-License-Identifier: Apache-2.0 */
/* tally topics: create, list, describe, delete and add-partitions, in the spirit
 * of kafka-topics.sh, on librdkafka's admin API and metadata. */
#include "tally.h"

#include "base/arena.h"
#include "cluster_view.h"
#include "proto/proto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char topics_usage[] =
    "usage: tally topics COMMAND ...\n"
    "\n"
    "  create NAME [--partitions N] [--replication-factor N] [--config K=V ...]\n"
    "      Create a topic. Without --partitions / --replication-factor the broker's\n"
    "      num.partitions / default.replication.factor apply.\n"
    "  list\n"
    "      Print every topic name, one a line, sorted.\n"
    "  describe [NAME ...] [--under-replicated-partitions] [--unavailable-partitions]\n"
    "      Print partitions, leader, leader epoch, replicas, ISR, offline replicas (on\n"
    "      fenced or unknown brokers), the adding and removing replicas of a reassignment\n"
    "      in progress, status (ok, under-replicated: fewer in-sync replicas than\n"
    "      replicas, those being added not counted; offline: no leader, or one that is not\n"
    "      a live broker),\n"
    "      high watermark (HW), last stable offset (LSO; below the HW while a transaction\n"
    "      is open, then the transaction holding it back is named) and non-default configs\n"
    "      of the named topics (all topics when none is named), as the controller's\n"
    "      Metadata answer has them. With --under-replicated-partitions or\n"
    "      --unavailable-partitions only the partitions of that status are printed (either\n"
    "      status when both are given), without the topic lines, as kafka-topics.sh does.\n"
    "  delete NAME ...\n"
    "      Delete topics.\n"
    "  add-partitions NAME --partitions N\n"
    "      Grow a topic to N partitions in total.\n";

static const char create_usage[] =
    "usage: tally topics create NAME [--partitions N] [--replication-factor N]\n"
    "                           [--config K=V ...]\n";
static const char list_usage[] = "usage: tally topics list\n";
static const char describe_usage[] =
    "usage: tally topics describe [NAME ...] [--under-replicated-partitions]\n"
    "                             [--unavailable-partitions]\n";
static const char delete_usage[] = "usage: tally topics delete NAME ...\n";
static const char addp_usage[] = "usage: tally topics add-partitions NAME --partitions N\n";

/* Parses an int in [1, 1000000]. */
static bool parse_count(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > 1000000)
        return false;
    *out = (int)v;
    return true;
}

/* Prints usage text on stdout when any argument from index 2 on asks for help. */
static bool wants_help(int argc, char **argv, const char *text)
{
    for (int i = 2; i < argc; i++) {
        if (tally_is_help(argv[i])) {
            fputs(text, stdout);
            return true;
        }
    }
    return false;
}

static int topics_create(const struct tally_ctx *ctx, int argc, char **argv)
{
    const char *name = NULL;
    int partitions = -1, rf = -1;
    char errstr[512];
    int rc = TALLY_FAIL;

    if (wants_help(argc, argv, create_usage))
        return TALLY_OK;

    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--partitions") == 0) {
            if (i + 1 >= argc || !parse_count(argv[i + 1], &partitions))
                return tally_usage_error("--partitions needs a positive number");
            i++;
        } else if (strcmp(a, "--replication-factor") == 0) {
            if (i + 1 >= argc || !parse_count(argv[i + 1], &rf))
                return tally_usage_error("--replication-factor needs a positive number");
            i++;
        } else if (strcmp(a, "--config") == 0) {
            const char *v;
            char *k;
            if (i + 1 >= argc || (k = tally_split_kv(argv[i + 1], &v)) == NULL)
                return tally_usage_error("--config needs KEY=VALUE");
            free(k);
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            return tally_usage_error("unknown option '%s'", a);
        } else if (name == NULL) {
            name = a;
        } else {
            return tally_usage_error("unexpected argument '%s'", a);
        }
    }
    if (name == NULL)
        return tally_usage_error("topics create needs a topic name");

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(name, partitions, rf, errstr, sizeof errstr);
    if (nt == NULL) {
        tally_fail("cannot create topic '%s': %s", name, errstr);
        goto out_rk;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--config") != 0)
            continue;
        const char *v;
        char *k = tally_split_kv(argv[++i], &v);
        rd_kafka_resp_err_t err = rd_kafka_NewTopic_set_config(nt, k, v);
        free(k);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            tally_fail("bad config '%s': %s", argv[i], rd_kafka_err2str(err));
            goto out_nt;
        }
    }

    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts = tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_CreateTopics(rk, &nt, 1, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_CREATETOPICS_RESULT, "create topic");
    if (ev != NULL) {
        size_t cnt;
        const rd_kafka_topic_result_t **res =
            rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
        if (cnt != 1) {
            tally_fail("create topic '%s': broker returned %zu results", name, cnt);
        } else if (rd_kafka_topic_result_error(res[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            const char *msg = rd_kafka_topic_result_error_string(res[0]);
            tally_fail("cannot create topic '%s': %s%s%s", name,
                       rd_kafka_err2name(rd_kafka_topic_result_error(res[0])),
                       msg != NULL && *msg ? ": " : "", msg != NULL ? msg : "");
        } else {
            printf("Created topic %s.\n", name);
            rc = TALLY_OK;
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
out_nt:
    rd_kafka_NewTopic_destroy(nt);
out_rk:
    rd_kafka_destroy(rk);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int topics_list(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (wants_help(argc, argv, list_usage))
        return TALLY_OK;
    if (argc > 2)
        return tally_usage_error("unexpected argument '%s'", argv[2]);

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    int rc = TALLY_FAIL;
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    const char **names = calloc((size_t)md->topic_cnt + 1, sizeof *names);
    if (names == NULL) {
        tally_fail("out of memory");
        goto out_md;
    }
    int n = 0;
    for (int i = 0; i < md->topic_cnt; i++)
        if (md->topics[i].err == RD_KAFKA_RESP_ERR_NO_ERROR)
            names[n++] = md->topics[i].topic;
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++)
        printf("%s\n", names[i]);
    free(names);
    rc = TALLY_OK;
out_md:
    rd_kafka_metadata_destroy(md);
out:
    rd_kafka_destroy(rk);
    return rc;
}

static void print_id_list(const char *label, const int32_t *ids, int32_t cnt)
{
    printf("\t%s: ", label);
    for (int32_t i = 0; i < cnt; i++)
        printf("%s%d", i ? "," : "", (int)ids[i]);
}

/* ---- Metadata over the wire client --------------------------------------------------------- */

/* librdkafka 2.0.2's metadata has no leader epoch (Metadata v7+) nor offline replicas, so
 * `describe` asks for Metadata itself (tally.h). */
int tally_wire_metadata(const struct tally_ctx *ctx, const struct rd_kafka_metadata *md,
                        int32_t prefer, struct arena *a, const struct MetadataResponse **out)
{
    struct MetadataRequest rq = {.Topics = {NULL, -1}, .AllowAutoTopicCreation = false};

    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < md->broker_cnt; i++) {
            const struct rd_kafka_metadata_broker *b = &md->brokers[i];
            /* First the preferred broker, then the others in turn. */
            if ((pass == 0) != (b->id == prefer))
                continue;
            int16_t v = tally_api_version(ctx, b->host, b->port, PROTO_API_Metadata, 12);
            void *resp = NULL;
            char what[300];
            snprintf(what, sizeof what, "Metadata from broker %d (%s:%d)", (int)b->id, b->host,
                     b->port);
            if (v >= 1 && tally_wire_call(ctx, b->host, b->port, PROTO_API_Metadata, v, &rq, a,
                                          &resp, what) == TALLY_OK) {
                *out = resp;
                return TALLY_OK;
            }
        }
    }
    return tally_fail("no broker answered a Metadata request");
}

/* ---- describe --------------------------------------------------------------------------- */

static int cmp_wire_partition(const void *a, const void *b)
{
    const struct MetadataResponsePartition *x = a, *y = b;
    return (x->PartitionIndex > y->PartitionIndex) - (x->PartitionIndex < y->PartitionIndex);
}

static int cmp_wire_topic(const void *a, const void *b)
{
    const struct MetadataResponseTopic *x = *(const struct MetadataResponseTopic *const *)a;
    const struct MetadataResponseTopic *y = *(const struct MetadataResponseTopic *const *)b;
    return strcmp(x->Name ? x->Name : "", y->Name ? y->Name : "");
}

/* What `describe` prints: every partition with the topic lines, or (the filters) only the
 * partitions whose TALLY_PART_* flags meet `only`. */
struct describe_opts {
    unsigned only;
    /* The reassignments in progress (ListPartitionReassignments), or NULL when the controller
     * does not serve it: a partition's adding replicas are not yet part of its replication
     * factor, so they do not make it under-replicated (Kafka's TopicCommand). */
    const struct ListPartitionReassignmentsResponse *moving;
    /* Brokers a ListOffsets failed to reach (said once): not asked again by this command. */
    int32_t unreachable[64];
    int n_unreachable;
};

static bool unreachable(const struct describe_opts *o, int32_t id)
{
    for (int i = 0; i < o->n_unreachable; i++)
        if (o->unreachable[i] == id)
            return true;
    return false;
}

/* HW (isolation 0) or LSO (isolation 1) of every partition of t led by broker b, with
 * ListOffsets v2 latest; out[partition] stays -1 where unknown. A broker that cannot be
 * asked goes on o's unreachable list. */
static void latest_offsets(const struct tally_ctx *ctx, const struct MetadataResponseBroker *b,
                           const struct MetadataResponseTopic *t, int8_t isolation, int64_t *out,
                           struct describe_opts *o)
{
    struct arena *a = arena_new(16 << 20);
    struct ListOffsetsPartition *ps = calloc((size_t)t->Partitions.n + 1, sizeof *ps);
    int32_t np = 0;
    void *resp_v = NULL;

    if (a == NULL || ps == NULL)
        goto out;
    for (int32_t i = 0; i < t->Partitions.n; i++)
        if (t->Partitions.v[i].LeaderId == b->NodeId)
            ps[np++] =
                (struct ListOffsetsPartition){.PartitionIndex = t->Partitions.v[i].PartitionIndex,
                                              .CurrentLeaderEpoch = -1,
                                              .Timestamp = -1};
    if (np == 0 || unreachable(o, b->NodeId))
        goto out;
    struct ListOffsetsTopic lt = {.Name = t->Name, .Partitions = {ps, np}};
    struct ListOffsetsRequest req = {
        .ReplicaId = -1, .IsolationLevel = isolation, .Topics = {&lt, 1}};
    if (tally_wire_call(ctx, b->Host, b->Port, PROTO_API_ListOffsets, 2, &req, a, &resp_v,
                        "ListOffsets") != TALLY_OK) {
        if (o->n_unreachable < (int)(sizeof o->unreachable / sizeof o->unreachable[0]))
            o->unreachable[o->n_unreachable++] = b->NodeId;
        goto out;
    }
    struct ListOffsetsResponse *r = resp_v;
    for (int32_t ti = 0; ti < r->Topics.n; ti++)
        for (int32_t pi = 0; pi < r->Topics.v[ti].Partitions.n; pi++) {
            struct ListOffsetsPartitionResponse *pr = &r->Topics.v[ti].Partitions.v[pi];
            if (pr->ErrorCode == 0 && pr->PartitionIndex >= 0 &&
                pr->PartitionIndex < t->Partitions.n)
                out[pr->PartitionIndex] = pr->Offset;
        }
out:
    free(ps);
    arena_free(a);
}

/* Prints one topic in kafka-topics.sh --describe layout, plus per partition its leader epoch,
 * offline replicas, status, HW, LSO and, when the LSO is held back, the open transaction
 * holding it. Returns TALLY_OK or TALLY_FAIL (reason printed). */
/* The reassignments in progress, asked of the controller; NULL when it does not serve
 * ListPartitionReassignments (or the call failed: printed, and describe goes on without). */
static const struct ListPartitionReassignmentsResponse *
reassignments(const struct tally_ctx *ctx, rd_kafka_t *rk, const struct rd_kafka_metadata *md,
              struct arena *a)
{
    const struct rd_kafka_metadata_broker *b =
        tally_md_broker(md, rd_kafka_controllerid(rk, ctx->timeout_ms));
    struct ListPartitionReassignmentsRequest rq = {.TimeoutMs = ctx->timeout_ms,
                                                   .Topics = {NULL, -1}};
    void *resp = NULL;
    char what[200];

    if (b == NULL ||
        tally_api_version(ctx, b->host, b->port, PROTO_API_ListPartitionReassignments, 0) != 0)
        return NULL;
    snprintf(what, sizeof what, "ListPartitionReassignments to the controller, broker %d",
             (int)b->id);
    if (tally_wire_call(ctx, b->host, b->port, PROTO_API_ListPartitionReassignments, 0, &rq, a,
                        &resp, what) != TALLY_OK)
        return NULL;
    const struct ListPartitionReassignmentsResponse *l = resp;
    return l->ErrorCode == 0 ? l : NULL;
}

static const struct OngoingPartitionReassignment *moving_of(const struct describe_opts *o,
                                                            const char *topic, int32_t partition)
{
    if (o->moving == NULL || topic == NULL)
        return NULL;
    for (int32_t i = 0; i < o->moving->Topics.n; i++) {
        const struct OngoingTopicReassignment *t = &o->moving->Topics.v[i];
        if (t->Name == NULL || strcmp(t->Name, topic) != 0)
            continue;
        for (int32_t j = 0; j < t->Partitions.n; j++)
            if (t->Partitions.v[j].PartitionIndex == partition)
                return &t->Partitions.v[j];
    }
    return NULL;
}

static int describe_one(rd_kafka_t *rk, const struct tally_ctx *ctx,
                        const struct rd_kafka_metadata *md, const struct MetadataResponse *wm,
                        struct MetadataResponseTopic *t, struct describe_opts *o)
{
    int32_t n = t->Partitions.n;
    int rc = TALLY_FAIL;

    if (t->ErrorCode != 0)
        return tally_fail("topic '%s': %s", t->Name,
                          rd_kafka_err2name((rd_kafka_resp_err_t)t->ErrorCode));
    int32_t *live = calloc((size_t)wm->Brokers.n + 1, sizeof *live);
    int64_t *hw = malloc(sizeof *hw * (size_t)(n + 1));
    int64_t *lso = malloc(sizeof *lso * (size_t)(n + 1));
    if (live == NULL || hw == NULL || lso == NULL) {
        tally_fail("out of memory");
        goto out;
    }
    for (int32_t i = 0; i < wm->Brokers.n; i++)
        live[i] = wm->Brokers.v[i].NodeId;
    qsort(t->Partitions.v, (size_t)n, sizeof *t->Partitions.v, cmp_wire_partition);

    if (o->only == 0) {
        int rf = n > 0 ? (int)t->Partitions.v[0].ReplicaNodes.n : 0;
        const struct OngoingPartitionReassignment *m0 =
            n > 0 ? moving_of(o, t->Name, t->Partitions.v[0].PartitionIndex) : NULL;
        if (m0 != NULL)
            rf -= (int)m0->AddingReplicas.n;
        printf("Topic: %s", t->Name);
        /* kafka-topics.sh prints the id of a topic that has one (Metadata v10+). */
        static const struct proto_uuid zero_id;
        if (ctx->kafka_format && memcmp(&t->TopicId, &zero_id, sizeof zero_id) != 0) {
            char id[TALLY_CLUSTER_ID_LEN + 1];
            tally_cluster_id_encode(t->TopicId.b, id);
            printf("\tTopicId: %s", id);
        }
        printf("\tPartitionCount: %d\tReplicationFactor: %d\tConfigs: ", (int)n, rf);
        if (tally_print_topic_configs(rk, ctx, t->Name) != TALLY_OK)
            goto out;
        printf("\n");
    }
    for (int32_t p = 0; p < n; p++)
        hw[p] = lso[p] = -1;
    /* Kafka's layout has no offsets, so kafka-topics.sh does not ask for them. */
    for (int32_t i = 0; i < wm->Brokers.n && !ctx->kafka_format; i++) {
        latest_offsets(ctx, &wm->Brokers.v[i], t, 0, hw, o);
        latest_offsets(ctx, &wm->Brokers.v[i], t, 1, lso, o);
    }
    for (int32_t p = 0; p < n; p++) {
        const struct MetadataResponsePartition *mp = &t->Partitions.v[p];
        const struct OngoingPartitionReassignment *m = moving_of(o, t->Name, mp->PartitionIndex);
        int32_t n_adding = m != NULL ? m->AddingReplicas.n : 0;
        unsigned flags = tally_partition_flags(mp->LeaderId, mp->ReplicaNodes.n - n_adding,
                                               mp->IsrNodes.n, live, wm->Brokers.n);
        if (o->only != 0 && (flags & o->only) == 0)
            continue;
        printf("\tTopic: %s\tPartition: %d\tLeader: ", t->Name, (int)mp->PartitionIndex);
        if (mp->LeaderId >= 0)
            printf("%d", (int)mp->LeaderId);
        else
            printf("none");
        if (ctx->kafka_format) {
            print_id_list("Replicas", mp->ReplicaNodes.v, mp->ReplicaNodes.n);
            print_id_list("Isr", mp->IsrNodes.v, mp->IsrNodes.n);
            if (m != NULL) {
                print_id_list("Adding Replicas", m->AddingReplicas.v, m->AddingReplicas.n);
                print_id_list("Removing Replicas", m->RemovingReplicas.v, m->RemovingReplicas.n);
            }
            printf("\n");
            continue;
        }
        if (mp->LeaderEpoch >= 0)
            printf("\tLeaderEpoch: %d", (int)mp->LeaderEpoch);
        else
            printf("\tLeaderEpoch: -");
        print_id_list("Replicas", mp->ReplicaNodes.v, mp->ReplicaNodes.n);
        print_id_list("Isr", mp->IsrNodes.v, mp->IsrNodes.n);
        if (mp->OfflineReplicas.n > 0)
            print_id_list("Offline", mp->OfflineReplicas.v, mp->OfflineReplicas.n);
        if (m != NULL) {
            print_id_list("Adding Replicas", m->AddingReplicas.v, m->AddingReplicas.n);
            print_id_list("Removing Replicas", m->RemovingReplicas.v, m->RemovingReplicas.n);
        }
        printf("\tStatus: %s", tally_partition_status(flags));
        int id = (int)mp->PartitionIndex;
        if (id >= 0 && id < n && hw[id] >= 0 && lso[id] >= 0) {
            printf("\tHW: %" PRId64 "\tLSO: %" PRId64, hw[id], lso[id]);
            const struct rd_kafka_metadata_broker *lb = tally_md_broker(md, mp->LeaderId);
            int64_t pid = -1;
            int16_t epoch = -1;
            char tid[256];
            if (lso[id] < hw[id] && lb != NULL &&
                tally_open_txn_at(ctx, lb->host, lb->port, t->Name, mp->PartitionIndex, lso[id],
                                  &pid, &epoch) == TALLY_OK) {
                printf("\tLSOHeldBy: producer %" PRId64 " epoch %d", pid, (int)epoch);
                if (tally_txn_id_of(ctx, md, pid, tid, sizeof tid) == TALLY_OK)
                    printf(" transactional.id %s", tid);
            }
        }
        if (mp->ErrorCode != 0 && mp->ErrorCode != RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
            printf("\tError: %s", rd_kafka_err2name((rd_kafka_resp_err_t)mp->ErrorCode));
        printf("\n");
    }
    rc = TALLY_OK;
out:
    free(live);
    free(hw);
    free(lso);
    return rc;
}

static int topics_describe(const struct tally_ctx *ctx, int argc, char **argv)
{
    struct describe_opts o = {0};
    int n_names = 0;

    if (wants_help(argc, argv, describe_usage))
        return TALLY_OK;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--under-replicated-partitions") == 0)
            o.only |= TALLY_PART_UNDER_REPLICATED;
        else if (strcmp(argv[i], "--unavailable-partitions") == 0)
            o.only |= TALLY_PART_OFFLINE;
        else if (argv[i][0] == '-')
            return tally_usage_error("unknown option '%s'", argv[i]);
        else
            n_names++;
    }

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    int rc = TALLY_OK;
    struct arena *a = NULL;
    const struct MetadataResponse *wm = NULL;
    struct MetadataResponseTopic **ts = NULL;
    /* A per-topic metadata request could make the broker auto-create a missing name, so the
     * names are looked up in the full list; the controller's answer is the most recent. */
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL) {
        rc = TALLY_FAIL;
        goto out;
    }
    a = arena_new(256 << 20);
    if (a == NULL) {
        rc = tally_fail("out of memory");
        goto out_md;
    }
    if (tally_wire_metadata(ctx, md, rd_kafka_controllerid(rk, ctx->timeout_ms), a, &wm) !=
        TALLY_OK) {
        rc = TALLY_FAIL;
        goto out_md;
    }
    o.moving = reassignments(ctx, rk, md, a);
    ts = calloc((size_t)wm->Topics.n + 1, sizeof *ts);
    if (ts == NULL) {
        rc = tally_fail("out of memory");
        goto out_md;
    }
    for (int32_t i = 0; i < wm->Topics.n; i++)
        ts[i] = &wm->Topics.v[i];
    qsort(ts, (size_t)wm->Topics.n, sizeof *ts, cmp_wire_topic);

    if (n_names == 0) {
        for (int32_t i = 0; i < wm->Topics.n && rc == TALLY_OK; i++)
            rc = describe_one(rk, ctx, md, wm, ts[i], &o);
        goto out_md;
    }
    for (int i = 2; i < argc; i++) {
        if (argv[i][0] == '-')
            continue;
        struct MetadataResponseTopic *found = NULL;
        for (int32_t t = 0; t < wm->Topics.n; t++)
            if (ts[t]->Name != NULL && strcmp(ts[t]->Name, argv[i]) == 0)
                found = ts[t];
        int one = found != NULL ? describe_one(rk, ctx, md, wm, found, &o)
                                : tally_fail("topic '%s' does not exist", argv[i]);
        if (one != TALLY_OK)
            rc = one;
    }
out_md:
    free(ts);
    arena_free(a);
    rd_kafka_metadata_destroy(md);
out:
    rd_kafka_destroy(rk);
    return rc;
}

static int topics_delete(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (wants_help(argc, argv, delete_usage))
        return TALLY_OK;
    if (argc < 3)
        return tally_usage_error("topics delete needs at least one topic name");
    for (int i = 2; i < argc; i++)
        if (argv[i][0] == '-')
            return tally_usage_error("unknown option '%s'", argv[i]);

    int n = argc - 2, rc = TALLY_FAIL;
    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    rd_kafka_DeleteTopic_t **dts = calloc((size_t)n, sizeof *dts);
    if (dts == NULL) {
        tally_fail("out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        dts[i] = rd_kafka_DeleteTopic_new(argv[i + 2]);

    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts = tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_DELETETOPICS);
    rd_kafka_DeleteTopics(rk, dts, (size_t)n, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_DELETETOPICS_RESULT, "delete topics");
    if (ev != NULL) {
        size_t cnt;
        const rd_kafka_topic_result_t **res =
            rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &cnt);
        rc = TALLY_OK;
        for (size_t i = 0; i < cnt; i++) {
            const char *t = rd_kafka_topic_result_name(res[i]);
            rd_kafka_resp_err_t err = rd_kafka_topic_result_error(res[i]);
            if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
                rc = tally_fail("cannot delete topic '%s': %s", t, rd_kafka_err2name(err));
            } else if (!ctx->kafka_format) { /* kafka-topics.sh --delete says nothing */
                printf("Deleted topic %s.\n", t);
            }
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_DeleteTopic_destroy_array(dts, (size_t)n);
    free(dts);
out:
    rd_kafka_destroy(rk);
    return rc;
}

static int topics_add_partitions(const struct tally_ctx *ctx, int argc, char **argv)
{
    const char *name = NULL;
    int total = -1, rc = TALLY_FAIL;
    char errstr[512];

    if (wants_help(argc, argv, addp_usage))
        return TALLY_OK;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--partitions") == 0) {
            if (i + 1 >= argc || !parse_count(argv[i + 1], &total))
                return tally_usage_error("--partitions needs a positive number");
            i++;
        } else if (argv[i][0] == '-') {
            return tally_usage_error("unknown option '%s'", argv[i]);
        } else if (name == NULL) {
            name = argv[i];
        } else {
            return tally_usage_error("unexpected argument '%s'", argv[i]);
        }
    }
    if (name == NULL || total < 0)
        return tally_usage_error("topics add-partitions needs NAME and --partitions N");

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    rd_kafka_NewPartitions_t *np =
        rd_kafka_NewPartitions_new(name, (size_t)total, errstr, sizeof errstr);
    if (np == NULL) {
        tally_fail("cannot add partitions to '%s': %s", name, errstr);
        goto out;
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts =
        tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_CREATEPARTITIONS);
    rd_kafka_CreatePartitions(rk, &np, 1, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_CREATEPARTITIONS_RESULT, "add partitions");
    if (ev != NULL) {
        size_t cnt;
        const rd_kafka_topic_result_t **res = rd_kafka_CreatePartitions_result_topics(
            rd_kafka_event_CreatePartitions_result(ev), &cnt);
        if (cnt == 1 && rd_kafka_topic_result_error(res[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            const char *msg = rd_kafka_topic_result_error_string(res[0]);
            tally_fail("cannot add partitions to '%s': %s%s%s", name,
                       rd_kafka_err2name(rd_kafka_topic_result_error(res[0])),
                       msg != NULL && *msg ? ": " : "", msg != NULL ? msg : "");
        } else if (cnt != 1) {
            tally_fail("add partitions: broker returned %zu results", cnt);
        } else {
            if (!ctx->kafka_format) /* kafka-topics.sh --alter says nothing */
                printf("Topic %s now has %d partitions.\n", name, total);
            rc = TALLY_OK;
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewPartitions_destroy(np);
out:
    rd_kafka_destroy(rk);
    return rc;
}

int tally_topics_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc < 2) {
        fputs(topics_usage, stderr);
        return TALLY_USAGE;
    }
    const char *cmd = argv[1];
    if (tally_is_help(cmd)) {
        fputs(topics_usage, stdout);
        return TALLY_OK;
    }
    if (strcmp(cmd, "create") == 0)
        return topics_create(ctx, argc, argv);
    if (strcmp(cmd, "list") == 0)
        return topics_list(ctx, argc, argv);
    if (strcmp(cmd, "describe") == 0)
        return topics_describe(ctx, argc, argv);
    if (strcmp(cmd, "delete") == 0)
        return topics_delete(ctx, argc, argv);
    if (strcmp(cmd, "add-partitions") == 0)
        return topics_add_partitions(ctx, argc, argv);
    return tally_usage_error("unknown topics command '%s'", cmd);
}
