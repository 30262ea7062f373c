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

#include "base/arena.h"
#include "base/err.h"
#include "meta/meta.h"
#include "meta/meta_int.h"

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

static const struct meta_listener listeners2[] = {
    {.name = "PLAINTEXT", .host = "10.0.0.1", .port = 9092, .security_protocol = 0},
    {.name = "CONTROLLER", .host = "10.0.0.1", .port = 9093, .security_protocol = 0},
};
static const uint8_t dirs2[2][16] = {{0xD1, 1}, {0xD2, 2}};

/* A REGISTER_BROKER2 with two listeners and two log directories; `inc` marks the
 * incarnation. */
static struct meta_record rec_broker2(int32_t id, uint8_t inc, const char *rack)
{
    struct meta_record r = {.type = META_REC_REGISTER_BROKER2};
    r.u.broker.id = id;
    r.u.broker.rack = rack;
    memset(r.u.broker.incarnation, inc, 16);
    r.u.broker.n_listeners = 2;
    r.u.broker.listeners = listeners2;
    r.u.broker.n_dirs = 2;
    r.u.broker.dirs = dirs2;
    return r;
}

static struct meta_record rec_change(int32_t id, int64_t epoch, int8_t fenced, int8_t shutting)
{
    struct meta_record r = {.type = META_REC_BROKER_CHANGE};
    r.u.broker_change.id = id;
    r.u.broker_change.epoch = epoch;
    r.u.broker_change.fenced = fenced;
    r.u.broker_change.shutting_down = shutting;
    return r;
}

/* A PARTITION_CHANGE of topic `id`'s partition to leader / epochs over replicas {1,2,3} with
 * the first `n_isr` of them in the ISR. */
static struct meta_record rec_pchange(int id, int32_t partition, int32_t leader, int32_t le,
                                      int32_t pe, int32_t n_isr)
{
    struct meta_record r = rec_partition(id, partition, leader);
    r.type = META_REC_PARTITION_CHANGE;
    r.u.partition.leader_epoch = le;
    r.u.partition.partition_epoch = pe;
    r.u.partition.n_isr = n_isr;
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

/* Snapshot bytes 9..16 hold the metadata offset, which every batch moves, refused or not. */
#define SNAP_OFFSET_AT 9

static bool snapshots_equal(const struct meta_image *a, const struct meta_image *b,
                            bool with_offset)
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
    if (!with_offset && la > SNAP_OFFSET_AT + 8 && lb > SNAP_OFFSET_AT + 8) {
        memset(pa + SNAP_OFFSET_AT, 0, 8);
        memset(pb + SNAP_OFFSET_AT, 0, 8);
    }
    same = la == lb && memcmp(pa, pb, la) == 0;
    free(pa);
    free(pb);
    return same;
}

static bool same_snapshot(const struct meta_image *a, const struct meta_image *b)
{
    return snapshots_equal(a, b, true);
}

