/* SPDX-License-Identifier: Apache-2.0 */
/* tally groups: list, describe, delete, delete-offsets and reset-offsets of consumer
 * groups, in the spirit of kafka-consumer-groups.sh, on librdkafka's admin API
 * (ListConsumerGroups, DescribeConsumerGroups, DeleteGroups, DeleteConsumerGroupOffsets,
 * ListConsumerGroupOffsets, AlterConsumerGroupOffsets) plus ListOffsets for the log
 * end offsets and timestamps. */
#include "tally.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char groups_usage[] =
    "usage: tally groups COMMAND ...\n"
    "\n"
    "  list [--state S[,S...]]\n"
    "      Print every consumer group, one a line, sorted; with --state only the groups\n"
    "      in those states (Empty, Stable, PreparingRebalance, CompletingRebalance, Dead),\n"
    "      with their state.\n"
    "  describe GROUP ...\n"
    "      Print the group's state, assignor, coordinator and members (client id, host,\n"
    "      assignment), then per partition the committed offset, log end offset and lag.\n"
    "  delete GROUP ...\n"
    "      Delete groups that have no members, with their committed offsets.\n"
    "  delete-offsets GROUP --topic T[:P[,P...]] ...\n"
    "      Delete the group's committed offsets of a topic (all its partitions, or P...).\n"
    "  reset-offsets GROUP --topic T[:P[,P...]] ... MODE [--execute]\n"
    "      MODE is one of --to-earliest, --to-latest, --to-offset N, --to-datetime ISO\n"
    "      (YYYY-MM-DDTHH:MM:SS[.sss][Z|+HH:MM], local time without a zone), --shift-by N.\n"
    "      Prints the plan; commits it only with --execute. Refused while the group has\n"
    "      members.\n";

static const char list_usage[] = "usage: tally groups list [--state S[,S...]]\n";
static const char describe_usage[] = "usage: tally groups describe GROUP ...\n";
static const char delete_usage[] = "usage: tally groups delete GROUP ...\n";
static const char delete_offsets_usage[] =
    "usage: tally groups delete-offsets GROUP --topic T[:P[,P...]] ...\n";
static const char reset_usage[] =
    "usage: tally groups reset-offsets GROUP --topic T[:P[,P...]] ...\n"
    "           (--to-earliest | --to-latest | --to-offset N | --to-datetime ISO |\n"
    "            --shift-by N) [--execute]\n";

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

/* Parses a whole int64; false on junk or overflow. */
static bool parse_i64(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return false;
    *out = (int64_t)v;
    return true;
}

/* The librdkafka state for a name, case-insensitively; UNKNOWN when no state has it. */
static rd_kafka_consumer_group_state_t state_code(const char *name)
{
    for (int s = 0; s < RD_KAFKA_CONSUMER_GROUP_STATE__CNT; s++)
        if (s != RD_KAFKA_CONSUMER_GROUP_STATE_UNKNOWN &&
            strcasecmp(name, rd_kafka_consumer_group_state_name(s)) == 0)
            return (rd_kafka_consumer_group_state_t)s;
    return RD_KAFKA_CONSUMER_GROUP_STATE_UNKNOWN;
}

/* ---- a text table with columns as wide as their widest cell -------------------------- */

#define MAX_COLS 10

struct table {
    int ncols;
    size_t nrows, cap;
    char **cells; /* nrows * ncols, row-major; row 0 is the header */
    bool oom;
};

static void table_init(struct table *t, int ncols)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
}

/* Adds a row of t->ncols printf-style cells given as already formatted strings. */
static void table_row(struct table *t, ...)
{
    if (t->oom)
        return;
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **c = realloc(t->cells, cap * (size_t)t->ncols * sizeof *c);
        if (c == NULL) {
            t->oom = true;
            return;
        }
        t->cells = c;
        t->cap = cap;
    }
    va_list ap;
    va_start(ap, t);
    for (int i = 0; i < t->ncols; i++) {
        const char *s = va_arg(ap, const char *);
        char *d = strdup(s != NULL ? s : "-");
        if (d == NULL)
            t->oom = true;
        t->cells[t->nrows * (size_t)t->ncols + (size_t)i] = d;
    }
    va_end(ap);
    t->nrows++;
}

/* Prints the table (columns separated by two spaces, the last not padded) and frees
 * it. Returns TALLY_OK or TALLY_FAIL when a row could not be stored. */
static int table_print(struct table *t)
{
    size_t w[MAX_COLS] = {0};
    int rc = TALLY_OK;
    if (t->oom) {
        rc = tally_fail("out of memory");
        goto out;
    }
    for (size_t r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols; c++) {
            size_t l = strlen(t->cells[r * (size_t)t->ncols + (size_t)c]);
            if (l > w[c])
                w[c] = l;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
            if (c + 1 < t->ncols)
                printf("%-*s  ", (int)w[c], s);
            else
                printf("%s\n", s);
        }
    }
out:
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
    return rc;
}

/* ---- admin calls shared by the commands ---------------------------------------------- */

/* One DescribeConsumerGroups call for `group`. Returns the event holding the
 * description (caller destroys it) and sets *out, or NULL after printing why. */
