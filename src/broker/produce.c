/* SPDX-License-Identifier: Apache-2.0 */
/* Produce: validates each partition's record batch as it arrived and appends it in place
 * (the request buffer is the write buffer: only the base offset, leader epoch and, for
 * LogAppendTime, the timestamp and CRC are patched). One bad partition fails alone. With
 * acks=all the answer waits in the broker's purgatory until the high watermark of every
 * appended partition covers its batch, or TimeoutMs (those still short get
 * REQUEST_TIMED_OUT). On one node the high watermark is the log end, so it answers at once,
 * through the same path.
 *
 * A v2 batch whose check compresses or decompresses (a compressed batch, or a topic whose
 * compression.type rewrites it) is checked on the thread pool (DESIGN.md §3): the loop looks
 * up each such partition's limits, the pool runs the record check (and the rewrite, and for
 * records at fault the walk that lists them), and the loop then goes on as for any batch with
 * that result (produce_precheck). Meanwhile the connection's input is held (net_hold_input),
 * so its later requests still come after this one: a producer's pipelined batches append in
 * the order it sent them. A magic 0/1 message
 * set (Produce v0-2) goes to the pool as well, converted there to a v2 batch which is then
 * checked as above. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/pool.h"
#include "base/slog.h"
#include "base/purgatory.h"
#include "base/tclock.h"
#include "broker_int.h"
#include "meta/meta.h"
#include "net/net.h"
#include "record/record.h"
#include "replica/replica.h"

/* now - before .. now + after, saturated at the int64 range (the bounds are configs and may
 * be INT64_MAX). */
static void timestamp_bounds(int64_t now, const struct partition_settings *set, int64_t *lo,
                             int64_t *hi)
{
    if (__builtin_sub_overflow(now, set->ts_before_max_ms, lo))
        *lo = set->ts_before_max_ms > 0 ? INT64_MIN : INT64_MAX;
    if (__builtin_add_overflow(now, set->ts_after_max_ms, hi))
        *hi = set->ts_after_max_ms > 0 ? INT64_MAX : INT64_MIN;
}

/* Kafka sends a message with every record error; Tally with the first this many, and null
 * after (clients then use the partition's ErrorMessage), so that the answer to a batch of
 * small bad records stays about the size of the batch. */
#define RECORD_ERROR_MESSAGES 100

/* The rules a batch's records are judged by (record_fault_of): the partition's settings, the
 * timestamp bounds as of the request's arrival. */
struct fault_rules {
    bool compact, log_append_time;
    int64_t lo, hi;
};

static void fault_rules_of(const struct partition_settings *set, int64_t now, struct fault_rules *r)
{
    r->compact = set->compact;
    r->log_append_time = set->log_append_time;
    timestamp_bounds(now, set, &r->lo, &r->hi);
}

static bool fault_rules_equal(const struct fault_rules *a, const struct fault_rules *b)
{
    return a->compact == b->compact && a->log_append_time == b->log_append_time && a->lo == b->lo &&
           a->hi == b->hi;
}

/* Whether the record walk's summary shows a record at fault: keyless ones in a compacted
 * topic (the cleaner keeps the latest record per key: a keyless one has no place),
 * timestamps out of range with CreateTime (records with -1, none, are not checked, as in
 * Kafka), and every record of a batch that claims LogAppendTime, which only the broker
 * stamps. */
static bool faults_suspected(const struct fault_rules *r, const struct record_batch *hdr,
                             const struct record_scan *scan)
{
    return (r->compact && scan->null_key) || (hdr->attributes & RECORD_ATTR_LOG_APPEND_TIME) ||
           (!r->log_append_time &&
            ((scan->min_timestamp != INT64_MAX && scan->min_timestamp < r->lo) ||
             scan->max_timestamp > r->hi));
}

/* What is wrong with one record, as Kafka's LogValidator checks each: a compacted topic needs
 * a key (checked first: a record at fault twice is listed once, for its key); with
 * CreateTime, a timestamp other than -1 must lie within [lo, hi]; only the broker stamps
 * LogAppendTime. Any thread. */
enum record_fault { FAULT_NONE, FAULT_KEYLESS, FAULT_LOG_APPEND_TIME, FAULT_TIMESTAMP };

static enum record_fault record_fault_of(const struct record_item *rec,
                                         const struct record_batch *hdr,
                                         const struct fault_rules *r)
{
    if (r->compact && rec->key == NULL)
        return FAULT_KEYLESS;
    if (hdr->attributes & RECORD_ATTR_LOG_APPEND_TIME)
        return FAULT_LOG_APPEND_TIME;
    if (!r->log_append_time && rec->timestamp != -1 &&
        (rec->timestamp < r->lo || rec->timestamp > r->hi))
        return FAULT_TIMESTAMP;
    return FAULT_NONE;
}

/* The records at fault of a batch, in order, as the pool's walk found them (walk_faults) for
 * the loop to answer with (record_errors). */
struct fault_at {
    int32_t index;
    int8_t kind; /* enum record_fault */
    int64_t timestamp, offset;
};

struct fault_list {
    struct fault_at *v; /* malloc()ed, room for cap */
    int32_t n, cap;
    bool done; /* walked: v and n are the answer */
};

/* Any thread: calls fn for each record of the batch at fault, in order (decompressing them,
 * bounded as the check was). ERR_NOTFOUND once every record was read; another error (out of
 * memory; a record_iter error would be a bug, the check having read these records already)
 * when the walk stopped short. */
static int each_fault(const uint8_t *data, size_t len, size_t max_size,
                      const struct record_batch *hdr, const struct fault_rules *r,
                      void (*fn)(void *arg, int32_t i, enum record_fault kind,
                                 const struct record_item *rec),
                      void *arg)
{
    struct record_iter it;
    struct record_item rec;
    int rc = record_iter_init(&it, data, len, max_size);
    for (int32_t i = 0; rc == 0 && (rc = record_iter_next(&it, &rec)) == 0; i++) {
        enum record_fault kind = record_fault_of(&rec, hdr, r);
        if (kind != FAULT_NONE)
            fn(arg, i, kind, &rec);
    }
    record_iter_close(&it);
    return rc;
}

static void list_fault(void *arg, int32_t i, enum record_fault kind, const struct record_item *rec)
{
    struct fault_list *out = arg;
    if (out->n < out->cap)
        out->v[out->n++] = (struct fault_at){i, (int8_t)kind, rec->timestamp, rec->offset};
}

/* Any thread: the pool's walk of the records at fault into `out`. A walk that stops short
 * leaves out->done false: the loop walks them itself. */
static void walk_faults(const uint8_t *data, size_t len, size_t max_size,
                        const struct record_batch *hdr, const struct fault_rules *r,
                        struct fault_list *out)
{
    out->n = 0;
    out->done = false;
    out->cap = hdr->record_count;
    out->v = out->cap > 0 ? malloc((size_t)out->cap * sizeof *out->v) : NULL;
    if (out->v != NULL)
        out->done = each_fault(data, len, max_size, hdr, r, list_fault, out) == ERR_NOTFOUND;
}

/* record_errors' count of the records at fault so far. */
struct fault_tally {
    struct arena *ar;
    const struct fault_rules *r;
    const char *topic;
    int32_t index;
    struct BatchIndexAndErrorMessage *errs; /* NULL: the list did not fit */
    int32_t cap, n;
    const char *keyless; /* the compacted topic's message, made once */
    const char *first[3];
    int32_t first_index[3];
    bool timestamp; /* some record's timestamp is at fault */
};

