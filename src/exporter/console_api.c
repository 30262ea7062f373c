/* SPDX-License-Identifier: Apache-2.0 */
/* exporter console api: the web console's JSON endpoints (docs/console.md), answered on the
 * event loop from the broker's state, as the metrics rendering reads it (exporter.c), and
 * written with cJSON. Reads only, unless console.write.enable: then three POSTs change the
 * cluster (create a topic, reset an empty group's offsets, abort a hanging transaction).
 *
 * The record browser reads the log on the loop (preads of the segment, as the metrics' timestamp
 * look-ups do), so one request is bounded small: at most CONSOLE_READ_MAX_BYTES of batches, the
 * batch that would pass that bound not read (a single batch larger than it is never shown), and
 * CONSOLE_READ_MAX_RECORDS records; the records a request skips (read_committed's aborted
 * ones) count against the byte bound too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/props.h"
#include "authz/authz.h"
#include "base/slog.h"
#include "console_int.h"
#include "exporter.h"
#include "group/group.h"
#include "group/group_sm.h"
#include "meta/meta.h"
#include "proto/proto.h"
#include "pstate/pstate.h"
#include "record/record.h"
#include "replica/replica.h"
#include "txn/txn.h"
#include "txn/txn_sm.h"

#define CONSOLE_READ_MAX_BYTES (256 * 1024)
#define CONSOLE_READ_MAX_RECORDS 500
#define CONSOLE_READ_DEFAULT_RECORDS 50
/* A compressed batch decompresses to at most this much (record_iter_init's bound). */
#define CONSOLE_DECOMPRESS_MAX (1024 * 1024)
/* Aborted transactions looked at in one read_committed request. */
#define CONSOLE_MAX_ABORTED 1024
/* Rows of one /api/producers or held-partitions list (more: "truncated"), and the first-record
 * timestamps one /api/transactions reads (each a small read of the log; past it since_ms is
 * -1): what bounds the loop's time on a broker with thousands of partitions. */
#define CONSOLE_MAX_ROWS 10000
#define CONSOLE_MAX_TS_READS 200

static int64_t wall_now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* ---- answers -------------------------------------------------------------------------------- */

static void answer(struct console_call *c, unsigned status, cJSON *body)
{
    c->status = status;
    c->out = body ? cJSON_PrintUnformatted(body) : NULL;
    c->out_len = c->out ? strlen(c->out) : 0;
    cJSON_Delete(body);
}

static void answer_error(struct console_call *c, unsigned status, const char *fmt, const char *a)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a ? a : "");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    answer(c, status, o);
}

/* Whether the call's principal may do `op` on (type, name), as a Kafka client doing `api`
 * would be asked (docs/console.md's table); a denial is logged as the authorizer's unless
 * quiet (what Kafka filters silently: topics left out of Metadata, groups of ListGroups). */
static bool allowed(struct exporter *e, const struct console_call *c, int8_t op, int8_t type,
                    const char *name, const char *api, bool quiet)
{
    return authz_check(exporter_authz(e), c->principal, c->host, op, type, name, api, !quiet);
}

/* 403 with the Kafka error a client would get (error_code, by name). */
static void answer_denied(struct console_call *c, int err, const char *what, const char *name)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s is not authorized to %s %s", c->principal, what, name);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg);
    cJSON_AddStringToObject(o, "error_code", err_name(err));
    answer(c, 403, o);
}

const char *console_arg(const struct console_call *c, const char *key)
{
    for (int i = 0; i < c->n_args; i++)
        if (strcmp(c->arg_key[i], key) == 0)
            return c->arg_value[i];
    return NULL;
}

/* A decimal int64 argument: true and *out, false when present but not a number (absent: *out
 * keeps its default, true). */
static bool arg_int(const struct console_call *c, const char *key, int64_t *out)
{
    const char *v = console_arg(c, key);
    if (v == NULL || *v == '\0')
        return true;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (*end != '\0')
        return false;
    *out = n;
    return true;
}

static void add_int(cJSON *o, const char *k, int64_t v)
{
    cJSON_AddNumberToObject(o, k, (double)v);
}

/* ---- overview, topics -------------------------------------------------------------------- */

struct count_walk {
    long groups;
    long producers;
    long open_txns; /* partitions whose last stable offset an open transaction holds */
};

static int count_partition(void *arg, struct partition *p)
{
    struct count_walk *w = arg;
    w->producers += (long)pstate_count(partition_pstate(p));
    w->open_txns += pstate_first_unstable_offset(partition_pstate(p)) >= 0;
    return 0;
}

static void count_group(void *arg, const char *group_id, const char *state, int32_t members)
{
    (void)group_id;
    (void)state;
    (void)members;
    ((struct count_walk *)arg)->groups++;
}

static void api_overview(struct exporter *e, struct console_call *c)
{
    struct meta *m = exporter_meta(e);
    cJSON *o = cJSON_CreateObject();
    struct count_walk w = {0};

    /* DescribeCluster's rule: DESCRIBE on the cluster. */
    if (!allowed(e, c, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER,
                 "DescribeCluster", false)) {
        cJSON_Delete(o);
        answer_denied(c, ERR_CLUSTER_AUTHORIZATION_FAILED, "describe the cluster", AUTHZ_CLUSTER);
        return;
    }
    add_int(o, "node_id", exporter_node_id(e));
    cJSON_AddStringToObject(o, "cluster_id", meta_cluster_id(m) ? meta_cluster_id(m) : "");
    add_int(o, "controller_id", meta_controller_id(m));
    cJSON_AddBoolToObject(o, "write_enabled", exporter_write_enabled(e));
    cJSON *brokers = cJSON_AddArrayToObject(o, "brokers");
    size_t n;
    const struct meta_broker *b = meta_brokers(m, &n);
    for (size_t i = 0; i < n; i++) {
        cJSON *x = cJSON_CreateObject();
        add_int(x, "id", b[i].id);
        cJSON_AddStringToObject(x, "host", b[i].host ? b[i].host : "");
        add_int(x, "port", b[i].port);
        if (b[i].rack)
            cJSON_AddStringToObject(x, "rack", b[i].rack);
        cJSON_AddBoolToObject(x, "fenced", b[i].fenced);
        cJSON_AddItemToArray(brokers, x);
    }
    const struct meta_topic *const *topics = meta_topics(m, &n);
    long partitions = 0;
    for (size_t i = 0; i < n; i++)
        partitions += topics[i]->n_partitions;
    add_int(o, "topics", (int64_t)n);
    add_int(o, "partitions", partitions);
    if (exporter_replicas(e))
        replica_for_each(exporter_replicas(e), count_partition, &w);
    if (exporter_groups(e))
        group_coord_for_each(exporter_groups(e), count_group, NULL, &w);
    int64_t states[TXN_N_STATES];
    txn_count_states(exporter_txn(e), states, TXN_N_STATES);
    add_int(o, "groups", w.groups);
    add_int(o, "producers", w.producers);
    add_int(o, "ongoing_transactions", states[TXN_ONGOING]);
    add_int(o, "partitions_held_by_transactions", w.open_txns);
    answer(c, 200, o);
}