static rd_kafka_event_t *describe_group(rd_kafka_t *rk, const struct tally_ctx *ctx,
                                        const char *group,
                                        const rd_kafka_ConsumerGroupDescription_t **out)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts =
        tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
    const char *groups[1] = {group};
    rd_kafka_DescribeConsumerGroups(rk, groups, 1, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_DESCRIBECONSUMERGROUPS_RESULT, "describe group");
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    if (ev == NULL)
        return NULL;
    size_t cnt = 0;
    const rd_kafka_ConsumerGroupDescription_t **d = rd_kafka_DescribeConsumerGroups_result_groups(
        rd_kafka_event_DescribeConsumerGroups_result(ev), &cnt);
    if (cnt != 1) {
        tally_fail("describe group '%s': broker returned %zu results", group, cnt);
        rd_kafka_event_destroy(ev);
        return NULL;
    }
    const rd_kafka_error_t *err = rd_kafka_ConsumerGroupDescription_error(d[0]);
    if (err != NULL) {
        tally_fail("cannot describe group '%s': %s: %s", group, rd_kafka_error_name(err),
                   rd_kafka_error_string(err));
        rd_kafka_event_destroy(ev);
        return NULL;
    }
    *out = d[0];
    return ev;
}

/* The group's committed offsets: of `parts` (topic and partition used) or of every
 * partition it has committed when parts is NULL. Returns a new list (caller destroys;
 * offset RD_KAFKA_OFFSET_INVALID = none committed) or NULL after printing why. */
