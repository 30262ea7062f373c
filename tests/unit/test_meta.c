/* SPDX-License-Identifier: Apache-2.0 */
/* meta unit tests: apply rules of the image, the batch and snapshot formats against every
 * truncation, and real single-node (and voter + standby) raft quorums on a uv loop in a
 * temporary directory. */
#include "harness.h"
#include "fixture.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "meta/meta.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static void make_id(uint8_t id[16], int n)
{
    memset(id, 0, 16);
    id[0] = 0xA5;
    id[12] = (uint8_t)(n >> 24);
    id[13] = (uint8_t)(n >> 16);
    id[14] = (uint8_t)(n >> 8);
    id[15] = (uint8_t)n;
}

static struct meta_record rec_topic(const char *name, int id)
{
    struct meta_record r = {.type = META_REC_TOPIC};
    r.u.topic.name = name;
    make_id(r.u.topic.id, id);
    return r;
}

static const int32_t replicas3[] = {1, 2, 3};

static struct meta_record rec_partition(int id, int32_t partition, int32_t leader)
{
    struct meta_record r = {.type = META_REC_PARTITION};
    make_id(r.u.partition.topic_id, id);
    r.u.partition.partition = partition;
    r.u.partition.leader = leader;
    r.u.partition.leader_epoch = 7;
    r.u.partition.partition_epoch = 9;
    r.u.partition.n_replicas = 3;
    r.u.partition.replicas = replicas3;
    r.u.partition.n_isr = 2;
    r.u.partition.isr = replicas3;
    return r;
}

static struct meta_record rec_remove(int id)
{
    struct meta_record r = {.type = META_REC_REMOVE_TOPIC};
    make_id(r.u.remove_topic.topic_id, id);
    return r;
}

static struct meta_record rec_config(int8_t type, const char *name, const char *key,
                                     const char *value)
{
    struct meta_record r = {.type = META_REC_CONFIG};
    r.u.config.resource_type = type;
    r.u.config.resource_name = name;
    r.u.config.key = key;
    r.u.config.value = value;
    return r;
}

static struct meta_record rec_broker(int32_t id, const char *host, int32_t port, const char *rack)
{
    struct meta_record r = {.type = META_REC_REGISTER_BROKER};
    r.u.broker.id = id;
    r.u.broker.host = host;
    r.u.broker.port = port;
    r.u.broker.rack = rack;
    return r;
}

static struct meta_record rec_fence(int32_t id, bool fenced)
{
    struct meta_record r = {.type = META_REC_FENCE_BROKER};
    r.u.fence.id = id;
    r.u.fence.fenced = fenced;
    return r;
}

static struct meta_record rec_pids(int32_t broker, int64_t first, int32_t size)
{
    struct meta_record r = {.type = META_REC_PRODUCER_IDS};
    r.u.producer_ids.broker_id = broker;
    r.u.producer_ids.first_id = first;
    r.u.producer_ids.size = size;
    return r;
}

/* Encodes and applies; returns the apply result (or the encode error). */
static int apply(struct meta_image *img, const struct meta_record *recs, size_t n)
{
    uint8_t *buf;
    size_t len;
    int rv = meta_batch_encode(recs, n, &buf, &len);
    if (rv != 0)
        return rv;
    rv = meta_image_apply(img, buf, len, NULL, NULL);
    free(buf);
    return rv;
}

#define APPLY(img, ...)                                                                            \
    apply(img, (struct meta_record[]){__VA_ARGS__},                                                \
          sizeof((struct meta_record[]){__VA_ARGS__}) / sizeof(struct meta_record))

static bool same_snapshot(const struct meta_image *a, const struct meta_image *b)
{
    uint8_t *pa, *pb;
    size_t la, lb;
    bool same;
    if (meta_image_snapshot(a, &pa, &la) != 0)
        return false;
    if (meta_image_snapshot(b, &pb, &lb) != 0) {
        free(pa);
        return false;
    }
    same = la == lb && memcmp(pa, pb, la) == 0;
    free(pa);
    free(pb);
    return same;
}

/* An image with one of everything, for the format tests. */
static void fill(struct meta_image *img)
{
    CHECK_EQ_INT(APPLY(img, rec_broker(1, "h1", 9092, "r1"), rec_broker(2, "h2", 9093, NULL),
                       rec_fence(2, true)),
                 0);
    CHECK_EQ_INT(APPLY(img, rec_topic("orders", 1), rec_partition(1, 0, 1), rec_partition(1, 1, 2),
                       rec_config(2, "orders", "retention.ms", "1000"),
                       rec_config(2, "orders", "cleanup.policy", "compact")),
                 0);
    CHECK_EQ_INT(APPLY(img, rec_topic("audit", 2), rec_partition(2, 0, -1)), 0);
    CHECK_EQ_INT(APPLY(img, rec_config(4, "1", "log.retention.ms", "5"),
                       rec_config(4, "", "num.partitions", "3"), rec_pids(1, 0, 1000),
                       rec_pids(2, 1000, 500)),
                 0);
}