/* The topic's value of `key`, else the broker's `broker_key` (or `def`). */
static const char *topic_config(const struct meta_topic *t, const struct props *config,
                                const char *key, const char *broker_key, const char *def)
{
    for (int32_t i = 0; i < t->n_configs; i++)
        if (strcmp(t->configs[i].key, key) == 0)
            return t->configs[i].value;
    const char *v = config ? props_get(config, broker_key) : NULL;
    return v ? v : def;
}

/* retention.ms as Kafka resolves it: the topic's, else log.retention.ms, .minutes, .hours. */
static int64_t retention_ms(const struct meta_topic *t, const struct props *config)
{
    for (int32_t i = 0; i < t->n_configs; i++)
        if (strcmp(t->configs[i].key, "retention.ms") == 0)
            return strtoll(t->configs[i].value, NULL, 10);
    if (config && props_get(config, "log.retention.ms"))
        return props_get_int(config, "log.retention.ms", 0, NULL);
    if (config && props_get(config, "log.retention.minutes"))
        return props_get_int(config, "log.retention.minutes", 0, NULL) * 60000;
    return (config ? props_get_int(config, "log.retention.hours", 168, NULL) : 168) * 3600000;
}

static cJSON *int_array(const int32_t *v, int32_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (int32_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

static void api_topics(struct exporter *e, struct console_call *c)
{
    struct meta *m = exporter_meta(e);
    struct replica_mgr *rm = exporter_replicas(e);
    size_t n;
    const struct meta_topic *const *topics = meta_topics(m, &n);
    cJSON *o = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(o, "topics");

    for (size_t i = 0; i < n; i++) {
        const struct meta_topic *t = topics[i];
        /* Metadata's rule: a topic without DESCRIBE is left out, silently. */
        if (!allowed(e, c, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC, t->name, "Metadata", true))
            continue;
        cJSON *x = cJSON_CreateObject();
        int64_t size = 0, records = 0;
        for (int32_t k = 0; rm && k < t->n_partitions; k++) {
            struct partition *p = replica_partition(rm, t->name, k);
            if (p) {
                size += partition_size_bytes(p);
                records += partition_high_watermark(p) - partition_log_start_offset(p);
            }
        }
        cJSON_AddStringToObject(x, "name", t->name);
        cJSON_AddBoolToObject(x, "internal", t->name[0] == '_' && t->name[1] == '_');
        add_int(x, "partitions", t->n_partitions);
        add_int(x, "size_bytes", size);
        add_int(x, "records", records);
        add_int(x, "retention_ms", retention_ms(t, exporter_config(e)));
        cJSON_AddItemToArray(arr, x);
    }
    answer(c, 200, o);
}

static void api_topic(struct exporter *e, struct console_call *c, const char *name)
{
    const struct meta_topic *t = meta_topic_by_name(exporter_meta(e), name);
    struct replica_mgr *rm = exporter_replicas(e);
    const struct props *config = exporter_config(e);

    /* Metadata of a named topic: TOPIC_AUTHORIZATION_FAILED without DESCRIBE, whether it
     * exists or not (Kafka does not say which). */
    if (!allowed(e, c, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC, name, "Metadata", false)) {
        answer_denied(c, ERR_TOPIC_AUTHORIZATION_FAILED, "describe topic", name);
        return;
    }
    if (t == NULL) {
        answer_error(c, 404, "no topic \"%s\"", name);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", t->name);
    add_int(o, "retention_ms", retention_ms(t, config));
    cJSON_AddStringToObject(
        o, "retention_bytes",
        topic_config(t, config, "retention.bytes", "log.retention.bytes", "-1"));
    cJSON_AddStringToObject(
        o, "cleanup_policy",
        topic_config(t, config, "cleanup.policy", "log.cleanup.policy", "delete"));
    cJSON *cfg = cJSON_AddObjectToObject(o, "configs");
    for (int32_t i = 0; i < t->n_configs; i++)
        cJSON_AddStringToObject(cfg, t->configs[i].key, t->configs[i].value);
    cJSON *parts = cJSON_AddArrayToObject(o, "partitions");
    for (int32_t k = 0; k < t->n_partitions; k++) {
        const struct meta_partition *mp = &t->partitions[k];
        cJSON *x = cJSON_CreateObject();
        add_int(x, "partition", k);
        add_int(x, "leader", mp->leader);
        add_int(x, "leader_epoch", mp->leader_epoch);
        cJSON_AddItemToObject(x, "replicas", int_array(mp->replicas, mp->n_replicas));
        cJSON_AddItemToObject(x, "isr", int_array(mp->isr, mp->n_isr));
        struct partition *p = rm ? replica_partition(rm, t->name, k) : NULL;
        cJSON_AddBoolToObject(x, "hosted_here", p != NULL);
        if (p) {
            add_int(x, "log_start_offset", partition_log_start_offset(p));
            add_int(x, "log_end_offset", partition_log_end_offset(p));
            add_int(x, "high_watermark", partition_high_watermark(p));
            add_int(x, "last_stable_offset", partition_last_stable_offset(p));
            add_int(x, "size_bytes", partition_size_bytes(p));
            add_int(x, "segments", (int64_t)partition_segment_count(p));
        }
        cJSON_AddItemToArray(parts, x);
    }
    answer(c, 200, o);
}

/* ---- records ------------------------------------------------------------------------------ */

static char *base64(const uint8_t *p, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1), *q = out;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        *q++ = tab[v >> 18 & 63];
        *q++ = tab[v >> 12 & 63];
        *q++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *q = '\0';
    return out;
}

/* Adds bytes as base64 under `k` (null for a null key or value). */
static void add_bytes(cJSON *o, const char *k, const uint8_t *p, int32_t len)
{
    if (p == NULL || len < 0) {
        cJSON_AddNullToObject(o, k);
        return;
    }
    char *b = base64(p, (size_t)len);
    if (b)
        cJSON_AddStringToObject(o, k, b);
    free(b);
}

/* The producers whose aborted transactions read_committed is inside, as a consumer tracks them:
 * an aborted transaction joins when the read reaches its first offset and leaves at its
 * ABORT marker. */
struct abort_track {
    struct partition_aborted_txn *list;
    size_t n, next;
    int64_t active[CONSOLE_MAX_ABORTED];
    size_t n_active;
};

static bool abort_active(struct abort_track *t, int64_t base_offset, int64_t pid)
{
    while (t->next < t->n && t->list[t->next].first_offset <= base_offset) {
        if (t->n_active < CONSOLE_MAX_ABORTED)
            t->active[t->n_active++] = t->list[t->next].producer_id;
        t->next++;
    }
    for (size_t i = 0; i < t->n_active; i++)
        if (t->active[i] == pid)
            return true;
    return false;
}

static void abort_done(struct abort_track *t, int64_t pid)
{
    for (size_t i = 0; i < t->n_active; i++)
        if (t->active[i] == pid) {
            t->active[i] = t->active[--t->n_active];
            return;
        }
}

static int cmp_aborted(const void *a, const void *b)
{
    const struct partition_aborted_txn *x = a, *y = b;
    return x->first_offset < y->first_offset ? -1 : x->first_offset > y->first_offset;
}

/* One batch into `records` (read_committed skips aborted data); returns the records added. */
static int add_batch(cJSON *records, const uint8_t *buf, size_t len, int64_t from, int64_t max,
                     bool committed, struct abort_track *ab, int64_t *skipped)
{
    struct record_iter it;
    struct record_item rec;
    int added = 0;

    if (record_iter_init(&it, buf, len, CONSOLE_DECOMPRESS_MAX) != 0)
        return -1;
    const struct record_batch *b = &it.batch;
    bool control = (b->attributes & RECORD_ATTR_CONTROL) != 0;
    bool txnal = (b->attributes & RECORD_ATTR_TRANSACTIONAL) != 0;
    bool aborted =
        committed && txnal && !control && abort_active(ab, b->base_offset, b->producer_id);
    while (record_iter_next(&it, &rec) == 0) {
        if (rec.offset < from)
            continue;
        if (aborted) {
            (*skipped)++;
            continue;
        }
        if (added >= max)
            break;
        cJSON *x = cJSON_CreateObject();
        add_int(x, "offset", rec.offset);
        add_int(x, "timestamp", rec.timestamp);
        if (b->producer_id >= 0) {
            add_int(x, "producer_id", b->producer_id);
            add_int(x, "producer_epoch", b->producer_epoch);
        }
        cJSON_AddBoolToObject(x, "transactional", txnal);
        if (control) {
            /* A control record's key: version (int16), type (int16: 0 ABORT, 1 COMMIT). */
            int type = rec.key_len >= 4 && rec.key ? (rec.key[2] << 8 | rec.key[3]) : -1;
            cJSON_AddStringToObject(x, "control",
                                    type == 0   ? "ABORT"
                                    : type == 1 ? "COMMIT"
                                                : "UNKNOWN");
            if (type == 0 && committed)
                abort_done(ab, b->producer_id);
        } else {
            add_bytes(x, "key", rec.key, rec.key_len);
            add_bytes(x, "value", rec.value, rec.value_len);
            cJSON *hs = cJSON_AddArrayToObject(x, "headers");
            struct record_header_iter hi;
            struct record_header_view h;
            record_header_first(&rec, &hi);
            while (record_header_next(&hi, &h) == 0) {
                cJSON *hx = cJSON_CreateObject();
                char *k = malloc((size_t)h.key_len + 1);
                if (k) {
                    memcpy(k, h.key, (size_t)h.key_len);
                    k[h.key_len] = '\0';
                    cJSON_AddStringToObject(hx, "key", k);
                    free(k);
                }
                add_bytes(hx, "value", h.value, h.value_len);
                cJSON_AddItemToArray(hs, hx);
            }
        }
        cJSON_AddItemToArray(records, x);
        added++;
    }
    record_iter_close(&it);
    return added;
}

static void api_records(struct exporter *e, struct console_call *c)
{
    const char *topic = console_arg(c, "topic");
    const char *iso = console_arg(c, "isolation");
    int64_t partition = 0, offset = -1, at_time = -1, max = CONSOLE_READ_DEFAULT_RECORDS;
    struct replica_mgr *rm = exporter_replicas(e);

    if (topic == NULL || !arg_int(c, "partition", &partition) || !arg_int(c, "offset", &offset) ||
        !arg_int(c, "time", &at_time) || !arg_int(c, "max", &max) || partition < 0 ||
        partition > INT32_MAX || max < 1) {
        answer_error(c, 400, "records: topic=, partition=, offset= or time=, max= (numbers)%s",
                     NULL);
        return;
    }
    /* Fetch's rule: READ on the topic. */
    if (!allowed(e, c, PROTO_ACL_OP_READ, PROTO_RESOURCE_TOPIC, topic, "Fetch", false)) {
        answer_denied(c, ERR_TOPIC_AUTHORIZATION_FAILED, "read topic", topic);
        return;
    }
    bool committed = iso != NULL && strcmp(iso, "read_committed") == 0;
    if (iso != NULL && !committed && strcmp(iso, "read_uncommitted") != 0) {
        answer_error(c, 400, "isolation: read_committed or read_uncommitted, not \"%s\"", iso);
        return;
    }
    if (max > CONSOLE_READ_MAX_RECORDS)
        max = CONSOLE_READ_MAX_RECORDS;
    struct partition *p = rm ? replica_partition(rm, topic, (int32_t)partition) : NULL;
    if (p == NULL) {
        answer_error(c, 404, "partition not hosted here (or no such topic): %s", topic);
        return;
    }
    if (offset < 0 && at_time >= 0) {
        int64_t ts;
        if (partition_offset_for_time(p, at_time, &offset, &ts) != 0 || offset < 0)
            offset = partition_high_watermark(p); /* nothing at or after that time */
    }
    if (offset < partition_log_start_offset(p))
        offset = partition_log_start_offset(p);
    enum partition_reader reader =
        committed ? PARTITION_READ_COMMITTED : PARTITION_READ_UNCOMMITTED;
    int64_t bound = partition_read_bound(p, reader);
    struct abort_track *ab = calloc(1, sizeof *ab);
    if (ab == NULL) {
        answer(c, 500, NULL);
        return;
    }
    if (committed && offset < bound &&
        partition_aborted_txns(p, offset, bound, &ab->list, &ab->n) == 0 && ab->n > 1)
        qsort(ab->list, ab->n, sizeof *ab->list, cmp_aborted);

    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "topic", topic);
    add_int(o, "partition", partition);
    cJSON_AddStringToObject(o, "isolation", committed ? "read_committed" : "read_uncommitted");
    add_int(o, "from", offset);
    add_int(o, "log_start_offset", partition_log_start_offset(p));
    add_int(o, "high_watermark", partition_high_watermark(p));
    add_int(o, "last_stable_offset", partition_last_stable_offset(p));
    cJSON *records = cJSON_AddArrayToObject(o, "records");
    int64_t at = offset, n = 0, skipped = 0;
    size_t bytes = 0;
    const char *stopped = "end";
    while (n < max && at < bound) {
        if (bytes >= CONSOLE_READ_MAX_BYTES) {
            stopped = "byte_limit";
            break;
        }
        struct partition_slice sl;
        uint8_t *buf = NULL;
        size_t len = 0;
        if (partition_read(p, at, 1, reader, &sl) != 0) {
            stopped = "error";
            break;
        }
        /* What is left of the request's bytes bounds the batch: a larger one is not read. */
        int rc = sl.len == 0
                     ? ERR_NOTFOUND
                     : partition_slice_first_batch(&sl, CONSOLE_READ_MAX_BYTES - bytes, &buf, &len);
        int64_t next = sl.next_offset;
        partition_slice_release(p, &sl);
        if (rc != 0) {
            stopped = rc == ERR_NOTFOUND            ? "end"
                      : rc == ERR_MESSAGE_TOO_LARGE ? "byte_limit"
                                                    : "error";
            break;
        }
        bytes += len;
        struct record_batch hb;
        if (record_batch_parse(buf, len, &hb) != 0) {
            free(buf);
            stopped = "error";
            break;
        }
        int added = add_batch(records, buf, len, at, max - n, committed, ab, &skipped);
        free(buf);
        if (added < 0) {
            stopped = "error";
            break;
        }
        n += added;
        int64_t last = record_batch_last_offset(&hb);
        at = last + 1 > at ? last + 1 : next;
        if (n >= max) {
            /* The batch may hold more than max: the next read starts after the last shown. */
            cJSON *lastrec = cJSON_GetArrayItem(records, cJSON_GetArraySize(records) - 1);
            cJSON *lo = lastrec ? cJSON_GetObjectItem(lastrec, "offset") : NULL;
            if (lo)
                at = (int64_t)cJSON_GetNumberValue(lo) + 1;
            stopped = "record_limit";
        }
    }
    add_int(o, "next_offset", at);
    add_int(o, "aborted_skipped", skipped);
    add_int(o, "bytes_read", (int64_t)bytes);
    cJSON_AddStringToObject(o, "stopped", stopped);
    free(ab->list);
    free(ab);
    answer(c, 200, o);
}

/* ---- groups ------------------------------------------------------------------------------- */

struct group_walk {
    struct exporter *e;
    const struct console_call *c;
    const char *only; /* NULL: every group */
    cJSON *groups;
    cJSON *cur; /* the group being visited (NULL: skipped) */
    int64_t total_lag;
};

static void walk_group(void *arg, const char *group_id, const char *state, int32_t members)
{
    struct group_walk *w = arg;
    if (w->cur)
        add_int(w->cur, "total_lag", w->total_lag);
    w->cur = NULL;
    w->total_lag = 0;
    if (w->only && strcmp(w->only, group_id) != 0)
        return;
    /* ListGroups leaves out, DescribeGroups and OffsetFetch refuse, a group without DESCRIBE
     * (api_groups answers 403 for one asked by name). */
    if (!allowed(w->e, w->c, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_GROUP, group_id, "ListGroups",
                 true))
        return;
    w->cur = cJSON_CreateObject();
    cJSON_AddStringToObject(w->cur, "group", group_id);
    cJSON_AddStringToObject(w->cur, "state", state);
    add_int(w->cur, "members", members);
    cJSON_AddArrayToObject(w->cur, "offsets");
    cJSON_AddItemToArray(w->groups, w->cur);
}

static void walk_offset(void *arg, const char *group_id, const char *topic, int32_t partition,
                        int64_t offset)
{
    struct group_walk *w = arg;
    (void)group_id;
    if (w->cur == NULL)
        return;
    /* OffsetFetch leaves out the partitions of a topic without DESCRIBE. */
    if (!allowed(w->e, w->c, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TOPIC, topic, "OffsetFetch",
                 true))
        return;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "topic", topic);
    add_int(x, "partition", partition);
    add_int(x, "committed", offset);
    struct replica_mgr *rm = exporter_replicas(w->e);
    struct partition *p = rm ? replica_partition(rm, topic, partition) : NULL;
    if (p) {
        int64_t hw = partition_high_watermark(p), lso = partition_last_stable_offset(p);
        struct exporter_lag lag = exporter_group_lag(hw, lso, offset);
        add_int(x, "high_watermark", hw);
        add_int(x, "last_stable_offset", lso);
        add_int(x, "lag", lag.records);
        add_int(x, "lag_stable", lag.stable_records);
        w->total_lag += lag.records;
    }
    cJSON_AddItemToArray(cJSON_GetObjectItem(w->cur, "offsets"), x);
}

