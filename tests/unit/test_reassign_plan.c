/* SPDX-License-Identifier: Apache-2.0 */
/* tools/reassign_plan unit tests: Kafka's reassignment and topics-to-move files read and
 * checked, the JSON written back, --generate's placement and --execute's throttle lists. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#include "../../tools/reassign_plan.h"

static char err[512];

/* What rp_print_json writes, malloc()ed. */
static char *json_of(const struct rp_plan *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    rp_print_json(f, p);
    fclose(f);
    return buf;
}

TEST(rp_reassignment_file_read_sorted_and_written_as_kafka)
{
    struct rp_plan p;
    const char *in = " { \"partitions\" : [ {\"topic\":\"b\",\"partition\":1,\"replicas\":[3,1],"
                     "\"log_dirs\":[\"any\",\"any\"]},\n {\"partition\":0,\"topic\":\"a\\u002db\","
                     "\"replicas\":[2,3,4],\"extra\":{\"x\":[1,2,null,true,1.5e3]}} ],"
                     "\"version\":1, \"comment\":\"ignored\"}\n";
    REQUIRE(rp_parse_reassignment(in, &p, err, sizeof err) == 0);
    REQUIRE(p.n == 2);
    CHECK_EQ_STR(p.moves[0].topic, "a-b");
    CHECK_EQ_INT(p.moves[0].partition, 0);
    CHECK_EQ_INT(p.moves[0].n_replicas, 3);
    CHECK_EQ_INT(p.moves[0].replicas[2], 4);
    CHECK_EQ_STR(p.moves[1].topic, "b");
    CHECK(rp_plan_find(&p, "b", 1) == &p.moves[1]);
    CHECK(rp_plan_find(&p, "b", 0) == NULL);
    char *out = json_of(&p);
    CHECK_EQ_STR(out, "{\"version\":1,\"partitions\":[{\"topic\":\"a-b\",\"partition\":0,"
                      "\"replicas\":[2,3,4],\"log_dirs\":[\"any\",\"any\",\"any\"]},{\"topic\":"
                      "\"b\",\"partition\":1,\"replicas\":[3,1],\"log_dirs\":[\"any\",\"any\"]}]}");
    free(out);
    /* What it writes reads back the same. */
    struct rp_plan q;
    out = json_of(&p);
    REQUIRE(rp_parse_reassignment(out, &q, err, sizeof err) == 0);
    CHECK_EQ_INT(q.n, 2);
    CHECK_EQ_INT(q.moves[1].replicas[0], 3);
    free(out);
    rp_plan_free(&q);
    rp_plan_free(&p);
}

