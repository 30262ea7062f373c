/* SPDX-License-Identifier: Apache-2.0 */
/* tally log-dirs describe: every broker's log directories with the size and offset lag of each
 * partition replica in them (DescribeLogDirs, API 35), printed as kafka-log-dirs.sh --describe
 * prints them — two header lines, then one JSON document on one line — so that the scripts that
 * json-parse that last line work unchanged. librdkafka 2.0.2 has no admin call for it, so the
 * request goes to each broker over the wire client (tally.h: tally_wire_call) with Tally's own
 * codec. */
#include "tally.h"

#include "base/arena.h"
#include "base/err.h"
#include "proto/proto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BYTES (64 << 20)
#define MAX_LIST 256 /* names in --topic-list, ids in --broker-list */

static const char logdirs_usage[] =
    "usage: tally log-dirs describe [--topic-list T1,T2,...] [--broker-list 1,2,...]\n"
    "\n"
    "  Ask each broker (those of --broker-list, else every broker) for its log directories:\n"
    "  path, error, total and usable bytes, and per partition replica its size in bytes and\n"
    "  its offset lag (how far it is behind the partition's high watermark; 0 on the\n"
    "  leader). With --topic-list only those topics' replicas are printed. The output is\n"
    "  kafka-log-dirs.sh's: \"Querying brokers for log directories information\", \"Received\n"
    "  log directory information from brokers 1,2\", then one JSON line\n"
    "  "
    "{\"version\":1,\"brokers\":[{\"broker\":1,\"logDirs\":[{\"logDir\":\"/data\",\"error\":null,\n"
    "  "
    "\"partitions\":[{\"partition\":\"t-0\",\"size\":123,\"offsetLag\":0,\"isFuture\":false}]}]}]}."
    "\n";

/* Splits a comma-separated list in place into out (at most MAX_LIST items, empty items
 * dropped). Returns the count, or -1 when there are too many. */
static int split_list(char *s, char **out)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (n == MAX_LIST)
            return -1;
        out[n++] = tok;
    }
    return n;
}

static void print_json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static bool topic_wanted(const char *name, char **topics, int n_topics)
{
    if (n_topics == 0)
        return true;
    for (int i = 0; i < n_topics; i++)
        if (strcmp(topics[i], name) == 0)
            return true;
    return false;
}

