/* SPDX-License-Identifier: Apache-2.0 */
/* The copier of `tally verify` (verify_int.h): a child process (`verify --copier-child`)
 * that consumes the input read_committed in the run's group, produces each batch to the
 * output in one transaction with its offsets (aborting --abort-ratio of them on purpose), and
 * journals each transaction it knows committed or aborted. */
#include "tally.h"
#include "verify_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct copier_args {
    const struct tally_ctx *ctx; /* the client security settings */
    const char *bootstrap, *in, *out, *group, *tid, *journal;
    int slot, inc, txn_records, session_ms, txn_timeout_ms, request_timeout_ms, out_partitions;
    double abort_ratio, rate;
    uint64_t seed;
    bool transactional;
};

static bool c_revoked;

static void c_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                        rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    (void)opaque;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        rd_kafka_assign(rk, parts);
    } else {
        c_revoked = true; /* the batch being gathered belongs to the old assignment */
        rd_kafka_assign(rk, NULL);
    }
}

/* Seeks every assigned partition back to the group's committed offset (after an abort).
 * False when that cannot be done: the copier then exits and is replaced. */
static bool c_rewind(rd_kafka_t *c)
{
    rd_kafka_topic_partition_list_t *a = NULL;
    bool ok = false;
    if (rd_kafka_assignment(c, &a) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return false;
    if (a->cnt == 0) {
        ok = true;
        goto out;
    }
    for (int attempt = 0; attempt < 20 && !verify_stop; attempt++) {
        rd_kafka_resp_err_t err = rd_kafka_committed(c, a, 10000);
        bool part_err = false;
        for (int i = 0; i < a->cnt; i++)
            part_err |= a->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR;
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR && !part_err) {
            ok = true;
            break;
        }
        sleep_ms(250);
    }
    if (!ok)
        goto out;
    for (int i = 0; i < a->cnt; i++)
        if (a->elems[i].offset < 0)
            a->elems[i].offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_error_t *e = rd_kafka_seek_partitions(c, a, 10000);
    if (e != NULL) {
        fprintf(stderr, "copier: seek: %s\n", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        ok = false;
    }
out:
    rd_kafka_topic_partition_list_destroy(a);
    return ok;
}

static void c_journal(const struct copier_args *a, char what, int64_t txn)
{
    FILE *f = fopen(a->journal, "a");
    if (f == NULL)
        return;
    fprintf(f, "%c %d %" PRId64 "\n", what, a->inc, txn);
    fclose(f);
}

/* Handles a failed transactional call: exits on a fatal error, else aborts the transaction
 * and rewinds. Returns normally only when the copier can go on. */
static void c_txn_failed(const struct copier_args *a, rd_kafka_t *p, rd_kafka_t *c,
                         rd_kafka_error_t *e, const char *what, int64_t txn)
{
    fprintf(stderr, "copier %d/%d: %s: %s%s\n", a->slot, a->inc, what, rd_kafka_error_string(e),
            rd_kafka_error_is_fatal(e) ? " (fatal)" : "");
    if (rd_kafka_error_is_fatal(e)) {
        rd_kafka_error_destroy(e);
        _exit(3);
    }
    rd_kafka_error_destroy(e);
    rd_kafka_error_t *ae = rd_kafka_abort_transaction(p, 60000);
    if (ae != NULL) {
        fprintf(stderr, "copier %d/%d: abort: %s\n", a->slot, a->inc, rd_kafka_error_string(ae));
        _exit(rd_kafka_error_is_fatal(ae) ? 3 : 4);
    }
    c_journal(a, 'A', txn);
    if (!c_rewind(c))
        _exit(4);
}

static int copier_run(const struct copier_args *a)
{
    rd_kafka_conf_t *cc = rd_kafka_conf_new(), *pc = rd_kafka_conf_new();
    char tmp[64];
    uint64_t rng = a->seed ^ ((uint64_t)a->inc << 32);

    if (!verify_conf_set(cc, "bootstrap.servers", a->bootstrap) ||
        !tally_security_conf(cc, a->ctx) || !verify_conf_set(cc, "group.id", a->group) ||
        !verify_conf_set(cc, "isolation.level", "read_committed") ||
        !verify_conf_set(cc, "enable.auto.commit", "false") ||
        !verify_conf_set(cc, "auto.offset.reset", "earliest") ||
        !verify_conf_set_int(cc, "session.timeout.ms", a->session_ms) ||
        !verify_conf_set_int(cc, "heartbeat.interval.ms", a->session_ms / 4) ||
        !verify_conf_set_int(cc, "max.poll.interval.ms",
                             a->session_ms * 2 > 10000 ? a->session_ms * 2 : 10000))
        return 1;
    rd_kafka_conf_set_rebalance_cb(cc, c_rebalance);
    if (!verify_conf_set(pc, "bootstrap.servers", a->bootstrap) ||
        !tally_security_conf(pc, a->ctx) || !verify_conf_set(pc, "linger.ms", "5") ||
        !verify_conf_set_int(pc, "request.timeout.ms", a->request_timeout_ms))
        return 1;
    if (a->transactional) {
        if (!verify_conf_set(pc, "transactional.id", a->tid) ||
            !verify_conf_set_int(pc, "transaction.timeout.ms", a->txn_timeout_ms))
            return 1;
    } else if (!verify_conf_set(pc, "enable.idempotence", "true")) {
        return 1;
    }
    snprintf(tmp, sizeof tmp, "verify-copier-%d", a->inc);
    verify_conf_set(pc, "client.id", tmp);
    verify_conf_set(cc, "client.id", tmp);

    rd_kafka_t *p = verify_new_client(RD_KAFKA_PRODUCER, pc);
    rd_kafka_t *c = verify_new_client(RD_KAFKA_CONSUMER, cc);
    if (p == NULL || c == NULL)
        return 1;
    if (a->transactional) {
        rd_kafka_error_t *e = rd_kafka_init_transactions(p, 120000);
        if (e != NULL) {
            fprintf(stderr, "copier %d/%d: init_transactions: %s\n", a->slot, a->inc,
                    rd_kafka_error_string(e));
            _exit(rd_kafka_error_is_fatal(e) ? 3 : 4);
        }
    }
    rd_kafka_poll_set_consumer(c);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, a->in, RD_KAFKA_PARTITION_UA);
    if (rd_kafka_subscribe(c, sub) != RD_KAFKA_RESP_ERR_NO_ERROR)
        _exit(4);
    rd_kafka_topic_partition_list_destroy(sub);

    rd_kafka_message_t **batch = calloc((size_t)a->txn_records, sizeof *batch);
    if (batch == NULL)
        return 1;
    int64_t txn = 0, copied = 0, start = mono_ms();
    while (!verify_stop) {
        int nb = 0;
        int target = 1 + (int)(rng_next(&rng) % (uint64_t)a->txn_records);
        int64_t deadline = mono_ms() + 500;
        c_revoked = false;
        while (nb < target && !verify_stop) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);
            if (c_revoked) {
                for (int i = 0; i < nb; i++)
                    rd_kafka_message_destroy(batch[i]);
                nb = 0;
                c_revoked = false;
            }
            if (m == NULL) {
                if (nb > 0 && mono_ms() > deadline)
                    break;
                continue;
            }
            if (m->err) {
                if (m->err == RD_KAFKA_RESP_ERR__FATAL)
                    _exit(3);
                rd_kafka_message_destroy(m);
                continue;
            }
            batch[nb++] = m;
        }
        if (nb == 0 || verify_stop) {
            for (int i = 0; i < nb; i++)
                rd_kafka_message_destroy(batch[i]);
            continue;
        }
        txn++;
        bool abort = a->transactional && rng_unit(&rng) < a->abort_ratio;
        rd_kafka_error_t *e = NULL;
        if (a->transactional && (e = rd_kafka_begin_transaction(p)) != NULL) {
            c_txn_failed(a, p, c, e, "begin", txn);
            goto next;
        }
        rd_kafka_topic_partition_list_t *offs = rd_kafka_topic_partition_list_new(nb);
        bool produce_failed = false;
        for (int i = 0; i < nb && !produce_failed; i++) {
            rd_kafka_message_t *m = batch[i];
            int ip = -1;
            long long seq = -1;
            char in[64], out[200];
            size_t l = m->len < sizeof in - 1 ? m->len : sizeof in - 1;
            memcpy(in, m->payload ? m->payload : "", l);
            in[l] = '\0';
            if (sscanf(in, "vi p=%d s=%lld", &ip, &seq) != 2)
                ip = -1;
            int len = vc_format_output(out, sizeof out, ip, seq, m->offset, a->slot, a->inc, txn,
                                       nb, i, abort);
            for (;;) {
                rd_kafka_resp_err_t perr =
                    rd_kafka_producev(p, RD_KAFKA_V_TOPIC(a->out),
                                      RD_KAFKA_V_PARTITION(m->partition % a->out_partitions),
                                      RD_KAFKA_V_VALUE(out, (size_t)len),
                                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                if (perr == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                    rd_kafka_poll(p, 10);
                    continue;
                }
                if (perr != RD_KAFKA_RESP_ERR_NO_ERROR) {
                    fprintf(stderr, "copier: produce: %s\n", rd_kafka_err2str(perr));
                    produce_failed = true;
                }
                break;
            }
            rd_kafka_topic_partition_t *tp =
                rd_kafka_topic_partition_list_find(offs, a->in, m->partition);
            if (tp == NULL)
                tp = rd_kafka_topic_partition_list_add(offs, a->in, m->partition);
            if (m->offset + 1 > tp->offset)
                tp->offset = m->offset + 1;
        }
        if (!a->transactional) {
            rd_kafka_flush(p, 60000);
            rd_kafka_commit(c, offs, 0);
            rd_kafka_topic_partition_list_destroy(offs);
            copied += nb;
            goto next;
        }
        if (produce_failed) {
            rd_kafka_topic_partition_list_destroy(offs);
            c_txn_failed(a, p, c, rd_kafka_error_new(RD_KAFKA_RESP_ERR__STATE, "produce failed"),
                         "produce", txn);
            goto next;
        }
        rd_kafka_consumer_group_metadata_t *md = rd_kafka_consumer_group_metadata(c);
        e = rd_kafka_send_offsets_to_transaction(p, offs, md, 60000);
        rd_kafka_consumer_group_metadata_destroy(md);
        rd_kafka_topic_partition_list_destroy(offs);
        if (e != NULL) {
            c_txn_failed(a, p, c, e, "send_offsets", txn);
            goto next;
        }
        if (abort) {
            /* Deliver first: abort_transaction purges what is still queued, and an aborted
             * transaction that never reached the broker proves nothing. */
            rd_kafka_flush(p, 30000);
            e = rd_kafka_abort_transaction(p, 60000);
            if (e != NULL) {
                c_txn_failed(a, p, c, e, "abort", txn);
                goto next;
            }
            c_journal(a, 'A', txn);
            if (!c_rewind(c))
                _exit(4);
            goto next;
        }
        for (int attempt = 0;; attempt++) {
            e = rd_kafka_commit_transaction(p, 60000);
            if (e == NULL) {
                c_journal(a, 'C', txn);
                copied += nb;
                break;
            }
            if (rd_kafka_error_is_retriable(e) && attempt < 10 && !verify_stop) {
                rd_kafka_error_destroy(e);
                continue;
            }
            c_txn_failed(a, p, c, e, "commit", txn);
            break;
        }
    next:
        for (int i = 0; i < nb; i++)
            rd_kafka_message_destroy(batch[i]);
        if (a->rate > 0) {
            int64_t due = start + (int64_t)((double)copied * 1000.0 / a->rate);
            int64_t now = mono_ms();
            if (due > now)
                sleep_ms((int)(due - now > 2000 ? 2000 : due - now));
        }
    }
    free(batch);
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    rd_kafka_flush(p, 10000);
    rd_kafka_destroy(p);
    return 0;
}

int verify_copier_child(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc != 18)
        return tally_usage_error("--copier-child: %d arguments", argc);
    struct copier_args a = {.ctx = ctx, .bootstrap = ctx->bootstrap};
    a.in = argv[2];
    a.out = argv[3];
    a.group = argv[4];
    a.tid = argv[5];
    a.slot = atoi(argv[6]);
    a.inc = atoi(argv[7]);
    a.abort_ratio = atof(argv[8]);
    a.txn_records = atoi(argv[9]);
    a.rate = atof(argv[10]);
    a.seed = strtoull(argv[11], NULL, 10);
    a.journal = argv[12];
    a.session_ms = atoi(argv[13]);
    a.txn_timeout_ms = atoi(argv[14]);
    a.request_timeout_ms = atoi(argv[15]);
    a.out_partitions = atoi(argv[16]);
    a.transactional = strcmp(argv[17], "1") == 0;
    if (a.txn_records < 1 || a.out_partitions < 1)
        return TALLY_USAGE;
    signal(SIGTERM, verify_on_signal);
    signal(SIGINT, verify_on_signal);
    return copier_run(&a);
}
