/* SPDX-License-Identifier: Apache-2.0 */
/* tally partitions reassign: moving replicas between brokers, in the manner of
 * kafka-reassign-partitions.sh — --generate a plan, --execute it (optionally throttled),
 * --verify its progress (removing the throttles once nothing moves any more), --cancel it,
 * --list what is in progress. Debian's librdkafka 2.0.2 has neither AlterPartitionReassignments
 * (45) nor ListPartitionReassignments (46) nor IncrementalAlterConfigs, so those go to the
 * controller over the wire client (tally.h: tally_wire_call) with Tally's own codec; librdkafka
 * supplies the metadata (brokers, controller, the current replicas). The files and the plan's
 * arithmetic are reassign_plan.c's. */
#include "tally.h"

#include "base/arena.h"
#include "base/err.h"
#include "proto/proto.h"
#include "reassign_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARENA_BYTES (64 << 20)
#define CONTROLLER_TRIES 5
#define CONTROLLER_RETRY_MS 500
#define FILE_MAX (64 << 20)
#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4
#define OP_SET 0
#define OP_DELETE 1

static const char reassign_usage[] =
    "usage: tally partitions reassign ACTION ...\n"
    "\n"
    "Move partition replicas between brokers, as kafka-reassign-partitions.sh (its JSON\n"
    "files, its messages). Exactly one action:\n"
    "  --generate --topics-to-move-json-file F --broker-list 1,2,3\n"
    "      Print the current assignment of the topics in F ({\"version\":1,\"topics\":\n"
    "      [{\"topic\":\"t\"}]}) and a proposed one that spreads them over the brokers given\n"
    "      (Kafka's round robin, without racks); nothing changes.\n"
    "  --execute --reassignment-json-file F [--throttle B] [--additional]\n"
    "      Start the reassignments of F ({\"version\":1,\"partitions\":[{\"topic\":\"t\",\n"
    "      \"partition\":0,\"replicas\":[2,3,4]}]}): each partition's new replicas catch up and\n"
    "      join the ISR, then the old ones are removed (leadership moves if its leader goes).\n"
    "      Prints the current assignment first: save it to roll back. --throttle B limits\n"
    "      the moving replicas' replication to B bytes/s (leader/follower.replication.\n"
    "      throttled.rate on the brokers involved, and the topics' throttled-replicas lists);\n"
    "      --verify removes it once done. --additional: even while other reassignments\n"
    "      are in progress (a partition given again gets the new target).\n"
    "  --verify --reassignment-json-file F [--preserve-throttles]\n"
    "      Whether each reassignment of F is done; once none is in progress anywhere, the\n"
    "      throttles are removed (unless --preserve-throttles).\n"
    "  --cancel --reassignment-json-file F [--preserve-throttles]\n"
    "      Cancel the reassignments of F still in progress (their new replicas are dropped,\n"
    "      the old assignment stays) and remove the throttles.\n"
    "  --list\n"
    "      The reassignments in progress, with their adding and removing replicas.\n";

enum action { A_NONE, A_GENERATE, A_EXECUTE, A_VERIFY, A_CANCEL, A_LIST };

struct args {
    enum action action;
    const char *reassignment_file, *topics_file, *broker_list;
    int64_t throttle; /* -1: none */
    bool additional, preserve_throttles;
};

struct run {
    const struct tally_ctx *ctx;
    rd_kafka_t *rk;
    const struct rd_kafka_metadata *md;
    struct arena *a;
    /* The controller's own Metadata answer: the replicas as the image that decides holds
     * them (another broker's may lag a batch behind just after a change). */
    const struct MetadataResponse *wm;
};

/* ---- the command line ------------------------------------------------------------------------ */

static int set_action(struct args *a, enum action x)
{
    if (a->action != A_NONE)
        return tally_usage_error("give exactly one of --generate, --execute, --verify, --cancel "
                                 "and --list");
    a->action = x;
    return TALLY_OK;
}