/* One broker's answer as the JSON object {"broker":N,"logDirs":[...]}. */
static void print_broker(int32_t id, const struct DescribeLogDirsResponse *r, char **topics,
                         int n_topics)
{
    printf("{\"broker\":%d,\"logDirs\":[", (int)id);
    for (int32_t d = 0; d < r->Results.n; d++) {
        const struct DescribeLogDirsResult *ld = &r->Results.v[d];
        printf("%s{\"logDir\":", d ? "," : "");
        print_json_string(ld->LogDir != NULL ? ld->LogDir : "");
        printf(",\"error\":");
        if (ld->ErrorCode != 0)
            print_json_string(err_name(ld->ErrorCode));
        else
            printf("null");
        printf(",\"totalBytes\":%" PRId64 ",\"usableBytes\":%" PRId64 ",\"partitions\":[",
               ld->TotalBytes, ld->UsableBytes);
        int printed = 0;
        for (int32_t t = 0; t < ld->Topics.n; t++) {
            const struct DescribeLogDirsTopic *tp = &ld->Topics.v[t];
            if (tp->Name == NULL || !topic_wanted(tp->Name, topics, n_topics))
                continue;
            for (int32_t p = 0; p < tp->Partitions.n; p++) {
                const struct DescribeLogDirsPartition *pp = &tp->Partitions.v[p];
                char name[512];
                snprintf(name, sizeof name, "%s-%d", tp->Name, (int)pp->PartitionIndex);
                printf("%s{\"partition\":", printed++ ? "," : "");
                print_json_string(name);
                printf(",\"size\":%" PRId64 ",\"offsetLag\":%" PRId64 ",\"isFuture\":%s}",
                       pp->PartitionSize, pp->OffsetLag, pp->IsFutureKey ? "true" : "false");
            }
        }
        printf("]}");
    }
    printf("]}");
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int logdirs_describe(const struct tally_ctx *ctx, char *topic_list, char *broker_list)
{
    char *topics[MAX_LIST], *brokers_s[MAX_LIST];
    int32_t want[MAX_LIST];
    int n_topics = 0, n_want = 0, rc = TALLY_FAIL;

    if (topic_list != NULL && (n_topics = split_list(topic_list, topics)) < 0)
        return tally_usage_error("--topic-list has more than %d topics", MAX_LIST);
    if (broker_list != NULL) {
        if ((n_want = split_list(broker_list, brokers_s)) < 0)
            return tally_usage_error("--broker-list has more than %d brokers", MAX_LIST);
        for (int i = 0; i < n_want; i++) {
            char *end;
            errno = 0;
            long v = strtol(brokers_s[i], &end, 10);
            if (errno != 0 || end == brokers_s[i] || *end != '\0' || v < 0 || v > INT32_MAX)
                return tally_usage_error("--broker-list needs broker ids, not '%s'", brokers_s[i]);
            want[i] = (int32_t)v;
        }
    }

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    struct arena *a = arena_new(ARENA_BYTES);
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    if (a == NULL) {
        tally_fail("out of memory");
        goto out;
    }
    if (n_want == 0)
        for (int i = 0; i < md->broker_cnt && n_want < MAX_LIST; i++)
            want[n_want++] = md->brokers[i].id;
    qsort(want, (size_t)n_want, sizeof *want, cmp_i32);
    for (int i = 0; i < n_want; i++) {
        if (tally_md_broker(md, want[i]) == NULL) {
            tally_fail("broker %d of --broker-list is not in the cluster", (int)want[i]);
            goto out;
        }
    }

    /* Every answer first, so that a broker that fails prints no half document. */
    const struct DescribeLogDirsResponse **resp = arena_alloc(a, sizeof *resp * (size_t)n_want);
    if (resp == NULL) {
        tally_fail("out of memory");
        goto out;
    }
    printf("Querying brokers for log directories information\n");
    for (int i = 0; i < n_want; i++) {
        const struct rd_kafka_metadata_broker *b = tally_md_broker(md, want[i]);
        struct DescribeLogDirsRequest req = {.Topics = {NULL, -1}};
        char what[300];
        void *out = NULL;
        snprintf(what, sizeof what, "DescribeLogDirs to broker %d (%s:%d)", (int)b->id, b->host,
                 b->port);
        int16_t v = tally_api_version(ctx, b->host, b->port, PROTO_API_DescribeLogDirs, 4);
        if (v < 0) {
            tally_fail("%s: the broker does not serve DescribeLogDirs", what);
            goto out;
        }
        if (tally_wire_call(ctx, b->host, b->port, PROTO_API_DescribeLogDirs, v, &req, a, &out,
                            what) != TALLY_OK)
            goto out;
        resp[i] = out;
        if (resp[i]->ErrorCode != 0) {
            tally_fail("%s: %s", what, err_name(resp[i]->ErrorCode));
            goto out;
        }
    }
    printf("Received log directory information from brokers ");
    for (int i = 0; i < n_want; i++)
        printf("%s%d", i ? "," : "", (int)want[i]);
    printf("\n{\"version\":1,\"brokers\":[");
    for (int i = 0; i < n_want; i++) {
        if (i)
            putchar(',');
        print_broker(want[i], resp[i], topics, n_topics);
    }
    printf("]}\n");
    rc = TALLY_OK;
out:
    if (md != NULL)
        rd_kafka_metadata_destroy(md);
    arena_free(a);
    rd_kafka_destroy(rk);
    return rc;
}

int tally_logdirs_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    char *topic_list = NULL, *broker_list = NULL;

    if (argc < 2) {
        fputs(logdirs_usage, stderr);
        return TALLY_USAGE;
    }
    if (tally_is_help(argv[1])) {
        fputs(logdirs_usage, stdout);
        return TALLY_OK;
    }
    if (strcmp(argv[1], "describe") != 0)
        return tally_usage_error("unknown log-dirs command '%s'", argv[1]);
    for (int i = 2; i < argc; i++) {
        if (tally_is_help(argv[i])) {
            fputs(logdirs_usage, stdout);
            return TALLY_OK;
        } else if (strcmp(argv[i], "--topic-list") == 0 && i + 1 < argc) {
            topic_list = argv[++i];
        } else if (strcmp(argv[i], "--broker-list") == 0 && i + 1 < argc) {
            broker_list = argv[++i];
        } else {
            return tally_usage_error("unexpected argument '%s' for log-dirs describe", argv[i]);
        }
    }
    return logdirs_describe(ctx, topic_list, broker_list);
}