/* Counts record i at fault, with its message while fewer than RECORD_ERROR_MESSAGES have one. */
static void tally_fault(struct fault_tally *t, int32_t i, enum record_fault kind, int64_t ts,
                        int64_t offset)
{
    bool want = t->n < RECORD_ERROR_MESSAGES;
    const char *why = NULL;

    if (kind == FAULT_KEYLESS) {
        if (want && t->keyless == NULL)
            t->keyless = arena_printf(t->ar,
                                      "Compacted topic cannot accept message without key in "
                                      "topic partition %s-%d.",
                                      t->topic, t->index);
        why = want ? t->keyless : NULL;
    } else if (kind == FAULT_LOG_APPEND_TIME) {
        why = want ? "Producers may not set the timestamp type to LogAppendTime" : NULL;
    } else if (want) {
        why = arena_printf(t->ar,
                           "Timestamp %lld of message with offset %lld is out of range. The "
                           "timestamp should be within [%lld, %lld]",
                           (long long)ts, (long long)offset, (long long)t->r->lo,
                           (long long)t->r->hi);
    }
    t->timestamp |= kind != FAULT_KEYLESS;
    if (t->n < 3) {
        t->first[t->n] = why;
        t->first_index[t->n] = i;
    }
    if (t->errs != NULL && t->n < t->cap)
        t->errs[t->n] = (struct BatchIndexAndErrorMessage){i, (char *)why};
    t->n++;
}

static void tally_record(void *arg, int32_t i, enum record_fault kind,
                         const struct record_item *rec)
{
    tally_fault(arg, i, kind, rec->timestamp, rec->offset);
}

/* A batch some of whose records are at fault (faults_suspected said so): each is listed in
 * out->RecordErrors by its index in the batch (Produce v8+, KIP-467), so that a client fails
 * those records with the error and can retry the others, and the partition gets Kafka's
 * error: INVALID_TIMESTAMP if some record's timestamp is at fault, else INVALID_RECORD, with
 * Kafka's ErrorMessage. The records at fault are the pool's walk (`pre`), or read again here
 * (decompressed again, bounded as the check was: the error path only). When the list does
 * not fit the request's arena it is left empty and the partition's error stands alone. */
static int record_errors(struct arena *ar, const uint8_t *data, size_t len, size_t max_size,
                         const struct record_batch *hdr, const struct fault_rules *r,
                         const char *topic, int32_t index, const struct fault_list *pre,
                         struct PartitionProduceResponse *out)
{
    struct fault_tally t = {.ar = ar, .r = r, .topic = topic, .index = index};

    if (hdr->record_count > 0) {
        t.errs = arena_alloc(ar, (size_t)hdr->record_count * sizeof *t.errs);
        t.cap = hdr->record_count;
    }
    if (pre != NULL) {
        for (int32_t k = 0; k < pre->n; k++)
            tally_fault(&t, pre->v[k].index, (enum record_fault)pre->v[k].kind, pre->v[k].timestamp,
                        pre->v[k].offset);
    } else {
        /* The walk that found the faults read these records already: a record_iter error
         * here would be a bug, but the batch is refused either way. */
        (void)each_fault(data, len, max_size, hdr, r, tally_record, &t);
    }
    if (t.errs != NULL) {
        out->RecordErrors.v = t.errs;
        out->RecordErrors.n = t.n;
    }
    if (t.timestamp) {
        out->ErrorMessage = "One or more records have been rejected due to invalid timestamp";
        return ERR_INVALID_TIMESTAMP;
    }
    /* Kafka's text, with (at most) the first three errors as Java prints its RecordErrors. */
    const char *list = "";
    for (int32_t k = 0; k < t.n && k < 3 && list != NULL; k++)
        list = t.first[k] ? arena_printf(ar, "%s%sRecordError(batchIndex=%d, message='%s')", list,
                                         k ? ", " : "", (int)t.first_index[k], t.first[k])
                          : arena_printf(ar, "%s%sRecordError(batchIndex=%d, message=null)", list,
                                         k ? ", " : "", (int)t.first_index[k]);
    out->ErrorMessage = arena_printf(ar,
                                     "One or more records have been rejected due to %d record "
                                     "errors in total, and only showing the first three errors "
                                     "at most: [%s]",
                                     (int)t.n, list ? list : "");
    return ERR_INVALID_RECORD;
}

/* The checks Kafka's LogValidator makes on a batch from a client, on top of the record walk:
 * first those of the batch as a whole, then those of each record (record_errors, when the
 * walk's summary shows a record at fault). Returns 0 or the error, with out->ErrorMessage set
 * (and out->RecordErrors for the records). On success normalises the header in place:
 * maxTimestamp becomes the records' own largest timestamp (Sarama, for one, sends -1) and
 * attribute bits with no meaning are dropped, as Kafka does when it rewrites the header. */
static int check_batch(struct arena *ar, uint8_t *data, size_t len, size_t max_size,
                       struct record_batch *hdr, const struct record_scan *scan,
                       const struct partition_settings *set, const struct fault_rules *rules,
                       const struct fault_list *pre, const char *topic, int32_t index,
                       struct PartitionProduceResponse *out)
{
    int16_t attributes = (int16_t)(hdr->attributes & RECORD_ATTR_KNOWN);

    if (hdr->attributes & RECORD_ATTR_CONTROL) {
        out->ErrorMessage = "Clients may not write control batches";
        return ERR_INVALID_RECORD;
    }
    if (hdr->producer_id < 0 && (hdr->attributes & RECORD_ATTR_TRANSACTIONAL)) {
        out->ErrorMessage = "A transactional batch needs a producer id";
        return ERR_INVALID_RECORD;
    }
    if (hdr->producer_id >= 0 && hdr->base_sequence < 0) {
        out->ErrorMessage =
            arena_printf(ar, "Invalid sequence number %d in a batch of producer %lld",
                         hdr->base_sequence, (long long)hdr->producer_id);
        return ERR_INVALID_RECORD;
    }
    if (faults_suspected(rules, hdr, scan))
        return record_errors(ar, data, len, max_size, hdr, rules, topic, index, pre, out);
    if (!set->log_append_time) {
        if (hdr->max_timestamp != scan->max_timestamp || attributes != hdr->attributes) {
            record_batch_set_max_timestamp(data, attributes, scan->max_timestamp);
            hdr->max_timestamp = scan->max_timestamp;
            hdr->attributes = attributes;
        }
    } else if (attributes != hdr->attributes) {
        /* partition_append stamps the time and the CRC; only the stray bits go here. */
        record_batch_set_max_timestamp(data, attributes, hdr->max_timestamp);
        hdr->attributes = attributes;
    }
    return 0;
}

/* A partition's record check done on the thread pool before the request is handled: what
 * the loop looked up for it, and the result. For a magic 0/1 message set (Produce v0-2) the
 * pool first converts it (`legacy`), and the check is then the converted batch's. */
struct produce_precheck {
    const struct PartitionProduceData *in;
    const uint8_t *data;
    size_t len, max_size;
    int compression;
    bool wanted;  /* the pool checks this one */
    bool checked; /* the loop checked it, unchanged: a re-run once verified takes the result */
    int rc;
    struct record_batch hdr;
    struct record_scan scan;
    uint8_t *nb; /* a rewrite, malloc()ed, until taken */
    size_t nlen;
    uint8_t *taken; /* once taken: the rewrite in the arena (a re-run after verification) */
    size_t taken_len;
    bool used;                /* check_records took this result */
    struct fault_rules rules; /* as of the request's arrival, for the walk below */
    struct fault_list faults; /* the records at fault, when the check's summary shows some */
    bool legacy;              /* data and len are a message set to convert first */
    const uint8_t *src;       /* the message set, as it arrived */
    size_t src_len;
    int conv_rc;
    uint8_t *conv; /* the converted batch, malloc()ed, until taken */
    size_t conv_len;
};

/* Produce v0-2 may carry a magic 0/1 message set: it becomes one v2 batch (malloc()ed into
 * *conv, which the caller frees) before the usual checks, as Kafka converts to the log's
 * format on append; the pool's conversion (pc) when there is one for these very bytes.
 * Returns 0 (with *data and *len moved to the batch when converted) or the error, with
 * out->ErrorMessage set. */