/* The same topics, brokers, configs and blocks, whatever the offsets. */
static bool same_contents(const struct meta_image *a, const struct meta_image *b)
{
    return snapshots_equal(a, b, false);
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
    /* Broker 5 registers at offset 5 and is unfenced but shutting down; partition 1 of
     * "orders" is RECOVERING and losing replica 3. */
    CHECK_EQ_INT(APPLY(img, rec_broker2(5, 0x55, "r2")), 0);
    struct meta_record pc = rec_pchange(1, 1, 2, 8, 10, 2);
    static const int32_t three[] = {3};
    pc.u.partition.leader_recovery_state = 1;
    pc.u.partition.n_removing = 1;
    pc.u.partition.removing = three;
    CHECK_EQ_INT(APPLY(img, rec_change(5, 5, 0, 1), pc), 0);
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
    /* Replacing an existing partition: compare-and-set on its epoch (9 here). */
    struct meta_record again = rec_partition(1, 0, 2);
    CHECK_EQ_INT(APPLY(img, again), ERR_INVALID_UPDATE_VERSION);
    again.u.partition.partition_epoch = 10;
    CHECK_EQ_INT(APPLY(img, again), 0);
    t = meta_image_topic_by_name(img, "t");
    CHECK_EQ_INT(t->n_partitions, 3);
    CHECK_EQ_INT(t->partitions[0].leader, 2);
    CHECK_EQ_INT(t->partitions[0].partition_epoch, 10);
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

TEST(meta_broker_registration_epochs)
{
    struct meta_image *img = meta_image_new();
    const struct meta_broker *b;
    int64_t epoch, off;
    REQUIRE(img);
    CHECK_EQ_INT(meta_image_offset(img), 0);
    CHECK_EQ_INT(APPLY(img, rec_topic("t", 1)), 0);
    CHECK_EQ_INT(APPLY(img, rec_topic("t", 1)), ERR_TOPIC_ALREADY_EXISTS);
    /* Refused batches count too. */
    CHECK_EQ_INT(meta_image_offset(img), 2);

    /* A registration starts fenced, its epoch the offset of its batch. */
    CHECK_EQ_INT(APPLY(img, rec_broker2(4, 0x11, "rack-a")), 0);
    b = meta_image_broker_by_id(img, 4);
    REQUIRE(b);
    epoch = b->epoch;
    CHECK_EQ_INT(epoch, 3);
    CHECK_EQ_INT(epoch, meta_image_offset(img));
    CHECK(b->fenced);
    CHECK(!b->shutting_down);
    CHECK_EQ_STR(b->host, "10.0.0.1");
    CHECK_EQ_INT(b->port, 9092);
    CHECK_EQ_STR(b->rack, "rack-a");
    CHECK_EQ_INT(b->incarnation[7], 0x11);
    REQUIRE(b->n_listeners == 2);
    CHECK_EQ_STR(b->listeners[1].name, "CONTROLLER");
    CHECK_EQ_INT(b->listeners[1].port, 9093);
    REQUIRE(b->n_dirs == 2);
    CHECK_EQ_INT(b->dirs[1][0], 0xD2);

    /* Changes name the epoch; another one refuses the whole batch. */
    CHECK_EQ_INT(APPLY(img, rec_topic("u", 2), rec_change(4, epoch - 1, 0, -1)),
                 ERR_STALE_BROKER_EPOCH);
    CHECK(meta_image_topic_by_name(img, "u") == NULL);
    CHECK(meta_image_broker_by_id(img, 4)->fenced);
    CHECK_EQ_INT(APPLY(img, rec_change(5, 0, 0, -1)), ERR_BROKER_NOT_AVAILABLE);
    CHECK_EQ_INT(APPLY(img, rec_change(4, epoch, 0, -1)), 0);
    CHECK(!meta_image_broker_by_id(img, 4)->fenced);
    CHECK_EQ_INT(APPLY(img, rec_change(4, epoch, -1, 1)), 0);
    b = meta_image_broker_by_id(img, 4);
    CHECK(!b->fenced);
    CHECK(b->shutting_down);

    /* Registering again: a new epoch, fenced, not shutting down; the old epoch is stale. A
     * change later in the same batch names the new epoch. */
    off = meta_image_offset(img);
    CHECK_EQ_INT(APPLY(img, rec_broker2(4, 0x22, NULL), rec_change(4, epoch, 0, -1)),
                 ERR_STALE_BROKER_EPOCH);
    CHECK_EQ_INT(APPLY(img, rec_broker2(4, 0x22, NULL), rec_change(4, off + 2, -1, -1)), 0);
    b = meta_image_broker_by_id(img, 4);
    CHECK_EQ_INT(b->epoch, off + 2);
    CHECK(b->fenced);
    CHECK(!b->shutting_down);
    CHECK(b->rack == NULL);
    CHECK_EQ_INT(b->incarnation[0], 0x22);
    CHECK_EQ_INT(APPLY(img, rec_change(4, epoch, 0, -1)), ERR_STALE_BROKER_EPOCH);

    /* The old record type: epoch 0, unfenced, its address as a PLAINTEXT listener. */
    CHECK_EQ_INT(APPLY(img, rec_broker(6, "h6", 7000, NULL), rec_change(6, 0, 1, -1)), 0);
    b = meta_image_broker_by_id(img, 6);
    REQUIRE(b);
    CHECK_EQ_INT(b->epoch, 0);
    CHECK(b->fenced);
    REQUIRE(b->n_listeners == 1);
    CHECK_EQ_STR(b->listeners[0].name, "PLAINTEXT");
    CHECK_EQ_STR(b->listeners[0].host, "h6");
    CHECK_EQ_INT(b->listeners[0].port, 7000);
    /* FENCE_BROKER knows brokers registered earlier in the batch by either record. */
    CHECK_EQ_INT(APPLY(img, rec_broker2(8, 1, NULL), rec_fence(8, false)), 0);
    CHECK(!meta_image_broker_by_id(img, 8)->fenced);
    CHECK_EQ_INT(APPLY(img, rec_broker2(-1, 1, NULL)), ERR_INVALID_REQUEST);
    meta_image_free(img);
}

TEST(meta_register2_encoding_rules)
{
    uint8_t *buf = NULL;
    size_t len;
    struct meta_record r = rec_broker2(1, 1, NULL);
    struct meta_listener bad[] = {{.name = "PLAINTEXT", .host = NULL, .port = 1}};
    r.u.broker.n_listeners = 0;
    CHECK_EQ_INT(meta_batch_encode(&r, 1, &buf, &len), ERR_INVALID_REQUEST);
    r.u.broker.n_listeners = 1;
    r.u.broker.listeners = bad;
    CHECK_EQ_INT(meta_batch_encode(&r, 1, &buf, &len), ERR_INVALID_REQUEST);
    r = rec_broker2(1, 1, NULL);
    r.u.broker.n_dirs = 1;
    r.u.broker.dirs = NULL;
    CHECK_EQ_INT(meta_batch_encode(&r, 1, &buf, &len), ERR_INVALID_REQUEST);
    r = rec_change(1, 1, 2, -1);
    CHECK_EQ_INT(meta_batch_encode(&r, 1, &buf, &len), ERR_INVALID_REQUEST);
    r = rec_pchange(1, 0, 1, 1, 1, 1);
    r.u.partition.leader_recovery_state = 2;
    CHECK_EQ_INT(meta_batch_encode(&r, 1, &buf, &len), ERR_INVALID_REQUEST);
    r.u.partition.leader_recovery_state = 1;
    r.u.partition.n_adding = 1;
    CHECK_EQ_INT(meta_batch_encode(&r, 1, &buf, &len), ERR_INVALID_REQUEST);
    CHECK(buf == NULL);
}

TEST(meta_partition_change_compare_and_set)
{
    struct meta_image *img = meta_image_new();
    const struct meta_partition *p;
    struct meta_record r;
    static const int32_t dup[] = {1, 1};
    static const int32_t four[] = {4};
    static const int32_t two[] = {2};
    REQUIRE(img);
    /* rec_partition: leader epoch 7, partition epoch 9, ISR {1, 2}. */
    CHECK_EQ_INT(APPLY(img, rec_topic("t", 1), rec_partition(1, 0, 1), rec_partition(1, 1, 1)), 0);

    /* Epoch rules: exactly the current one + 1, a leader epoch not below the current. */
    CHECK_EQ_INT(APPLY(img, rec_pchange(1, 0, 2, 8, 9, 2)), ERR_INVALID_UPDATE_VERSION);
    CHECK_EQ_INT(APPLY(img, rec_pchange(1, 0, 2, 8, 11, 2)), ERR_INVALID_UPDATE_VERSION);
    CHECK_EQ_INT(APPLY(img, rec_pchange(1, 0, 2, 6, 10, 2)), ERR_INVALID_UPDATE_VERSION);
    CHECK_EQ_INT(APPLY(img, rec_pchange(9, 0, 2, 8, 10, 2)), ERR_UNKNOWN_TOPIC_ID);
    CHECK_EQ_INT(APPLY(img, rec_pchange(1, 2, 2, 8, 10, 2)), ERR_INVALID_PARTITIONS);
    CHECK_EQ_INT(APPLY(img, rec_pchange(1, -1, 2, 8, 10, 2)), ERR_INVALID_PARTITIONS);

    /* Shape: no duplicates, ISR / leader / adding / removing within the replicas. */
    r = rec_pchange(1, 0, 2, 8, 10, 2);
    r.u.partition.isr = dup;
    CHECK_EQ_INT(APPLY(img, r), ERR_INVALID_REQUEST);
    r = rec_pchange(1, 0, 2, 8, 10, 2);
    r.u.partition.replicas = dup;
    r.u.partition.n_replicas = 2;
    r.u.partition.n_isr = 1;
    CHECK_EQ_INT(APPLY(img, r), ERR_INVALID_REQUEST);
    r = rec_pchange(1, 0, 2, 8, 10, 2);
    r.u.partition.isr = four;
    r.u.partition.n_isr = 1;
    CHECK_EQ_INT(APPLY(img, r), ERR_INVALID_REQUEST);
    r = rec_pchange(1, 0, 4, 8, 10, 2);
    CHECK_EQ_INT(APPLY(img, r), ERR_INVALID_REQUEST);
    r = rec_pchange(1, 0, 2, 8, 10, 2);
    r.u.partition.adding = four;
    r.u.partition.n_adding = 1;
    CHECK_EQ_INT(APPLY(img, r), ERR_INVALID_REQUEST);
    r = rec_pchange(1, 0, 2, 8, 10, 2);
    r.u.partition.removing = dup;
    r.u.partition.n_removing = 2;
    CHECK_EQ_INT(APPLY(img, r), ERR_INVALID_REQUEST);
    r = rec_partition(1, 0, 2);
    r.u.partition.partition_epoch = 10;
    r.u.partition.isr = four;
    r.u.partition.n_isr = 1;
    CHECK_EQ_INT(APPLY(img, r), ERR_INVALID_REQUEST);
    p = &meta_image_topic_by_name(img, "t")->partitions[0];
    CHECK_EQ_INT(p->partition_epoch, 9);
    CHECK_EQ_INT(p->leader, 1);

    /* Two decisions taken on the same state: the first applies, the second is refused. */
    CHECK_EQ_INT(APPLY(img, rec_pchange(1, 0, 2, 8, 10, 2)), 0);
    CHECK_EQ_INT(APPLY(img, rec_pchange(1, 0, 1, 8, 10, 1)), ERR_INVALID_UPDATE_VERSION);
    p = &meta_image_topic_by_name(img, "t")->partitions[0];
    CHECK_EQ_INT(p->leader, 2);
    CHECK_EQ_INT(p->leader_epoch, 8);
    CHECK_EQ_INT(p->partition_epoch, 10);
    CHECK_EQ_INT(p->n_isr, 2);

    /* Within a batch, each change is based on the one before it. */
    CHECK_EQ_INT(APPLY(img, rec_pchange(1, 1, 1, 7, 10, 1), rec_pchange(1, 1, 1, 7, 10, 2)),
                 ERR_INVALID_UPDATE_VERSION);
    CHECK_EQ_INT(APPLY(img, rec_pchange(1, 1, 1, 7, 10, 1), rec_pchange(1, 1, 2, 8, 11, 2)), 0);
    CHECK_EQ_INT(meta_image_topic_by_name(img, "t")->partitions[1].partition_epoch, 11);
    /* A partition created by the batch, then changed by it. */
    CHECK_EQ_INT(APPLY(img, rec_partition(1, 2, 1), rec_pchange(1, 2, 3, 7, 9, 3)),
                 ERR_INVALID_UPDATE_VERSION);
    CHECK_EQ_INT(APPLY(img, rec_partition(1, 2, 1), rec_pchange(1, 2, 3, 7, 10, 3)), 0);
    CHECK_EQ_INT(meta_image_topic_by_name(img, "t")->partitions[2].leader, 3);
    /* A removed and re-created topic does not inherit the old partitions' epochs. */
    CHECK_EQ_INT(APPLY(img, rec_remove(1), rec_topic("t", 1), rec_pchange(1, 0, 1, 7, 10, 1)),
                 ERR_INVALID_PARTITIONS);

    /* Recovery state and reassignment travel with PARTITION_CHANGE; PARTITION resets them. */
    r = rec_pchange(1, 0, 1, 9, 11, 1);
    r.u.partition.leader_recovery_state = 1;
    r.u.partition.removing = two;
    r.u.partition.n_removing = 1;
    CHECK_EQ_INT(APPLY(img, r), 0);
    p = &meta_image_topic_by_name(img, "t")->partitions[0];
    CHECK_EQ_INT(p->leader_recovery_state, 1);
    REQUIRE(p->n_removing == 1);
    CHECK_EQ_INT(p->removing[0], 2);
    CHECK_EQ_INT(p->n_adding, 0);
    r = rec_partition(1, 0, 1);
    r.u.partition.leader_epoch = 9;
    r.u.partition.partition_epoch = 12;
    CHECK_EQ_INT(APPLY(img, r), 0);
    p = &meta_image_topic_by_name(img, "t")->partitions[0];
    CHECK_EQ_INT(p->leader_recovery_state, 0);
    CHECK_EQ_INT(p->n_removing, 0);
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
    uint32_t types;                 /* bit t: a record of type t was seen */
    int8_t shutting_down, recovery; /* the last BROKER_CHANGE's, PARTITION_CHANGE's */
};

static void on_apply(void *arg, const struct meta_record *recs, size_t n)
{
    struct seen *s = arg;
    s->batches++;
    s->records += n;
    if (n)
        s->last = recs[n - 1].type;
    for (size_t i = 0; i < n; i++) {
        s->types |= 1u << recs[i].type;
        if (recs[i].type == META_REC_BROKER_CHANGE)
            s->shutting_down = recs[i].u.broker_change.shutting_down;
        if (recs[i].type == META_REC_PARTITION_CHANGE)
            s->recovery = recs[i].u.partition.leader_recovery_state;
    }
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
        rec_broker(3, "h3", 1, "rack"),
        rec_fence(3, true),
        rec_topic("x", 50),
        rec_partition(50, 0, 3),
        rec_config(2, "x", "k", "v"),
        rec_config(4, "3", "k", NULL),
        rec_pids(3, 5000, 10),
        rec_broker2(9, 0x99, "r9"),
        rec_change(3, 0, -1, 1),
        rec_pchange(50, 0, 2, 7, 10, 3),
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
    CHECK(same_contents(img, before));
    /* Refused batches count: every node refuses the same ones, so offsets stay in step. */
    CHECK_EQ_INT(meta_image_offset(img), meta_image_offset(before) + (int64_t)len);
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
    CHECK(same_contents(img, before));
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
    REQUIRE(n == 3);
    CHECK_EQ_STR(b[0].rack, "r1");
    CHECK(b[1].fenced);
    CHECK_EQ_INT(b[1].epoch, 0);
    /* Broker epochs, incarnations, listeners, directories and states travel. */
    CHECK_EQ_INT(b[2].id, 5);
    CHECK_EQ_INT(b[2].epoch, 5);
    CHECK(!b[2].fenced);
    CHECK(b[2].shutting_down);
    CHECK_EQ_INT(b[2].incarnation[15], 0x55);
    CHECK_EQ_STR(b[2].rack, "r2");
    CHECK_EQ_STR(b[2].host, "10.0.0.1");
    REQUIRE(b[2].n_listeners == 2);
    CHECK_EQ_STR(b[2].listeners[1].name, "CONTROLLER");
    REQUIRE(b[2].n_dirs == 2);
    CHECK_EQ_INT(b[2].dirs[0][0], 0xD1);
    CHECK_EQ_INT(t->partitions[1].leader_recovery_state, 1);
    REQUIRE(t->partitions[1].n_removing == 1);
    CHECK_EQ_INT(t->partitions[1].removing[0], 3);
    CHECK_EQ_INT(t->partitions[1].partition_epoch, 10);
    /* So does the offset, and the next batch counts on from it. */
    CHECK_EQ_INT(meta_image_offset(copy), 6);
    CHECK_EQ_INT(meta_image_offset(copy), meta_image_offset(img));
    CHECK_EQ_INT(APPLY(copy, rec_change(5, 5, 1, -1)), 0);
    CHECK_EQ_INT(meta_image_offset(copy), 7);
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

/* A hand-written writer for the version 1 snapshot layout (image.c's comment). */
struct v1buf {
    uint8_t b[512];
    size_t n;
};

static void v1_u8(struct v1buf *w, uint8_t v)
{
    w->b[w->n++] = v;
}

static void v1_u32(struct v1buf *w, uint32_t v)
{
    for (int i = 3; i >= 0; i--)
        v1_u8(w, (uint8_t)(v >> (8 * i)));
}

static void v1_i64(struct v1buf *w, int64_t v)
{
    v1_u32(w, (uint32_t)((uint64_t)v >> 32));
    v1_u32(w, (uint32_t)(uint64_t)v);
}

static void v1_str(struct v1buf *w, const char *s)
{
    if (s == NULL) {
        v1_u32(w, 0xFFFFFFFFu);
        return;
    }
    v1_u32(w, (uint32_t)strlen(s));
    memcpy(w->b + w->n, s, strlen(s));
    w->n += strlen(s);
}

/* Version 1 snapshots, written before broker epochs and partition changes, still restore:
 * epoch 0 and one PLAINTEXT listener per broker, RECOVERED partitions, offset 0. */
TEST(meta_snapshot_version1_restores)
{
    struct meta_image *img = meta_image_new(), *again = meta_image_new();
    const struct meta_broker *b;
    const struct meta_topic *t;
    struct v1buf w = {.n = 0};
    uint8_t id[16], *snap;
    size_t len, n;
    REQUIRE(img && again);

    make_id(id, 1);
    v1_u8(&w, 1);     /* version */
    v1_i64(&w, 2000); /* next producer id */
    v1_u32(&w, 2);    /* brokers */
    v1_u32(&w, 1);    /* id */
    v1_u32(&w, 9092); /* port */
    v1_str(&w, "h1"); /* host */
    v1_str(&w, "r1"); /* rack */
    v1_u8(&w, 0);     /* fenced */
    v1_u32(&w, 2);
    v1_u32(&w, 9093);
    v1_str(&w, "h2");
    v1_str(&w, NULL);
    v1_u8(&w, 1);
    v1_u32(&w, 1); /* topics */
    v1_str(&w, "orders");
    memcpy(w.b + w.n, id, 16);
    w.n += 16;
    v1_u32(&w, 1); /* partitions */
    v1_u32(&w, 2); /* leader */
    v1_u32(&w, 4); /* leader epoch */
    v1_u32(&w, 6); /* partition epoch */
    v1_u32(&w, 2); /* replicas */
    v1_u32(&w, 2);
    v1_u32(&w, 1);
    v1_u32(&w, 1); /* ISR */
    v1_u32(&w, 2);
    v1_u32(&w, 1); /* topic configs */
    v1_str(&w, "retention.ms");
    v1_str(&w, "5");
    v1_u32(&w, 0); /* resources */
    v1_u32(&w, 1); /* producer-id blocks */
    v1_u32(&w, 1);
    v1_i64(&w, 1000);
    v1_u32(&w, 1000);

    REQUIRE(meta_image_restore(img, w.b, w.n) == 0);
    CHECK_EQ_INT(meta_image_offset(img), 0);
    CHECK_EQ_INT(meta_image_next_producer_id(img), 2000);
    b = meta_image_brokers(img, &n);
    REQUIRE(n == 2);
    CHECK_EQ_INT(b[0].epoch, 0);
    CHECK(!b[0].fenced);
    CHECK(!b[0].shutting_down);
    CHECK_EQ_STR(b[0].host, "h1");
    CHECK_EQ_STR(b[0].rack, "r1");
    REQUIRE(b[0].n_listeners == 1);
    CHECK_EQ_STR(b[0].listeners[0].name, "PLAINTEXT");
    CHECK_EQ_STR(b[0].listeners[0].host, "h1");
    CHECK_EQ_INT(b[0].listeners[0].port, 9092);
    CHECK_EQ_INT(b[0].n_dirs, 0);
    CHECK(b[1].fenced);
    CHECK(b[1].rack == NULL);
    t = meta_image_topic_by_name(img, "orders");
    REQUIRE(t && t->n_partitions == 1);
    CHECK_EQ_INT(t->partitions[0].leader, 2);
    CHECK_EQ_INT(t->partitions[0].leader_epoch, 4);
    CHECK_EQ_INT(t->partitions[0].partition_epoch, 6);
    CHECK_EQ_INT(t->partitions[0].n_isr, 1);
    CHECK_EQ_INT(t->partitions[0].leader_recovery_state, 0);
    CHECK_EQ_INT(t->partitions[0].n_adding, 0);
    CHECK_EQ_STR(meta_image_config_get(img, 2, "orders", "retention.ms"), "5");

    /* It applies on from there by today's rules: brokers at epoch 0, partitions by CAS. */
    CHECK_EQ_INT(APPLY(img, rec_change(2, 0, 0, -1)), 0);
    CHECK(!meta_image_broker_by_id(img, 2)->fenced);
    struct meta_record pc = rec_pchange(1, 0, 1, 5, 7, 1);
    static const int32_t r21[] = {2, 1};
    pc.u.partition.replicas = r21;
    pc.u.partition.n_replicas = 2;
    pc.u.partition.isr = r21 + 1;
    CHECK_EQ_INT(APPLY(img, pc), 0);
    CHECK_EQ_INT(meta_image_offset(img), 2);

    /* A snapshot taken now is of the current version and restores to the same image. */
    REQUIRE(meta_image_snapshot(img, &snap, &len) == 0);
    CHECK_EQ_INT(snap[0], 6);
    CHECK_EQ_INT(meta_image_restore(again, snap, len), 0);
    CHECK(same_snapshot(img, again));
    free(snap);

    /* Every truncation of the version 1 snapshot is refused. */
    for (size_t k = 0; k < w.n; k++) {
        uint8_t *cut = malloc(k ? k : 1);
        REQUIRE(cut);
        memcpy(cut, w.b, k);
        CHECK_EQ_INT(meta_image_restore(again, cut, k), ERR_PARSE);
        free(cut);
    }
    /* An unknown version is refused. */
    w.b[0] = 4;
    CHECK_EQ_INT(meta_image_restore(again, w.b, w.n), ERR_PARSE);
    CHECK(same_snapshot(img, again));
    meta_image_free(img);
    meta_image_free(again);
}

static void v1_u16(struct v1buf *w, uint16_t v)
{
    v1_u8(w, (uint8_t)(v >> 8));
    v1_u8(w, (uint8_t)v);
}

/* Version 2 snapshots, written before the ELR, still restore: every partition with an empty
 * ELR, the rest as written. */
TEST(meta_snapshot_version2_restores)
{
    struct meta_image *img = meta_image_new(), *again = meta_image_new();
    const struct meta_partition *p;
    const struct meta_broker *b;
    struct v1buf w = {.n = 0};
    uint8_t id[16], *snap;
    size_t len, n;
    REQUIRE(img && again);

    make_id(id, 1);
    v1_u8(&w, 2);     /* version */
    v1_i64(&w, 3000); /* next producer id */
    v1_i64(&w, 41);   /* metadata offset */
    v1_u32(&w, 1);    /* brokers */
    v1_u32(&w, 3);    /* id */
    v1_str(&w, NULL); /* rack */
    v1_u8(&w, 1);     /* fenced */
    v1_u8(&w, 0);     /* shutting down */
    v1_i64(&w, 17);   /* broker epoch */
    for (int i = 0; i < 16; i++)
        v1_u8(&w, (uint8_t)i); /* incarnation */
    v1_u32(&w, 1);             /* listeners */
    v1_str(&w, "PLAINTEXT");
    v1_str(&w, "h3");
    v1_u32(&w, 9094);
    v1_u16(&w, 0);
    v1_u32(&w, 0); /* dirs */
    v1_u32(&w, 1); /* topics */
    v1_str(&w, "orders");
    memcpy(w.b + w.n, id, 16);
    w.n += 16;
    v1_u32(&w, 1); /* partitions */
    v1_u32(&w, 3); /* leader */
    v1_u32(&w, 4); /* leader epoch */
    v1_u32(&w, 6); /* partition epoch */
    v1_u32(&w, 2); /* replicas */
    v1_u32(&w, 3);
    v1_u32(&w, 1);
    v1_u32(&w, 1); /* ISR */
    v1_u32(&w, 3);
    v1_u8(&w, 1);  /* RECOVERING */
    v1_u32(&w, 1); /* adding */
    v1_u32(&w, 1);
    v1_u32(&w, 0); /* removing */
    v1_u32(&w, 0); /* topic configs */
    v1_u32(&w, 0); /* resources */
    v1_u32(&w, 0); /* producer-id blocks */

    REQUIRE(meta_image_restore(img, w.b, w.n) == 0);
    CHECK_EQ_INT(meta_image_offset(img), 41);
    b = meta_image_brokers(img, &n);
    REQUIRE(n == 1);
    CHECK_EQ_INT(b[0].epoch, 17);
    CHECK(b[0].fenced);
    p = &meta_image_topic_by_name(img, "orders")->partitions[0];
    CHECK_EQ_INT(p->leader, 3);
    CHECK_EQ_INT(p->partition_epoch, 6);
    CHECK_EQ_INT(p->leader_recovery_state, 1);
    CHECK_EQ_INT(p->n_adding, 1);
    CHECK_EQ_INT(p->n_elr, 0);
    CHECK(p->elr == NULL);
    /* Written again, it is version 5 and restores to the same image. */
    REQUIRE(meta_image_snapshot(img, &snap, &len) == 0);
    CHECK_EQ_INT(snap[0], 6);
    /* one empty ELR more, no SCRAM credentials, no ACLs, no client quotas */
    CHECK_EQ_INT(len, w.n + 4 + 4 + 4 + 4);
    CHECK_EQ_INT(meta_image_restore(again, snap, len), 0);
    CHECK(same_snapshot(img, again));
    free(snap);
    /* Every truncation of it is refused. */
    for (size_t k = 0; k < w.n; k++)
        CHECK_EQ_INT(meta_image_restore(again, w.b, k), ERR_PARSE);
    meta_image_free(img);
    meta_image_free(again);
}

/* A change of partition 0 (rec_partition's) to leader 1 alone in the ISR with `elr`. */
static struct meta_record rec_elr_change(int32_t pe, const int32_t *elr, int32_t n_elr)
{
    struct meta_record r = rec_pchange(1, 0, 1, 7, pe, 1);
    r.u.partition.elr = elr;
    r.u.partition.n_elr = n_elr;
    return r;
}

/* The ELR of a PARTITION_CHANGE: written only when not empty (so that a change without one
 * is the older body), applied, held to its shape rules, kept by snapshots, and emptied by a
 * change of min.insync.replicas wherever the partition has a leader. */
TEST(meta_partition_change_elr)
{
    struct meta_image *img = meta_image_new(), *again = meta_image_new();
    const struct meta_partition *p;
    static const int32_t e2[] = {2}, e23[] = {2, 3}, e1[] = {1}, e4[] = {4}, e22[] = {2, 2};
    struct meta_record r;
    uint8_t *b0, *b1, *snap;
    size_t l0, l1, len;
    REQUIRE(img && again);
    CHECK_EQ_INT(APPLY(img, rec_topic("t", 1), rec_partition(1, 0, 1), rec_partition(1, 1, 1)), 0);

    /* Encoding: the ELR adds its count and members; an empty one adds nothing. */
    r = rec_elr_change(10, NULL, 0);
    REQUIRE(meta_batch_encode(&r, 1, &b0, &l0) == 0);
    r = rec_elr_change(10, e2, 1);
    REQUIRE(meta_batch_encode(&r, 1, &b1, &l1) == 0);
    CHECK_EQ_INT(l1, l0 + 8);
    /* An empty ELR written out has a second encoding: refused. */
    uint8_t *odd = malloc(l0 + 4);
    REQUIRE(odd);
    memcpy(odd, b0, l0);
    memset(odd + l0, 0, 4);
    odd[8] = (uint8_t)(odd[8] + 4); /* the body length's low byte (batch header 5, type 1) */
    CHECK_EQ_INT(meta_image_apply(img, odd, l0 + 4, NULL, NULL), ERR_PARSE);
    free(odd);
    /* Every truncation of the one with an ELR is refused. */
    for (size_t k = 0; k < l1; k++)
        CHECK_EQ_INT(meta_image_apply(img, b1, k, NULL, NULL), ERR_PARSE);
    free(b0);

    /* Shape: no duplicate, replicas only, none in the ISR (1 is). */
    CHECK_EQ_INT(APPLY(img, rec_elr_change(10, e22, 2)), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(APPLY(img, rec_elr_change(10, e4, 1)), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(APPLY(img, rec_elr_change(10, e1, 1)), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(meta_image_topic_by_name(img, "t")->partitions[0].partition_epoch, 9);

    /* Applied, it is the partition's ELR. */
    CHECK_EQ_INT(meta_image_apply(img, b1, l1, NULL, NULL), 0);
    free(b1);
    p = &meta_image_topic_by_name(img, "t")->partitions[0];
    REQUIRE(p->n_elr == 1);
    CHECK_EQ_INT(p->elr[0], 2);
    CHECK_EQ_INT(APPLY(img, rec_elr_change(11, e23, 2)), 0);
    p = &meta_image_topic_by_name(img, "t")->partitions[0];
    REQUIRE(p->n_elr == 2);
    CHECK_EQ_INT(p->elr[1], 3);

    /* Snapshots keep it. */
    REQUIRE(meta_image_snapshot(img, &snap, &len) == 0);
    CHECK_EQ_INT(meta_image_restore(again, snap, len), 0);
    free(snap);
    CHECK(same_snapshot(img, again));
    p = &meta_image_topic_by_name(again, "t")->partitions[0];
    REQUIRE(p->n_elr == 2);
    CHECK_EQ_INT(p->elr[0], 2);

    /* A PARTITION record replacing the partition leaves none. */
    r = rec_partition(1, 0, 1);
    r.u.partition.partition_epoch = 12;
    CHECK_EQ_INT(APPLY(again, r), 0);
    CHECK_EQ_INT(meta_image_topic_by_name(again, "t")->partitions[0].n_elr, 0);

    /* min.insync.replicas changes: a led partition's ELR goes (the HW may move without it),
     * a leaderless one's stays (its HW cannot move). Partition 1 gets an ELR, no leader. */
    r = rec_pchange(1, 1, -1, 7, 10, 1);
    r.u.partition.elr = e23;
    r.u.partition.n_elr = 2;
    CHECK_EQ_INT(APPLY(img, r), 0);
    CHECK_EQ_INT(APPLY(img, rec_config(2, "t", "retention.ms", "5")), 0);
    CHECK_EQ_INT(meta_image_topic_by_name(img, "t")->partitions[0].n_elr, 2);
    CHECK_EQ_INT(APPLY(img, rec_config(2, "t", "min.insync.replicas", "1")), 0);
    CHECK_EQ_INT(meta_image_topic_by_name(img, "t")->partitions[0].n_elr, 0);
    CHECK(meta_image_topic_by_name(img, "t")->partitions[0].elr == NULL);
    CHECK_EQ_INT(meta_image_topic_by_name(img, "t")->partitions[1].n_elr, 2);
    /* The cluster-wide default, or a broker's, may be any topic's. */
    CHECK_EQ_INT(APPLY(img, rec_elr_change(12, e2, 1)), 0);
    CHECK_EQ_INT(APPLY(img, rec_config(4, "2", "min.insync.replicas", "2")), 0);
    CHECK_EQ_INT(meta_image_topic_by_name(img, "t")->partitions[0].n_elr, 0);
    CHECK_EQ_INT(APPLY(img, rec_elr_change(13, e2, 1)), 0);
    CHECK_EQ_INT(APPLY(img, rec_config(4, "", "min.insync.replicas", NULL)), 0);
    CHECK_EQ_INT(meta_image_topic_by_name(img, "t")->partitions[0].n_elr, 0);
    CHECK_EQ_INT(meta_image_topic_by_name(img, "t")->partitions[1].n_elr, 2);
    meta_image_free(img);
    meta_image_free(again);
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
    struct meta_record recs[] = {rec_topic("replayed", 1), rec_partition(1, 0, 1),
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
    struct meta_record recs[] = {rec_topic("lost", 1), rec_partition(1, 0, 1)};
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
    /* First a registered broker in controlled shutdown and a partition in recovery, which the
     * restart must learn from the snapshot. */
    struct fixture_wait w1 = {.want = 1};
    struct meta_record first[] = {rec_topic("r", 5000), rec_partition(5000, 0, 1),
                                  rec_broker2(3, 0x33, NULL)};
    REQUIRE(meta_propose(m, first, 3, fixture_propose_cb, &w1) == 0);
    REQUIRE(fixture_run_until(&loop, &w1.done, 3000));
    REQUIRE(w1.err == 0);
    int64_t epoch = meta_broker_by_id(m, 3)->epoch;
    CHECK_EQ_INT(epoch, meta_offset(m));
    struct meta_record pc = rec_pchange(5000, 0, 2, 8, 10, 1);
    pc.u.partition.leader_recovery_state = 1;
    struct meta_record second[] = {rec_change(3, epoch, 0, 1), pc};
    w1 = (struct fixture_wait){.want = 1};
    REQUIRE(meta_propose(m, second, 2, fixture_propose_cb, &w1) == 0);
    REQUIRE(fixture_run_until(&loop, &w1.done, 3000));
    REQUIRE(w1.err == 0);
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
    int64_t offset = meta_offset(m);
    CHECK(offset >= N + 2);
    REQUIRE(fixture_stop_meta(&loop, m));
    CHECK(has_snapshot(n.dir));

    memset(&n.seen, 0, sizeof n.seen);
    m = NULL;
    REQUIRE(meta_start(&loop, &n.opts, &m) == 0);
    REQUIRE(fixture_wait_ready(&loop, m, 5000));
    meta_topics(m, &count);
    CHECK_EQ_INT(count, N + 1);
    CHECK(meta_topic_by_name(m, "s-0000") != NULL);
    CHECK(meta_topic_by_name(m, "s-1199") != NULL);
    /* on_apply heard of every topic: the restored ones as records, then the replayed tail. */
    CHECK(n.seen.records >= N);
    /* The snapshot carried the offset (the tail replays on top of it to the same count),
     * the broker's epoch and state, and the partition's recovery; subscribers heard of them
     * as the new record types. */
    CHECK_EQ_INT(meta_offset(m), offset);
    REQUIRE(meta_broker_by_id(m, 3));
    CHECK_EQ_INT(meta_broker_by_id(m, 3)->epoch, epoch);
    CHECK(meta_broker_by_id(m, 3)->shutting_down);
    CHECK(!meta_broker_by_id(m, 3)->fenced);
    CHECK_EQ_INT(meta_topic_by_name(m, "r")->partitions[0].leader_recovery_state, 1);
    CHECK(n.seen.types & (1u << META_REC_REGISTER_BROKER2));
    CHECK(n.seen.types & (1u << META_REC_BROKER_CHANGE));
    CHECK(n.seen.types & (1u << META_REC_PARTITION_CHANGE));
    CHECK_EQ_INT(n.seen.shutting_down, 1);
    CHECK_EQ_INT(n.seen.recovery, 1);
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
    struct meta_record recs[] = {rec_topic("shared", 1), rec_partition(1, 0, 1)};
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

/* DescribeQuorum's source (meta_describe_quorum): the leader reports itself among the voters
 * and its standby among the observers with their raft positions and when the standby last
 * answered and was caught up; a standby that stops answering stops being caught up although
 * the log stays idle, and falls behind once the log moves on; a node that does not lead knows
 * nobody's position but names the leader. */
TEST(meta_raft_describe_quorum)
{
    char base[] = "/tmp/tally-meta-XXXXXX";
    uv_loop_t loop;
    struct meta *leader = NULL, *standby = NULL;
    struct node a, b;
    struct fixture_wait w = {.want = 1};
    struct meta_record recs[] = {rec_topic("quorum", 1), rec_partition(1, 0, 1)};
    struct meta_record more[] = {rec_topic("later", 2)};
    struct meta_voter voters[1];
    struct meta_quorum q;
    struct arena *ar = arena_new(1 << 20);
    const bool never = false;
    bool caught = false, settled = false;

    REQUIRE(ar != NULL);
    REQUIRE(mkdtemp(base) != NULL);
    REQUIRE(uv_loop_init(&loop) == 0);
    node_init(&a, &loop, base, 0, 1, NULL);
    voters[0] = a.voter;
    node_init(&b, &loop, base, 1, 1, voters);
    a.opts.voters = voters;
    REQUIRE(meta_start(&loop, &a.opts, &leader) == 0);
    REQUIRE(meta_start(&loop, &b.opts, &standby) == 0);
    REQUIRE(fixture_wait_ready(&loop, leader, 3000));
    REQUIRE(meta_propose(leader, recs, 2, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 3000));
    w = (struct fixture_wait){.want = 1};
    REQUIRE(meta_add_standby(leader, 1, b.listen, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 5000));
    REQUIRE(fixture_wait_ready(&loop, standby, 5000));

    /* The standby never led: it names the leader and nothing else. */
    CHECK_EQ_INT(meta_describe_quorum(standby, ar, &q), ERR_NOT_CONTROLLER);
    CHECK_EQ_INT(q.leader_id, 0);
    CHECK_EQ_INT(q.n_voters + q.n_observers, 0);

    for (int i = 0; i < 200 && !caught; i++) {
        REQUIRE(meta_describe_quorum(leader, ar, &q) == 0);
        caught = q.n_observers == 1 && q.observers[0].last_caught_up_ms >= 0 &&
                 q.observers[0].last_fetch_ms >= 0 &&
                 q.observers[0].log_end_offset == q.voters[0].log_end_offset;
        if (!caught)
            fixture_run_until(&loop, &never, 20);
    }
    CHECK(caught);
    CHECK_EQ_INT(q.leader_id, 0);
    CHECK(q.leader_epoch >= 1);
    CHECK(q.high_watermark >= 3); /* bootstrap configuration, barrier, the batch, ... */
    REQUIRE(q.n_voters == 1 && q.n_observers == 1);
    CHECK_EQ_INT(q.voters[0].id, 0);
    CHECK(q.voters[0].log_end_offset >= q.high_watermark);
    CHECK_EQ_INT(q.voters[0].last_fetch_ms, -1); /* the leader does not fetch from itself */
    CHECK(q.voters[0].last_caught_up_ms > 0);    /* the leader: now */
    CHECK_EQ_INT(q.observers[0].id, 1);

    /* The standby stops while the log is idle: it stays at the leader's log end, but its
     * timestamps stop moving. */
    REQUIRE(fixture_stop_meta(&loop, standby));
    int64_t last = -2, last_fetch = -2;
    for (int i = 0; i < 50 && !settled; i++) {
        fixture_run_until(&loop, &never, 200);
        REQUIRE(meta_describe_quorum(leader, ar, &q) == 0);
        REQUIRE(q.n_observers == 1);
        settled =
            q.observers[0].last_caught_up_ms == last && q.observers[0].last_fetch_ms == last_fetch;
        last = q.observers[0].last_caught_up_ms;
        last_fetch = q.observers[0].last_fetch_ms;
    }
    CHECK(settled);
    CHECK(q.voters[0].last_caught_up_ms > last);

    /* The log moves on without it: it lags, and is no more caught up than before. */
    w = (struct fixture_wait){.want = 1};
    REQUIRE(meta_propose(leader, more, 1, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 3000));
    fixture_run_until(&loop, &never, 200);
    REQUIRE(meta_describe_quorum(leader, ar, &q) == 0);
    CHECK(q.observers[0].log_end_offset > 0);
    CHECK(q.observers[0].log_end_offset < q.voters[0].log_end_offset);
    CHECK_EQ_INT(q.observers[0].last_caught_up_ms, last);

    REQUIRE(fixture_stop_meta(&loop, leader));
    arena_free(ar);
    tclock_free(a.clock);
    tclock_free(b.clock);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    fixture_rm_tree(base);
}

/* A voter restarted after the log moved on without it, while the leader it knew is gone: its
 * first word from the new leader is an AppendEntries it must reject (the leader's log is
 * ahead of its own), which tells it who leads but moves none of its commit index; and after
 * the whole quorum restarted, the new leader's first AppendEntries announce the commit index
 * it restarted with. A voter is ready only once it applied what a leader committed in its
 * own term — it used to count itself ready at the commit index it restarted with, so a broker
 * restarted that way saw an image without the topics it hosts and refused to start
 * (docs/cluster.md's unclean election, then its restart of every node, showed both). */
TEST(meta_raft_restarted_voter_ready_only_with_the_leaders_commits)
{
    char base[] = "/tmp/tally-meta-XXXXXX";
    uv_loop_t loop;
    struct meta *m[3] = {NULL, NULL, NULL};
    struct node n[3];
    struct meta_voter voters[3];
    struct fixture_wait w = {.want = 1};
    struct meta_record first[] = {rec_topic("before", 1)};
    struct meta_record later[] = {rec_topic("while-away", 2)};
    const bool never = false;
    int lead = -1;

    REQUIRE(mkdtemp(base) != NULL);
    REQUIRE(uv_loop_init(&loop) == 0);
    for (int i = 0; i < 3; i++) {
        node_init(&n[i], &loop, base, i, 3, voters);
        voters[i] = n[i].voter;
    }
    for (int i = 0; i < 3; i++)
        REQUIRE(meta_start(&loop, &n[i].opts, &m[i]) == 0);
    for (int k = 0; k < 300 && lead < 0; k++) {
        fixture_run_until(&loop, &never, 20);
        for (int i = 0; i < 3; i++)
            if (meta_is_controller(m[i]) && meta_ready(m[i]))
                lead = i;
    }
    REQUIRE(lead >= 0);
    REQUIRE(meta_propose(m[lead], first, 1, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 3000));

    /* A follower goes; the log moves on without it; then the leader goes too. */
    int away = (lead + 1) % 3;
    REQUIRE(fixture_stop_meta(&loop, m[away]));
    m[away] = NULL;
    w = (struct fixture_wait){.want = 1};
    REQUIRE(meta_propose(m[lead], later, 1, fixture_propose_cb, &w) == 0);
    REQUIRE(fixture_run_until(&loop, &w.done, 3000));
    CHECK_EQ_INT(w.err, 0);
    /* Heartbeats tell the remaining voter that the batch committed (a new leader that had
     * not heard it yet would count it committed only with its own term's first entry). */
    fixture_run_until(&loop, &never, 300);
    REQUIRE(fixture_stop_meta(&loop, m[lead]));
    m[lead] = NULL;

    /* The follower comes back: with the remaining voter it elects a leader again. */
    REQUIRE(meta_start(&loop, &n[away].opts, &m[away]) == 0);
    REQUIRE(fixture_wait_ready(&loop, m[away], 10000));
    CHECK(meta_topic_by_name(m[away], "before") != NULL);
    CHECK(meta_topic_by_name(m[away], "while-away") != NULL);

    /* The whole quorum restarts: a new leader knows what was committed only once an entry of
     * its own term commits, and until then announces the commit index it restarted with. */
    for (int i = 0; i < 3; i++)
        if (m[i] != NULL) {
            REQUIRE(fixture_stop_meta(&loop, m[i]));
            m[i] = NULL;
        }
    for (int i = 0; i < 3; i++)
        REQUIRE(meta_start(&loop, &n[i].opts, &m[i]) == 0);
    for (int i = 0; i < 3; i++) {
        REQUIRE(fixture_wait_ready(&loop, m[i], 10000));
        CHECK(meta_topic_by_name(m[i], "before") != NULL);
        CHECK(meta_topic_by_name(m[i], "while-away") != NULL);
    }

    for (int i = 0; i < 3; i++)
        if (m[i] != NULL)
            REQUIRE(fixture_stop_meta(&loop, m[i]));
    for (int i = 0; i < 3; i++)
        tclock_free(n[i].clock);
    CHECK_EQ_INT(uv_loop_close(&loop), 0);
    fixture_rm_tree(base);
}

/* SCRAM credentials (KIP-554): set, replaced, deleted by records; kept in snapshots (version
 * 4) and rebuilt from them; a version-3 snapshot (none) still restores. */
static struct meta_record rec_scram(const char *user, int8_t mech, int32_t iterations, uint8_t fill)
{
    /* Each call its own bytes: one APPLY builds several records before encoding them. */
    static uint8_t salts[8][16], keys[8][128];
    static unsigned next;
    unsigned slot = next++ % 8;
    uint8_t *salt = salts[slot], *k = keys[slot];
    memset(salt, fill, 16);
    memset(k, fill + 1, 64);
    memset(k + 64, fill + 2, 64);
    struct meta_record r = {.type = META_REC_SCRAM};
    r.u.scram.user = user;
    r.u.scram.mechanism = mech;
    r.u.scram.iterations = iterations;
    r.u.scram.salt_len = 16;
    r.u.scram.salt = salt;
    r.u.scram.key_len = mech == META_SCRAM_SHA_256 ? 32 : 64;
    r.u.scram.stored_key = k;
    r.u.scram.server_key = k + 64;
    return r;
}

TEST(meta_scram_credentials_apply_snapshot_and_delete)
{
    struct meta_image *img = meta_image_new(), *again = meta_image_new();
    uint8_t *snap;
    size_t len, n;

    CHECK_EQ_INT(APPLY(img, rec_scram("bob", META_SCRAM_SHA_512, 8192, 1),
                       rec_scram("alice", META_SCRAM_SHA_256, 4096, 3),
                       rec_scram("alice", META_SCRAM_SHA_512, 4096, 5)),
                 0);
    const struct meta_scram *c = meta_image_scram(img, &n);
    REQUIRE(n == 3);
    CHECK_EQ_STR(c[0].user, "alice");
    CHECK_EQ_INT(c[0].mechanism, META_SCRAM_SHA_256);
    CHECK_EQ_STR(c[2].user, "bob");
    const struct meta_scram *b = meta_image_scram_find(img, "bob", META_SCRAM_SHA_512);
    REQUIRE(b != NULL);
    CHECK_EQ_INT(b->iterations, 8192);
    CHECK_EQ_INT(b->salt[0], 1);
    CHECK_EQ_INT(b->stored_key[63], 2);
    CHECK_EQ_INT(b->server_key[0], 3);
    CHECK(meta_image_scram_find(img, "bob", META_SCRAM_SHA_256) == NULL);
    /* Replaced, then one deleted, one deletion of nothing. */
    CHECK_EQ_INT(APPLY(img, rec_scram("bob", META_SCRAM_SHA_512, 4096, 7)), 0);
    CHECK_EQ_INT(meta_image_scram_find(img, "bob", META_SCRAM_SHA_512)->salt[0], 7);
    CHECK_EQ_INT(APPLY(img, rec_scram("alice", META_SCRAM_SHA_256, 0, 0),
                       rec_scram("carol", META_SCRAM_SHA_256, 0, 0)),
                 0);
    meta_image_scram(img, &n);
    CHECK_EQ_INT(n, 2);
    CHECK(meta_image_scram_find(img, "alice", META_SCRAM_SHA_256) == NULL);
    /* An empty user name is refused, the batch with it. */
    CHECK_EQ_INT(APPLY(img, rec_scram("dave", META_SCRAM_SHA_256, 4096, 9),
                       rec_scram("", META_SCRAM_SHA_256, 4096, 9)),
                 ERR_INVALID_REQUEST);
    CHECK(meta_image_scram_find(img, "dave", META_SCRAM_SHA_256) == NULL);

    REQUIRE(meta_image_snapshot(img, &snap, &len) == 0);
    CHECK_EQ_INT(snap[0], 6);
    CHECK_EQ_INT(meta_image_restore(again, snap, len), 0);
    CHECK(same_snapshot(img, again));
    b = meta_image_scram_find(again, "bob", META_SCRAM_SHA_512);
    REQUIRE(b != NULL);
    CHECK_EQ_INT(b->salt[0], 7);
    CHECK_EQ_INT(b->key_len, 64);
    /* Every truncation is refused and leaves the image as it was. */
    for (size_t k = 1; k < len; k++)
        CHECK(meta_image_restore(again, snap, k) != 0);
    CHECK(same_snapshot(img, again));
    free(snap);

    /* Version 3: the same without the credential, ACL and quota counts at the end. */
    struct meta_image *empty = meta_image_new(), *old = meta_image_new();
    REQUIRE(meta_image_snapshot(empty, &snap, &len) == 0);
    snap[0] = 3;
    CHECK_EQ_INT(meta_image_restore(old, snap, len - 12), 0);
    meta_image_scram(old, &n);
    CHECK_EQ_INT(n, 0);
    free(snap);
    meta_image_free(empty);
    meta_image_free(old);
    meta_image_free(again);
    meta_image_free(img);
}

static struct meta_record rec_quota(int kinds, const char *user, const char *client, int key,
                                    double value, bool remove)
{
    struct meta_record r;
    memset(&r, 0, sizeof r);
    r.type = META_REC_CLIENT_QUOTA;
    r.u.quota.entity.has_user = kinds & 1;
    r.u.quota.entity.has_client_id = (kinds & 2) != 0;
    r.u.quota.entity.user = user;
    r.u.quota.entity.client_id = client;
    r.u.quota.key = (int8_t)key;
    r.u.quota.value = value;
    r.u.quota.remove = remove;
    return r;
}

#define QU 1 /* user part */
#define QC 2 /* client-id part */
#define PBR META_QUOTA_PRODUCER_BYTE_RATE

static double lookup(const struct meta_image *img, const char *user, const char *client)
{
    double v = -1;
    return meta_image_quota_lookup(img, user, client, PBR, &v) ? v : -1;
}

TEST(meta_client_quota_precedence_follows_kafka)
{
    struct meta_image *img = meta_image_new();

    CHECK_EQ_INT((int)lookup(img, "alice", "app"), -1);
    /* Each entity, least specific first; every step must win over the ones before it. */
    CHECK_EQ_INT(APPLY(img, rec_quota(QC, NULL, NULL, PBR, 8, false)), 0);
    CHECK_EQ_INT((int)lookup(img, "alice", "app"), 8);
    CHECK_EQ_INT(APPLY(img, rec_quota(QC, NULL, "app", PBR, 7, false)), 0);
    CHECK_EQ_INT((int)lookup(img, "alice", "app"), 7);
    CHECK_EQ_INT((int)lookup(img, "alice", "other"), 8);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU, NULL, NULL, PBR, 6, false)), 0);
    CHECK_EQ_INT((int)lookup(img, "alice", "app"), 6);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU | QC, NULL, NULL, PBR, 5, false)), 0);
    CHECK_EQ_INT((int)lookup(img, "alice", "app"), 5);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU | QC, NULL, "app", PBR, 4, false)), 0);
    CHECK_EQ_INT((int)lookup(img, "alice", "app"), 4);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU, "alice", NULL, PBR, 3, false)), 0);
    CHECK_EQ_INT((int)lookup(img, "alice", "app"), 3);
    CHECK_EQ_INT((int)lookup(img, "bob", "app"), 4);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU | QC, "alice", NULL, PBR, 2, false)), 0);
    CHECK_EQ_INT((int)lookup(img, "alice", "app"), 2);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU | QC, "alice", "app", PBR, 1, false)), 0);
    CHECK_EQ_INT((int)lookup(img, "alice", "app"), 1);
    CHECK_EQ_INT((int)lookup(img, "alice", "other"), 2);
    CHECK_EQ_INT((int)lookup(img, "bob", "other"), 5);
    /* Precedence is per key: another key on the most specific entity hides nothing. */
    double v = 0;
    CHECK(!meta_image_quota_lookup(img, "alice", "app", META_QUOTA_CONSUMER_BYTE_RATE, &v));
    CHECK_EQ_INT(APPLY(img, rec_quota(QC, NULL, NULL, META_QUOTA_CONSUMER_BYTE_RATE, 9, false)), 0);
    CHECK(meta_image_quota_lookup(img, "alice", "app", META_QUOTA_CONSUMER_BYTE_RATE, &v));
    CHECK_EQ_INT((int)v, 9);
    /* Removing the most specific falls back to the next. */
    CHECK_EQ_INT(APPLY(img, rec_quota(QU | QC, "alice", "app", PBR, 0, true)), 0);
    CHECK_EQ_INT((int)lookup(img, "alice", "app"), 2);
    meta_image_free(img);
}