/* ---- image apply rules -------------------------------------------------------------------- */

TEST(meta_topic_create_with_partitions)
{
    struct meta_image *img = meta_image_new();
    const struct meta_topic *t;
    uint8_t id[16];

    REQUIRE(img);
    CHECK_EQ_INT(APPLY(img, rec_topic("t", 1), rec_partition(1, 0, 1), rec_partition(1, 1, 2)), 0);
    t = meta_image_topic_by_name(img, "t");
    REQUIRE(t);
    make_id(id, 1);
    CHECK(meta_image_topic_by_id(img, id) == t);
    CHECK_EQ_INT(t->n_partitions, 2);
    CHECK_EQ_INT(t->partitions[1].partition, 1);
    CHECK_EQ_INT(t->partitions[1].leader, 2);
    CHECK_EQ_INT(t->partitions[1].leader_epoch, 7);
    CHECK_EQ_INT(t->partitions[1].partition_epoch, 9);
    CHECK_EQ_INT(t->partitions[1].n_replicas, 3);
    CHECK_EQ_INT(t->partitions[1].replicas[2], 3);
    CHECK_EQ_INT(t->partitions[1].n_isr, 2);
    CHECK(meta_image_topic_by_name(img, "u") == NULL);
    make_id(id, 2);
    CHECK(meta_image_topic_by_id(img, id) == NULL);
    CHECK_EQ_INT(APPLY(img, rec_topic("", 5)), ERR_INVALID_TOPIC_EXCEPTION);
    meta_image_free(img);
}

/* Two CreateTopics in flight at once both pass admin's check against the image; the
 * apply is where the second of `a.b` / `a_b` must fail. */
TEST(meta_colliding_topic_names_refused_at_apply)
{
    struct meta_image *img = meta_image_new();
    REQUIRE(img);
    CHECK_EQ_INT(APPLY(img, rec_topic("a.b", 1)), 0);
    CHECK_EQ_INT(APPLY(img, rec_topic("a_b", 2)), ERR_INVALID_TOPIC_EXCEPTION);
    CHECK(meta_image_topic_by_name(img, "a_b") == NULL);
    /* Within one batch too. */
    CHECK_EQ_INT(APPLY(img, rec_topic("x_y", 3), rec_topic("x.y", 4)), ERR_INVALID_TOPIC_EXCEPTION);
    CHECK(meta_image_topic_by_name(img, "x_y") == NULL);
    /* A name freed earlier in the batch no longer collides. */
    CHECK_EQ_INT(APPLY(img, rec_remove(1), rec_topic("a_b", 5)), 0);
    CHECK(meta_image_topic_by_name(img, "a_b") != NULL);
    CHECK(meta_topic_names_collide("a.b_c", "a_b.c"));
    CHECK(!meta_topic_names_collide("a.b", "a.bc"));
    meta_image_free(img);
}

TEST(meta_duplicate_topic_applies_nothing)
{
    struct meta_image *img = meta_image_new();
    REQUIRE(img);
    CHECK_EQ_INT(APPLY(img, rec_topic("a", 1)), 0);
    CHECK_EQ_INT(APPLY(img, rec_topic("b", 2), rec_partition(2, 0, 1), rec_topic("a", 3)),
                 ERR_TOPIC_ALREADY_EXISTS);
    CHECK(meta_image_topic_by_name(img, "b") == NULL);
    /* Same name twice in one batch, and a reused id. */
    CHECK_EQ_INT(APPLY(img, rec_topic("c", 4), rec_topic("c", 5)), ERR_TOPIC_ALREADY_EXISTS);
    CHECK_EQ_INT(APPLY(img, rec_topic("d", 1)), ERR_TOPIC_ALREADY_EXISTS);
    CHECK(meta_image_topic_by_name(img, "c") == NULL);
    CHECK(meta_image_topic_by_name(img, "d") == NULL);
    /* Removed earlier in the same batch frees the name. */
    CHECK_EQ_INT(APPLY(img, rec_remove(1), rec_topic("a", 6)), 0);
    REQUIRE(meta_image_topic_by_name(img, "a"));
    CHECK_EQ_INT(meta_image_topic_by_name(img, "a")->id[15], 6);
    meta_image_free(img);
}