static int legacy_convert(struct arena *ar, int16_t version, size_t max_size,
                          struct produce_precheck *pc, uint8_t **data, size_t *len, uint8_t **conv,
                          struct PartitionProduceResponse *out)
{
    int magic = record_legacy_magic(*data, *len), rc;
    size_t conv_len;

    *conv = NULL;
    if (version >= 3 || magic < 0 || magic >= 2)
        return 0; /* v3+ batches, and v2 batches that old versions may carry */
    if (pc != NULL && pc->wanted && pc->legacy && pc->src == *data && pc->src_len == *len &&
        pc->max_size == max_size) {
        rc = pc->conv_rc;
        *conv = pc->conv;
        conv_len = pc->conv_len;
        pc->conv = NULL;
    } else {
        rc = record_legacy_to_batch(*data, *len, max_size, conv, &conv_len, NULL);
    }
    switch (rc) {
    case 0:
        *data = *conv;
        *len = conv_len;
        return 0;
    case ERR_CORRUPT_MESSAGE:
        out->ErrorMessage = "A message of the magic 0/1 message set is corrupt (CRC32, lengths "
                            "or compressed contents)";
        break;
    case ERR_MESSAGE_TOO_LARGE:
        out->ErrorMessage = arena_printf(ar,
                                         "The message set is, or decompresses to, more than "
                                         "max.message.bytes (%zu)",
                                         max_size);
        break;
    case ERR_UNSUPPORTED_COMPRESSION_TYPE:
        out->ErrorMessage = "Magic 0/1 messages cannot be compressed with zstd";
        break;
    case ERR_INVALID_RECORD:
        out->ErrorMessage = "Invalid magic 0/1 message set (empty, nested compression or mixed "
                            "magic)";
        break;
    default:
        break;
    }
    return rc;
}

/* record_batch_check, and for compression.type other than "producer" the batch rewritten in
 * the topic's codec when it arrived in another (as Kafka's LogValidator does), from the
 * records the check decompressed. Any thread: reads the batch, writes *hdr, *scan and, for a
 * rewrite, *nb (malloc()ed) and *nlen. Bounded by max.message.bytes of decompressed
 * records. */
static int check_records_run(const uint8_t *data, size_t len, size_t max_size, int compression,
                             struct record_batch *hdr, struct record_scan *scan, uint8_t **nb,
                             size_t *nlen)
{
    *nb = NULL;
    *nlen = 0;
    if (compression < 0)
        return record_batch_check(data, len, max_size, hdr, scan);
    return record_batch_check_recompress(data, len, max_size, compression, hdr, scan, nb, nlen);
}

/* The loop's half: a rewritten batch must fit max.message.bytes too, and then lives in the
 * request's arena (*data and *len describe it; nb is freed either way). Returns rc, or the
 * error (out->ErrorMessage set for a rewrite too large). */
static int check_records_finish(struct arena *ar, const struct partition_settings *set,
                                size_t max_size, int rc, uint8_t *nb, size_t nlen, uint8_t **data,
                                size_t *len, struct PartitionProduceResponse *out)
{
    if (rc != 0 || nb == NULL) {
        free(nb);
        return rc;
    }
    if (nlen > max_size) {
        out->ErrorMessage = arena_printf(ar,
                                         "The batch rewritten as %s (compression.type) is %zu "
                                         "bytes, larger than max.message.bytes (%lld)",
                                         record_codec_name(set->compression), nlen,
                                         (long long)set->max_message_bytes);
        free(nb);
        return ERR_MESSAGE_TOO_LARGE;
    }
    *data = arena_alloc(ar, nlen);
    if (*data != NULL)
        memcpy(*data, nb, nlen);
    free(nb);
    if (*data == NULL)
        return ERR_NOMEM;
    *len = nlen;
    return 0;
}

/* The record check, from the pool's result when there is one for these very bytes and
 * limits (a config changed meanwhile: checked again here). */
static int check_records(struct arena *ar, const struct partition_settings *set, size_t max_size,
                         struct produce_precheck *pc, uint8_t **data, size_t *len,
                         struct record_batch *hdr, struct record_scan *scan,
                         struct PartitionProduceResponse *out)
{
    uint8_t *nb;
    size_t nlen;
    int rc;

    if (pc != NULL && (pc->wanted || pc->checked) && pc->data == *data && pc->len == *len &&
        pc->max_size == max_size && pc->compression == set->compression) {
        *hdr = pc->hdr;
        *scan = pc->scan;
        pc->used = true;
        if (pc->taken != NULL) {
            *data = pc->taken;
            *len = pc->taken_len;
            return 0;
        }
        rc = check_records_finish(ar, set, max_size, pc->rc, pc->nb, pc->nlen, data, len, out);
        pc->nb = NULL;
        if (rc == 0 && *data != pc->data) {
            pc->taken = *data;
            pc->taken_len = *len;
        }
        return rc;
    }
    rc = check_records_run(*data, *len, max_size, set->compression, hdr, scan, &nb, &nlen);
    if (pc != NULL && !pc->wanted && rc == 0 && nb == NULL && *data == pc->in->Records.data &&
        (hdr->attributes & RECORD_ATTR_TRANSACTIONAL)) {
        /* A transactional batch may be parked for verification and come back (a CRC of its
         * bytes again, otherwise); no other batch is run twice. */
        *pc = (struct produce_precheck){.in = pc->in,
                                        .data = *data,
                                        .len = *len,
                                        .max_size = max_size,
                                        .compression = set->compression,
                                        .checked = true,
                                        .hdr = *hdr,
                                        .scan = *scan,
                                        .rules = pc->rules,
                                        .faults = pc->faults};
    }
    return check_records_finish(ar, set, max_size, rc, nb, nlen, data, len, out);
}

/* One of a partition's conditions for its answer: its high watermark (acks=all) or its
 * durable offset (the flush policy asks for an fsync) covers the batch. */
struct produce_watch {
    struct purgatory_watch w;
    struct produce_wait_part *part;
    bool durable;
};

/* A batch whose answer waits: for replication (acks=all), for an fsync (acks=1 or all, when
 * partition_flush_required said so after its append), or both. */
struct produce_wait_part {
    struct produce_watch hw, flushed;
    struct partition *p; /* for arming only: not held */
    int64_t need;        /* the mark that covers the batch (its last offset + 1) */
    bool replicate;      /* waits for hw */
    bool flush;          /* waits for flushed */
    int waits;           /* watches still armed */
    struct PartitionProduceResponse *out;
    bool done;
};

struct produce_wait {
    struct purgatory_op op;
    struct net_request *req;
    struct ProduceResponse *rs;
    bool acks_all;
    size_t n, pending; /* parts recorded, parts not yet done */
    struct produce_wait_part parts[];
};

/* Transactional batches waiting for the coordinator's word (KIP-890, txn_verify.c) before
 * they are appended; the request is answered after. */
struct produce_verify {
    struct broker *b;
    struct net_request *req;
    struct ProduceResponse *rs;
    struct produce_wait *pw;
    int64_t now;
    int64_t producer_id;
    int16_t epoch;
    struct produce_precheck *pcs; /* the pool's checks, for the re-run once verified */
    size_t n_pcs;
    size_t n;
    struct broker_verify_part parts[];
};

static void produce_partition(struct broker *b, struct net_session *sess, struct arena *ar,
                              int16_t version, const char *topic, struct PartitionProduceData *in,
                              struct PartitionProduceResponse *out, int64_t now,
                              struct produce_wait *wait, struct produce_verify *pv,
                              struct produce_precheck *pc, bool verified);