/* A member's assignment, decoded when its group speaks the consumer protocol (a
 * ConsumerProtocolAssignment); other protocols' bytes are shown as their length. */
static void walk_member(void *arg, const struct group_member_info *m)
{
    cJSON *members = arg;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "member_id", m->member_id ? m->member_id : "");
    if (m->group_instance_id)
        cJSON_AddStringToObject(x, "group_instance_id", m->group_instance_id);
    cJSON_AddStringToObject(x, "client_id", m->client_id ? m->client_id : "");
    cJSON_AddStringToObject(x, "client_host", m->client_host ? m->client_host : "");
    cJSON *asg = cJSON_AddArrayToObject(x, "assignment");
    struct arena *ar = m->assignment_len > 0 ? arena_new(1 << 20) : NULL;
    struct ConsumerProtocolAssignment a;
    int16_t version;
    memset(&a, 0, sizeof a);
    if (ar && proto_record_decode(&proto_record_ConsumerProtocolAssignment, m->assignment,
                                  (size_t)m->assignment_len, &version, &a, ar) == 0) {
        for (int32_t i = 0; i < a.AssignedPartitions.n; i++) {
            const struct ConsumerProtocolTopicPartition *tp = &a.AssignedPartitions.v[i];
            cJSON *t = cJSON_CreateObject();
            cJSON_AddStringToObject(t, "topic", tp->Topic ? tp->Topic : "");
            cJSON *ps = cJSON_AddArrayToObject(t, "partitions");
            for (int32_t k = 0; k < tp->Partitions.n; k++)
                cJSON_AddItemToArray(ps, cJSON_CreateNumber(tp->Partitions.v[k]));
            cJSON_AddItemToArray(asg, t);
        }
    } else if (m->assignment_len > 0) {
        add_int(x, "assignment_bytes", m->assignment_len);
    }
    arena_free(ar);
    cJSON_AddItemToArray(members, x);
}