static int parse_args(int argc, char **argv, struct args *a)
{
    *a = (struct args){.throttle = -1};
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = TALLY_OK;
        if (strcmp(s, "--generate") == 0) {
            rc = set_action(a, A_GENERATE);
        } else if (strcmp(s, "--execute") == 0) {
            rc = set_action(a, A_EXECUTE);
        } else if (strcmp(s, "--verify") == 0) {
            rc = set_action(a, A_VERIFY);
        } else if (strcmp(s, "--cancel") == 0) {
            rc = set_action(a, A_CANCEL);
        } else if (strcmp(s, "--list") == 0) {
            rc = set_action(a, A_LIST);
        } else if (strcmp(s, "--additional") == 0) {
            a->additional = true;
        } else if (strcmp(s, "--preserve-throttles") == 0) {
            a->preserve_throttles = true;
        } else if (strcmp(s, "--reassignment-json-file") == 0 ||
                   strcmp(s, "--topics-to-move-json-file") == 0 ||
                   strcmp(s, "--broker-list") == 0 || strcmp(s, "--throttle") == 0) {
            if (val == NULL || val[0] == '\0')
                return tally_usage_error("%s needs a value", s);
            i++;
            if (strcmp(s, "--reassignment-json-file") == 0) {
                a->reassignment_file = val;
            } else if (strcmp(s, "--topics-to-move-json-file") == 0) {
                a->topics_file = val;
            } else if (strcmp(s, "--broker-list") == 0) {
                a->broker_list = val;
            } else {
                char *end;
                errno = 0;
                long long v = strtoll(val, &end, 10);
                if (errno != 0 || *end != '\0' || v < 0)
                    return tally_usage_error("--throttle needs a rate in bytes/s (>= 0)");
                a->throttle = v;
            }
        } else {
            return tally_usage_error("unexpected argument '%s'", s);
        }
        if (rc != TALLY_OK)
            return rc;
    }
    switch (a->action) {
    case A_NONE:
        return tally_usage_error("give one of --generate, --execute, --verify, --cancel and "
                                 "--list");
    case A_GENERATE:
        if (a->topics_file == NULL || a->broker_list == NULL)
            return tally_usage_error("--generate needs --topics-to-move-json-file and "
                                     "--broker-list");
        if (a->reassignment_file || a->throttle >= 0 || a->additional || a->preserve_throttles)
            return tally_usage_error("--generate takes only --topics-to-move-json-file and "
                                     "--broker-list");
        break;
    case A_LIST:
        if (a->reassignment_file || a->topics_file || a->broker_list || a->throttle >= 0 ||
            a->additional || a->preserve_throttles)
            return tally_usage_error("--list takes no other option");
        break;
    default:
        if (a->reassignment_file == NULL)
            return tally_usage_error("this action needs --reassignment-json-file");
        if (a->topics_file || a->broker_list)
            return tally_usage_error("--topics-to-move-json-file and --broker-list go with "
                                     "--generate");
        if (a->action != A_EXECUTE && (a->throttle >= 0 || a->additional))
            return tally_usage_error("--throttle and --additional go with --execute");
        if (a->action == A_EXECUTE && a->preserve_throttles)
            return tally_usage_error("--preserve-throttles goes with --verify and --cancel");
        break;
    }
    return TALLY_OK;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (f == NULL) {
        tally_fail("cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (len + 4096 + 1 > cap) {
            size_t c2 = cap ? 2 * cap : 8192;
            char *b = c2 <= FILE_MAX ? realloc(buf, c2) : NULL;
            if (b == NULL) {
                tally_fail("%s: too large or out of memory", path);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
            cap = c2;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

/* ---- the cluster ----------------------------------------------------------------------------- */

static int refresh(struct run *r)
{
    if (r->md)
        rd_kafka_metadata_destroy(r->md);
    r->md = tally_metadata(r->rk, r->ctx, NULL);
    return r->md ? TALLY_OK : TALLY_FAIL;
}

static const struct rd_kafka_metadata_topic *md_topic(const struct run *r, const char *name)
{
    for (int i = 0; i < r->md->topic_cnt; i++)
        if (strcmp(r->md->topics[i].topic, name) == 0 &&
            r->md->topics[i].err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
            return &r->md->topics[i];
    return NULL;
}

/* The controller's Metadata, asked once per command. */
static int controller_view(struct run *r)
{
    if (r->wm != NULL)
        return TALLY_OK;
    return tally_wire_metadata(r->ctx, r->md, rd_kafka_controllerid(r->rk, r->ctx->timeout_ms),
                               r->a, &r->wm);
}

/* A partition's replicas in the controller's view, or NULL (*n 0) when it has none such. */
static const int32_t *replicas_of(struct run *r, const char *topic, int32_t partition, int32_t *n)
{
    *n = 0;
    if (controller_view(r) != TALLY_OK)
        return NULL;
    for (int32_t i = 0; i < r->wm->Topics.n; i++) {
        const struct MetadataResponseTopic *t = &r->wm->Topics.v[i];
        if (t->ErrorCode != 0 || t->Name == NULL || strcmp(t->Name, topic) != 0)
            continue;
        for (int32_t j = 0; j < t->Partitions.n; j++)
            if (t->Partitions.v[j].PartitionIndex == partition) {
                *n = t->Partitions.v[j].ReplicaNodes.n;
                return t->Partitions.v[j].ReplicaNodes.v;
            }
    }
    return NULL;
}

/* Whether an answer says NOT_CONTROLLER (the controller moved since the metadata). */
typedef bool (*not_controller_fn)(const void *resp);

static bool list_not_controller(const void *resp)
{
    return ((const struct ListPartitionReassignmentsResponse *)resp)->ErrorCode ==
           ERR_NOT_CONTROLLER;
}

static bool alter_not_controller(const void *resp)
{
    const struct AlterPartitionReassignmentsResponse *r = resp;
    if (r->ErrorCode == ERR_NOT_CONTROLLER)
        return true;
    for (int32_t i = 0; i < r->Responses.n; i++)
        for (int32_t j = 0; j < r->Responses.v[i].Partitions.n; j++)
            if (r->Responses.v[i].Partitions.v[j].ErrorCode == ERR_NOT_CONTROLLER)
                return true;
    return false;
}

static bool configs_not_controller(const void *resp)
{
    const struct IncrementalAlterConfigsResponse *r = resp;
    for (int32_t i = 0; i < r->Responses.n; i++)
        if (r->Responses.v[i].ErrorCode == ERR_NOT_CONTROLLER)
            return true;
    return false;
}

/* One request to the controller named by the metadata, looked up again (a few times) while it
 * answers NOT_CONTROLLER. TALLY_OK with *out in r->a, or TALLY_FAIL (printed). */
static int at_controller(struct run *r, int16_t key, int16_t version, const void *rq, void **out,
                         not_controller_fn not_ctl)
{
    const struct proto_api *api = proto_api_find(key);
    for (int tries = 1;; tries++) {
        int32_t id = rd_kafka_controllerid(r->rk, r->ctx->timeout_ms);
        const struct rd_kafka_metadata_broker *b = tally_md_broker(r->md, id);
        char what[300];
        if (b == NULL)
            return tally_fail("no controller in the metadata");
        if (tally_api_version(r->ctx, b->host, b->port, key, version) != version)
            return tally_fail("the controller (broker %d) does not serve %s v%d", (int)b->id,
                              api ? api->name : "?", (int)version);
        snprintf(what, sizeof what, "%s to the controller, broker %d (%s:%d)",
                 api ? api->name : "?", (int)b->id, b->host, b->port);
        if (tally_wire_call(r->ctx, b->host, b->port, key, version, rq, r->a, out, what) !=
            TALLY_OK)
            return TALLY_FAIL;
        if (!not_ctl(*out) || tries == CONTROLLER_TRIES)
            return TALLY_OK;
        usleep(CONTROLLER_RETRY_MS * 1000);
        if (refresh(r) != TALLY_OK)
            return TALLY_FAIL;
    }
}

/* Every reassignment in progress. */
static int list_all(struct run *r, const struct ListPartitionReassignmentsResponse **out)
{
    struct ListPartitionReassignmentsRequest rq = {.TimeoutMs = r->ctx->timeout_ms,
                                                   .Topics = {NULL, -1}};
    void *resp = NULL;
    if (at_controller(r, PROTO_API_ListPartitionReassignments, 0, &rq, &resp,
                      list_not_controller) != TALLY_OK)
        return TALLY_FAIL;
    *out = resp;
    if ((*out)->ErrorCode != 0)
        return tally_fail("ListPartitionReassignments: %s%s%s",
                          rd_kafka_err2name((rd_kafka_resp_err_t)(*out)->ErrorCode),
                          (*out)->ErrorMessage ? ": " : "",
                          (*out)->ErrorMessage ? (*out)->ErrorMessage : "");
    return TALLY_OK;
}

static const struct OngoingPartitionReassignment *
ongoing(const struct ListPartitionReassignmentsResponse *l, const char *topic, int32_t partition)
{
    for (int32_t i = 0; i < l->Topics.n; i++) {
        const struct OngoingTopicReassignment *t = &l->Topics.v[i];
        if (t->Name == NULL || strcmp(t->Name, topic) != 0)
            continue;
        for (int32_t j = 0; j < t->Partitions.n; j++)
            if (t->Partitions.v[j].PartitionIndex == partition)
                return &t->Partitions.v[j];
    }
    return NULL;
}

static size_t n_ongoing(const struct ListPartitionReassignmentsResponse *l)
{
    size_t n = 0;
    for (int32_t i = 0; i < l->Topics.n; i++)
        n += (size_t)(l->Topics.v[i].Partitions.n > 0 ? l->Topics.v[i].Partitions.n : 0);
    return n;
}

/* IncrementalAlterConfigs of `n` resources (their configs filled in): TALLY_OK only when every
 * resource was altered. */
static int alter_configs(struct run *r, struct IncrementalAlterConfigsResource *res, int32_t n)
{
    struct IncrementalAlterConfigsRequest rq = {.Resources = {res, n}};
    void *resp = NULL;
    int rc = TALLY_OK;
    if (n == 0)
        return TALLY_OK;
    if (at_controller(r, PROTO_API_IncrementalAlterConfigs, 1, &rq, &resp,
                      configs_not_controller) != TALLY_OK)
        return TALLY_FAIL;
    const struct IncrementalAlterConfigsResponse *rs = resp;
    for (int32_t i = 0; i < rs->Responses.n; i++) {
        const struct IncrementalAlterConfigsResourceResponse *x = &rs->Responses.v[i];
        if (x->ErrorCode != 0)
            rc = tally_fail("cannot alter the configs of %s %s: %s%s%s",
                            x->ResourceType == RESOURCE_TOPIC ? "topic" : "broker",
                            x->ResourceName ? x->ResourceName : "?",
                            rd_kafka_err2name((rd_kafka_resp_err_t)x->ErrorCode),
                            x->ErrorMessage ? ": " : "", x->ErrorMessage ? x->ErrorMessage : "");
    }
    return rc;
}

static void print_ids(const int32_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%s%d", i ? "," : "", (int)v[i]);
}

static bool same_list(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0);
}

static bool has(const int32_t *v, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* ---- throttles ------------------------------------------------------------------------------- */

/* Kafka's clearAllThrottles: the rates off every broker of the cluster and of the plan, the
 * throttled-replicas lists off the plan's topics. */
static int clear_throttles(struct run *r, const struct rp_plan *plan)
{
    size_t cap = (size_t)r->md->broker_cnt + 1;
    int32_t *ids;
    size_t n = 0, n_topics = 0;
    struct IncrementalAlterConfigsResource *res;
    static struct IncrementalAlterableConfig rates[2] = {
        {"leader.replication.throttled.rate", OP_DELETE, NULL},
        {"follower.replication.throttled.rate", OP_DELETE, NULL}};
    static struct IncrementalAlterableConfig lists[2] = {
        {"leader.replication.throttled.replicas", OP_DELETE, NULL},
        {"follower.replication.throttled.replicas", OP_DELETE, NULL}};

    for (size_t i = 0; i < plan->n; i++)
        cap += (size_t)plan->moves[i].n_replicas;
    ids = arena_alloc(r->a, cap * sizeof *ids);
    res = arena_alloc(r->a, (cap + plan->n + 1) * sizeof *res);
    if (ids == NULL || res == NULL)
        return tally_fail("out of memory");
    {
        struct rp_plan cluster = {0};
        for (int i = 0; i < r->md->broker_cnt; i++) {
            int32_t id = r->md->brokers[i].id;
            if (rp_plan_add(&cluster, "", 0, &id, 1) != 0) {
                rp_plan_free(&cluster);
                return tally_fail("out of memory");
            }
        }
        n = rp_brokers(&cluster, plan, ids);
        rp_plan_free(&cluster);
    }
    printf("Clearing broker-level throttles on broker%s ", n == 1 ? "" : "s");
    print_ids(ids, n);
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        res[i].ResourceType = RESOURCE_BROKER;
        res[i].ResourceName = arena_printf(r->a, "%d", (int)ids[i]);
        res[i].Configs.v = rates;
        res[i].Configs.n = 2;
        if (res[i].ResourceName == NULL)
            return tally_fail("out of memory");
    }
    if (alter_configs(r, res, (int32_t)n) != TALLY_OK)
        return TALLY_FAIL;
    for (size_t i = 0; i < plan->n; i++) {
        if (i > 0 && strcmp(plan->moves[i].topic, plan->moves[i - 1].topic) == 0)
            continue;
        res[n_topics].ResourceType = RESOURCE_TOPIC;
        res[n_topics].ResourceName = plan->moves[i].topic;
        res[n_topics].Configs.v = lists;
        res[n_topics].Configs.n = 2;
        n_topics++;
    }
    printf("Clearing topic-level throttles on topic%s ", n_topics == 1 ? "" : "s");
    for (size_t i = 0; i < n_topics; i++)
        printf("%s%s", i ? "," : "", res[i].ResourceName);
    printf("\n");
    return alter_configs(r, res, (int32_t)n_topics);
}

/* Kafka's modifyReassignmentThrottle: the topics' throttled-replicas lists (the moving
 * partitions' sources on the leader side, their new replicas on the follower side) and the
 * rate on every broker involved. `sources` and `targets` as rp_throttles takes them. */
static int set_throttles(struct run *r, const struct rp_plan *sources,
                         const struct rp_plan *targets, int64_t rate)
{
    struct rp_throttle *t = NULL;
    size_t n = 0, nb, cap = 1;
    int32_t *ids;
    struct IncrementalAlterConfigsResource *res;
    struct IncrementalAlterableConfig *cfgs;
    char *rate_s = arena_printf(r->a, "%lld", (long long)rate);
    int rc = TALLY_FAIL;

    for (size_t i = 0; i < sources->n; i++)
        cap += (size_t)sources->moves[i].n_replicas;
    for (size_t i = 0; i < targets->n; i++)
        cap += (size_t)targets->moves[i].n_replicas;
    ids = arena_alloc(r->a, cap * sizeof *ids);
    if (rate_s == NULL || ids == NULL || rp_throttles(sources, targets, &t, &n) != 0)
        return tally_fail("out of memory");
    res = arena_alloc(r->a, (n + cap + 1) * sizeof *res);
    cfgs = arena_alloc(r->a, (2 * n + 2 * cap + 2) * sizeof *cfgs);
    if (res == NULL || cfgs == NULL) {
        tally_fail("out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        cfgs[2 * i] = (struct IncrementalAlterableConfig){"leader.replication.throttled.replicas",
                                                          OP_SET, t[i].leader};
        cfgs[2 * i + 1] = (struct IncrementalAlterableConfig){
            "follower.replication.throttled.replicas", OP_SET, t[i].follower};
        res[i] =
            (struct IncrementalAlterConfigsResource){RESOURCE_TOPIC, t[i].topic, {&cfgs[2 * i], 2}};
    }
    if (alter_configs(r, res, (int32_t)n) != TALLY_OK)
        goto out;
    nb = rp_brokers(sources, targets, ids);
    for (size_t i = 0; i < nb; i++) {
        cfgs[2 * i] = (struct IncrementalAlterableConfig){"leader.replication.throttled.rate",
                                                          OP_SET, rate_s};
        cfgs[2 * i + 1] = (struct IncrementalAlterableConfig){"follower.replication.throttled.rate",
                                                              OP_SET, rate_s};
        res[i] = (struct IncrementalAlterConfigsResource){
            RESOURCE_BROKER, arena_printf(r->a, "%d", (int)ids[i]), {&cfgs[2 * i], 2}};
        if (res[i].ResourceName == NULL) {
            tally_fail("out of memory");
            goto out;
        }
    }
    if (alter_configs(r, res, (int32_t)nb) != TALLY_OK)
        goto out;
    printf("The inter-broker throttle limit was set to %lld B/s\n", (long long)rate);
    rc = TALLY_OK;
out:
    rp_throttles_free(t, n);
    return rc;
}

/* ---- the reassignments ----------------------------------------------------------------------- */

/* AlterPartitionReassignments for every partition of `plan` (cancel: null targets). Prints the
 * partitions that failed under `failed_head`; TALLY_OK when none did. */
static int alter_reassignments(struct run *r, const struct rp_plan *plan, bool cancel,
                               const char *failed_head)
{
    struct AlterPartitionReassignmentsRequest rq = {.TimeoutMs = r->ctx->timeout_ms};
    struct ReassignableTopic *topics = arena_alloc(r->a, (plan->n + 1) * sizeof *topics);
    struct ReassignablePartition *parts = arena_alloc(r->a, (plan->n + 1) * sizeof *parts);
    void *resp = NULL;
    bool failed = false;

    if (topics == NULL || parts == NULL)
        return tally_fail("out of memory");
    rq.Topics.v = topics;
    for (size_t i = 0; i < plan->n; i++) {
        const struct rp_move *m = &plan->moves[i];
        if (rq.Topics.n == 0 || strcmp(topics[rq.Topics.n - 1].Name, m->topic) != 0) {
            topics[rq.Topics.n].Name = m->topic;
            topics[rq.Topics.n].Partitions.v = &parts[i];
            rq.Topics.n++;
        }
        topics[rq.Topics.n - 1].Partitions.n++;
        parts[i].PartitionIndex = m->partition;
        parts[i].Replicas.v = cancel ? NULL : (int32_t *)m->replicas;
        parts[i].Replicas.n = cancel ? -1 : m->n_replicas;
    }
    if (at_controller(r, PROTO_API_AlterPartitionReassignments, 0, &rq, &resp,
                      alter_not_controller) != TALLY_OK)
        return TALLY_FAIL;
    const struct AlterPartitionReassignmentsResponse *rs = resp;
    if (rs->ErrorCode != 0)
        return tally_fail("AlterPartitionReassignments: %s%s%s",
                          rd_kafka_err2name((rd_kafka_resp_err_t)rs->ErrorCode),
                          rs->ErrorMessage ? ": " : "", rs->ErrorMessage ? rs->ErrorMessage : "");
    for (int32_t i = 0; i < rs->Responses.n; i++) {
        const struct ReassignableTopicResponse *t = &rs->Responses.v[i];
        for (int32_t j = 0; j < t->Partitions.n; j++) {
            const struct ReassignablePartitionResponse *o = &t->Partitions.v[j];
            if (o->ErrorCode == 0)
                continue;
            if (!failed)
                printf("%s\n", failed_head);
            failed = true;
            printf("%s-%d: %s\n", t->Name ? t->Name : "?", (int)o->PartitionIndex,
                   o->ErrorMessage && o->ErrorMessage[0]
                       ? o->ErrorMessage
                       : rd_kafka_err2str((rd_kafka_resp_err_t)o->ErrorCode));
        }
    }
    return failed ? TALLY_FAIL : TALLY_OK;
}

/* Each partition of `plan` with its current replicas (Metadata's: during a reassignment, the
 * target followed by the replicas leaving), into `current`. */
static int current_of(struct run *r, const struct rp_plan *plan, struct rp_plan *current)
{
    for (size_t i = 0; i < plan->n; i++) {
        const struct rp_move *m = &plan->moves[i];
        int32_t n;
        const int32_t *reps = replicas_of(r, m->topic, m->partition, &n);
        if (reps == NULL)
            return tally_fail("Unable to find partition: %s-%d", m->topic, (int)m->partition);
        if (rp_plan_add(current, m->topic, m->partition, reps,
                        n > RP_MAX_REPLICAS ? RP_MAX_REPLICAS : n) != 0)
            return tally_fail("out of memory");
    }
    return TALLY_OK;
}

static int execute(struct run *r, const struct args *args, const struct rp_plan *plan)
{
    const struct ListPartitionReassignmentsResponse *l;
    struct rp_plan current = {0}, sources = {0}, targets = {0};
    int rc = TALLY_FAIL;

    if (list_all(r, &l) != TALLY_OK)
        return TALLY_FAIL;
    if (!args->additional && n_ongoing(l) > 0) {
        printf("Cannot execute because there is an existing partition assignment.  Use "
               "--additional to override this and create a new partition assignment in addition "
               "to the existing one. The --additional flag can also be used to change the "
               "throttle by resubmitting the current reassignment.\n");
        return TALLY_FAIL;
    }
    for (size_t i = 0; i < plan->n; i++)
        for (int32_t k = 0; k < plan->moves[i].n_replicas; k++)
            if (tally_md_broker(r->md, plan->moves[i].replicas[k]) == NULL)
                return tally_fail("Unknown broker id %d", (int)plan->moves[i].replicas[k]);
    if (current_of(r, plan, &current) != TALLY_OK)
        goto out;
    printf("Current partition replica assignment\n\n");
    rp_print_json(stdout, &current);
    printf("\n\nSave this to use as the --reassignment-json-file option during rollback\n");

    if (args->throttle >= 0) {
        printf("Warning: You must run --verify periodically, until the reassignment completes, "
               "to ensure the throttle is removed.\n");
        /* Kafka's calculateProposedMoveMap: every reassignment in progress (its replicas less
         * those being added are the sources, those being added the destinations), then the
         * file's partitions (sources: the in-progress ones', else the current replicas). */
        for (int32_t i = 0; i < l->Topics.n; i++) {
            const struct OngoingTopicReassignment *t = &l->Topics.v[i];
            for (int32_t j = 0; j < t->Partitions.n; j++) {
                const struct OngoingPartitionReassignment *o = &t->Partitions.v[j];
                int32_t src[RP_MAX_REPLICAS], ns = 0;
                for (int32_t k = 0; k < o->Replicas.n && ns < RP_MAX_REPLICAS; k++)
                    if (!has(o->AddingReplicas.v, o->AddingReplicas.n, o->Replicas.v[k]))
                        src[ns++] = o->Replicas.v[k];
                if (rp_plan_find(plan, t->Name, o->PartitionIndex) != NULL)
                    continue;
                if (rp_plan_add(&sources, t->Name, o->PartitionIndex, src, ns) != 0 ||
                    rp_plan_add(&targets, t->Name, o->PartitionIndex, o->AddingReplicas.v,
                                o->AddingReplicas.n > RP_MAX_REPLICAS ? RP_MAX_REPLICAS
                                                                      : o->AddingReplicas.n) != 0) {
                    tally_fail("out of memory");
                    goto out;
                }
            }
        }
        for (size_t i = 0; i < plan->n; i++) {
            const struct rp_move *m = &plan->moves[i];
            const struct OngoingPartitionReassignment *o = ongoing(l, m->topic, m->partition);
            const struct rp_move *c = rp_plan_find(&current, m->topic, m->partition);
            int32_t src[RP_MAX_REPLICAS], ns = 0;
            if (o != NULL) {
                for (int32_t k = 0; k < o->Replicas.n && ns < RP_MAX_REPLICAS; k++)
                    if (!has(o->AddingReplicas.v, o->AddingReplicas.n, o->Replicas.v[k]))
                        src[ns++] = o->Replicas.v[k];
            } else {
                for (int32_t k = 0; k < c->n_replicas; k++)
                    src[ns++] = c->replicas[k];
            }
            if (rp_plan_add(&sources, m->topic, m->partition, src, ns) != 0 ||
                rp_plan_add(&targets, m->topic, m->partition, m->replicas, m->n_replicas) != 0) {
                tally_fail("out of memory");
                goto out;
            }
        }
        if (set_throttles(r, &sources, &targets, args->throttle) != TALLY_OK)
            goto out;
    }
    if (alter_reassignments(r, plan, false, "Error reassigning partition(s):") != TALLY_OK)
        goto out;
    printf("Successfully started partition reassignment%s for ", plan->n == 1 ? "" : "s");
    for (size_t i = 0; i < plan->n; i++)
        printf("%s%s-%d", i ? "," : "", plan->moves[i].topic, (int)plan->moves[i].partition);
    printf("\n");
    rc = TALLY_OK;
out:
    rp_plan_free(&current);
    rp_plan_free(&sources);
    rp_plan_free(&targets);
    return rc;
}

static int verify(struct run *r, const struct args *args, const struct rp_plan *plan)
{
    const struct ListPartitionReassignmentsResponse *l;
    if (list_all(r, &l) != TALLY_OK)
        return TALLY_FAIL;
    printf("Status of partition reassignment:\n");
    for (size_t i = 0; i < plan->n; i++) {
        const struct rp_move *m = &plan->moves[i];
        const int32_t *reps;
        int32_t n;
        if (ongoing(l, m->topic, m->partition) != NULL) {
            printf("Reassignment of partition %s-%d is still in progress.\n", m->topic,
                   (int)m->partition);
            continue;
        }
        reps = replicas_of(r, m->topic, m->partition, &n);
        if (reps != NULL && same_list(reps, n, m->replicas, m->n_replicas)) {
            printf("Reassignment of partition %s-%d is completed.\n", m->topic, (int)m->partition);
            continue;
        }
        printf("There is no active reassignment of partition %s-%d, but replica set is ", m->topic,
               (int)m->partition);
        if (reps != NULL)
            print_ids(reps, (size_t)n);
        printf(" rather than ");
        print_ids(m->replicas, (size_t)m->n_replicas);
        printf(".\n");
    }
    /* Kafka clears every throttle only once nothing is moving anywhere: it cannot tell which
     * brokers other reassignments still throttle. */
    if (n_ongoing(l) == 0 && !args->preserve_throttles)
        return clear_throttles(r, plan);
    return TALLY_OK;
}

static int cancel(struct run *r, const struct args *args, const struct rp_plan *plan)
{
    const struct ListPartitionReassignmentsResponse *l;
    struct rp_plan active = {0};
    int rc = TALLY_FAIL;

    if (list_all(r, &l) != TALLY_OK)
        return TALLY_FAIL;
    for (size_t i = 0; i < plan->n; i++)
        if (ongoing(l, plan->moves[i].topic, plan->moves[i].partition) != NULL &&
            rp_plan_add(&active, plan->moves[i].topic, plan->moves[i].partition, NULL, 0) != 0) {
            tally_fail("out of memory");
            goto out;
        }
    if (active.n > 0) {
        if (alter_reassignments(r, &active, true,
                                active.n == 1
                                    ? "Error cancelling partition reassignment for:"
                                    : "Error cancelling partition reassignments for:") != TALLY_OK)
            goto out;
        printf("Successfully cancelled partition reassignment%s for: ", active.n == 1 ? "" : "s");
        for (size_t i = 0; i < active.n; i++)
            printf("%s%s-%d", i ? "," : "", active.moves[i].topic, (int)active.moves[i].partition);
        printf("\n");
    } else {
        printf("None of the specified partition reassignments are active.\n");
    }
    rc = args->preserve_throttles ? TALLY_OK : clear_throttles(r, plan);
out:
    rp_plan_free(&active);
    return rc;
}

static int list(struct run *r)
{
    const struct ListPartitionReassignmentsResponse *l;
    struct rp_plan rows = {0};
    if (list_all(r, &l) != TALLY_OK)
        return TALLY_FAIL;
    if (n_ongoing(l) == 0) {
        printf("No partition reassignments found.\n");
        return TALLY_OK;
    }
    for (int32_t i = 0; i < l->Topics.n; i++)
        for (int32_t j = 0; j < l->Topics.v[i].Partitions.n; j++)
            if (rp_plan_add(&rows, l->Topics.v[i].Name,
                            l->Topics.v[i].Partitions.v[j].PartitionIndex, NULL, 0) != 0) {
                rp_plan_free(&rows);
                return tally_fail("out of memory");
            }
    rp_plan_sort(&rows);
    printf("Current partition reassignments:\n");
    for (size_t k = 0; k < rows.n; k++) {
        const struct OngoingPartitionReassignment *o =
            ongoing(l, rows.moves[k].topic, rows.moves[k].partition);
        printf("%s-%d: replicas: ", rows.moves[k].topic, (int)rows.moves[k].partition);
        print_ids(o->Replicas.v, (size_t)o->Replicas.n);
        printf(".");
        if (o->AddingReplicas.n > 0) {
            printf(" adding: ");
            print_ids(o->AddingReplicas.v, (size_t)o->AddingReplicas.n);
            printf(".");
        }
        if (o->RemovingReplicas.n > 0) {
            printf(" removing: ");
            print_ids(o->RemovingReplicas.v, (size_t)o->RemovingReplicas.n);
            printf(".");
        }
        printf("\n");
    }
    rp_plan_free(&rows);
    return TALLY_OK;
}

/* A stable start for a topic's round robin (Kafka draws one at random). */
static uint32_t topic_start(const char *name)
{
    uint32_t h = 2166136261u;
    for (; *name; name++)
        h = (h ^ (uint8_t)*name) * 16777619u;
    return h;
}

static int generate(struct run *r, const struct args *args)
{
    char *json = read_file(args->topics_file), err[512], **topics = NULL;
    size_t n_topics = 0, n_brokers = 0;
    int32_t brokers[1024];
    struct rp_plan current = {0}, proposed = {0};
    int rc = TALLY_FAIL;

    if (json == NULL)
        return TALLY_FAIL;
    if (rp_parse_topics(json, &topics, &n_topics, err, sizeof err) != 0) {
        free(json);
        return tally_fail("%s: %s", args->topics_file, err);
    }
    free(json);
    for (const char *p = args->broker_list; *p;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno != 0 || end == p || v < 0 || v > INT32_MAX || (*end != ',' && *end != '\0') ||
            n_brokers == sizeof brokers / sizeof brokers[0]) {
            rc = tally_usage_error("--broker-list needs broker ids separated by commas");
            goto out;
        }
        for (size_t i = 0; i < n_brokers; i++)
            if (brokers[i] == (int32_t)v) {
                rc = tally_fail("Broker list contains duplicate entries: %ld", v);
                goto out;
            }
        if (tally_md_broker(r->md, (int32_t)v) == NULL) {
            rc = tally_fail("Unknown broker id %ld", v);
            goto out;
        }
        brokers[n_brokers++] = (int32_t)v;
        p = *end == ',' ? end + 1 : end;
    }
    for (size_t i = 0; i < n_topics; i++) {
        const struct rd_kafka_metadata_topic *t = md_topic(r, topics[i]);
        int32_t *placed;
        int32_t rf;
        if (t == NULL || t->partition_cnt == 0) {
            rc = tally_fail("Topic %s not found.", topics[i]);
            goto out;
        }
        for (int k = 0; k < t->partition_cnt; k++)
            if (rp_plan_add(&current, t->topic, t->partitions[k].id, t->partitions[k].replicas,
                            t->partitions[k].replica_cnt) != 0) {
                rc = tally_fail("out of memory");
                goto out;
            }
        rf = t->partitions[0].replica_cnt;
        placed = malloc((size_t)t->partition_cnt * (size_t)(rf > 0 ? rf : 1) * sizeof *placed);
        if (placed == NULL) {
            rc = tally_fail("out of memory");
            goto out;
        }
        if (rp_assign(brokers, (int32_t)n_brokers, t->partition_cnt, rf, topic_start(t->topic),
                      placed) != 0) {
            free(placed);
            rc = tally_fail("Replication factor: %d larger than available brokers: %zu.", (int)rf,
                            n_brokers);
            goto out;
        }
        for (int32_t k = 0; k < t->partition_cnt; k++)
            if (rp_plan_add(&proposed, t->topic, k, &placed[(size_t)k * (size_t)rf], rf) != 0) {
                free(placed);
                rc = tally_fail("out of memory");
                goto out;
            }
        free(placed);
    }
    printf("Current partition replica assignment\n");
    rp_print_json(stdout, &current);
    printf("\n\nProposed partition reassignment configuration\n");
    rp_print_json(stdout, &proposed);
    printf("\n");
    rc = TALLY_OK;
out:
    rp_free_topics(topics, n_topics);
    rp_plan_free(&current);
    rp_plan_free(&proposed);
    return rc;
}

int tally_reassign_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    struct args args;
    struct run r = {.ctx = ctx};
    struct rp_plan plan = {0};
    int rc;

    for (int i = 2; i < argc; i++)
        if (tally_is_help(argv[i])) {
            fputs(reassign_usage, stdout);
            return TALLY_OK;
        }
    if (argc < 3) {
        fputs(reassign_usage, stderr);
        return TALLY_USAGE;
    }
    if ((rc = parse_args(argc, argv, &args)) != TALLY_OK)
        return rc;
    if (args.reassignment_file != NULL) {
        char *json = read_file(args.reassignment_file), err[512];
        if (json == NULL)
            return TALLY_FAIL;
        rc = rp_parse_reassignment(json, &plan, err, sizeof err);
        free(json);
        if (rc != 0)
            return tally_fail("%s: %s", args.reassignment_file, err);
    }
    rc = TALLY_FAIL;
    if ((r.rk = tally_connect(ctx)) == NULL)
        goto out;
    if ((r.a = arena_new(ARENA_BYTES)) == NULL) {
        tally_fail("out of memory");
        goto out;
    }
    if (refresh(&r) != TALLY_OK)
        goto out;
    switch (args.action) {
    case A_GENERATE:
        rc = generate(&r, &args);
        break;
    case A_EXECUTE:
        rc = execute(&r, &args, &plan);
        break;
    case A_VERIFY:
        rc = verify(&r, &args, &plan);
        break;
    case A_CANCEL:
        rc = cancel(&r, &args, &plan);
        break;
    case A_LIST:
        rc = list(&r);
        break;
    case A_NONE:
        break;
    }
out:
    if (r.md)
        rd_kafka_metadata_destroy(r.md);
    if (r.rk)
        rd_kafka_destroy(r.rk);
    arena_free(r.a);
    rp_plan_free(&plan);
    return rc;
}