static rd_kafka_topic_partition_list_t *
committed_offsets(rd_kafka_t *rk, const struct tally_ctx *ctx, const char *group,
                  const rd_kafka_topic_partition_list_t *parts)
{
    rd_kafka_topic_partition_list_t *res = NULL;
    rd_kafka_ListConsumerGroupOffsets_t *lo = rd_kafka_ListConsumerGroupOffsets_new(group, parts);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts =
        tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS);
    rd_kafka_ListConsumerGroupOffsets(rk, &lo, 1, opts, q);
    rd_kafka_event_t *ev = tally_admin_wait(q, ctx, RD_KAFKA_EVENT_LISTCONSUMERGROUPOFFSETS_RESULT,
                                            "list committed offsets");
    if (ev != NULL) {
        size_t cnt = 0;
        const rd_kafka_group_result_t **g = rd_kafka_ListConsumerGroupOffsets_result_groups(
            rd_kafka_event_ListConsumerGroupOffsets_result(ev), &cnt);
        const rd_kafka_error_t *err = cnt == 1 ? rd_kafka_group_result_error(g[0]) : NULL;
        if (cnt != 1) {
            tally_fail("list committed offsets of '%s': broker returned %zu results", group, cnt);
        } else if (err != NULL) {
            tally_fail("cannot list committed offsets of '%s': %s: %s", group,
                       rd_kafka_error_name(err), rd_kafka_error_string(err));
        } else {
            const rd_kafka_topic_partition_list_t *p = rd_kafka_group_result_partitions(g[0]);
            res = p != NULL ? rd_kafka_topic_partition_list_copy(p)
                            : rd_kafka_topic_partition_list_new(0);
            for (int i = 0; res != NULL && i < res->cnt; i++) {
                if (res->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
                    tally_fail("cannot list committed offset of %s [%d] in '%s': %s",
                               res->elems[i].topic, (int)res->elems[i].partition, group,
                               rd_kafka_err2name(res->elems[i].err));
                    rd_kafka_topic_partition_list_destroy(res);
                    res = NULL;
                }
            }
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_ListConsumerGroupOffsets_destroy(lo);
    return res;
}

static int cmp_tp(const void *a, const void *b)
{
    const rd_kafka_topic_partition_t *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    return c != 0 ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

/* "t1:0,1,2;t2:5" for a (sorted here) partition list. Returns malloc()ed text or NULL. */
static char *format_assignment(rd_kafka_topic_partition_list_t *l)
{
    size_t cap = 64, len = 0;
    char *s = malloc(cap);
    if (s == NULL)
        return NULL;
    s[0] = '\0';
    if (l == NULL || l->cnt == 0)
        return strcpy(s, "-");
    qsort(l->elems, (size_t)l->cnt, sizeof *l->elems, cmp_tp);
    for (int i = 0; i < l->cnt; i++) {
        const rd_kafka_topic_partition_t *p = &l->elems[i];
        bool same = i > 0 && strcmp(l->elems[i - 1].topic, p->topic) == 0;
        size_t need = strlen(p->topic) + 16;
        if (len + need >= cap) {
            cap = (len + need) * 2;
            char *n = realloc(s, cap);
            if (n == NULL) {
                free(s);
                return NULL;
            }
            s = n;
        }
        if (same)
            len += (size_t)sprintf(s + len, ",%d", (int)p->partition);
        else
            len += (size_t)sprintf(s + len, "%s%s:%d", i ? ";" : "", p->topic, (int)p->partition);
    }
    return s;
}

/* Parses "T" or "T:P[,P...]" into l, taking every partition of T from md when none is
 * named. Returns TALLY_OK, or TALLY_FAIL / TALLY_USAGE after printing why. */
static int add_topic_spec(rd_kafka_topic_partition_list_t *l, const char *spec,
                          const struct rd_kafka_metadata *md)
{
    const char *colon = strrchr(spec, ':');
    size_t tlen = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
    if (tlen == 0 || tlen > 249)
        return tally_usage_error("bad --topic '%s'", spec);
    char topic[256];
    memcpy(topic, spec, tlen);
    topic[tlen] = '\0';

    const rd_kafka_metadata_topic_t *t = NULL;
    for (int i = 0; i < md->topic_cnt; i++)
        if (strcmp(md->topics[i].topic, topic) == 0 &&
            md->topics[i].err == RD_KAFKA_RESP_ERR_NO_ERROR)
            t = &md->topics[i];
    if (t == NULL)
        return tally_fail("topic '%s' does not exist", topic);

    if (colon == NULL) {
        for (int i = 0; i < t->partition_cnt; i++)
            rd_kafka_topic_partition_list_add(l, topic, t->partitions[i].id);
        return TALLY_OK;
    }
    const char *p = colon + 1;
    do {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno != 0 || end == p || (*end != ',' && *end != '\0') || v < 0 || v > INT32_MAX)
            return tally_usage_error("bad partition list in --topic '%s'", spec);
        bool known = false;
        for (int i = 0; i < t->partition_cnt; i++)
            known |= t->partitions[i].id == (int32_t)v;
        if (!known)
            return tally_fail("topic '%s' has no partition %ld", topic, v);
        rd_kafka_topic_partition_list_add(l, topic, (int32_t)v);
        p = *end == ',' ? end + 1 : end;
    } while (*p != '\0');
    return TALLY_OK;
}

/* ---- list ------------------------------------------------------------------------------- */

static int cmp_listing(const void *a, const void *b)
{
    const rd_kafka_ConsumerGroupListing_t *x = *(const rd_kafka_ConsumerGroupListing_t *const *)a;
    const rd_kafka_ConsumerGroupListing_t *y = *(const rd_kafka_ConsumerGroupListing_t *const *)b;
    return strcmp(rd_kafka_ConsumerGroupListing_group_id(x),
                  rd_kafka_ConsumerGroupListing_group_id(y));
}

static int groups_list(const struct tally_ctx *ctx, int argc, char **argv)
{
    rd_kafka_consumer_group_state_t states[RD_KAFKA_CONSUMER_GROUP_STATE__CNT];
    size_t nstates = 0;
    bool with_state = false;

    if (wants_help(argc, argv, list_usage))
        return TALLY_OK;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--state") == 0) {
            if (i + 1 >= argc)
                return tally_usage_error("--state needs a state name");
            with_state = true;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            for (char *save = NULL, *s = strtok_r(buf, ",", &save); s != NULL;
                 s = strtok_r(NULL, ",", &save)) {
                rd_kafka_consumer_group_state_t st = state_code(s);
                if (st == RD_KAFKA_CONSUMER_GROUP_STATE_UNKNOWN)
                    return tally_usage_error("unknown group state '%s' (Empty, Stable, "
                                             "PreparingRebalance, CompletingRebalance, Dead)",
                                             s);
                if (nstates < RD_KAFKA_CONSUMER_GROUP_STATE__CNT)
                    states[nstates++] = st;
            }
        } else {
            return tally_usage_error("unexpected argument '%s'", argv[i]);
        }
    }

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    int rc = TALLY_FAIL;
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts =
        tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS);
    if (nstates > 0) {
        rd_kafka_error_t *e =
            rd_kafka_AdminOptions_set_match_consumer_group_states(opts, states, nstates);
        if (e != NULL) {
            tally_fail("bad --state: %s", rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
            goto out;
        }
    }
    rd_kafka_ListConsumerGroups(rk, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_LISTCONSUMERGROUPS_RESULT, "list groups");
    if (ev == NULL)
        goto out;
    const rd_kafka_ListConsumerGroups_result_t *res = rd_kafka_event_ListConsumerGroups_result(ev);
    size_t nerr = 0, n = 0;
    const rd_kafka_error_t **errs = rd_kafka_ListConsumerGroups_result_errors(res, &nerr);
    if (nerr > 0) {
        /* One broker failing would silently hide its groups: fail instead. */
        tally_fail("list groups: %s: %s", rd_kafka_error_name(errs[0]),
                   rd_kafka_error_string(errs[0]));
        rd_kafka_event_destroy(ev);
        goto out;
    }
    const rd_kafka_ConsumerGroupListing_t **valid =
        rd_kafka_ListConsumerGroups_result_valid(res, &n);
    const rd_kafka_ConsumerGroupListing_t **sorted = calloc(n + 1, sizeof *sorted);
    if (sorted == NULL) {
        tally_fail("out of memory");
        rd_kafka_event_destroy(ev);
        goto out;
    }
    memcpy(sorted, valid, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_listing);
    if (with_state) {
        struct table t;
        table_init(&t, 2);
        table_row(&t, "GROUP", "STATE");
        for (size_t i = 0; i < n; i++)
            table_row(
                &t, rd_kafka_ConsumerGroupListing_group_id(sorted[i]),
                rd_kafka_consumer_group_state_name(rd_kafka_ConsumerGroupListing_state(sorted[i])));
        rc = table_print(&t);
    } else {
        for (size_t i = 0; i < n; i++)
            printf("%s\n", rd_kafka_ConsumerGroupListing_group_id(sorted[i]));
        rc = TALLY_OK;
    }
    free(sorted);
    rd_kafka_event_destroy(ev);
out:
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
    return rc;
}

/* ---- describe --------------------------------------------------------------------------- */