TEST(meta_partitions_contiguous)
{
    struct meta_image *img = meta_image_new();
    const struct meta_topic *t;
    REQUIRE(img);
    CHECK_EQ_INT(APPLY(img, rec_topic("t", 1), rec_partition(1, 0, 1)), 0);
    CHECK_EQ_INT(APPLY(img, rec_partition(1, 2, 1)), ERR_INVALID_PARTITIONS);
    CHECK_EQ_INT(APPLY(img, rec_partition(1, -1, 1)), ERR_INVALID_PARTITIONS);
    CHECK_EQ_INT(APPLY(img, rec_partition(1, 1, 1), rec_partition(1, 3, 1)),
                 ERR_INVALID_PARTITIONS);
    t = meta_image_topic_by_name(img, "t");
    REQUIRE(t);
    CHECK_EQ_INT(t->n_partitions, 1);
    CHECK_EQ_INT(APPLY(img, rec_partition(1, 1, 1), rec_partition(1, 2, 3)), 0);
    t = meta_image_topic_by_name(img, "t");
    CHECK_EQ_INT(t->n_partitions, 3);
    CHECK_EQ_INT(t->partitions[2].leader, 3);
    /* Replacing an existing partition. */
    CHECK_EQ_INT(APPLY(img, rec_partition(1, 0, 2)), 0);
    t = meta_image_topic_by_name(img, "t");
    CHECK_EQ_INT(t->n_partitions, 3);
    CHECK_EQ_INT(t->partitions[0].leader, 2);
    CHECK_EQ_INT(APPLY(img, rec_partition(9, 0, 1)), ERR_UNKNOWN_TOPIC_ID);
    CHECK_EQ_INT(APPLY(img, rec_remove(1), rec_partition(1, 3, 1)), ERR_UNKNOWN_TOPIC_ID);
    CHECK(meta_image_topic_by_name(img, "t") != NULL);
    meta_image_free(img);
}

TEST(meta_remove_topic_drops_configs)
{
    struct meta_image *img = meta_image_new();
    int32_t n = -1;
    REQUIRE(img);
    CHECK_EQ_INT(APPLY(img, rec_topic("t", 1), rec_partition(1, 0, 1),
                       rec_config(2, "t", "retention.ms", "5")),
                 0);
    CHECK_EQ_STR(meta_image_config_get(img, 2, "t", "retention.ms"), "5");
    CHECK_EQ_INT(APPLY(img, rec_remove(1)), 0);
    CHECK(meta_image_topic_by_name(img, "t") == NULL);
    CHECK(meta_image_config_get(img, 2, "t", "retention.ms") == NULL);
    CHECK_EQ_INT(APPLY(img, rec_remove(1)), ERR_UNKNOWN_TOPIC_ID);
    CHECK_EQ_INT(APPLY(img, rec_topic("t", 2)), 0);
    CHECK(meta_image_configs(img, 2, "t", &n) == NULL);
    CHECK_EQ_INT(n, 0);
    meta_image_free(img);
}

TEST(meta_configs_set_delete)
{
    struct meta_image *img = meta_image_new();
    const struct meta_config_entry *c;
    int32_t n;
    REQUIRE(img);
    CHECK_EQ_INT(APPLY(img, rec_config(4, "1", "b.key", "1"), rec_config(4, "1", "a.key", "2"),
                       rec_config(4, "", "a.key", "cluster")),
                 0);
    CHECK_EQ_STR(meta_image_config_get(img, 4, "1", "b.key"), "1");
    CHECK_EQ_STR(meta_image_config_get(img, 4, "", "a.key"), "cluster");
    c = meta_image_configs(img, 4, "1", &n);
    REQUIRE(c);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_STR(c[0].key, "a.key");
    CHECK_EQ_STR(c[1].key, "b.key");
    CHECK_EQ_INT(APPLY(img, rec_config(4, "1", "a.key", "3")), 0);
    CHECK_EQ_STR(meta_image_config_get(img, 4, "1", "a.key"), "3");
    CHECK_EQ_INT(APPLY(img, rec_config(4, "1", "a.key", NULL), rec_config(4, "1", "zz", NULL)), 0);
    CHECK(meta_image_config_get(img, 4, "1", "a.key") == NULL);
    CHECK_EQ_INT(APPLY(img, rec_config(4, "1", "b.key", NULL)), 0);
    CHECK(meta_image_configs(img, 4, "1", &n) == NULL);
    CHECK_EQ_INT(n, 0);
    /* Topic configs need the topic, which may come earlier in the same batch. */
    CHECK_EQ_INT(APPLY(img, rec_config(2, "nope", "k", "v")), ERR_UNKNOWN_TOPIC_OR_PARTITION);
    CHECK_EQ_INT(APPLY(img, rec_topic("t", 1), rec_config(2, "t", "k", "v")), 0);
    CHECK_EQ_STR(meta_image_config_get(img, 2, "t", "k"), "v");
    CHECK_EQ_INT(APPLY(img, rec_config(4, "1", "", "v")), ERR_INVALID_CONFIG);
    meta_image_free(img);
}