static void add_members(struct exporter *e, cJSON *groups)
{
    cJSON *g;
    cJSON_ArrayForEach(g, groups)
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(g, "group"));
        cJSON *members = cJSON_AddArrayToObject(g, "member_list");
        if (id && members)
            group_coord_members(exporter_groups(e), id, walk_member, members);
    }
}

static void api_groups(struct exporter *e, struct console_call *c, const char *only)
{
    if (only && !allowed(e, c, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_GROUP, only, "DescribeGroups",
                         false)) {
        answer_denied(c, ERR_GROUP_AUTHORIZATION_FAILED, "describe group", only);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    struct group_walk w = {
        .e = e, .c = c, .only = only, .groups = cJSON_AddArrayToObject(o, "groups")};
    if (exporter_groups(e))
        group_coord_for_each(exporter_groups(e), walk_group, walk_offset, &w);
    if (w.cur)
        add_int(w.cur, "total_lag", w.total_lag);
    if (exporter_groups(e))
        add_members(e, w.groups); /* after the walk: its callbacks must not call back */
    if (only) {
        cJSON *g = cJSON_DetachItemFromArray(w.groups, 0);
        cJSON_Delete(o);
        if (g == NULL) {
            answer_error(c, 404, "no group \"%s\" coordinated here", only);
            return;
        }
        o = g;
    }
    answer(c, 200, o);
}

/* ---- transactions and producers ------------------------------------------------------------ */

struct txn_walk {
    cJSON *arr;
    struct exporter *e;
    const struct console_call *c; /* NULL: no filter (the tables only) */
    int64_t now_ms;
    /* Producer ids with a transaction open at a coordinator here (Ongoing or Prepare*), to
     * tell a held partition's transaction apart from a hanging one. */
    int64_t *open;
    size_t n_open, cap_open;
    /* For naming a producer's transactional id. */
    struct {
        int64_t pid;
        const char *tid;
    } * ids;
    size_t n_ids, cap_ids;
};

static bool txn_is_open(enum txn_state s)
{
    return s == TXN_ONGOING || s == TXN_PREPARE_COMMIT || s == TXN_PREPARE_ABORT;
}

static void walk_txn(void *arg, const struct txn_meta *m)
{
    struct txn_walk *w = arg;
    const struct txn_transit *t = &m->cur;
    /* ListTransactions leaves out a transactional id without DESCRIBE. */
    if (w->arr && allowed(w->e, w->c, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_TRANSACTIONAL_ID,
                          m->tid, "ListTransactions", true)) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "transactional_id", m->tid);
        cJSON_AddStringToObject(x, "state", txn_state_name(t->state));
        add_int(x, "producer_id", t->producer_id);
        add_int(x, "producer_epoch", t->producer_epoch);
        add_int(x, "timeout_ms", t->timeout_ms);
        add_int(x, "start_ms", t->start_ms);
        add_int(x, "age_ms",
                t->start_ms >= 0 && txn_is_open(t->state) ? w->now_ms - t->start_ms : 0);
        cJSON *parts = cJSON_AddArrayToObject(x, "partitions");
        for (int32_t i = 0; i < t->n_parts; i++) {
            cJSON *tp = cJSON_CreateObject();
            cJSON_AddStringToObject(tp, "topic", t->parts[i].topic);
            add_int(tp, "partition", t->parts[i].partition);
            cJSON_AddItemToArray(parts, tp);
        }
        cJSON_AddItemToArray(w->arr, x);
    }
    if (txn_is_open(t->state) && w->n_open < w->cap_open)
        w->open[w->n_open++] = t->producer_id;
    if (w->n_ids < w->cap_ids) {
        w->ids[w->n_ids].pid = t->producer_id;
        w->ids[w->n_ids].tid = m->tid;
        w->n_ids++;
    }
}