/* The member (index into d's members) that is assigned topic/partition, or -1. */
static int owner_of(const rd_kafka_ConsumerGroupDescription_t *d, const char *topic,
                    int32_t partition)
{
    size_t n = rd_kafka_ConsumerGroupDescription_member_count(d);
    for (size_t m = 0; m < n; m++) {
        const rd_kafka_MemberDescription_t *md = rd_kafka_ConsumerGroupDescription_member(d, m);
        const rd_kafka_MemberAssignment_t *a = rd_kafka_MemberDescription_assignment(md);
        const rd_kafka_topic_partition_list_t *l =
            a != NULL ? rd_kafka_MemberAssignment_partitions(a) : NULL;
        if (l != NULL && rd_kafka_topic_partition_list_find(l, topic, partition) != NULL)
            return (int)m;
    }
    return -1;
}

/* Adds to rows (offset: none committed) each partition assigned to member that rows lacks. */
static void add_assigned(rd_kafka_topic_partition_list_t *rows,
                         const rd_kafka_MemberDescription_t *member)
{
    const rd_kafka_MemberAssignment_t *a = rd_kafka_MemberDescription_assignment(member);
    const rd_kafka_topic_partition_list_t *l =
        a != NULL ? rd_kafka_MemberAssignment_partitions(a) : NULL;
    for (int i = 0; l != NULL && i < l->cnt; i++)
        if (rd_kafka_topic_partition_list_find(rows, l->elems[i].topic, l->elems[i].partition) ==
            NULL)
            rd_kafka_topic_partition_list_add(rows, l->elems[i].topic, l->elems[i].partition)
                ->offset = RD_KAFKA_OFFSET_INVALID;
}

static int describe_one(rd_kafka_t *rk, const struct tally_ctx *ctx, const char *group)
{
    const rd_kafka_ConsumerGroupDescription_t *d = NULL;
    rd_kafka_topic_partition_list_t *committed = NULL, *rows = NULL;
    int rc = TALLY_FAIL;

    rd_kafka_event_t *ev = describe_group(rk, ctx, group, &d);
    if (ev == NULL)
        return TALLY_FAIL;
    rd_kafka_consumer_group_state_t st = rd_kafka_ConsumerGroupDescription_state(d);
    size_t nmembers = rd_kafka_ConsumerGroupDescription_member_count(d);
    if (st == RD_KAFKA_CONSUMER_GROUP_STATE_DEAD && nmembers == 0) {
        tally_fail("consumer group '%s' does not exist", group);
        goto out;
    }
    committed = committed_offsets(rk, ctx, group, NULL);
    if (committed == NULL)
        goto out;

    const char *assignor = rd_kafka_ConsumerGroupDescription_partition_assignor(d);
    const rd_kafka_Node_t *coord = rd_kafka_ConsumerGroupDescription_coordinator(d);
    rows = rd_kafka_topic_partition_list_copy(committed);
    if (ctx->kafka_format) {
        /* kafka-consumer-groups.sh --describe: only the offsets table (below), after a note when
         * nobody is in the group. */
        if (nmembers == 0)
            printf("\nConsumer group '%s' has no active members.\n", group);
        for (size_t m = 0; m < nmembers; m++)
            add_assigned(rows, rd_kafka_ConsumerGroupDescription_member(d, m));
        goto offsets;
    }
    printf("Group: %s\n", group);
    printf("State: %s\n", rd_kafka_consumer_group_state_name(st));
    printf("Assignor: %s\n", assignor != NULL && *assignor ? assignor : "-");
    if (coord != NULL)
        printf("Coordinator: %d (%s:%d)\n", rd_kafka_Node_id(coord), rd_kafka_Node_host(coord),
               (int)rd_kafka_Node_port(coord));
    printf("Members: %zu\n", nmembers);

    /* The members, then every partition that is assigned or has a committed offset. */
    if (nmembers > 0) {
        struct table t;
        table_init(&t, 6);
        table_row(&t, "MEMBER-ID", "GROUP-INSTANCE-ID", "CLIENT-ID", "HOST", "#PARTITIONS",
                  "ASSIGNMENT");
        for (size_t m = 0; m < nmembers; m++) {
            const rd_kafka_MemberDescription_t *md = rd_kafka_ConsumerGroupDescription_member(d, m);
            const rd_kafka_MemberAssignment_t *a = rd_kafka_MemberDescription_assignment(md);
            const rd_kafka_topic_partition_list_t *l =
                a != NULL ? rd_kafka_MemberAssignment_partitions(a) : NULL;
            rd_kafka_topic_partition_list_t *copy =
                l != NULL ? rd_kafka_topic_partition_list_copy(l) : NULL;
            add_assigned(rows, md);
            char count[16];
            snprintf(count, sizeof count, "%d", copy != NULL ? copy->cnt : 0);
            char *text = format_assignment(copy);
            const char *inst = rd_kafka_MemberDescription_group_instance_id(md);
            table_row(&t, rd_kafka_MemberDescription_consumer_id(md),
                      inst != NULL && *inst ? inst : "-", rd_kafka_MemberDescription_client_id(md),
                      rd_kafka_MemberDescription_host(md), count, text != NULL ? text : "?");
            free(text);
            if (copy != NULL)
                rd_kafka_topic_partition_list_destroy(copy);
        }
        printf("\n");
        if (table_print(&t) != TALLY_OK)
            goto out;
    }

offsets:
    qsort(rows->elems, (size_t)rows->cnt, sizeof *rows->elems, cmp_tp);
    struct table t;
    table_init(&t, 9);
    table_row(&t, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
              "CONSUMER-ID", "HOST", "CLIENT-ID");
    for (int i = 0; i < rows->cnt; i++) {
        const rd_kafka_topic_partition_t *p = &rows->elems[i];
        char part[16], cur[24] = "-", leo[24] = "-", lag[24] = "-";
        int64_t lo = 0, hi = 0;
        snprintf(part, sizeof part, "%d", (int)p->partition);
        if (p->offset >= 0)
            snprintf(cur, sizeof cur, "%" PRId64, p->offset);
        rd_kafka_resp_err_t err =
            rd_kafka_query_watermark_offsets(rk, p->topic, p->partition, &lo, &hi, ctx->timeout_ms);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            snprintf(leo, sizeof leo, "%" PRId64, hi);
            if (p->offset >= 0)
                snprintf(lag, sizeof lag, "%" PRId64, hi - p->offset);
        }
        int m = owner_of(d, p->topic, p->partition);
        const rd_kafka_MemberDescription_t *md =
            m >= 0 ? rd_kafka_ConsumerGroupDescription_member(d, (size_t)m) : NULL;
        table_row(&t, group, p->topic, part, cur, leo, lag,
                  md ? rd_kafka_MemberDescription_consumer_id(md) : "-",
                  md ? rd_kafka_MemberDescription_host(md) : "-",
                  md ? rd_kafka_MemberDescription_client_id(md) : "-");
    }
    printf("\n");
    rc = table_print(&t);