/* ---- batches turned away on a connection ----------------------------------------------------
 * Kafka reads a connection's next request only once it has answered the one before, so a
 * pipelined batch is judged after its predecessor's fate is sealed. Tally judges requests as
 * they arrive (net.c), answering in order: a batch can be turned away with a retriable error
 * (NOT_LEADER_OR_FOLLOWER while this broker does not lead yet or is out of touch with the
 * controller, NOT_ENOUGH_REPLICAS) and the producer's next batch, pipelined behind it and
 * judged a moment later once the leadership, the touch or the ISR has come, would find the
 * gap and get OUT_OF_ORDER_SEQUENCE_NUMBER. librdkafka
 * before 2.3 takes that for fatal when the request turned away had meanwhile timed out on its
 * side (its issue 4438: seen when the first answer queued behind an acks=all one held for
 * seconds). So a connection remembers the last few batches it turned away with a retriable
 * error, and a later batch of the same producer, epoch and partition whose sequence does not
 * follow gets that same error instead: the client retries both, in order, as it would had
 * they both been turned away. Each is forgotten once a batch of its producer and partition
 * is appended through the connection. */
#define TURNED_AWAY_SLOTS 8

struct turned_away {
    char topic[250]; /* Kafka's names are at most 249 bytes; "" marks a free slot */
    int32_t partition;
    int64_t producer_id;
    int16_t epoch;
    int32_t base_seq;
    int16_t error;
};

struct turned_away_memo {
    struct turned_away v[TURNED_AWAY_SLOTS];
    unsigned next; /* the slot to reuse next when all are taken */
};

/* The producer fields of a raw v2 batch header: id at byte 43, epoch at 51, base sequence
 * at 53. False for anything else (legacy message sets, no producer id, too short). */
static bool raw_producer(const uint8_t *d, int32_t len, int64_t *id, int16_t *epoch, int32_t *seq)
{
    if (d == NULL || len < RECORD_BATCH_HEADER || d[16] != 2)
        return false;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | d[43 + i];
    *id = (int64_t)v;
    *epoch = (int16_t)(d[51] << 8 | d[52]);
    *seq = (int32_t)((uint32_t)d[53] << 24 | (uint32_t)d[54] << 16 | (uint32_t)d[55] << 8 | d[56]);
    return *id >= 0;
}

static struct turned_away *memo_find(struct turned_away_memo *m, const char *topic,
                                     int32_t partition, int64_t id, int16_t epoch)
{
    if (m == NULL)
        return NULL;
    for (unsigned i = 0; i < TURNED_AWAY_SLOTS; i++) {
        struct turned_away *t = &m->v[i];
        if (t->topic[0] != '\0' && t->partition == partition && t->producer_id == id &&
            t->epoch == epoch && strcmp(t->topic, topic) == 0)
            return t;
    }
    return NULL;
}

/* Records that `in` (a batch of some producer) was turned away with the retriable `error`. */
static void memo_turned_away(struct net_session *sess, const char *topic,
                             const struct PartitionProduceData *in, int16_t error)
{
    int64_t id;
    int16_t epoch;
    int32_t seq;
    struct turned_away_memo *m;
    struct turned_away *t;

    if (sess == NULL || sess->listener == NULL || strlen(topic) >= sizeof t->topic ||
        !raw_producer((const uint8_t *)in->Records.data, in->Records.len, &id, &epoch, &seq))
        return;
    if (sess->app == NULL) {
        if ((sess->app = calloc(1, sizeof *m)) == NULL)
            return; /* a memory the connection goes without */
        sess->app_free = free;
    }
    m = sess->app;
    t = memo_find(m, topic, in->Index, id, epoch);
    if (t == NULL) {
        for (unsigned i = 0; i < TURNED_AWAY_SLOTS && t == NULL; i++)
            if (m->v[i].topic[0] == '\0')
                t = &m->v[i];
        if (t == NULL)
            t = &m->v[m->next++ % TURNED_AWAY_SLOTS];
        snprintf(t->topic, sizeof t->topic, "%s", topic);
        t->partition = in->Index;
        t->producer_id = id;
        t->epoch = epoch;
        t->base_seq = seq;
    } else if (seq < t->base_seq) {
        t->base_seq = seq; /* the gap starts at the earliest batch turned away */
    }
    t->error = error;
}

/* The error an out-of-sequence batch gets instead when the connection turned away the batch
 * before it (see above); 0 when it did not. */
static int16_t memo_instead(struct net_session *sess, const char *topic, int32_t partition,
                            const struct record_batch *hdr)
{
    struct turned_away *t =
        sess ? memo_find(sess->app, topic, partition, hdr->producer_id, hdr->producer_epoch) : NULL;
    return t != NULL && t->base_seq < hdr->base_sequence ? t->error : 0;
}

static void memo_appended(struct net_session *sess, const char *topic, int32_t partition,
                          const struct record_batch *hdr)
{
    struct turned_away *t =
        sess ? memo_find(sess->app, topic, partition, hdr->producer_id, hdr->producer_epoch) : NULL;
    if (t != NULL)
        t->topic[0] = '\0';
}

/* A transactional batch of a producer whose transaction is not yet known here: parked in
 * `pv` (the partition held) to be appended once the coordinator confirms. Returns false when
 * it cannot wait (another producer in the same request: Kafka's requests carry one). */
static bool defer_for_verification(struct produce_verify *pv, struct partition *p,
                                   const char *topic, struct PartitionProduceData *in,
                                   struct PartitionProduceResponse *out,
                                   const struct record_batch *hdr)
{
    if (pv->n > 0 && (pv->producer_id != hdr->producer_id || pv->epoch != hdr->producer_epoch))
        return false;
    if (!partition_verify_park(p, hdr->producer_id, 1))
        return false;
    pv->producer_id = hdr->producer_id;
    pv->epoch = hdr->producer_epoch;
    partition_hold(p);
    pv->parts[pv->n++] = (struct broker_verify_part){
        .topic = topic, .index = in->Index, .p = p, .in = in, .out = out};
    return true;
}

const char *broker_reject_reason(int rc)
{
    switch (rc) {
    case ERR_CORRUPT_MESSAGE:
    case ERR_TRUNCATED:
        return "corrupt";
    case ERR_MESSAGE_TOO_LARGE:
    case ERR_RECORD_LIST_TOO_LARGE:
        return "too_large";
    case ERR_INVALID_RECORD:
        return "invalid_record";
    case ERR_INVALID_TIMESTAMP:
        return "invalid_timestamp";
    case ERR_UNSUPPORTED_COMPRESSION_TYPE:
        return "unsupported_compression";
    case ERR_OUT_OF_ORDER_SEQUENCE_NUMBER:
        return "out_of_order_sequence";
    case ERR_DUPLICATE_SEQUENCE_NUMBER:
        return "duplicate";
    case ERR_INVALID_PRODUCER_EPOCH:
    case ERR_PRODUCER_FENCED:
        return "fenced";
    case ERR_UNKNOWN_PRODUCER_ID:
        return "unknown_producer";
    case ERR_INVALID_TXN_STATE:
        return "invalid_txn_state";
    case ERR_NOT_ENOUGH_REPLICAS:
        return "not_enough_replicas";
    case ERR_IO:
    case ERR_KAFKA_STORAGE_ERROR:
        return "storage";
    default:
        return "other";
    }
}

/* docs/metrics.md: a batch the leader refused (or found already in the log), by reason. */
static void count_rejected(struct broker *b, const char *topic, int rc)
{
    if (b->m_rejected)
        metrics_add(metrics_series2(b->m_rejected, topic, broker_reject_reason(rc)), 1);
}