TEST(meta_brokers_register_fence)
{
    struct meta_image *img = meta_image_new();
    const struct meta_broker *b;
    size_t n;
    REQUIRE(img);
    CHECK_EQ_INT(APPLY(img, rec_broker(2, "h2", 9093, NULL), rec_broker(1, "h1", 9092, "r1")), 0);
    b = meta_image_brokers(img, &n);
    REQUIRE(n == 2);
    CHECK_EQ_INT(b[0].id, 1);
    CHECK_EQ_STR(b[0].host, "h1");
    CHECK_EQ_STR(b[0].rack, "r1");
    CHECK_EQ_INT(b[1].id, 2);
    CHECK(b[1].rack == NULL);
    CHECK(!b[0].fenced);
    CHECK_EQ_INT(APPLY(img, rec_fence(1, true)), 0);
    CHECK(meta_image_broker_by_id(img, 1)->fenced);
    /* Registering again replaces the registration and unfences. */
    CHECK_EQ_INT(APPLY(img, rec_broker(1, "new", 1234, NULL)), 0);
    b = meta_image_broker_by_id(img, 1);
    REQUIRE(b);
    CHECK_EQ_STR(b->host, "new");
    CHECK_EQ_INT(b->port, 1234);
    CHECK(b->rack == NULL);
    CHECK(!b->fenced);
    meta_image_brokers(img, &n);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(APPLY(img, rec_fence(7, true)), ERR_BROKER_NOT_AVAILABLE);
    CHECK_EQ_INT(APPLY(img, rec_broker(7, "h7", 1, NULL), rec_fence(7, true)), 0);
    CHECK(meta_image_broker_by_id(img, 7)->fenced);
    CHECK(meta_image_broker_by_id(img, 8) == NULL);
    meta_image_free(img);
}

