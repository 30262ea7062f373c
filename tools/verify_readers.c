/* SPDX-License-Identifier: Apache-2.0 */
/* The readers of `tally verify` (verify_int.h): the seeder of the input (what the cluster
 * acknowledged), the readers of the output (read_committed, read_uncommitted, a second
 * read_committed), the group's committed offsets and the copiers' journal: the history the
 * checker (verify_check.h) is given. */
#include "tally.h"
#include "verify_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The group's committed offsets of the input partitions into offs[] (-1: none). */
bool verify_group_offsets(rd_kafka_t *mon, const struct run *r, int64_t *offs, int timeout_ms)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(r->o->partitions);
    for (int p = 0; p < r->o->partitions; p++)
        rd_kafka_topic_partition_list_add(l, r->in, p);
    rd_kafka_resp_err_t err = rd_kafka_committed(mon, l, timeout_ms);
    bool ok = err == RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int i = 0; ok && i < l->cnt; i++) {
        if (l->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR)
            ok = false;
        offs[l->elems[i].partition] = l->elems[i].offset < 0 ? -1 : l->elems[i].offset;
    }
    rd_kafka_topic_partition_list_destroy(l);
    return ok;
}

static rd_kafka_t *new_consumer(const struct run *r, const char *group, const char *isolation)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (!verify_conf_set(conf, "bootstrap.servers", r->bootstrap) ||
        !tally_security_conf(conf, r->ctx) || !verify_conf_set(conf, "group.id", group) ||
        !verify_conf_set(conf, "isolation.level", isolation) ||
        !verify_conf_set(conf, "enable.auto.commit", "false") ||
        !verify_conf_set(conf, "enable.partition.eof", "true") ||
        !verify_conf_set(conf, "auto.offset.reset", "earliest")) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    return verify_new_client(RD_KAFKA_CONSUMER, conf);
}

/* Reads every output partition from the beginning to its end for this isolation level and
 * adds what was read to h as view. Returns the records read, -1 on failure. */
int64_t verify_read_view(struct run *r, struct vc_history *h, enum vc_view view,
                         const char *isolation)
{
    char group[160];
    snprintf(group, sizeof group, "%s-reader-%d", r->group, (int)view);
    rd_kafka_t *c = new_consumer(r, group, isolation);
    if (c == NULL) {
        char why[VC_VALUE_MAX];
        snprintf(why, sizeof why, "the %s reader of view %d could not start", isolation, (int)view);
        vc_note_incomplete(h, why);
        return -1;
    }
    int P = r->o->partitions;
    int64_t *hi = calloc((size_t)P, sizeof *hi);
    int64_t *reached = calloc((size_t)P, sizeof *reached);
    bool *eof = calloc((size_t)P, sizeof *eof);
    int64_t n = 0;
    if (hi == NULL || reached == NULL || eof == NULL) {
        rd_kafka_destroy(c);
        free(hi);
        free(reached);
        free(eof);
        vc_note_incomplete(h, "out of memory starting a reader");
        return -1;
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(P);
    for (int p = 0; p < P; p++) {
        int64_t lo = 0;
        if (rd_kafka_query_watermark_offsets(c, r->out, p, &lo, &hi[p], 30000) !=
            RD_KAFKA_RESP_ERR_NO_ERROR)
            hi[p] = -1;
        rd_kafka_topic_partition_list_add(l, r->out, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_assign(c, l);
    rd_kafka_topic_partition_list_destroy(l);
    int done = 0;
    int64_t last_progress = mono_ms();
    while (done < P && !verify_stop && mono_ms() - last_progress < 60000) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 200);
        if (m == NULL)
            continue;
        last_progress = mono_ms();
        if (m->partition >= 0 && m->partition < P && m->offset >= reached[m->partition] &&
            (m->err == RD_KAFKA_RESP_ERR_NO_ERROR || m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF))
            reached[m->partition] = m->offset + (m->err == RD_KAFKA_RESP_ERR_NO_ERROR);
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (m->partition >= 0 && m->partition < P && !eof[m->partition] &&
                m->offset >= hi[m->partition]) {
                eof[m->partition] = true;
                done++;
            }
        } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            /* Out of memory, the history counts the record as dropped: inconclusive. */
            vc_add_read(h, view, m->partition, m->offset, m->payload, m->len);
            n++;
        }
        rd_kafka_message_destroy(m);
    }
    /* A view short of an end leaves the history incomplete: the run cannot pass. */
    for (int p = 0; p < P; p++)
        if (hi[p] < 0 || !eof[p]) {
            fprintf(stderr,
                    "verify: the %s reader did not reach offset %" PRId64 " of partition %d\n",
                    isolation, hi[p], p);
            vc_view_short(h, view, p, reached[p], hi[p]);
        }
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    free(hi);
    free(reached);
    free(eof);
    return n;
}