/* Why a sequence that does not follow (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID) is
 * answered NOT_LEADER_OR_FOLLOWER instead, or NULL when it is not. Either answer would make
 * librdkafka's idempotent producer give up on the order it holds; NOT_LEADER_OR_FOLLOWER
 * makes it look for the leader again and send what it holds once more, in order.
 * - On a leader cut off from the controller for a session: the producer has most likely
 *   written to the leader that replaced this one (a client that believed this broker's stale
 *   Metadata came back).
 * - On a leader that took over moments ago and has not heard from the producer in its epoch:
 *   the gap may be batches sent to the previous leader and turned away there, when it lost
 *   the leadership before they were covered. Kafka answers the sequence error; librdkafka
 *   2.0.2 then bumps its producer epoch and renumbers, on every partition, each batch it
 *   holds as not written — among them a batch turned away with NOT_LEADER_OR_FOLLOWER on
 *   another partition though it was appended there and replicated, which the new leader
 *   then appends a second time (a duplicate, seen in test_replication_matrix[clean_bounce]).
 *   Retried in order, the turned-away batches come first and close the gap. */
static const char *sequence_error_moved(struct broker *b, struct partition *p,
                                        const struct record_batch *hdr)
{
    if (b->out_of_touch != NULL && b->out_of_touch(b->out_of_touch_arg))
        return "while out of touch with the controller";
    if (partition_gap_from_before(p, hdr, tclock_mono_ms(b->clock)))
        return "from a producer not heard from since this leader took over";
    return NULL;
}

/* Appends one partition's records; fills `out` (ErrorCode, offsets) and may set a message.
 * When the batch is in the log (appended now or earlier, for an exact retry) and `wait` is
 * not NULL, records there what acks=all waits for. With `pv`, a transactional batch whose
 * transaction this partition does not know yet is parked there instead (verification).
 * `verified`: the second run of a batch that waited for verification (counted already). */
static void produce_partition(struct broker *b, struct net_session *sess, struct arena *ar,
                              int16_t version, const char *topic, struct PartitionProduceData *in,
                              struct PartitionProduceResponse *out, int64_t now,
                              struct produce_wait *wait, struct produce_verify *pv,
                              struct produce_precheck *pc, bool verified)
{
    uint8_t *conv = NULL; /* a converted magic 0/1 message set */
    struct partition *p;
    struct record_batch hdr;
    struct record_scan scan;
    const struct partition_settings *set;
    uint8_t *data = (uint8_t *)in->Records.data; /* our own frame buffer: patched in place */
    size_t len = in->Records.len > 0 ? (size_t)in->Records.len : 0;
    size_t max_size;
    int64_t base, append_time;
    const char *moved;
    int rc;

    out->Index = in->Index;
    out->BaseOffset = -1;
    out->LogAppendTimeMs = -1;
    out->LogStartOffset = -1;
    /* Only the leader takes writes: a follower here, or a partition the metadata places on
     * other brokers, answers NOT_LEADER_OR_FOLLOWER so that the client refreshes its
     * metadata (Kafka does the same). */
    rc = replica_leader_partition(b->replicas, topic, in->Index, &p);
    if (rc != 0) {
        out->ErrorCode = (int16_t)rc;
        if (rc == ERR_NOT_LEADER_OR_FOLLOWER)
            memo_turned_away(sess, topic, in, out->ErrorCode);
        return;
    }
    /* Counted once the partition is known to be led here (a client naming topics that do
     * not exist creates no series), and once per entry (not again once verified). */
    if (!verified)
        metrics_add(metrics_series1(b->m_produce_requests, topic), 1);
    set = partition_settings(p);
    max_size = set->max_message_bytes > 0 ? (size_t)set->max_message_bytes : 0;
    /* acks=all needs min.insync.replicas in the ISR, checked before the batch is (Kafka's
     * order in appendRecordsToLeader). */
    if (wait != NULL && wait->acks_all && partition_isr_size(p) < set->min_insync) {
        out->ErrorCode = ERR_NOT_ENOUGH_REPLICAS;
        count_rejected(b, topic, ERR_NOT_ENOUGH_REPLICAS);
        out->ErrorMessage =
            arena_printf(ar,
                         "The ISR of %s-%d has %d replica(s), fewer than min.insync.replicas "
                         "(%lld)",
                         topic, in->Index, (int)partition_isr_size(p), (long long)set->min_insync);
        memo_turned_away(sess, topic, in, out->ErrorCode);
        return;
    }
    if (len == 0) {
        out->ErrorCode = ERR_INVALID_RECORD;
        count_rejected(b, topic, ERR_INVALID_RECORD);
        out->ErrorMessage = "Produce request without records";
        return;
    }
    rc = legacy_convert(ar, version, max_size, pc, &data, &len, &conv, out);
    /* The cheap header checks first, then the size, then the records (which for a
     * compressed batch means decompressing it, bounded by max.message.bytes). */
    if (rc == 0)
        rc = record_batch_parse(data, len, &hdr);
    /* zstd came with Produce v7 (KIP-110): older requests may not carry it. */
    if (rc == 0 && version < 7 &&
        (hdr.attributes & RECORD_ATTR_COMPRESSION_MASK) == RECORD_CODEC_ZSTD) {
        rc = ERR_UNSUPPORTED_COMPRESSION_TYPE;
        out->ErrorMessage = "zstd compression needs Produce v7 or later";
    }
    if (rc == 0 && record_batch_size(&hdr) != len) {
        rc = ERR_INVALID_RECORD;
        out->ErrorMessage =
            "Produce requests v3+ must carry exactly one record batch per partition";
    }
    if (rc == 0 && len > max_size) {
        rc = ERR_MESSAGE_TOO_LARGE;
        out->ErrorMessage = arena_printf(ar,
                                         "The batch is %zu bytes, larger than "
                                         "max.message.bytes (%lld)",
                                         len, (long long)set->max_message_bytes);
    }
    if (rc == 0) {
        rc = check_records(ar, set, max_size, pc, &data, &len, &hdr, &scan, out);
        if (rc == ERR_MESSAGE_TOO_LARGE && out->ErrorMessage == NULL)
            out->ErrorMessage = arena_printf(ar,
                                             "The batch's records decompress to more than "
                                             "max.message.bytes (%lld)",
                                             (long long)set->max_message_bytes);
        else if (rc == ERR_CORRUPT_MESSAGE && (hdr.attributes & RECORD_ATTR_COMPRESSION_MASK))
            out->ErrorMessage = "The batch's compressed records do not decompress";
        else if (rc == ERR_INVALID_RECORD)
            out->ErrorMessage = "The batch's records do not match its header (count, offset "
                                "deltas or lengths)";
    }
    if (rc == ERR_TRUNCATED)
        rc = ERR_CORRUPT_MESSAGE;
    if (rc == 0 && hdr.record_count == 0) {
        rc = ERR_INVALID_RECORD;
        out->ErrorMessage = "A produced batch must hold at least one record";
    }
    if (rc == 0) {
        /* The pool walked the records at fault already when it checked these bytes under
         * these rules. */
        struct fault_rules rules;
        fault_rules_of(set, now, &rules);
        const struct fault_list *pre =
            pc != NULL && pc->used && pc->faults.done && fault_rules_equal(&pc->rules, &rules)
                ? &pc->faults
                : NULL;
        rc = check_batch(ar, data, len, max_size, &hdr, &scan, set, &rules, pre, topic, in->Index,
                         out);
    }
    if (rc != 0) {
        out->ErrorCode = (int16_t)err_wire(rc);
        count_rejected(b, topic, rc);
        slog_debug("broker", "produce to %s-%d rejected: %s", topic, in->Index, err_name(rc));
        free(conv);
        return;
    }
    /* A batch parks while its transaction is not verified here, and also while an earlier
     * batch of the producer is still parked: appending it first would put a pipelined batch
     * ahead of one sent before it (OUT_OF_ORDER_SEQUENCE_NUMBER for the client). Answers come
     * back in the order the checks were sent, so the parked batches append in order. */
    if (pv != NULL && (hdr.attributes & RECORD_ATTR_TRANSACTIONAL) && b->txn_verify &&
        (!partition_txn_verified(p, hdr.producer_id, hdr.producer_epoch) ||
         partition_verify_parked(p, hdr.producer_id) > 0)) {
        free(conv); /* NULL: only v2 batches are transactional */
        if (defer_for_verification(pv, p, topic, in, out, &hdr))
            return;
        out->ErrorCode = ERR_INVALID_TXN_STATE;
        count_rejected(b, topic, ERR_INVALID_TXN_STATE);
        return;
    }
    rc = partition_append(p, data, len, &hdr, &base, &append_time);
    free(conv); /* written (the append copies into the page cache) */
    if (rc == ERR_DUPLICATE_SEQUENCE_NUMBER) {
        /* An exact retry: the client gets the offsets of the copy already in the log. */
        count_rejected(b, topic, rc);
        out->BaseOffset = base;
        out->LogStartOffset = partition_log_start_offset(p);
        goto wait;
    }
    if ((rc == ERR_OUT_OF_ORDER_SEQUENCE_NUMBER || rc == ERR_UNKNOWN_PRODUCER_ID) &&
        (moved = sequence_error_moved(b, p, &hdr)) != NULL) {
        static struct slog_limit lim;
        slog_warn_limited(&lim, 10000, "broker",
                          "produce to %s-%d from producer %lld seq %d: %s %s: answered "
                          "NOT_LEADER_OR_FOLLOWER",
                          topic, in->Index, (long long)hdr.producer_id, hdr.base_sequence,
                          err_name(rc), moved);
        out->ErrorCode = ERR_NOT_LEADER_OR_FOLLOWER;
        count_rejected(b, topic, rc);
        /* The next batch may be judged once this broker is in touch again: it must not find
         * the gap this one left (see "batches turned away" above). */
        memo_turned_away(sess, topic, in, out->ErrorCode);
        return;
    }
    if (rc == ERR_OUT_OF_ORDER_SEQUENCE_NUMBER) {
        int16_t instead = memo_instead(sess, topic, in->Index, &hdr);
        if (instead != 0) {
            /* The batch before it was turned away on this connection (see above). */
            slog_debug("broker",
                       "produce to %s-%d from producer %lld seq %d: out of sequence behind a "
                       "batch turned away on this connection: answered %s",
                       topic, in->Index, (long long)hdr.producer_id, hdr.base_sequence,
                       err_name(instead));
            out->ErrorCode = instead;
            return;
        }
    }
    if (rc != 0) {
        out->ErrorCode = (int16_t)(rc == ERR_IO ? ERR_KAFKA_STORAGE_ERROR : err_wire(rc));
        if (rc == ERR_IO)
            memo_turned_away(sess, topic, in, out->ErrorCode);
        count_rejected(b, topic, rc);
        if (rc == ERR_OUT_OF_ORDER_SEQUENCE_NUMBER || rc == ERR_INVALID_PRODUCER_EPOCH ||
            rc == ERR_UNKNOWN_PRODUCER_ID)
            slog_debug("broker", "produce to %s-%d from producer %lld epoch %d seq %d: %s", topic,
                       in->Index, (long long)hdr.producer_id, hdr.producer_epoch, hdr.base_sequence,
                       err_name(rc));
        return;
    }
    out->BaseOffset = base;
    out->LogAppendTimeMs = append_time;
    out->LogStartOffset = partition_log_start_offset(p);
    memo_appended(sess, topic, in->Index, &hdr);
    if (b->m_bytes_in) {
        metrics_add(metrics_series1(b->m_bytes_in, topic), (double)len);
        metrics_add(metrics_series1(b->m_records_in, topic), (double)hdr.record_count);
    }

wait:
    if (wait) {
        /* Kafka fsyncs inside the append when the policy says so: the ack then says the
         * batch is on disk. Here the fsync runs on the thread pool and the answer waits for
         * it; without a flush policy (the default) an acks=1 answer waits for nothing. */
        bool flush = partition_flush_required(p);
        if (wait->acks_all || flush) {
            /* A retry has as many records as the original, so this is the original's end. */
            struct produce_wait_part *wp = &wait->parts[wait->n++];
            wp->p = p;
            wp->need = base + hdr.last_offset_delta + 1;
            wp->replicate = wait->acks_all;
            wp->flush = flush;
            wp->waits = 0;
            wp->out = out;
            wp->done = false;
        }
    }
}