TEST(meta_client_quota_apply_rules_and_snapshot)
{
    struct meta_image *img = meta_image_new(), *again = meta_image_new();
    uint8_t *snap;
    size_t len, n;

    int rc = APPLY(img, rec_quota(QU, "bob", NULL, PBR, 1024, false),
                   rec_quota(QU, "bob", NULL, META_QUOTA_REQUEST_PERCENTAGE, 50, false),
                   rec_quota(QU | QC, NULL, "app", PBR, 2048.5, false),
                   rec_quota(QC, NULL, NULL, META_QUOTA_CONTROLLER_MUTATION_RATE, 3, false));
    CHECK_EQ_INT(rc, 0);
    const struct meta_quota *q = meta_image_quotas(img, &n);
    REQUIRE(n == 3);
    /* Entity order: user part absent < default < named. */
    CHECK(!q[0].has_user && q[0].has_client_id && q[0].client_id == NULL);
    CHECK(q[1].has_user && q[1].user == NULL && strcmp(q[1].client_id, "app") == 0);
    CHECK(q[2].has_user && strcmp(q[2].user, "bob") == 0 && !q[2].has_client_id);
    CHECK_EQ_INT(q[2].set, 1u << PBR | 1u << META_QUOTA_REQUEST_PERCENTAGE);
    /* Refused, each with its whole batch: no part, an empty name, a bad key, a value <= 0
     * or not finite. */
    CHECK_EQ_INT(APPLY(img, rec_quota(QU, "carol", NULL, PBR, 1, false),
                       rec_quota(0, NULL, NULL, PBR, 1, false)),
                 ERR_INVALID_REQUEST);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU, "", NULL, PBR, 1, false)), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU, "carol", NULL, 7, 1, false)), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU, "carol", NULL, PBR, 0, false)), ERR_INVALID_REQUEST);
    CHECK_EQ_INT(APPLY(img, rec_quota(QU, "carol", NULL, PBR, 1.0 / 0.0, false)),
                 ERR_INVALID_REQUEST);
    CHECK_EQ_INT((int)lookup(img, "carol", "app"), 2048);
    CHECK_EQ_INT((int)lookup(img, "carol", ""), -1);
    meta_image_quotas(img, &n);
    CHECK_EQ_INT(n, 3);

    REQUIRE(meta_image_snapshot(img, &snap, &len) == 0);
    CHECK_EQ_INT(meta_image_restore(again, snap, len), 0);
    CHECK(same_snapshot(img, again));
    q = meta_image_quotas(again, &n);
    REQUIRE(n == 3);
    CHECK(q[1].values[PBR] == 2048.5);
    for (size_t k = 1; k < len; k++)
        CHECK(meta_image_restore(again, snap, k) != 0);
    CHECK(same_snapshot(img, again));
    free(snap);

    /* Removing every key of an entity drops it; removing what is not set changes nothing. */
    rc = APPLY(img, rec_quota(QU, "bob", NULL, PBR, 0, true),
               rec_quota(QU, "bob", NULL, META_QUOTA_REQUEST_PERCENTAGE, 0, true),
               rec_quota(QU, "nobody", NULL, PBR, 0, true));
    CHECK_EQ_INT(rc, 0);
    meta_image_quotas(img, &n);
    CHECK_EQ_INT(n, 2);

    /* Version 5 (before quotas): the same without the quota count at the end. */
    struct meta_image *empty = meta_image_new(), *old = meta_image_new();
    REQUIRE(meta_image_snapshot(empty, &snap, &len) == 0);
    snap[0] = 5;
    CHECK_EQ_INT(meta_image_restore(old, snap, len - 4), 0);
    free(snap);
    meta_image_free(empty);
    meta_image_free(old);
    meta_image_free(again);
    meta_image_free(img);
}

TEST(meta_client_quota_record_roundtrip)
{
    struct meta_record in[2] = {rec_quota(QU | QC, NULL, "c1", PBR, 12.25, false),
                                rec_quota(QC, NULL, "c2", META_QUOTA_CONSUMER_BYTE_RATE, 0, true)};
    uint8_t *buf;
    size_t len, n;
    struct arena *a = NULL;
    struct meta_record *out;

    REQUIRE(meta_batch_encode(in, 2, &buf, &len) == 0);
    REQUIRE(meta_batch_decode(buf, len, &a, &out, &n) == 0);
    REQUIRE(n == 2);
    CHECK(out[0].u.quota.entity.has_user && out[0].u.quota.entity.user == NULL);
    CHECK_EQ_STR(out[0].u.quota.entity.client_id, "c1");
    CHECK(out[0].u.quota.value == 12.25 && !out[0].u.quota.remove);
    CHECK(!out[1].u.quota.entity.has_user && out[1].u.quota.remove);
    CHECK_EQ_INT(out[1].u.quota.key, META_QUOTA_CONSUMER_BYTE_RATE);
    arena_free(a);
    free(buf);
}