static void count_txn(void *arg, const struct txn_meta *m)
{
    (void)m;
    (*(size_t *)arg)++;
}

/* Fills w's open/ids tables (and w->arr when set) from the coordinator. False on no memory. */
static bool txn_scan(struct exporter *e, struct txn_walk *w)
{
    size_t n = 0;
    txn_for_each(exporter_txn(e), count_txn, &n);
    w->cap_open = w->cap_ids = n;
    w->open = calloc(n + 1, sizeof *w->open);
    w->ids = calloc(n + 1, sizeof *w->ids);
    if (w->open == NULL || w->ids == NULL)
        return false;
    txn_for_each(exporter_txn(e), walk_txn, w);
    return true;
}

static bool pid_open(const struct txn_walk *w, int64_t pid)
{
    for (size_t i = 0; i < w->n_open; i++)
        if (w->open[i] == pid)
            return true;
    return false;
}

static const char *pid_tid(const struct txn_walk *w, int64_t pid)
{
    for (size_t i = 0; i < w->n_ids; i++)
        if (w->ids[i].pid == pid)
            return w->ids[i].tid;
    return NULL;
}

struct held_walk {
    struct txn_walk *tw;
    struct exporter *e;
    const struct console_call *c;
    cJSON *held;
    int rows, ts_reads;
    bool truncated;
    int64_t hanging_ms; /* transaction.max.timeout.ms */
    int64_t now_ms;
};

/* The timestamp of the record at `offset` (its batch's first record at or after it), -1 when
 * it cannot be read. One small read. */