out:
    if (rows != NULL)
        rd_kafka_topic_partition_list_destroy(rows);
    if (committed != NULL)
        rd_kafka_topic_partition_list_destroy(committed);
    rd_kafka_event_destroy(ev);
    return rc;
}

static int groups_describe(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (wants_help(argc, argv, describe_usage))
        return TALLY_OK;
    if (argc < 3)
        return tally_usage_error("groups describe needs a group id");
    for (int i = 2; i < argc; i++)
        if (argv[i][0] == '-')
            return tally_usage_error("unknown option '%s'", argv[i]);
    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    int rc = TALLY_OK;
    for (int i = 2; i < argc; i++) {
        if (i > 2)
            printf("\n");
        if (describe_one(rk, ctx, argv[i]) != TALLY_OK)
            rc = TALLY_FAIL;
    }
    rd_kafka_destroy(rk);
    return rc;
}

/* ---- delete ----------------------------------------------------------------------------- */

static int groups_delete(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (wants_help(argc, argv, delete_usage))
        return TALLY_OK;
    if (argc < 3)
        return tally_usage_error("groups delete needs at least one group id");
    for (int i = 2; i < argc; i++)
        if (argv[i][0] == '-')
            return tally_usage_error("unknown option '%s'", argv[i]);

    size_t n = (size_t)argc - 2;
    int rc = TALLY_FAIL;
    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    rd_kafka_DeleteGroup_t **dg = calloc(n, sizeof *dg);
    if (dg == NULL) {
        tally_fail("out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        dg[i] = rd_kafka_DeleteGroup_new(argv[i + 2]);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts = tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_DELETEGROUPS);
    rd_kafka_DeleteGroups(rk, dg, n, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_DELETEGROUPS_RESULT, "delete groups");
    if (ev != NULL) {
        size_t cnt = 0;
        const rd_kafka_group_result_t **res =
            rd_kafka_DeleteGroups_result_groups(rd_kafka_event_DeleteGroups_result(ev), &cnt);
        rc = cnt == n ? TALLY_OK : tally_fail("delete groups: broker returned %zu results", cnt);
        for (size_t i = 0; i < cnt; i++) {
            const rd_kafka_error_t *err = rd_kafka_group_result_error(res[i]);
            const char *g = rd_kafka_group_result_name(res[i]);
            if (err != NULL)
                rc = tally_fail("cannot delete group '%s': %s: %s", g, rd_kafka_error_name(err),
                                rd_kafka_error_string(err));
            else if (ctx->kafka_format)
                printf("Deletion of requested consumer groups ('%s') was successful.\n", g);
            else
                printf("Deleted group %s.\n", g);
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_DeleteGroup_destroy_array(dg, n);
    free(dg);
out:
    rd_kafka_destroy(rk);
    return rc;
}

/* ---- delete-offsets --------------------------------------------------------------------- */

/* GROUP and the --topic values of delete-offsets and reset-offsets. */
struct topic_args {
    const char *group;
    const char *topics[64];
    int ntopics;
};

static int groups_delete_offsets(const struct tally_ctx *ctx, int argc, char **argv)
{
    struct topic_args ta = {0};
    if (wants_help(argc, argv, delete_offsets_usage))
        return TALLY_OK;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--topic") == 0) {
            if (i + 1 >= argc)
                return tally_usage_error("--topic needs T or T:P[,P...]");
            if (ta.ntopics == (int)(sizeof ta.topics / sizeof ta.topics[0]))
                return tally_usage_error("too many --topic options");
            ta.topics[ta.ntopics++] = argv[++i];
        } else if (argv[i][0] == '-') {
            return tally_usage_error("unknown option '%s'", argv[i]);
        } else if (ta.group == NULL) {
            ta.group = argv[i];
        } else {
            return tally_usage_error("unexpected argument '%s'", argv[i]);
        }
    }
    if (ta.group == NULL || ta.ntopics == 0)
        return tally_usage_error("groups delete-offsets needs GROUP and --topic");

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    int rc = TALLY_FAIL;
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(8);
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    for (int i = 0; i < ta.ntopics; i++) {
        int r = add_topic_spec(parts, ta.topics[i], md);
        if (r != TALLY_OK) {
            rc = r;
            goto out_md;
        }
    }

    rd_kafka_DeleteConsumerGroupOffsets_t *del =
        rd_kafka_DeleteConsumerGroupOffsets_new(ta.group, parts);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts =
        tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_DELETECONSUMERGROUPOFFSETS);
    rd_kafka_DeleteConsumerGroupOffsets(rk, &del, 1, opts, q);
    rd_kafka_event_t *ev = tally_admin_wait(
        q, ctx, RD_KAFKA_EVENT_DELETECONSUMERGROUPOFFSETS_RESULT, "delete offsets");
    if (ev != NULL) {
        size_t cnt = 0;
        const rd_kafka_group_result_t **g = rd_kafka_DeleteConsumerGroupOffsets_result_groups(
            rd_kafka_event_DeleteConsumerGroupOffsets_result(ev), &cnt);
        const rd_kafka_error_t *err = cnt == 1 ? rd_kafka_group_result_error(g[0]) : NULL;
        if (cnt != 1) {
            tally_fail("delete offsets: broker returned %zu results", cnt);
        } else if (err != NULL) {
            tally_fail("cannot delete offsets of group '%s': %s: %s", ta.group,
                       rd_kafka_error_name(err), rd_kafka_error_string(err));
        } else {
            const rd_kafka_topic_partition_list_t *res = rd_kafka_group_result_partitions(g[0]);
            rd_kafka_topic_partition_list_t *sorted = res != NULL
                                                          ? rd_kafka_topic_partition_list_copy(res)
                                                          : rd_kafka_topic_partition_list_new(0);
            qsort(sorted->elems, (size_t)sorted->cnt, sizeof *sorted->elems, cmp_tp);
            struct table t;
            int failed = 0;
            table_init(&t, 3);
            table_row(&t, "TOPIC", "PARTITION", "STATUS");
            for (int i = 0; i < sorted->cnt; i++) {
                char part[16], status[128];
                snprintf(part, sizeof part, "%d", (int)sorted->elems[i].partition);
                if (sorted->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                    snprintf(status, sizeof status, "Successful");
                } else {
                    snprintf(status, sizeof status, "Error: %s",
                             rd_kafka_err2name(sorted->elems[i].err));
                    failed++;
                }
                table_row(&t, sorted->elems[i].topic, part, status);
            }
            rd_kafka_topic_partition_list_destroy(sorted);
            rc = table_print(&t);
            if (rc == TALLY_OK && failed > 0)
                rc = tally_fail("%d partition(s) of group '%s' kept their offsets", failed,
                                ta.group);
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_DeleteConsumerGroupOffsets_destroy(del);
out_md:
    rd_kafka_metadata_destroy(md);
out:
    rd_kafka_topic_partition_list_destroy(parts);
    rd_kafka_destroy(rk);
    return rc;
}

/* ---- reset-offsets ---------------------------------------------------------------------- */

enum reset_mode {
    RESET_NONE,
    RESET_EARLIEST,
    RESET_LATEST,
    RESET_OFFSET,
    RESET_DATETIME,
    RESET_SHIFT
};

/* Parses YYYY-MM-DDTHH:MM:SS[.sss][Z|±HH[:]MM] into ms since the epoch; without a zone
 * the local time zone applies, as kafka-consumer-groups.sh does. */
static bool parse_datetime(const char *s, int64_t *ms_out)
{
    struct tm tm = {0};
    int ms = 0, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6 ||
        n != 19)
        return false;
    const char *p = s + n;
    if (*p == '.') {
        int digits = 0;
        for (p++; isdigit((unsigned char)*p); p++, digits++)
            if (digits < 3)
                ms = ms * 10 + (*p - '0');
        if (digits == 0)
            return false;
        for (; digits < 3; digits++)
            ms *= 10;
    }
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
        tm.tm_min > 59 || tm.tm_sec > 60)
        return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t secs;
    if (*p == '\0') {
        tm.tm_isdst = -1;
        secs = mktime(&tm);
    } else {
        long off = 0;
        if (strcmp(p, "Z") != 0) {
            int hh, mm;
            char sign = *p;
            if ((sign != '+' && sign != '-') ||
                (sscanf(p + 1, "%2d:%2d%n", &hh, &mm, &n) != 2 &&
                 sscanf(p + 1, "%2d%2d%n", &hh, &mm, &n) != 2) ||
                p[1 + n] != '\0' || hh > 23 || mm > 59)
                return false;
            off = (hh * 60L + mm) * 60L * (sign == '-' ? -1 : 1);
        }
        secs = timegm(&tm) - off;
    }
    if (secs == (time_t)-1)
        return false;
    *ms_out = (int64_t)secs * 1000 + ms;
    return true;
}

static int groups_reset_offsets(const struct tally_ctx *ctx, int argc, char **argv)
{
    struct topic_args ta = {0};
    enum reset_mode mode = RESET_NONE;
    int64_t arg = 0;
    bool execute = false;

    if (wants_help(argc, argv, reset_usage))
        return TALLY_OK;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        enum reset_mode m = RESET_NONE;
        if (strcmp(a, "--topic") == 0) {
            if (i + 1 >= argc)
                return tally_usage_error("--topic needs T or T:P[,P...]");
            if (ta.ntopics == (int)(sizeof ta.topics / sizeof ta.topics[0]))
                return tally_usage_error("too many --topic options");
            ta.topics[ta.ntopics++] = argv[++i];
            continue;
        } else if (strcmp(a, "--execute") == 0) {
            execute = true;
            continue;
        } else if (strcmp(a, "--dry-run") == 0) {
            continue;
        } else if (strcmp(a, "--to-earliest") == 0) {
            m = RESET_EARLIEST;
        } else if (strcmp(a, "--to-latest") == 0) {
            m = RESET_LATEST;
        } else if (strcmp(a, "--to-offset") == 0 || strcmp(a, "--shift-by") == 0) {
            m = a[2] == 't' ? RESET_OFFSET : RESET_SHIFT;
            if (i + 1 >= argc || !parse_i64(argv[i + 1], &arg) || (m == RESET_OFFSET && arg < 0))
                return tally_usage_error("%s needs %s", a,
                                         m == RESET_OFFSET ? "an offset >= 0" : "a number");
            i++;
        } else if (strcmp(a, "--to-datetime") == 0) {
            m = RESET_DATETIME;
            if (i + 1 >= argc || !parse_datetime(argv[i + 1], &arg))
                return tally_usage_error("--to-datetime needs YYYY-MM-DDTHH:MM:SS[.sss][Z|+HH:MM]");
            i++;
        } else if (a[0] == '-') {
            return tally_usage_error("unknown option '%s'", a);
        } else if (ta.group == NULL) {
            ta.group = a;
            continue;
        } else {
            return tally_usage_error("unexpected argument '%s'", a);
        }
        if (mode != RESET_NONE)
            return tally_usage_error("give exactly one of --to-earliest, --to-latest, "
                                     "--to-offset, --to-datetime, --shift-by");
        mode = m;
    }
    if (ta.group == NULL || ta.ntopics == 0 || mode == RESET_NONE)
        return tally_usage_error("groups reset-offsets needs GROUP, --topic and one of "
                                 "--to-earliest, --to-latest, --to-offset, --to-datetime, "
                                 "--shift-by");

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    int rc = TALLY_FAIL;
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(8);
    rd_kafka_topic_partition_list_t *committed = NULL, *times = NULL;
    const rd_kafka_ConsumerGroupDescription_t *d = NULL;
    rd_kafka_event_t *dev = NULL;
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    if (md == NULL)
        goto out;
    for (int i = 0; i < ta.ntopics; i++) {
        int r = add_topic_spec(parts, ta.topics[i], md);
        if (r != TALLY_OK) {
            rc = r;
            goto out;
        }
    }
    qsort(parts->elems, (size_t)parts->cnt, sizeof *parts->elems, cmp_tp);

    /* Members would overwrite the new offsets with their own positions at their next
     * commit, so only an inactive group may be reset (the dry run says so too). */
    dev = describe_group(rk, ctx, ta.group, &d);
    if (dev == NULL)
        goto out;
    rd_kafka_consumer_group_state_t st = rd_kafka_ConsumerGroupDescription_state(d);
    size_t nmembers = rd_kafka_ConsumerGroupDescription_member_count(d);
    if (nmembers > 0 ||
        (st != RD_KAFKA_CONSUMER_GROUP_STATE_EMPTY && st != RD_KAFKA_CONSUMER_GROUP_STATE_DEAD)) {
        tally_fail("cannot reset offsets of group '%s': it has %zu active member(s) (state %s); "
                   "stop its consumers first",
                   ta.group, nmembers, rd_kafka_consumer_group_state_name(st));
        goto out;
    }

    committed = committed_offsets(rk, ctx, ta.group, parts);
    if (committed == NULL)
        goto out;
    if (mode == RESET_DATETIME) {
        times = rd_kafka_topic_partition_list_copy(parts);
        for (int i = 0; i < times->cnt; i++)
            times->elems[i].offset = arg;
        rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk, times, ctx->timeout_ms);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            tally_fail("cannot look up offsets by time: %s", rd_kafka_err2name(err));
            goto out;
        }
    }

    /* The plan: each partition's new offset, kept within [log start, log end] as
     * kafka-consumer-groups.sh keeps it. */
    struct table t;
    if (ctx->kafka_format) {
        /* kafka-consumer-groups.sh --reset-offsets: a blank line, then GROUP TOPIC PARTITION
         * NEW-OFFSET. */
        printf("\n");
        table_init(&t, 4);
        table_row(&t, "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET");
    } else {
        table_init(&t, 5);
        table_row(&t, "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET");
    }
    for (int i = 0; i < parts->cnt; i++) {
        rd_kafka_topic_partition_t *p = &parts->elems[i];
        int64_t lo = 0, hi = 0, target = 0;
        rd_kafka_resp_err_t err =
            rd_kafka_query_watermark_offsets(rk, p->topic, p->partition, &lo, &hi, ctx->timeout_ms);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            table_print(&t);
            tally_fail("cannot read the offsets of %s [%d]: %s", p->topic, (int)p->partition,
                       rd_kafka_err2name(err));
            goto out;
        }
        const rd_kafka_topic_partition_t *c =
            rd_kafka_topic_partition_list_find(committed, p->topic, p->partition);
        int64_t cur = c != NULL ? c->offset : RD_KAFKA_OFFSET_INVALID;
        switch (mode) {
        case RESET_EARLIEST:
            target = lo;
            break;
        case RESET_LATEST:
            target = hi;
            break;
        case RESET_OFFSET:
            target = arg;
            break;
        case RESET_SHIFT:
            if (cur < 0) {
                table_print(&t);
                tally_fail("cannot shift %s [%d] of group '%s': it has no committed offset",
                           p->topic, (int)p->partition, ta.group);
                goto out;
            }
            target = cur + arg;
            break;
        case RESET_DATETIME: {
            const rd_kafka_topic_partition_t *tp =
                rd_kafka_topic_partition_list_find(times, p->topic, p->partition);
            if (tp == NULL || tp->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
                table_print(&t);
                tally_fail(
                    "cannot look up %s [%d] by time: %s", p->topic, (int)p->partition,
                    rd_kafka_err2name(tp != NULL ? tp->err : RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION));
                goto out;
            }
            /* No record at or after the time: the log end, as Kafka resets to. */
            target = tp->offset >= 0 ? tp->offset : hi;
            break;
        }
        case RESET_NONE:
            break;
        }
        if (target < lo)
            target = lo;
        if (target > hi)
            target = hi;
        p->offset = target;
        char part[16], curs[24] = "-", news[24];
        snprintf(part, sizeof part, "%d", (int)p->partition);
        if (cur >= 0)
            snprintf(curs, sizeof curs, "%" PRId64, cur);
        snprintf(news, sizeof news, "%" PRId64, target);
        if (ctx->kafka_format)
            table_row(&t, ta.group, p->topic, part, news);
        else
            table_row(&t, ta.group, p->topic, part, curs, news);
    }
    if (table_print(&t) != TALLY_OK)
        goto out;
    if (!execute && !ctx->kafka_format) {
        fprintf(stderr,
                "tally: dry run, nothing changed (add --execute to commit these offsets)\n");
        rc = TALLY_OK;
        goto out;
    }
    if (!execute) {
        rc = TALLY_OK;
        goto out;
    }

    rd_kafka_AlterConsumerGroupOffsets_t *alt =
        rd_kafka_AlterConsumerGroupOffsets_new(ta.group, parts);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts =
        tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS);
    rd_kafka_AlterConsumerGroupOffsets(rk, &alt, 1, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_ALTERCONSUMERGROUPOFFSETS_RESULT, "reset offsets");
    if (ev != NULL) {
        size_t cnt = 0;
        const rd_kafka_group_result_t **g = rd_kafka_AlterConsumerGroupOffsets_result_groups(
            rd_kafka_event_AlterConsumerGroupOffsets_result(ev), &cnt);
        const rd_kafka_error_t *err = cnt == 1 ? rd_kafka_group_result_error(g[0]) : NULL;
        if (cnt != 1) {
            tally_fail("reset offsets: broker returned %zu results", cnt);
        } else if (err != NULL) {
            tally_fail("cannot reset offsets of group '%s': %s: %s", ta.group,
                       rd_kafka_error_name(err), rd_kafka_error_string(err));
        } else {
            const rd_kafka_topic_partition_list_t *res = rd_kafka_group_result_partitions(g[0]);
            rc = TALLY_OK;
            for (int i = 0; res != NULL && i < res->cnt; i++)
                if (res->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR)
                    rc = tally_fail("cannot reset %s [%d] of group '%s': %s", res->elems[i].topic,
                                    (int)res->elems[i].partition, ta.group,
                                    rd_kafka_err2name(res->elems[i].err));
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_AlterConsumerGroupOffsets_destroy(alt);
out:
    if (dev != NULL)
        rd_kafka_event_destroy(dev);
    if (times != NULL)
        rd_kafka_topic_partition_list_destroy(times);
    if (committed != NULL)
        rd_kafka_topic_partition_list_destroy(committed);
    if (md != NULL)
        rd_kafka_metadata_destroy(md);
    rd_kafka_topic_partition_list_destroy(parts);
    rd_kafka_destroy(rk);
    return rc;
}

int tally_groups_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc < 2) {
        fputs(groups_usage, stderr);
        return TALLY_USAGE;
    }
    const char *cmd = argv[1];
    if (tally_is_help(cmd)) {
        fputs(groups_usage, stdout);
        return TALLY_OK;
    }
    if (strcmp(cmd, "list") == 0)
        return groups_list(ctx, argc, argv);
    if (strcmp(cmd, "describe") == 0)
        return groups_describe(ctx, argc, argv);
    if (strcmp(cmd, "delete") == 0)
        return groups_delete(ctx, argc, argv);
    if (strcmp(cmd, "delete-offsets") == 0)
        return groups_delete_offsets(ctx, argc, argv);
    if (strcmp(cmd, "reset-offsets") == 0)
        return groups_reset_offsets(ctx, argc, argv);
    return tally_usage_error("unknown groups command '%s'", cmd);
}