TEST(meta_producer_id_blocks)
{
    struct meta_image *img = meta_image_new();
    int64_t first;
    int32_t size;
    REQUIRE(img);
    CHECK_EQ_INT(meta_image_next_producer_id(img), 0);
    CHECK(!meta_image_producer_block(img, 1, &first, &size));
    CHECK_EQ_INT(APPLY(img, rec_pids(1, 0, 1000), rec_pids(2, 1000, 1000)), 0);
    CHECK_EQ_INT(meta_image_next_producer_id(img), 2000);
    /* A racing broker that read the same next id loses. */
    CHECK_EQ_INT(APPLY(img, rec_pids(3, 1000, 1000)), ERR_DUPLICATE_RESOURCE);
    CHECK_EQ_INT(APPLY(img, rec_pids(3, 2000, 0)), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(APPLY(img, rec_pids(3, INT64_MAX - 5, 10)), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(APPLY(img, rec_pids(1, 2000, 1000)), 0);
    REQUIRE(meta_image_producer_block(img, 1, &first, &size));
    CHECK_EQ_INT(first, 2000);
    CHECK_EQ_INT(size, 1000);
    REQUIRE(meta_image_producer_block(img, 2, &first, &size));
    CHECK_EQ_INT(first, 1000);
    CHECK_EQ_INT(meta_image_next_producer_id(img), 3000);
    meta_image_free(img);
}

struct seen {
    size_t batches, records;
    enum meta_record_type last;
};

static void on_apply(void *arg, const struct meta_record *recs, size_t n)
{
    struct seen *s = arg;
    s->batches++;
    s->records += n;
    if (n)
        s->last = recs[n - 1].type;
}

TEST(meta_apply_hook_sees_records)
{
    struct meta_image *img = meta_image_new();
    struct meta_record recs[] = {rec_topic("t", 1), rec_partition(1, 0, 1)};
    struct seen s = {0};
    uint8_t *buf;
    size_t len;
    REQUIRE(img);
    REQUIRE(meta_batch_encode(recs, 2, &buf, &len) == 0);
    CHECK_EQ_INT(meta_image_apply(img, buf, len, on_apply, &s), 0);
    CHECK_EQ_INT(meta_image_apply(img, buf, len, on_apply, &s), ERR_TOPIC_ALREADY_EXISTS);
    CHECK_EQ_INT(s.batches, 1);
    CHECK_EQ_INT(s.records, 2);
    CHECK_EQ_INT(s.last, META_REC_PARTITION);
    free(buf);
    meta_image_free(img);
}

TEST(meta_many_topics_lookup)
{
    struct meta_image *img = meta_image_new();
    enum { N = 10000, PER_BATCH = 200 };
    static char names[N][16];
    struct meta_record recs[PER_BATCH];
    const struct meta_topic *const *all;
    size_t n;
    uint8_t id[16];
    REQUIRE(img);
    for (int b = 0; b < N / PER_BATCH; b++) {
        for (int i = 0; i < PER_BATCH; i++) {
            /* Ids in reverse of name order, so the two indexes disagree. */
            int k = b * PER_BATCH + i;
            snprintf(names[k], sizeof names[k], "topic-%05d", (k * 7919) % N);
            recs[i] = rec_topic(names[k], N - k);
        }
        REQUIRE(apply(img, recs, PER_BATCH) == 0);
    }
    all = meta_image_topics(img, &n);
    REQUIRE(n == N);
    for (size_t i = 1; i < n; i++)
        CHECK(strcmp(all[i - 1]->name, all[i]->name) < 0);
    for (int k = 0; k < N; k += 97) {
        const struct meta_topic *t = meta_image_topic_by_name(img, names[k]);
        REQUIRE(t);
        make_id(id, N - k);
        CHECK(meta_image_topic_by_id(img, id) == t);
    }
    meta_image_free(img);
}

/* ---- formats ------------------------------------------------------------------------------- */

TEST(meta_malformed_batch_every_truncation)
{
    struct meta_image *img = meta_image_new(), *before = meta_image_new();
    struct meta_record recs[] = {
        rec_broker(3, "h3", 1, "rack"), rec_fence(3, true),           rec_topic("x", 50),
        rec_partition(50, 0, 3),        rec_config(2, "x", "k", "v"), rec_config(4, "3", "k", NULL),
        rec_pids(3, 5000, 10),
    };
    uint8_t *buf, *copy;
    size_t len;
    REQUIRE(img && before);
    fill(img);
    fill(before);
    REQUIRE(meta_batch_encode(recs, sizeof recs / sizeof recs[0], &buf, &len) == 0);
    for (size_t cut = 0; cut < len; cut++) {
        /* A copy of exactly `cut` bytes so ASan sees any read past the end. */
        copy = malloc(cut ? cut : 1);
        REQUIRE(copy);
        memcpy(copy, buf, cut);
        CHECK_EQ_INT(meta_image_apply(img, copy, cut, NULL, NULL), ERR_PARSE);
        free(copy);
    }
    CHECK(same_snapshot(img, before));
    /* Trailing bytes, another version, an unknown type. */
    copy = malloc(len + 1);
    REQUIRE(copy);
    memcpy(copy, buf, len);
    copy[len] = 0;
    CHECK_EQ_INT(meta_image_apply(img, copy, len + 1, NULL, NULL), ERR_PARSE);
    copy[0] = 2;
    CHECK_EQ_INT(meta_image_apply(img, copy, len, NULL, NULL), ERR_PARSE);
    copy[0] = 1;
    copy[5] = 99;
    CHECK_EQ_INT(meta_image_apply(img, copy, len, NULL, NULL), ERR_PARSE);
    CHECK(same_snapshot(img, before));
    /* Every single-byte corruption must be rejected or applied, never crash. */
    for (size_t i = 0; i < len; i++) {
        struct meta_image *scratch = meta_image_new();
        REQUIRE(scratch);
        memcpy(copy, buf, len);
        copy[i] ^= 0xFF;
        (void)meta_image_apply(scratch, copy, len, NULL, NULL);
        meta_image_free(scratch);
    }
    CHECK_EQ_INT(meta_image_apply(img, buf, len, NULL, NULL), 0);
    CHECK(meta_image_topic_by_name(img, "x") != NULL);
    free(copy);
    free(buf);
    meta_image_free(img);
    meta_image_free(before);
}

TEST(meta_encode_rejects_missing_fields)
{
    uint8_t *buf = NULL;
    size_t len;
    struct meta_record r = rec_topic(NULL, 1);
    CHECK_EQ_INT(meta_batch_encode(&r, 1, &buf, &len), ERR_INVALID_REQUEST);
    r = rec_config(4, "1", NULL, "v");
    CHECK_EQ_INT(meta_batch_encode(&r, 1, &buf, &len), ERR_INVALID_REQUEST);
    r = rec_partition(1, 0, 1);
    r.u.partition.n_replicas = -1;
    CHECK_EQ_INT(meta_batch_encode(&r, 1, &buf, &len), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(meta_batch_encode(NULL, 0, &buf, &len), 0);
    CHECK_EQ_INT(len, 5);
    free(buf);
}

TEST(meta_snapshot_restore_identical)
{
    struct meta_image *img = meta_image_new(), *copy = meta_image_new();
    const struct meta_topic *t;
    const struct meta_broker *b;
    uint8_t *snap, *cut;
    size_t len, n;
    int64_t first;
    int32_t size;
    uint8_t id[16];

    REQUIRE(img && copy);
    fill(img);
    REQUIRE(meta_image_snapshot(img, &snap, &len) == 0);
    /* Restore replaces whatever was there. */
    CHECK_EQ_INT(APPLY(copy, rec_topic("stale", 99), rec_broker(9, "x", 1, NULL)), 0);
    CHECK_EQ_INT(meta_image_restore(copy, snap, len), 0);
    CHECK(same_snapshot(img, copy));
    CHECK(meta_image_topic_by_name(copy, "stale") == NULL);
    t = meta_image_topic_by_name(copy, "orders");
    REQUIRE(t);
    make_id(id, 1);
    CHECK(meta_image_topic_by_id(copy, id) == t);
    CHECK_EQ_INT(t->n_partitions, 2);
    CHECK_EQ_INT(t->partitions[1].leader, 2);
    CHECK_EQ_INT(t->partitions[1].n_isr, 2);
    CHECK_EQ_STR(meta_image_config_get(copy, 2, "orders", "cleanup.policy"), "compact");
    CHECK_EQ_STR(meta_image_config_get(copy, 4, "1", "log.retention.ms"), "5");
    CHECK_EQ_STR(meta_image_config_get(copy, 4, "", "num.partitions"), "3");
    b = meta_image_brokers(copy, &n);
    REQUIRE(n == 2);
    CHECK_EQ_STR(b[0].rack, "r1");
    CHECK(b[1].fenced);
    CHECK_EQ_INT(meta_image_next_producer_id(copy), 1500);
    REQUIRE(meta_image_producer_block(copy, 2, &first, &size));
    CHECK_EQ_INT(first, 1000);
    CHECK_EQ_INT(size, 500);
    /* The restored image keeps applying by the same rules. */
    CHECK_EQ_INT(APPLY(copy, rec_topic("audit", 77)), ERR_TOPIC_ALREADY_EXISTS);
    CHECK_EQ_INT(APPLY(copy, rec_partition(1, 2, 1)), 0);

    /* Every truncation fails and leaves the image as it was. */
    for (size_t k = 0; k < len; k++) {
        cut = malloc(k ? k : 1);
        REQUIRE(cut);
        memcpy(cut, snap, k);
        CHECK_EQ_INT(meta_image_restore(img, cut, k), ERR_PARSE);
        free(cut);
    }
    cut = malloc(len + 1);
    REQUIRE(cut);
    memcpy(cut, snap, len);
    cut[len] = 0;
    CHECK_EQ_INT(meta_image_restore(img, cut, len + 1), ERR_PARSE);
    for (size_t i = 0; i < len; i++) {
        struct meta_image *scratch = meta_image_new();
        REQUIRE(scratch);
        memcpy(cut, snap, len);
        cut[i] ^= 0xFF;
        (void)meta_image_restore(scratch, cut, len);
        meta_image_free(scratch);
    }
    free(cut);
    t = meta_image_topic_by_name(img, "orders");
    REQUIRE(t);
    CHECK_EQ_INT(t->n_partitions, 2);
    free(snap);
    meta_image_free(img);
    meta_image_free(copy);
}

/* ---- raft --------------------------------------------------------------------------------- */

struct node {
    struct tclock *clock; /* real, on the test's loop */
    struct meta_voter voter;
    char dir[256], listen[64];
    struct meta_options opts;
    struct seen seen;
};

static void node_init(struct node *n, uv_loop_t *loop, const char *base, int32_t id,
                      size_t n_voters, const struct meta_voter *voters)
{
    n->clock = tclock_real_new(loop);
    int port = fixture_free_port();
    snprintf(n->dir, sizeof n->dir, "%s/node-%d", base, id);
    snprintf(n->listen, sizeof n->listen, "127.0.0.1:%d", port);
    n->voter.id = id;
    snprintf(n->voter.address, sizeof n->voter.address, "%s", n->listen);
    memset(&n->seen, 0, sizeof n->seen);
    n->opts = (struct meta_options){
        .clock = n->clock,
        .node_id = id,
        .dir = n->dir,
        .cluster_id = "test-cluster",
        .n_voters = n_voters,
        .voters = voters ? voters : &n->voter,
        .listen_address = n->listen,
        .on_apply = on_apply,
        .on_apply_arg = &n->seen,
    };
}

TEST(meta_raft_single_voter_replay)
{
    char base[] = "/tmp/tally-meta-XXXXXX";
    uv_loop_t loop;
    struct meta *m = NULL;
    struct node n;
    struct fixture_wait w = {.want = 1};
    struct meta_record recs[] = {rec_topic("replayed", 1), rec_partition(1, 0, 0),
                                 rec_config(2, "replayed", "retention.ms", "42")};
    const struct meta_topic *t;

    REQUIRE(mkdtemp(base) != NULL);
    REQUIRE(uv_loop_init(&loop) == 0);
    node_init(&n, &loop, base, 0, 1, NULL);

    REQUIRE(meta_start(&loop, &n.opts, &m) == 0);
    CHECK_EQ_STR(meta_cluster_id(m), "test-cluster");
    REQUIRE(fixture_wait_ready(&loop, m, 3000));
    CHECK(meta_is_controller(m));
    CHECK_EQ_INT(meta_controller_id(m), 0);
    REQUIRE(meta_propose(m, recs, 3, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 3000));
    CHECK_EQ_INT(w.err, 0);
    t = meta_topic_by_name(m, "replayed");
    REQUIRE(t);
    CHECK(meta_topic_by_id(m, t->id) == t);
    CHECK_EQ_INT(n.seen.batches, 1);
    /* The apply step's verdict reaches the proposer. */
    w = (struct fixture_wait){.want = 1};
    REQUIRE(meta_propose(m, recs, 1, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 3000));
    CHECK_EQ_INT(w.err, ERR_TOPIC_ALREADY_EXISTS);
    REQUIRE(fixture_stop_meta(&loop, m));

    /* Same dir again: the log replays into a fresh image. These batches are not multiples of
     * 8 bytes long; before quorum.c padded entries, libraft wrote them into a segment it
     * could not read back and this restart failed. */
    memset(&n.seen, 0, sizeof n.seen);
    m = NULL;
    REQUIRE(meta_start(&loop, &n.opts, &m) == 0);
    REQUIRE(fixture_wait_ready(&loop, m, 3000));
    t = meta_topic_by_name(m, "replayed");
    REQUIRE(t);
    CHECK_EQ_INT(t->n_partitions, 1);
    CHECK_EQ_STR(meta_config_get(m, 2, "replayed", "retention.ms"), "42");
    CHECK(n.seen.batches >= 1);
    REQUIRE(fixture_stop_meta(&loop, m));

    tclock_free(n.clock);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    fixture_rm_tree(base);
}

/* Regression (issue 7, defect 2): with its segments gone, libraft loaded an empty log without
 * a configuration and the node waited for an election forever; now meta_start refuses. */
TEST(meta_raft_refuses_a_log_without_its_segments)
{
    char base[] = "/tmp/tally-meta-XXXXXX";
    uv_loop_t loop;
    struct meta *m = NULL;
    struct node n;
    struct fixture_wait w = {.want = 1};
    struct meta_record recs[] = {rec_topic("lost", 1), rec_partition(1, 0, 0)};
    DIR *d;
    struct dirent *e;
    int removed = 0;

    REQUIRE(mkdtemp(base) != NULL);
    REQUIRE(uv_loop_init(&loop) == 0);
    node_init(&n, &loop, base, 0, 1, NULL);
    REQUIRE(meta_start(&loop, &n.opts, &m) == 0);
    REQUIRE(fixture_wait_ready(&loop, m, 3000));
    REQUIRE(meta_propose(m, recs, 2, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 3000));
    REQUIRE(fixture_stop_meta(&loop, m));

    /* Delete every segment (closed "<first>-<last>" and open "open-<n>"), keep metadata1/2. */
    REQUIRE((d = opendir(n.opts.dir)) != NULL);
    while ((e = readdir(d)) != NULL) {
        char path[512];
        if (strncmp(e->d_name, "open-", 5) != 0 && !(e->d_name[0] >= '0' && e->d_name[0] <= '9'))
            continue;
        snprintf(path, sizeof path, "%s/%s", n.opts.dir, e->d_name);
        if (unlink(path) == 0)
            removed++;
    }
    closedir(d);
    REQUIRE(removed > 0);

    m = NULL;
    CHECK(meta_start(&loop, &n.opts, &m) != 0);
    if (m != NULL) /* the old behaviour: started, and would never be ready */
        REQUIRE(fixture_stop_meta(&loop, m));
    uv_run(&loop, UV_RUN_DEFAULT); /* a refused start closes raft asynchronously */
    tclock_free(n.clock);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    fixture_rm_tree(base);
}

static bool has_snapshot(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool found = false;
    if (d == NULL)
        return false;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "snapshot-", 9) == 0)
            found = true;
    closedir(d);
    return found;
}

TEST(meta_raft_snapshot_replay)
{
    enum { N = 1200 };
    char base[] = "/tmp/tally-meta-XXXXXX";
    static char names[N][16];
    uv_loop_t loop;
    struct meta *m = NULL;
    struct node n;
    struct fixture_wait w = {.want = N};
    size_t count;

    REQUIRE(mkdtemp(base) != NULL);
    REQUIRE(uv_loop_init(&loop) == 0);
    node_init(&n, &loop, base, 1, 1, NULL);
    REQUIRE(meta_start(&loop, &n.opts, &m) == 0);
    REQUIRE(fixture_wait_ready(&loop, m, 3000));
    /* More entries than the snapshot threshold, so the restart restores a snapshot and
     * replays only the tail. */
    for (int i = 0; i < N; i++) {
        struct meta_record r;
        snprintf(names[i], sizeof names[i], "s-%04d", i);
        r = rec_topic(names[i], i + 1);
        REQUIRE(meta_propose(m, &r, 1, fixture_propose_cb, &w) == 0);
    }
    REQUIRE(fixture_run_until(&loop, &w.done, 20000));
    CHECK_EQ_INT(w.err, 0);
    REQUIRE(fixture_stop_meta(&loop, m));
    CHECK(has_snapshot(n.dir));

    memset(&n.seen, 0, sizeof n.seen);
    m = NULL;
    REQUIRE(meta_start(&loop, &n.opts, &m) == 0);
    REQUIRE(fixture_wait_ready(&loop, m, 5000));
    meta_topics(m, &count);
    CHECK_EQ_INT(count, N);
    CHECK(meta_topic_by_name(m, "s-0000") != NULL);
    CHECK(meta_topic_by_name(m, "s-1199") != NULL);
    /* on_apply heard of every topic: the restored ones as records, then the replayed tail. */
    CHECK(n.seen.records >= N);
    REQUIRE(fixture_stop_meta(&loop, m));
    tclock_free(n.clock);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    fixture_rm_tree(base);
}

TEST(meta_raft_standby_follows)
{
    char base[] = "/tmp/tally-meta-XXXXXX";
    uv_loop_t loop;
    struct meta *leader = NULL, *standby = NULL;
    struct node a, b;
    struct fixture_wait w = {.want = 1};
    struct meta_record recs[] = {rec_topic("shared", 1), rec_partition(1, 0, 0)};
    struct meta_voter voters[1];
    bool seen = false;

    REQUIRE(mkdtemp(base) != NULL);
    REQUIRE(uv_loop_init(&loop) == 0);
    node_init(&a, &loop, base, 0, 1, NULL);
    voters[0] = a.voter;
    node_init(&b, &loop, base, 1, 1, voters);
    a.opts.voters = voters;

    REQUIRE(meta_start(&loop, &a.opts, &leader) == 0);
    REQUIRE(meta_start(&loop, &b.opts, &standby) == 0);
    REQUIRE(fixture_wait_ready(&loop, leader, 3000));
    CHECK(!meta_ready(standby));
    CHECK_EQ_INT(meta_propose(standby, recs, 2, fixture_propose_cb, &w), ERR_NOT_CONTROLLER);
    CHECK_EQ_INT(meta_add_standby(standby, 1, b.listen, fixture_propose_cb, &w),
                 ERR_NOT_CONTROLLER);
    REQUIRE(meta_propose(leader, recs, 2, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 3000));
    CHECK_EQ_INT(w.err, 0);

    w = (struct fixture_wait){.want = 1};
    REQUIRE(meta_add_standby(leader, 1, b.listen, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 5000));
    CHECK_EQ_INT(w.err, 0);
    CHECK_EQ_INT(meta_add_standby(leader, 1, b.listen, fixture_propose_cb, &w), ERR_EXISTS);
    REQUIRE(fixture_wait_ready(&loop, standby, 5000));
    seen = meta_topic_by_name(standby, "shared") != NULL;
    CHECK(seen);
    CHECK_EQ_INT(meta_controller_id(standby), 0);
    CHECK(!meta_is_controller(standby));

    REQUIRE(fixture_stop_meta(&loop, standby));
    REQUIRE(fixture_stop_meta(&loop, leader));
    tclock_free(a.clock);
    tclock_free(b.clock);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    fixture_rm_tree(base);
}