/* What a watch that fired (or returned at once) means for its batch's answer: an error
 * code, or 0 when the batch is covered. */
static int16_t watch_outcome(const struct produce_watch *pwt)
{
    struct partition *p = pwt->part->p;
    if (!pwt->w.reached) {
        /* The durable offset failed while the partition stayed online: an fsync failed. */
        if (pwt->durable && partition_online(p))
            return ERR_KAFKA_STORAGE_ERROR;
        return ERR_NOT_LEADER_OR_FOLLOWER;
    }
    if (!pwt->durable && partition_isr_size(p) < partition_settings(p)->min_insync)
        /* Replicated, but the ISR shrank below min.insync.replicas meanwhile (Kafka's
         * checkEnoughReplicasReachOffset): the client learns that its write has fewer copies
         * than it asked for. */
        return ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND;
    return 0;
}

/* Records a watch's outcome; the first error wins, and ends the wait of its batch (the other
 * watch is disarmed). Returns whether the batch's answer is now complete. */
static bool part_settle(struct produce_wait_part *wp, struct produce_watch *pwt, bool was_armed)
{
    int16_t err = watch_outcome(pwt);
    if (was_armed)
        wp->waits--;
    if (err != 0 && wp->out->ErrorCode == 0)
        wp->out->ErrorCode = err;
    if (err != 0 && wp->waits > 0) {
        purgatory_watch_disarm(pwt == &wp->hw ? &wp->flushed.w : &wp->hw.w);
        wp->waits = 0;
    }
    return wp->waits == 0;
}

/* A partition's high watermark or durable offset covers its batch (or failed). */
static void on_covered(struct purgatory_op *op, struct purgatory_watch *w)
{
    struct produce_wait *pw = op->data;
    struct produce_watch *pwt =
        (struct produce_watch *)((char *)w - offsetof(struct produce_watch, w));
    struct produce_wait_part *wp = pwt->part;
    if (!part_settle(wp, pwt, true))
        return;
    wp->done = true;
    if (--pw->pending == 0)
        purgatory_complete(op);
}

static void on_answer(struct purgatory_op *op, int result)
{
    struct produce_wait *pw = op->data;
    if (result != PURGATORY_DONE)
        for (size_t i = 0; i < pw->n; i++)
            if (!pw->parts[i].done)
                pw->parts[i].out->ErrorCode = ERR_REQUEST_TIMED_OUT;
    net_respond(pw->req, pw->rs); /* frees pw (it lives in the request's arena) */
}

static void on_connection_closed(void *arg)
{
    struct produce_wait *pw = arg;
    purgatory_cancel(&pw->op);
    net_finish(pw->req);
}

/* Arms one of a batch's watches, or settles it at once when partition_watch says the mark
 * is already there (or failed). */
static void arm(struct produce_wait *pw, struct produce_wait_part *wp, struct produce_watch *pwt,
                enum partition_mark mark)
{
    pwt->part = wp;
    pwt->durable = mark == PARTITION_DURABLE;
    purgatory_watch_init(&pw->op, &pwt->w);
    if (wp->out->ErrorCode != 0)
        return; /* the other watch failed at once: nothing more to wait for */
    if (!partition_watch(wp->p, mark, wp->need, &pwt->w))
        wp->waits++;
    else
        part_settle(wp, pwt, false);
}