/* Waits until read_committed's end (the LSO) equals the high watermark on every output
 * partition, so that the readers see every decided transaction. */
bool verify_wait_stable(struct run *r, int max_ms)
{
    rd_kafka_t *rc = new_consumer(r, "verify-watermarks", "read_committed");
    rd_kafka_t *ru = new_consumer(r, "verify-watermarks", "read_uncommitted");
    int64_t until = mono_ms() + max_ms;
    bool stable = false;
    while (rc && ru && !stable && mono_ms() < until && !verify_stop) {
        stable = true;
        for (int p = 0; p < r->o->partitions && stable; p++) {
            int64_t lo, h1 = -1, h2 = -2;
            rd_kafka_query_watermark_offsets(rc, r->out, p, &lo, &h1, 10000);
            rd_kafka_query_watermark_offsets(ru, r->out, p, &lo, &h2, 10000);
            stable = h1 == h2;
        }
        if (!stable)
            sleep_ms(500);
    }
    if (!stable)
        fprintf(stderr, "verify: the last stable offset still trails the high watermark\n");
    if (rc)
        rd_kafka_destroy(rc);
    if (ru)
        rd_kafka_destroy(ru);
    return stable;
}

void verify_read_journal(struct run *r, struct vc_history *h)
{
    char path[PATH_MAX + 16], line[128];
    snprintf(path, sizeof path, "%s/journal", r->dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        char what;
        int inc;
        long long txn;
        if (sscanf(line, "%c %d %lld", &what, &inc, &txn) == 3)
            vc_add_txn_outcome(h, inc, txn, what == 'C');
    }
    fclose(f);
}

void verify_count_journal(struct run *r)
{
    char path[PATH_MAX + 16], line[128];
    snprintf(path, sizeof path, "%s/journal", r->dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fseek(f, r->journal_off, SEEK_SET) == 0) {
        /* A copier appends each line with one write; a line without its newline is still
         * being written and is read next time. */
        while (fgets(line, sizeof line, f) != NULL) {
            size_t n = strlen(line);
            if (n == 0 || line[n - 1] != '\n')
                break;
            r->journal_off += (long)n;
            if (line[0] == 'C')
                r->txns_committed++;
            else if (line[0] == 'A')
                r->txns_aborted++;
        }
    }
    fclose(f);
}

static void seed_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    struct seed_state *s = opaque;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        s->failed++;
        return;
    }
    int p;
    long long seq;
    char buf[64];
    size_t l = m->len < sizeof buf - 1 ? m->len : sizeof buf - 1;
    memcpy(buf, m->payload, l);
    buf[l] = '\0';
    if (sscanf(buf, "vi p=%d s=%lld", &p, &seq) == 2) {
        vc_add_input(s->h, p, seq, m->offset);
        s->acked++;
    }
}

bool verify_seed_input(struct run *r, struct vc_history *h, struct seed_state *st)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (!verify_conf_set(conf, "bootstrap.servers", r->bootstrap) ||
        !tally_security_conf(conf, r->ctx) ||
        !verify_conf_set(conf, "enable.idempotence", "true") ||
        !verify_conf_set(conf, "linger.ms", "5") ||
        !verify_conf_set(conf, "message.timeout.ms", "120000")) {
        rd_kafka_conf_destroy(conf);
        return false;
    }
    st->h = h;
    rd_kafka_conf_set_dr_msg_cb(conf, seed_dr);
    rd_kafka_conf_set_opaque(conf, st);
    rd_kafka_t *p = verify_new_client(RD_KAFKA_PRODUCER, conf);
    if (p == NULL)
        return false;
    int P = r->o->partitions;
    for (int64_t i = 0; i < r->o->records && !verify_stop; i++) {
        char v[64];
        int part = (int)(i % P);
        int len = vc_format_input(v, sizeof v, part, i / P);
        for (;;) {
            rd_kafka_resp_err_t err =
                rd_kafka_producev(p, RD_KAFKA_V_TOPIC(r->in), RD_KAFKA_V_PARTITION(part),
                                  RD_KAFKA_V_VALUE(v, (size_t)len),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
            if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(p, 10);
                continue;
            }
            if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
                rd_kafka_destroy(p);
                return tally_fail("seeding: %s", rd_kafka_err2str(err)) == TALLY_OK;
            }
            break;
        }
        rd_kafka_poll(p, 0);
    }
    rd_kafka_flush(p, 180000);
    /* The input's ends, which the group's offsets must reach. */
    for (int part = 0; part < P; part++) {
        int64_t lo = 0, hi = 0;
        if (rd_kafka_query_watermark_offsets(p, r->in, part, &lo, &hi, 30000) !=
            RD_KAFKA_RESP_ERR_NO_ERROR) {
            rd_kafka_destroy(p);
            return tally_fail("cannot read the input's end offsets") == TALLY_OK;
        }
        r->ends[part] = hi;
    }
    rd_kafka_destroy(p);
    return true;
}