TEST(rp_reassignment_file_checks_as_kafka)
{
    struct rp_plan p;
    static const struct {
        const char *json, *why;
    } bad[] = {
        {"{\"version\":1,\"partitions\":[]}", "list cannot be empty"},
        {"{\"version\":1}", "list cannot be empty"},
        {"{\"version\":2,\"partitions\":[]}", "Not supported version field value 2"},
        {"{\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"replicas\":[]}]}",
         "replica list cannot be empty"},
        {"{\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"replicas\":[1]},"
         "{\"topic\":\"t\",\"partition\":0,\"replicas\":[2]}]}",
         "duplicate topic partitions: t-0"},
        {"{\"partitions\":[{\"topic\":\"t\",\"partition\":3,\"replicas\":[1,2,1]}]}",
         "t-3 contains multiple entries for 1"},
        {"{\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"replicas\":[1,2],"
         "\"log_dirs\":[\"any\"]}]}",
         "different from size of log dirs"},
        {"{\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"replicas\":[1],"
         "\"log_dirs\":[\"/data/a\"]}]}",
         "log directory moves are not supported"},
        {"{\"partitions\":[{\"partition\":0,\"replicas\":[1]}]}", "lacks \"topic\""},
        {"{\"partitions\":[{\"topic\":\"t\",\"replicas\":[1]}]}", "lacks \"partition\""},
        {"{\"partitions\":[{\"topic\":\"t\",\"partition\":0}]}", "lacks \"replicas\""},
        {"{\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"replicas\":[1,-2]}]}",
         "out of range"},
        {"{\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"replicas\":[1]}]} x",
         "trailing characters"},
        {"{\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"replicas\":[1]}", "not valid JSON"},
        {"", "not valid JSON"},
        {"[1]", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK_EQ_INT(rp_parse_reassignment(bad[i].json, &p, err, sizeof err), -1);
        if (strstr(err, bad[i].why) == NULL) {
            char m[700];
            snprintf(m, sizeof m, "case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].why);
            harness_fail(__FILE__, __LINE__, m);
        }
        CHECK_EQ_INT(p.n, 0);
    }
}

TEST(rp_topics_file)
{
    char **t;
    size_t n;
    REQUIRE(rp_parse_topics("{\"topics\":[{\"topic\":\"x\"},{\"topic\":\"y\",\"z\":1}],"
                            "\"version\":1}",
                            &t, &n, err, sizeof err) == 0);
    REQUIRE(n == 2);
    CHECK_EQ_STR(t[0], "x");
    CHECK_EQ_STR(t[1], "y");
    rp_free_topics(t, n);
    CHECK_EQ_INT(rp_parse_topics("{\"topics\":[{\"topic\":\"x\"},{\"topic\":\"x\"}]}", &t, &n, err,
                                 sizeof err),
                 -1);
    CHECK(strstr(err, "duplicate entries: x") != NULL);
    CHECK_EQ_INT(rp_parse_topics("{\"topics\":[]}", &t, &n, err, sizeof err), -1);
    CHECK_EQ_INT(
        rp_parse_topics("{\"version\":3,\"topics\":[{\"topic\":\"x\"}]}", &t, &n, err, sizeof err),
        -1);
    CHECK(strstr(err, "version field value 3") != NULL);
}

/* Kafka's rack-unaware round robin: preferred leaders rotate over the brokers (in id order),
 * followers follow at a shift that grows each round, every partition's replicas distinct. */
TEST(rp_assign_round_robin)
{
    static const int32_t brokers[] = {4, 2, 3}; /* any order: taken in id order */
    int32_t out[6 * 2];
    REQUIRE(rp_assign(brokers, 3, 6, 2, 0, out) == 0);
    static const int32_t want[] = {2, 3, 3, 4, 4, 2, 2, 4, 3, 2, 4, 3};
    for (int i = 0; i < 12; i++)
        CHECK_EQ_INT(out[i], want[i]);
    /* Another start rotates the first replicas. */
    REQUIRE(rp_assign(brokers, 3, 1, 3, 1, out) == 0);
    CHECK_EQ_INT(out[0], 3);
    CHECK(out[1] != out[0] && out[2] != out[0] && out[1] != out[2]);
    CHECK_EQ_INT(rp_assign(brokers, 3, 1, 4, 0, out), -1);
    CHECK_EQ_INT(rp_assign(brokers, 3, 1, 0, 0, out), -1);
    static const int32_t one[] = {7};
    REQUIRE(rp_assign(one, 1, 2, 1, 0, out) == 0);
    CHECK_EQ_INT(out[0], 7);
    CHECK_EQ_INT(out[1], 7);
}

/* Kafka's --execute throttles: the leader list names every source replica, the follower list
 * every destination that is not a source; items sorted as strings; one entry per topic. */
TEST(rp_throttle_lists_as_kafka)
{
    struct rp_plan src = {0}, dst = {0};
    struct rp_throttle *t;
    size_t n;
    static const int32_t s0[] = {1, 2, 3}, d0[] = {2, 3, 4}, s10[] = {2}, d10[] = {1, 2},
                         u0[] = {5}, e0[] = {6};
    REQUIRE(rp_plan_add(&src, "t", 0, s0, 3) == 0);
    REQUIRE(rp_plan_add(&dst, "t", 0, d0, 3) == 0);
    REQUIRE(rp_plan_add(&src, "t", 10, s10, 1) == 0);
    REQUIRE(rp_plan_add(&dst, "t", 10, d10, 2) == 0);
    REQUIRE(rp_plan_add(&src, "a", 0, u0, 1) == 0);
    REQUIRE(rp_plan_add(&dst, "a", 0, e0, 1) == 0);
    REQUIRE(rp_throttles(&src, &dst, &t, &n) == 0);
    REQUIRE(n == 2);
    CHECK_EQ_STR(t[0].topic, "a");
    CHECK_EQ_STR(t[0].leader, "0:5");
    CHECK_EQ_STR(t[0].follower, "0:6");
    CHECK_EQ_STR(t[1].topic, "t");
    CHECK_EQ_STR(t[1].leader, "0:1,0:2,0:3,10:2");
    CHECK_EQ_STR(t[1].follower, "0:4,10:1");
    rp_throttles_free(t, n);
    int32_t b[16];
    size_t nb = rp_brokers(&src, &dst, b);
    REQUIRE(nb == 6);
    for (size_t i = 0; i < nb; i++)
        CHECK_EQ_INT(b[i], (int32_t)i + 1);
    rp_plan_free(&src);
    rp_plan_free(&dst);
}