static int64_t ts_at(struct partition *p, int64_t offset)
{
    struct partition_slice sl;
    uint8_t *buf = NULL;
    size_t len = 0;
    int64_t ts = -1;
    if (partition_read(p, offset, 1, PARTITION_READ_UNCOMMITTED, &sl) != 0)
        return -1;
    int rc = sl.len > 0 ? partition_slice_first_batch(&sl, CONSOLE_READ_MAX_BYTES, &buf, &len) : -1;
    partition_slice_release(p, &sl);
    struct record_batch b;
    if (rc == 0 && record_batch_parse(buf, len, &b) == 0)
        ts = b.base_timestamp;
    free(buf);
    return ts;
}

static int walk_held(void *arg, struct partition *p)
{
    struct held_walk *w = arg;
    const struct pstate *ps = partition_pstate(p);
    int64_t lso = pstate_first_unstable_offset(ps);
    if (lso < 0)
        return 0;
    /* DescribeProducers' rule (what find-hanging calls): READ on the topic. */
    if (!allowed(w->e, w->c, PROTO_ACL_OP_READ, PROTO_RESOURCE_TOPIC, partition_topic(p),
                 "DescribeProducers", true))
        return 0;
    size_t n;
    const struct pstate_producer *pr = pstate_producers(ps, &n);
    for (size_t i = 0; i < n; i++) {
        if (pr[i].txn_first_offset < 0)
            continue;
        if (w->rows >= CONSOLE_MAX_ROWS) {
            w->truncated = true;
            return 0;
        }
        w->rows++;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "topic", partition_topic(p));
        add_int(x, "partition", partition_index(p));
        add_int(x, "first_offset", pr[i].txn_first_offset);
        cJSON_AddBoolToObject(x, "holds_lso", pr[i].txn_first_offset == lso);
        add_int(x, "last_stable_offset", partition_last_stable_offset(p));
        add_int(x, "high_watermark", partition_high_watermark(p));
        add_int(x, "producer_id", pr[i].producer_id);
        add_int(x, "producer_epoch", pr[i].epoch);
        const char *tid = pid_tid(w->tw, pr[i].producer_id);
        if (tid)
            cJSON_AddStringToObject(x, "transactional_id", tid);
        else
            cJSON_AddNullToObject(x, "transactional_id");
        int64_t since = w->ts_reads < CONSOLE_MAX_TS_READS ? ts_at(p, pr[i].txn_first_offset) : -1;
        w->ts_reads++;
        add_int(x, "since_ms", since);
        add_int(x, "age_ms", since >= 0 && w->now_ms > since ? w->now_ms - since : 0);
        bool open = pid_open(w->tw, pr[i].producer_id);
        cJSON_AddBoolToObject(x, "coordinator_open", open);
        /* Kafka's kafka-transactions.sh find-hanging: open here, no coordinator has it open,
         * and older than the longest a transaction may last. */
        cJSON_AddBoolToObject(x, "hanging",
                              !open && since >= 0 && w->now_ms - since > w->hanging_ms);
        cJSON_AddItemToArray(w->held, x);
    }
    return 0;
}

static void api_transactions(struct exporter *e, struct console_call *c)
{
    cJSON *o = cJSON_CreateObject();
    struct txn_walk tw = {
        .arr = cJSON_AddArrayToObject(o, "transactions"), .e = e, .c = c, .now_ms = wall_now_ms()};
    if (!txn_scan(e, &tw)) {
        free(tw.open);
        free(tw.ids);
        cJSON_Delete(o);
        answer(c, 500, NULL);
        return;
    }
    const struct props *config = exporter_config(e);
    struct held_walk hw = {
        .tw = &tw,
        .e = e,
        .c = c,
        .held = cJSON_AddArrayToObject(o, "held_partitions"),
        .hanging_ms =
            config ? props_get_int(config, "transaction.max.timeout.ms", 900000, NULL) : 900000,
        .now_ms = tw.now_ms,
    };
    add_int(o, "hanging_after_ms", hw.hanging_ms);
    if (exporter_replicas(e))
        replica_for_each(exporter_replicas(e), walk_held, &hw);
    cJSON_AddBoolToObject(o, "truncated", hw.truncated);
    free(tw.open);
    free(tw.ids);
    answer(c, 200, o);
}

struct producer_walk {
    cJSON *arr;
    struct exporter *e;
    const struct console_call *c;
    struct txn_walk *tw;
    int rows;
    bool truncated;
};

static int walk_producers(void *arg, struct partition *p)
{
    struct producer_walk *w = arg;
    size_t n;
    /* DescribeProducers: READ on the topic (a partition without it is left out). */
    if (!allowed(w->e, w->c, PROTO_ACL_OP_READ, PROTO_RESOURCE_TOPIC, partition_topic(p),
                 "DescribeProducers", true))
        return 0;
    const struct pstate_producer *pr = pstate_producers(partition_pstate(p), &n);
    for (size_t i = 0; i < n; i++) {
        if (w->rows >= CONSOLE_MAX_ROWS) {
            w->truncated = true;
            return 0;
        }
        w->rows++;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "topic", partition_topic(p));
        add_int(x, "partition", partition_index(p));
        add_int(x, "producer_id", pr[i].producer_id);
        add_int(x, "producer_epoch", pr[i].epoch);
        const struct pstate_batch *last =
            pr[i].n_batches > 0 ? &pr[i].batches[pr[i].n_batches - 1] : NULL;
        add_int(x, "last_sequence", last ? last->last_seq : -1);
        add_int(x, "last_offset", last ? last->last_offset : -1);
        add_int(x, "last_timestamp", pr[i].last_timestamp);
        add_int(x, "coordinator_epoch", pr[i].coordinator_epoch);
        add_int(x, "current_txn_first_offset", pr[i].txn_first_offset);
        const char *tid = pid_tid(w->tw, pr[i].producer_id);
        if (tid)
            cJSON_AddStringToObject(x, "transactional_id", tid);
        cJSON_AddItemToArray(w->arr, x);
    }
    return 0;
}

static void api_producers(struct exporter *e, struct console_call *c)
{
    cJSON *o = cJSON_CreateObject();
    struct txn_walk tw = {.now_ms = wall_now_ms()};
    struct producer_walk w = {
        .arr = cJSON_AddArrayToObject(o, "producers"), .e = e, .c = c, .tw = &tw};
    if (txn_scan(e, &tw) && exporter_replicas(e))
        replica_for_each(exporter_replicas(e), walk_producers, &w);
    cJSON_AddBoolToObject(o, "truncated", w.truncated);
    free(tw.open);
    free(tw.ids);
    answer(c, 200, o);
}

/* ---- writes (console.write.enable) -------------------------------------------------------- */