/* acks=all, or a flush policy: answers once every recorded batch is covered by its
 * partition's high watermark (acks=all) and durable offset (when the policy asked for it),
 * or at TimeoutMs. */
static void await_acks(struct broker *b, struct produce_wait *pw, int32_t timeout_ms)
{
    purgatory_op_init(b->pg, &pw->op, on_covered, on_answer, pw);
    for (size_t i = 0; i < pw->n; i++) {
        struct produce_wait_part *wp = &pw->parts[i];
        if (wp->replicate)
            arm(pw, wp, &wp->hw, PARTITION_HIGH_WATERMARK);
        if (wp->flush)
            arm(pw, wp, &wp->flushed, PARTITION_DURABLE);
        if (wp->waits > 0)
            pw->pending++;
        else
            wp->done = true;
    }
    if (pw->pending == 0) {
        purgatory_complete(&pw->op);
        return;
    }
    if (!net_request_on_close(pw->req, on_connection_closed, pw)) {
        on_connection_closed(pw);
        return;
    }
    purgatory_op_start(&pw->op, timeout_ms > 0 ? timeout_ms : 0);
}

/* Sends the answer once every partition is appended (or failed): at once, or for acks=all
 * when replicated, and for acks=1 or all when durable where the flush policy asks for it. */
static void produce_answer(struct broker *b, struct net_request *req, struct ProduceResponse *rs,
                           struct produce_wait *pw)
{
    struct ProduceRequest *rq = req->body;
    int64_t bytes = 0;

    /* producer_byte_rate (KIP-219): the throttle goes in this answer, and the connection is
     * not read meanwhile (with acks=0 too: the mute is then all the client sees). */
    for (int32_t i = 0; i < rq->TopicData.n; i++)
        for (int32_t j = 0; j < rq->TopicData.v[i].PartitionData.n; j++)
            if (rq->TopicData.v[i].PartitionData.v[j].Records.len > 0)
                bytes += rq->TopicData.v[i].PartitionData.v[j].Records.len;
    rs->ThrottleTimeMs = broker_client_throttle(b, req, META_QUOTA_PRODUCER_BYTE_RATE, bytes);

    /* With acks=0 the client reads no answer; errors are only in our log at debug level. */
    if (rq->Acks == 0)
        net_finish(req);
    else if ((rq->Acks == -1 && !b->stopping) || (rq->Acks == 1 && pw->n > 0))
        await_acks(b, pw, rq->TimeoutMs);
    else
        net_respond(req, rs);
}

/* The coordinator answered (or the broker is stopping): appends the verified batches. */
static void on_verified(void *arg, struct broker_verify_part *parts, size_t n, bool stopped)
{
    struct produce_verify *pv = arg;

    for (size_t i = 0; i < n; i++) {
        struct PartitionProduceResponse *out = parts[i].out;
        partition_verify_park(parts[i].p, pv->producer_id, -1);
        struct produce_precheck *pc = NULL;
        for (size_t k = 0; k < pv->n_pcs && pc == NULL; k++)
            if (pv->pcs[k].in == parts[i].in)
                pc = &pv->pcs[k];
        if (parts[i].error == 0 && !stopped)
            produce_partition(pv->b, pv->req->session, pv->req->arena,
                              pv->req->hdr.RequestApiVersion, parts[i].topic, parts[i].in, out,
                              pv->now, pv->pw, NULL, pc, true);
        else
            out->ErrorCode = parts[i].error != 0 ? parts[i].error : ERR_REQUEST_TIMED_OUT;
        partition_release(parts[i].p);
    }
    produce_answer(pv->b, pv->req, pv->rs, pv->pw);
}

/* Whether any partition's batch is a transactional data batch of a producer (read from the
 * raw header: attributes at byte 21, producer id at 43). Control batches and transactional
 * bits without a producer id are left to the batch checks (INVALID_RECORD), as Kafka's
 * LogValidator answers them when the request names a transactional id. */
static bool has_transactional(const struct ProduceRequest *rq)
{
    for (int32_t i = 0; i < rq->TopicData.n; i++)
        for (int32_t j = 0; j < rq->TopicData.v[i].PartitionData.n; j++) {
            const struct PartitionProduceData *pd = &rq->TopicData.v[i].PartitionData.v[j];
            const uint8_t *d = (const uint8_t *)pd->Records.data;
            /* attributes: int16 at byte 21 of a v2 batch */
            if (d != NULL && pd->Records.len >= RECORD_BATCH_HEADER && d[16] == 2 &&
                (d[22] & (RECORD_ATTR_TRANSACTIONAL | RECORD_ATTR_CONTROL)) ==
                    RECORD_ATTR_TRANSACTIONAL &&
                (d[43] & 0x80) == 0)
                return true;
        }
    return false;
}

/* A Produce request from its look-ups to its answer: per topic the WRITE check's error, per
 * partition (in request order) the pool's record check. In the request's arena. */
struct produce_job {
    struct pool_job work;
    struct broker *b;
    struct net_request *req;
    struct ProduceResponse *rs;
    struct produce_wait *pw;
    struct produce_verify *pv;
    int64_t now;
    int16_t *topic_error;
    struct produce_precheck *pcs;
    size_t n_pcs;
};

/* On the loop, before the pool: whether this partition's check compresses or decompresses
 * (a v2 batch of Produce v3+ that is compressed, or a topic that rewrites it) or converts (a
 * magic 0/1 message set of Produce v0-2, whose wrappers may be compressed), and if so the
 * limits the check needs. A partition turned away before its check (not led here, too
 * large, zstd before v7) is left to produce_partition. */
static void precheck_prepare(struct broker *b, int16_t version, const char *topic, int64_t now,
                             struct produce_precheck *pc)
{
    const uint8_t *d = (const uint8_t *)pc->in->Records.data;
    size_t len = pc->in->Records.len > 0 ? (size_t)pc->in->Records.len : 0;
    int magic = d != NULL ? record_legacy_magic(d, len) : -1;
    struct partition *p;

    if (magic < 0 || (version >= 3 && (len < RECORD_BATCH_HEADER || magic != 2)) ||
        (version < 3 && magic >= 2) ||
        replica_leader_partition(b->replicas, topic, pc->in->Index, &p) != 0)
        return;
    const struct partition_settings *set = partition_settings(p);
    size_t max_size = set->max_message_bytes > 0 ? (size_t)set->max_message_bytes : 0;
    fault_rules_of(set, now, &pc->rules);
    if (magic < 2) {
        pc->legacy = true;
        pc->src = d;
        pc->src_len = len;
        pc->max_size = max_size;
        pc->compression = set->compression;
        pc->wanted = true;
        return;
    }
    int codec = d[22] & RECORD_ATTR_COMPRESSION_MASK; /* attributes: int16 at byte 21 */
    if ((codec == RECORD_CODEC_NONE && set->compression <= RECORD_CODEC_NONE) || len > max_size ||
        (codec == RECORD_CODEC_ZSTD && version < 7))
        return;
    pc->data = d;
    pc->len = len;
    pc->max_size = max_size;
    pc->compression = set->compression;
    pc->wanted = true;
}

/* Thread pool: the record checks (decompression, and the rewrite a topic asks for). */
static void precheck_run(uv_work_t *w)
{
    struct produce_job *job = w->data;
    for (size_t k = 0; k < job->n_pcs; k++) {
        struct produce_precheck *pc = &job->pcs[k];
        if (!pc->wanted)
            continue;
        if (pc->legacy) {
            pc->conv_rc = record_legacy_to_batch(pc->src, pc->src_len, pc->max_size, &pc->conv,
                                                 &pc->conv_len, NULL);
            if (pc->conv_rc != 0)
                continue;
            pc->data = pc->conv; /* the check below is the converted batch's */
            pc->len = pc->conv_len;
        }
        pc->rc = check_records_run(pc->data, pc->len, pc->max_size, pc->compression, &pc->hdr,
                                   &pc->scan, &pc->nb, &pc->nlen);
        /* The error path's walk too (record_errors), over the same records. */
        if (pc->rc == 0 && faults_suspected(&pc->rules, &pc->hdr, &pc->scan))
            walk_faults(pc->data, pc->len, pc->max_size, &pc->hdr, &pc->rules, &pc->faults);
    }
}

/* Checks and appends every partition (with the pool's checks, if any), then answers: at
 * once, after the coordinator verified a transaction's first batches, or when acks say. */
static void produce_run(struct produce_job *job)
{
    struct broker *b = job->b;
    struct net_request *req = job->req;
    struct ProduceRequest *rq = req->body;
    struct ProduceResponse *rs = job->rs;
    int16_t acks = rq->Acks;
    size_t k = 0;

    for (int32_t i = 0; i < rq->TopicData.n; i++) {
        struct TopicProduceData *td = &rq->TopicData.v[i];
        struct TopicProduceResponse *tr = &rs->Responses.v[i];
        for (int32_t j = 0; j < tr->PartitionResponses.n; j++, k++) {
            struct PartitionProduceResponse *pr = &tr->PartitionResponses.v[j];
            if ((acks != 0 && acks != 1 && acks != -1) || job->topic_error[i] != 0) {
                pr->ErrorCode =
                    job->topic_error[i] != 0 ? job->topic_error[i] : ERR_INVALID_REQUIRED_ACKS;
                pr->BaseOffset = pr->LogAppendTimeMs = pr->LogStartOffset = -1;
                continue;
            }
            produce_partition(b, req->session, req->arena, req->hdr.RequestApiVersion,
                              td->Name ? td->Name : "", &td->PartitionData.v[j], pr, job->now,
                              job->pw, job->pv, &job->pcs[k], false);
        }
    }
    /* Conversions and rewrites never taken (their partitions were turned away first). */
    for (k = 0; k < job->n_pcs; k++) {
        free(job->pcs[k].nb);
        job->pcs[k].nb = NULL;
        free(job->pcs[k].conv);
        job->pcs[k].conv = NULL;
        free(job->pcs[k].faults.v);
        job->pcs[k].faults = (struct fault_list){0};
    }
    if (job->pv != NULL && job->pv->n > 0) {
        broker_txn_verify(b, rq->TransactionalId, job->pv->producer_id, job->pv->epoch,
                          job->pv->parts, job->pv->n, on_verified, job->pv);
        return;
    }
    produce_answer(b, req, rs, job->pw);
}

static void precheck_done(uv_work_t *w, int status)
{
    struct produce_job *job = w->data;
    struct broker *b = job->b;

    if (status != 0) /* cancelled: checked on the loop after all */
        for (size_t k = 0; k < job->n_pcs; k++)
            job->pcs[k].wanted = false;
    net_release_input(job->req);
    produce_run(job);
    b->live_produces--;
    broker_maybe_finish_stop(b);
}

void broker_produce(struct broker *b, struct net_request *req)
{
    struct ProduceRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct ProduceResponse *rs = arena_alloc(ar, sizeof *rs);
    struct produce_job *job = arena_alloc(ar, sizeof *job);
    int16_t acks = rq->Acks;
    int32_t nt = rq->TopicData.n > 0 ? rq->TopicData.n : 0;
    size_t n = 0;
    bool pool = false;

    static const struct broker_shape shape = {
        sizeof(struct TopicProduceData),
        offsetof(struct TopicProduceData, Name),
        offsetof(struct TopicProduceData, PartitionData),
        sizeof(struct PartitionProduceData),
        offsetof(struct PartitionProduceData, Index),
        sizeof(struct TopicProduceResponse),
        offsetof(struct TopicProduceResponse, Name),
        offsetof(struct TopicProduceResponse, PartitionResponses),
        sizeof(struct PartitionProduceResponse),
        offsetof(struct PartitionProduceResponse, Index),
    };

    if (rs == NULL || job == NULL ||
        broker_response_skeleton(ar, &rq->TopicData, &rs->Responses, &shape) != 0)
        goto err_nomem;
    memset(job, 0, sizeof *job);
    job->b = b;
    job->req = req;
    job->rs = rs;
    job->now = tclock_now_ms(b->clock);
    for (int32_t i = 0; i < nt; i++)
        n +=
            rq->TopicData.v[i].PartitionData.n > 0 ? (size_t)rq->TopicData.v[i].PartitionData.n : 0;
    job->topic_error = arena_alloc(ar, (size_t)nt * sizeof *job->topic_error + 1);
    job->pcs = arena_alloc(ar, n * sizeof *job->pcs + 1);
    if (job->topic_error == NULL || job->pcs == NULL)
        goto err_nomem;
    memset(job->pcs, 0, n * sizeof *job->pcs);
    job->n_pcs = n;
    if (acks == -1 || acks == 1) {
        /* Bump-allocated from the request's arena; an acks=1 batch is recorded in it only
         * when the flush policy makes its answer wait. */
        struct produce_wait *pw = arena_alloc(ar, sizeof *pw + n * sizeof pw->parts[0]);
        if (pw == NULL)
            goto err_nomem;
        memset(pw, 0, sizeof *pw);
        pw->req = req;
        pw->rs = rs;
        pw->acks_all = acks == -1;
        job->pw = pw;
    }
    /* Transactions: transactional batches need the request's transactional id (Kafka
     * answers every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED without one), and the
     * first batch of a transaction on a partition waits for the coordinator (pv). */
    bool txn = has_transactional(rq);
    int16_t txn_error =
        txn && (rq->TransactionalId == NULL ||
                !authz_allowed(req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TRANSACTIONAL_ID,
                               rq->TransactionalId))
            ? ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            : 0;
    if (txn && txn_error == 0 && b->txn_verify) {
        struct produce_verify *pv = arena_alloc(ar, sizeof *pv + (n + 1) * sizeof pv->parts[0]);
        if (pv == NULL)
            goto err_nomem;
        memset(pv, 0, sizeof *pv);
        pv->b = b;
        pv->req = req;
        pv->rs = rs;
        pv->pw = job->pw;
        pv->now = job->now;
        pv->pcs = job->pcs;
        pv->n_pcs = n;
        job->pv = pv;
    }
    size_t k = 0;
    for (int32_t i = 0; i < nt; i++) {
        struct TopicProduceData *td = &rq->TopicData.v[i];
        /* WRITE on the topic, checked before anything is appended (Kafka's order: the
         * transactional id, then each topic). */
        job->topic_error[i] =
            txn_error == 0 && !authz_allowed(req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TOPIC,
                                             td->Name ? td->Name : "")
                ? ERR_TOPIC_AUTHORIZATION_FAILED
                : txn_error;
        for (int32_t j = 0; j < td->PartitionData.n; j++, k++) {
            job->pcs[k].in = &td->PartitionData.v[j];
            /* A detached request (unit tests) is checked on the loop: it has no input to
             * hold. */
            if ((acks == 0 || acks == 1 || acks == -1) && job->topic_error[i] == 0 &&
                req->session->listener != NULL) {
                precheck_prepare(b, req->hdr.RequestApiVersion, td->Name ? td->Name : "", job->now,
                                 &job->pcs[k]);
                pool = pool || job->pcs[k].wanted;
            }
        }
    }
    if (pool) {
        job->work.work.data = job;
        net_hold_input(req);
        if (pool_submit(b->loop, &job->work, precheck_run, precheck_done) == 0) {
            b->live_produces++;
            return;
        }
        net_release_input(req);
        for (k = 0; k < n; k++)
            job->pcs[k].wanted = false;
    }
    produce_run(job);
    return;

err_nomem:
    slog_error("broker", "out of memory in Produce from %s; closing", req->peer);
    net_close_connection(req);
}