static cJSON *body_json(struct console_call *c)
{
    return c->body ? cJSON_ParseWithLength(c->body, c->body_len) : NULL;
}

/* Kafka's rule for a topic name (Topic.validate): 1..249 of [a-zA-Z0-9._-], not "." or "..";
 * the console also keeps to user topics (no "__" prefix, Kafka's internal ones). */
static bool topic_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 249 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
        strncmp(name, "__", 2) == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '-'))
            return false;
    }
    return true;
}

/* A topic whose name collides with `name` once '.' and '_' are the same (Kafka refuses it). */
static const char *topic_collision(struct meta *m, const char *name)
{
    size_t n;
    const struct meta_topic *const *topics = meta_topics(m, &n);
    for (size_t i = 0; i < n; i++)
        if (meta_topic_names_collide(topics[i]->name, name))
            return topics[i]->name;
    return NULL;
}

static void api_create_topic(struct exporter *e, struct console_call *c)
{
    cJSON *b = body_json(c);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(b, "name"));
    cJSON *np = cJSON_GetObjectItem(b, "partitions"),
          *rf = cJSON_GetObjectItem(b, "replication_factor");
    double parts = cJSON_IsNumber(np) ? cJSON_GetNumberValue(np) : 1;
    double repl = cJSON_IsNumber(rf) ? cJSON_GetNumberValue(rf) : 1;
    if (name == NULL || !topic_name_ok(name) || parts < 1 || parts > 10000 || repl < 1 ||
        repl > 32) {
        cJSON_Delete(b);
        answer_error(c, 400,
                     "create topic: a JSON body {\"name\" (1-249 of a-z A-Z 0-9 . _ -, not "
                     "starting with __), \"partitions\" (1..10000), \"replication_factor\"}%s",
                     NULL);
        return;
    }
    /* CreateTopics' rule: CREATE on the cluster, else CREATE on the topic. */
    if (!allowed(e, c, PROTO_ACL_OP_CREATE, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER, "CreateTopics",
                 true) &&
        !allowed(e, c, PROTO_ACL_OP_CREATE, PROTO_RESOURCE_TOPIC, name, "CreateTopics", false)) {
        answer_denied(c, ERR_TOPIC_AUTHORIZATION_FAILED, "create topic", name);
        cJSON_Delete(b);
        return;
    }
    const char *other = topic_collision(exporter_meta(e), name);
    if (other) {
        answer_error(c, 409, "topic \"%s\" exists (or collides with it: . and _ are the same)",
                     other);
        cJSON_Delete(b);
        return;
    }
    int rc = exporter_create_topic(e, name, (int32_t)parts, (int16_t)repl);
    if (rc != 0) {
        answer_error(c, 503, "cannot create the topic now: %s", err_name(rc));
    } else {
        slog_info("console", "topic \"%s\" created from the console", name);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "created", name);
        answer(c, 200, o);
    }
    cJSON_Delete(b);
}

/* Aborts a hanging transaction on one partition: {"topic", "partition", "producer_id"}. Only
 * one that no transaction coordinator here holds open (a COMMIT may still come for an open
 * one); the partition writes the ABORT marker itself (partition_abort_txn). */
static void api_abort_txn(struct exporter *e, struct console_call *c)
{
    cJSON *b = body_json(c);
    const char *topic = cJSON_GetStringValue(cJSON_GetObjectItem(b, "topic"));
    cJSON *jp = cJSON_GetObjectItem(b, "partition"), *jpid = cJSON_GetObjectItem(b, "producer_id");
    struct replica_mgr *rm = exporter_replicas(e);
    if (topic == NULL || !cJSON_IsNumber(jp) || !cJSON_IsNumber(jpid)) {
        cJSON_Delete(b);
        answer_error(c, 400, "abort: a JSON body {\"topic\", \"partition\", \"producer_id\"}%s",
                     NULL);
        return;
    }
    /* WriteTxnMarkers' rule, which Kafka's abortTransaction (KIP-664) sends: CLUSTER_ACTION on
     * the cluster, or ALTER on it since KIP-1037. */
    if (!allowed(e, c, PROTO_ACL_OP_ALTER, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER, "WriteTxnMarkers",
                 true) &&
        !allowed(e, c, PROTO_ACL_OP_CLUSTER_ACTION, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER,
                 "WriteTxnMarkers", false)) {
        cJSON_Delete(b);
        answer_denied(c, ERR_CLUSTER_AUTHORIZATION_FAILED, "abort transactions on", AUTHZ_CLUSTER);
        return;
    }
    int64_t pid = (int64_t)cJSON_GetNumberValue(jpid);
    struct partition *p =
        rm ? replica_partition(rm, topic, (int32_t)cJSON_GetNumberValue(jp)) : NULL;
    const struct pstate_producer *pr = p ? pstate_get(partition_pstate(p), pid) : NULL;
    struct txn_walk tw = {0};
    if (pr == NULL || pr->txn_first_offset < 0) {
        answer_error(c, 404, "no open transaction of that producer on that partition here%s", NULL);
    } else if (!txn_scan(e, &tw)) {
        answer(c, 500, NULL);
    } else if (pid_open(&tw, pid)) {
        answer_error(c, 409, "its transaction is open at the coordinator: not hanging%s", NULL);
    } else {
        int64_t first = pr->txn_first_offset;
        /* An operator's abort asks for no idle time (-1: even a write in this very
         * millisecond of the loop's clock); the partition still refuses one that is not the
         * transaction seen here or that waits for verification. */
        int rc = partition_abort_txn(p, pid, first, -1);
        if (rc != 0) {
            answer_error(c, 409, "not aborted: %s", err_name(rc));
        } else {
            slog_warn("console", "aborted producer %lld's transaction on %s-%d from the console",
                      (long long)pid, topic, partition_index(p));
            cJSON *o = cJSON_CreateObject();
            add_int(o, "aborted_first_offset", first);
            answer(c, 200, o);
        }
    }
    free(tw.open);
    free(tw.ids);
    cJSON_Delete(b);
}

struct reset_target {
    struct replica_mgr *rm;
    bool latest;
};

static int64_t reset_target(void *arg, const char *topic, int32_t partition)
{
    struct reset_target *t = arg;
    struct partition *p = t->rm ? replica_partition(t->rm, topic, partition) : NULL;
    if (p == NULL)
        return -1; /* hosted elsewhere: its offsets are left as they are */
    return t->latest ? partition_high_watermark(p) : partition_log_start_offset(p);
}

/* Resets an Empty group's committed offsets to the earliest or the latest offsets of the
 * partitions hosted here: {"to": "earliest" | "latest"}. Answers 202 once the commit is
 * appended; the offsets show once it is durable. */
/* The topics of a group's committed offsets, each checked for READ before a reset. */
struct reset_check {
    struct exporter *e;
    const struct console_call *c;
    const char *group;
    char denied[256]; /* the first topic refused ("" none) */
};

static void reset_check_group(void *arg, const char *group_id, const char *state, int32_t members)
{
    (void)arg;
    (void)group_id;
    (void)state;
    (void)members;
}

static void reset_check_offset(void *arg, const char *group_id, const char *topic,
                               int32_t partition, int64_t offset)
{
    struct reset_check *w = arg;
    (void)partition;
    (void)offset;
    if (strcmp(group_id, w->group) != 0 || w->denied[0])
        return;
    if (!allowed(w->e, w->c, PROTO_ACL_OP_READ, PROTO_RESOURCE_TOPIC, topic, "OffsetCommit", false))
        snprintf(w->denied, sizeof w->denied, "%s", topic);
}

static void api_reset_offsets(struct exporter *e, struct console_call *c, const char *group)
{
    cJSON *b = body_json(c);
    const char *to = cJSON_GetStringValue(cJSON_GetObjectItem(b, "to"));
    struct reset_target t = {.rm = exporter_replicas(e)};
    int32_t changed = 0;
    if (to == NULL || (strcmp(to, "earliest") != 0 && strcmp(to, "latest") != 0)) {
        cJSON_Delete(b);
        answer_error(c, 400, "reset: a JSON body {\"to\": \"earliest\" or \"latest\"}%s", NULL);
        return;
    }
    t.latest = strcmp(to, "latest") == 0;
    /* OffsetCommit's rule: READ on the group, and READ on each topic committed. */
    struct reset_check rc_check = {.e = e, .c = c, .group = group};
    if (!allowed(e, c, PROTO_ACL_OP_READ, PROTO_RESOURCE_GROUP, group, "OffsetCommit", false)) {
        cJSON_Delete(b);
        answer_denied(c, ERR_GROUP_AUTHORIZATION_FAILED, "commit offsets of group", group);
        return;
    }
    if (exporter_groups(e))
        group_coord_for_each(exporter_groups(e), reset_check_group, reset_check_offset, &rc_check);
    if (rc_check.denied[0]) {
        cJSON_Delete(b);
        answer_denied(c, ERR_TOPIC_AUTHORIZATION_FAILED, "commit offsets of topic",
                      rc_check.denied);
        return;
    }
    int rc = exporter_groups(e)
                 ? group_reset_offsets(exporter_groups(e), group, reset_target, &t, &changed)
                 : ERR_COORDINATOR_NOT_AVAILABLE;
    if (rc == ERR_GROUP_ID_NOT_FOUND)
        answer_error(c, 404, "no group \"%s\" coordinated here", group);
    else if (rc == ERR_NON_EMPTY_GROUP)
        answer_error(c, 409, "group \"%s\" has members: only an Empty group's offsets are reset",
                     group);
    else if (rc != 0)
        answer_error(c, 503, "cannot reset now: %s", err_name(rc));
    else {
        slog_info("console", "group \"%s\": offsets reset to the %s from the console", group, to);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "group", group);
        cJSON_AddStringToObject(o, "to", to);
        add_int(o, "partitions", changed);
        answer(c, 202, o);
    }
    cJSON_Delete(b);
}

/* ---- routing ------------------------------------------------------------------------------ */

void console_lookup(struct exporter *e, struct console_call *c)
{
    static const int8_t mechs[2] = {META_SCRAM_SHA_512, META_SCRAM_SHA_256};
    const char *user = c->principal + 5; /* after "User:" */
    c->n_cred = 0;
    for (int i = 0; i < 2 && exporter_meta(e); i++) {
        const struct meta_scram *s = meta_scram_find(exporter_meta(e), user, mechs[i]);
        if (s == NULL)
            continue;
        struct console_cred *k = &c->cred[c->n_cred++];
        k->mechanism = s->mechanism;
        k->iterations = s->iterations;
        k->salt_len = s->salt_len;
        k->key_len = s->key_len;
        memcpy(k->salt, s->salt, sizeof k->salt);
        memcpy(k->stored_key, s->stored_key, sizeof k->stored_key);
    }
    c->status = 200;
}

void console_api(struct exporter *e, struct console_call *c)
{
    const char *path = c->path;

    if (exporter_meta(e) == NULL) {
        answer_error(c, 503, "the broker is stopping%s", NULL);
        return;
    }
    if (c->post) {
        if (!exporter_write_enabled(e)) {
            answer_error(c, 403,
                         "the console is read-only: set console.write.enable=true to allow "
                         "this%s",
                         NULL);
            return;
        }
        if (strcmp(path, "/api/topics") == 0)
            api_create_topic(e, c);
        else if (strcmp(path, "/api/transactions/abort") == 0)
            api_abort_txn(e, c);
        else if (strncmp(path, "/api/groups/", 12) == 0 && strlen(path) > 12 + 14 &&
                 strcmp(path + strlen(path) - 14, "/reset-offsets") == 0) {
            char group[256];
            size_t gl = strlen(path) - 12 - 14;
            if (gl >= sizeof group) {
                answer_error(c, 400, "group id too long%s", NULL);
                return;
            }
            memcpy(group, path + 12, gl);
            group[gl] = '\0';
            api_reset_offsets(e, c, group);
        } else
            answer_error(c, 404, "no action at %s", path);
        return;
    }
    if (strcmp(path, "/api/overview") == 0)
        api_overview(e, c);
    else if (strcmp(path, "/api/topics") == 0)
        api_topics(e, c);
    else if (strncmp(path, "/api/topics/", 12) == 0 && path[12] != '\0')
        api_topic(e, c, path + 12);
    else if (strcmp(path, "/api/records") == 0)
        api_records(e, c);
    else if (strcmp(path, "/api/groups") == 0)
        api_groups(e, c, NULL);
    else if (strncmp(path, "/api/groups/", 12) == 0 && path[12] != '\0')
        api_groups(e, c, path + 12);
    else if (strcmp(path, "/api/transactions") == 0)
        api_transactions(e, c);
    else if (strcmp(path, "/api/producers") == 0)
        api_producers(e, c);
    else
        answer_error(c, 404, "no such endpoint: %s", path);
}
