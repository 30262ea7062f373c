/* SPDX-License-Identifier: Apache-2.0 */
/* pstate unit tests: every idempotence rule (unknown producer, order, duplicates over the
 * window of 5 and just past it, gaps, epochs, wrap-around at INT32_MAX, multi-record
 * batches, interleaved producers), transactions' bookkeeping, expiration on an injected
 * clock, truncation, and snapshots: round trip of every field, choice of the newest usable
 * file, fallback past corrupt ones, pruning and injected write failures. */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/sysio.h"
#include "pstate/pstate.h"
#include "pstate/pstate_int.h"
#include "record/record.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static struct record_batch batch(int64_t pid, int16_t epoch, int32_t seq, int32_t n_records)
{
    struct record_batch b;

    memset(&b, 0, sizeof b);
    b.magic = 2;
    b.producer_id = pid;
    b.producer_epoch = epoch;
    b.base_sequence = seq;
    b.last_offset_delta = n_records - 1;
    b.record_count = n_records;
    b.base_offset = -1;
    return b;
}

/* A tiny log: what a partition leader does with each produced batch. */
struct fake_log {
    struct pstate *s;
    int64_t end;    /* next offset */
    int64_t now_ms; /* wall clock */
};

static void fake_init(struct fake_log *f)
{
    f->s = pstate_new();
    f->end = 0;
    f->now_ms = 1000000;
}

/* Checks b and, when it is new, appends it at the log end (timestamp = its base offset * 10)
 * and updates the state. Returns pstate_check's answer; *dup gets a duplicate's offsets. */
static int produce(struct fake_log *f, struct record_batch *b, struct pstate_batch *dup)
{
    int r = pstate_check(f->s, b, dup);

    if (r != 0)
        return r;
    b->base_offset = f->end;
    b->max_timestamp = f->end * 10;
    f->end += b->last_offset_delta + 1;
    return pstate_update(f->s, b, f->now_ms);
}

static int produce1(struct fake_log *f, int64_t pid, int16_t epoch, int32_t seq, int32_t n)
{
    struct record_batch b = batch(pid, epoch, seq, n);
    return produce(f, &b, NULL);
}

static int check1(const struct pstate *s, int64_t pid, int16_t epoch, int32_t seq, int32_t n)
{
    struct record_batch b = batch(pid, epoch, seq, n);
    return pstate_check(s, &b, NULL);
}

static int32_t last_seq_of(const struct pstate *s, int64_t pid)
{
    const struct pstate_producer *p = pstate_get(s, pid);
    return p && p->n_batches > 0 ? p->batches[p->n_batches - 1].last_seq : -1;
}

/* The system calls the snapshot functions go through: the real ones, reset by make_dir at the
 * start of every test; a test replaces entries to inject failures. */
static struct sysio tsys;

static char *make_dir(char *buf, size_t size)
{
    tsys = *sysio_default();
    snprintf(buf, size, "/tmp/test_pstate.XXXXXX");
    return mkdtemp(buf);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static bool file_exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* Overwrites one byte of dir/name at `at` (negative: from the end) with its complement, or
 * cuts the file to `at` bytes when `cut`. */
static void damage(const char *dir, const char *name, long at, bool cut)
{
    char path[PATH_MAX];
    int fd;
    off_t size;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    fd = open(path, O_RDWR);
    if (fd < 0)
        return;
    size = lseek(fd, 0, SEEK_END);
    if (at < 0)
        at += (long)size;
    if (cut) {
        if (ftruncate(fd, at) != 0)
            harness_fail(__FILE__, __LINE__, "ftruncate");
    } else {
        uint8_t c;
        if (pread(fd, &c, 1, at) == 1) {
            c = (uint8_t)~c;
            if (pwrite(fd, &c, 1, at) != 1)
                harness_fail(__FILE__, __LINE__, "pwrite");
        }
    }
    close(fd);
}

static bool same_producer(const struct pstate_producer *a, const struct pstate_producer *b)
{
    if (a->producer_id != b->producer_id || a->epoch != b->epoch || a->n_batches != b->n_batches ||
        a->last_timestamp != b->last_timestamp || a->last_update_ms != b->last_update_ms ||
        a->coordinator_epoch != b->coordinator_epoch || a->txn_first_offset != b->txn_first_offset)
        return false;
    for (int32_t i = 0; i < a->n_batches; i++) {
        const struct pstate_batch *x = &a->batches[i], *y = &b->batches[i];
        if (x->first_seq != y->first_seq || x->last_seq != y->last_seq ||
            x->first_offset != y->first_offset || x->last_offset != y->last_offset ||
            x->timestamp != y->timestamp)
            return false;
    }
    return true;
}

static bool same_state(const struct pstate *a, const struct pstate *b)
{
    size_t na, nb;
    const struct pstate_producer *pa = pstate_producers(a, &na), *pb = pstate_producers(b, &nb);

    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (!same_producer(&pa[i], &pb[i]))
            return false;
    return true;
}

/* ---- the rules ---------------------------------------------------------------------------- */

TEST(pstate_new_producer_sequence_zero_accepted)
{
    struct fake_log f;
    const struct pstate_producer *p;

    fake_init(&f);
    CHECK(pstate_get(f.s, 7) == NULL);
    CHECK_EQ_INT(produce1(&f, 7, 3, 0, 1), 0);
    p = pstate_get(f.s, 7);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(p->producer_id, 7);
    CHECK_EQ_INT(p->epoch, 3);
    CHECK_EQ_INT(p->n_batches, 1);
    CHECK_EQ_INT(p->batches[0].first_seq, 0);
    CHECK_EQ_INT(p->batches[0].last_seq, 0);
    CHECK_EQ_INT(p->batches[0].first_offset, 0);
    CHECK_EQ_INT(p->batches[0].last_offset, 0);
    CHECK_EQ_INT(p->last_update_ms, f.now_ms);
    CHECK_EQ_INT(p->coordinator_epoch, -1);
    CHECK_EQ_INT(p->txn_first_offset, -1);
    pstate_free(f.s);
}

TEST(pstate_new_producer_nonzero_sequence_unknown)
{
    struct fake_log f;

    fake_init(&f);
    CHECK_EQ_INT(check1(f.s, 7, 0, 1, 1), ERR_UNKNOWN_PRODUCER_ID);
    CHECK_EQ_INT(check1(f.s, 7, 0, 42, 3), ERR_UNKNOWN_PRODUCER_ID);
    CHECK_EQ_INT(check1(f.s, 7, 0, INT32_MAX, 1), ERR_UNKNOWN_PRODUCER_ID);
    CHECK(pstate_get(f.s, 7) == NULL);
    pstate_free(f.s);
}

TEST(pstate_no_producer_id_always_accepted)
{
    struct fake_log f;
    struct record_batch b = batch(-1, -1, -1, 3);
    size_t n;

    fake_init(&f);
    CHECK_EQ_INT(pstate_check(f.s, &b, NULL), 0);
    b.base_offset = 0;
    CHECK_EQ_INT(pstate_update(f.s, &b, 5), 0);
    pstate_producers(f.s, &n);
    CHECK_EQ_INT(n, 0);
    pstate_free(f.s);
}

TEST(pstate_in_order_appends)
{
    struct fake_log f;
    const struct pstate_producer *p;

    fake_init(&f);
    for (int32_t i = 0; i < 20; i++)
        CHECK_EQ_INT(produce1(&f, 1, 0, i, 1), 0);
    p = pstate_get(f.s, 1);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(p->n_batches, PSTATE_MAX_BATCHES);
    for (int32_t i = 0; i < PSTATE_MAX_BATCHES; i++) { /* oldest first: seqs 15..19 */
        CHECK_EQ_INT(p->batches[i].first_seq, 15 + i);
        CHECK_EQ_INT(p->batches[i].first_offset, 15 + i);
        CHECK_EQ_INT(p->batches[i].timestamp, (15 + i) * 10);
    }
    CHECK_EQ_INT(p->last_timestamp, 190);
    pstate_free(f.s);
}

TEST(pstate_check_changes_nothing)
{
    struct fake_log f;
    struct pstate_producer before;
    struct record_batch b;

    fake_init(&f);
    CHECK_EQ_INT(produce1(&f, 1, 0, 0, 1), 0);
    before = *pstate_get(f.s, 1);
    b = batch(1, 0, 1, 1);
    CHECK_EQ_INT(pstate_check(f.s, &b, NULL), 0);
    b = batch(1, 1, 0, 1);
    CHECK_EQ_INT(pstate_check(f.s, &b, NULL), 0);
    b = batch(2, 0, 0, 1);
    CHECK_EQ_INT(pstate_check(f.s, &b, NULL), 0);
    CHECK(same_producer(pstate_get(f.s, 1), &before));
    CHECK(pstate_get(f.s, 2) == NULL);
    pstate_free(f.s);
}

TEST(pstate_retry_of_each_of_last_5_is_duplicate)
{
    struct fake_log f;
    struct record_batch sent[8];

    fake_init(&f);
    /* Batches of 2 records: seqs 0-1, 2-3, ... offsets 0-1, 2-3, ... */
    for (int i = 0; i < 8; i++) {
        sent[i] = batch(9, 2, 2 * i, 2);
        REQUIRE(produce(&f, &sent[i], NULL) == 0);
    }
    for (int i = 3; i < 8; i++) {
        struct record_batch retry = batch(9, 2, 2 * i, 2);
        struct pstate_batch dup = {0};
        CHECK_EQ_INT(pstate_check(f.s, &retry, &dup), ERR_DUPLICATE_SEQUENCE_NUMBER);
        CHECK_EQ_INT(dup.first_seq, 2 * i);
        CHECK_EQ_INT(dup.last_seq, 2 * i + 1);
        CHECK_EQ_INT(dup.first_offset, sent[i].base_offset);
        CHECK_EQ_INT(dup.last_offset, sent[i].base_offset + 1);
        CHECK_EQ_INT(dup.timestamp, sent[i].max_timestamp);
    }
    /* A NULL dup is allowed. */
    CHECK_EQ_INT(check1(f.s, 9, 2, 14, 2), ERR_DUPLICATE_SEQUENCE_NUMBER);
    /* Nothing was appended by the retries. */
    CHECK_EQ_INT(f.end, 16);
    CHECK_EQ_INT(last_seq_of(f.s, 9), 15);
    pstate_free(f.s);
}

TEST(pstate_retry_of_6th_newest_is_out_of_order)
{
    struct fake_log f;
    struct pstate_batch dup = {.first_offset = -7};
    struct record_batch b;

    fake_init(&f);
    for (int32_t i = 0; i < 6; i++)
        REQUIRE(produce1(&f, 9, 0, i, 1) == 0);
    /* Seq 0 fell out of the window when seq 5 came: below the window, not a duplicate. */
    b = batch(9, 0, 0, 1);
    CHECK_EQ_INT(pstate_check(f.s, &b, &dup), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(dup.first_offset, -7); /* untouched */
    CHECK_EQ_INT(check1(f.s, 9, 0, 1, 1), ERR_DUPLICATE_SEQUENCE_NUMBER);
    pstate_free(f.s);
}

TEST(pstate_partial_overlap_is_not_duplicate)
{
    struct fake_log f;

    fake_init(&f);
    REQUIRE(produce1(&f, 9, 0, 0, 3) == 0); /* seqs 0..2 */
    REQUIRE(produce1(&f, 9, 0, 3, 3) == 0); /* seqs 3..5 */
    /* Same first sequence, other last; same last, other first: neither is a retry. */
    CHECK_EQ_INT(check1(f.s, 9, 0, 3, 2), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, 4, 2), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, 0, 6), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, 3, 3), ERR_DUPLICATE_SEQUENCE_NUMBER);
    pstate_free(f.s);
}

TEST(pstate_gap_is_out_of_order)
{
    struct fake_log f;

    fake_init(&f);
    REQUIRE(produce1(&f, 9, 0, 0, 1) == 0);
    REQUIRE(produce1(&f, 9, 0, 1, 4) == 0); /* seqs 1..4 */
    CHECK_EQ_INT(check1(f.s, 9, 0, 6, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, 4, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, 2, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, 0, 2), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, -1, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, 5, 1), 0);
    pstate_free(f.s);
}

TEST(pstate_stale_epoch_is_invalid)
{
    struct fake_log f;

    fake_init(&f);
    REQUIRE(produce1(&f, 9, 4, 0, 1) == 0);
    CHECK_EQ_INT(check1(f.s, 9, 3, 1, 1), ERR_INVALID_PRODUCER_EPOCH);
    CHECK_EQ_INT(check1(f.s, 9, 3, 0, 1), ERR_INVALID_PRODUCER_EPOCH); /* epoch before dup */
    CHECK_EQ_INT(check1(f.s, 9, 0, 7, 1), ERR_INVALID_PRODUCER_EPOCH); /* epoch before seq */
    pstate_free(f.s);
}

TEST(pstate_newer_epoch_at_zero_forgets_old_batches)
{
    struct fake_log f;
    const struct pstate_producer *p;

    fake_init(&f);
    for (int32_t i = 0; i < 4; i++)
        REQUIRE(produce1(&f, 9, 1, i, 1) == 0);
    CHECK_EQ_INT(produce1(&f, 9, 2, 0, 2), 0);
    p = pstate_get(f.s, 9);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(p->epoch, 2);
    CHECK_EQ_INT(p->n_batches, 1);
    CHECK_EQ_INT(p->batches[0].first_seq, 0);
    CHECK_EQ_INT(p->batches[0].last_seq, 1);
    CHECK_EQ_INT(p->batches[0].first_offset, 4);
    /* The old epoch's batches are fenced, even exact retries of them. */
    CHECK_EQ_INT(check1(f.s, 9, 1, 3, 1), ERR_INVALID_PRODUCER_EPOCH);
    CHECK_EQ_INT(check1(f.s, 9, 2, 2, 1), 0);
    CHECK_EQ_INT(check1(f.s, 9, 2, 0, 2), ERR_DUPLICATE_SEQUENCE_NUMBER);
    pstate_free(f.s);
}

TEST(pstate_newer_epoch_not_at_zero_is_out_of_order)
{
    struct fake_log f;

    fake_init(&f);
    for (int32_t i = 0; i < 3; i++)
        REQUIRE(produce1(&f, 9, 1, i, 1) == 0);
    CHECK_EQ_INT(check1(f.s, 9, 2, 3, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 2, 1, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    /* Same sequences as a cached batch but a newer epoch: not a duplicate either. */
    CHECK_EQ_INT(check1(f.s, 9, 2, 2, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 2, 0, 1), 0);
    pstate_free(f.s);
}

TEST(pstate_last_sequence_wraps)
{
    CHECK_EQ_INT(pstate_int_last_seq(0, 0), 0);
    CHECK_EQ_INT(pstate_int_last_seq(10, 4), 14);
    CHECK_EQ_INT(pstate_int_last_seq(INT32_MAX, 0), INT32_MAX);
    CHECK_EQ_INT(pstate_int_last_seq(INT32_MAX, 1), 0);
    CHECK_EQ_INT(pstate_int_last_seq(INT32_MAX - 1, 3), 1);
    CHECK_EQ_INT(pstate_int_last_seq(INT32_MAX, INT32_MAX), INT32_MAX - 1);
}

TEST(pstate_wrap_batch_ending_at_int32_max_then_zero)
{
    struct fake_log f;
    struct pstate_producer *p;

    fake_init(&f);
    REQUIRE(produce1(&f, 9, 0, 0, 1) == 0);
    /* Fast-forward the producer near the end of the sequence space. */
    p = pstate_int_upsert(f.s, 9);
    p->batches[0].first_seq = p->batches[0].last_seq = INT32_MAX - 3;
    CHECK_EQ_INT(produce1(&f, 9, 0, INT32_MAX - 2, 3), 0); /* ends at INT32_MAX */
    CHECK_EQ_INT(last_seq_of(f.s, 9), INT32_MAX);
    CHECK_EQ_INT(check1(f.s, 9, 0, 1, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, INT32_MAX - 2, 3), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(produce1(&f, 9, 0, 0, 1), 0);
    CHECK_EQ_INT(last_seq_of(f.s, 9), 0);
    CHECK_EQ_INT(produce1(&f, 9, 0, 1, 1), 0);
    /* The batch before the wrap is still a duplicate afterwards. */
    CHECK_EQ_INT(check1(f.s, 9, 0, INT32_MAX - 2, 3), ERR_DUPLICATE_SEQUENCE_NUMBER);
    pstate_free(f.s);
}

TEST(pstate_wrap_batch_spanning_int32_max)
{
    struct fake_log f;
    struct pstate_producer *p;
    struct pstate_batch dup;
    struct record_batch b;

    fake_init(&f);
    REQUIRE(produce1(&f, 9, 0, 0, 1) == 0);
    p = pstate_int_upsert(f.s, 9);
    p->batches[0].first_seq = p->batches[0].last_seq = INT32_MAX - 2;
    /* Sequences INT32_MAX-1, INT32_MAX, 0, 1. */
    b = batch(9, 0, INT32_MAX - 1, 4);
    CHECK_EQ_INT(produce(&f, &b, NULL), 0);
    CHECK_EQ_INT(last_seq_of(f.s, 9), 1);
    b = batch(9, 0, INT32_MAX - 1, 4);
    CHECK_EQ_INT(pstate_check(f.s, &b, &dup), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(dup.first_seq, INT32_MAX - 1);
    CHECK_EQ_INT(dup.last_seq, 1);
    CHECK_EQ_INT(dup.first_offset, 1);
    CHECK_EQ_INT(dup.last_offset, 4);
    CHECK_EQ_INT(check1(f.s, 9, 0, 0, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 9, 0, 2, 1), 0);
    pstate_free(f.s);
}

TEST(pstate_multi_record_batches)
{
    struct fake_log f;
    struct pstate_batch dup;
    struct record_batch b;

    fake_init(&f);
    CHECK_EQ_INT(produce1(&f, 5, 0, 0, 10), 0);   /* seqs 0..9, offsets 0..9 */
    CHECK_EQ_INT(produce1(&f, 6, 0, 0, 3), 0);    /* other producer, offsets 10..12 */
    CHECK_EQ_INT(produce1(&f, 5, 0, 10, 100), 0); /* seqs 10..109, offsets 13..112 */
    CHECK_EQ_INT(last_seq_of(f.s, 5), 109);
    b = batch(5, 0, 10, 100);
    CHECK_EQ_INT(pstate_check(f.s, &b, &dup), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(dup.first_offset, 13);
    CHECK_EQ_INT(dup.last_offset, 112);
    CHECK_EQ_INT(check1(f.s, 5, 0, 11, 99), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 5, 0, 110, 1), 0);
    pstate_free(f.s);
}

TEST(pstate_interleaved_producers)
{
    struct fake_log f;
    const struct pstate_producer *v;
    size_t n;
    int64_t ids[3] = {300, 100, 200};

    fake_init(&f);
    for (int32_t round = 0; round < 7; round++)
        for (int k = 0; k < 3; k++)
            CHECK_EQ_INT(produce1(&f, ids[k], (int16_t)k, round * (k + 1), k + 1), 0);
    CHECK_EQ_INT(check1(f.s, 100, 1, 14, 1), 0);
    CHECK_EQ_INT(check1(f.s, 300, 0, 7, 1), 0);
    CHECK_EQ_INT(check1(f.s, 100, 1, 15, 1), ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 200, 1, 18, 3), ERR_INVALID_PRODUCER_EPOCH);
    CHECK_EQ_INT(check1(f.s, 200, 2, 18, 3), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(f.s, 200, 2, 21, 1), 0);
    v = pstate_producers(f.s, &n);
    REQUIRE(n == 3);
    CHECK_EQ_INT(v[0].producer_id, 100);
    CHECK_EQ_INT(v[1].producer_id, 200);
    CHECK_EQ_INT(v[2].producer_id, 300);
    CHECK_EQ_INT(v[0].epoch, 1);
    CHECK_EQ_INT(v[1].batches[4].last_offset, f.end - 1);
    pstate_free(f.s);
}

TEST(pstate_many_producers_listed_in_id_order)
{
    struct fake_log f;
    const struct pstate_producer *v, *p;
    size_t n, added = 0;
    uint64_t x = 88172645463325252ull;
    int64_t ids[2000];

    fake_init(&f);
    for (int i = 0; i < 2000; i++) {
        /* xorshift: ids in no order */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ids[i] = i % 2 ? (int64_t)(x >> 2) : (int64_t)(x % 5000); /* large and small */
        if (pstate_get(f.s, ids[i]) != NULL) {
            ids[i] = -1;
            continue;
        }
        REQUIRE(produce1(&f, ids[i], 0, 0, 1) == 0);
        added++;
    }
    for (int i = 0; i < 2000; i++) {
        if (ids[i] < 0)
            continue;
        p = pstate_get(f.s, ids[i]);
        REQUIRE(p != NULL);
        CHECK_EQ_INT(p->producer_id, ids[i]);
        CHECK_EQ_INT(check1(f.s, ids[i], 0, 1, 1), 0);
    }
    v = pstate_producers(f.s, &n);
    CHECK_EQ_INT(n, added);
    CHECK(added > 1800);
    for (size_t i = 1; i < n; i++)
        CHECK(v[i - 1].producer_id < v[i].producer_id);
    /* An update invalidates the sorted view; the next listing reflects it. */
    REQUIRE(produce1(&f, v[0].producer_id, 0, 1, 1) == 0);
    v = pstate_producers(f.s, &n);
    CHECK_EQ_INT(v[0].n_batches, 2);
    pstate_free(f.s);
}

TEST(pstate_producers_in_order_arrive_sorted)
{
    struct fake_log f;
    const struct pstate_producer *v;
    size_t n;

    fake_init(&f);
    v = pstate_producers(f.s, &n);
    CHECK_EQ_INT(n, 0);
    for (int64_t id = 1000; id < 1100; id++)
        REQUIRE(produce1(&f, id, 0, 0, 1) == 0);
    v = pstate_producers(f.s, &n);
    REQUIRE(n == 100);
    /* Kept in id order as they arrived: the listing is the table itself. */
    CHECK(v == pstate_get(f.s, 1000));
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_INT(v[i].producer_id, 1000 + (int64_t)i);
    pstate_free(f.s);
}

/* ---- transactions' bookkeeping ----------------------------------------------------------- */

TEST(pstate_transactional_batches_and_markers)
{
    struct fake_log f;
    struct record_batch b, m;
    const struct pstate_producer *p;

    fake_init(&f);
    REQUIRE(produce1(&f, 9, 0, 0, 1) == 0); /* offset 0 */
    b = batch(9, 0, 1, 2);
    b.attributes = RECORD_ATTR_TRANSACTIONAL;
    REQUIRE(produce(&f, &b, NULL) == 0); /* offsets 1..2 */
    b = batch(9, 0, 3, 1);
    b.attributes = RECORD_ATTR_TRANSACTIONAL;
    REQUIRE(produce(&f, &b, NULL) == 0); /* offset 3 */
    p = pstate_get(f.s, 9);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(p->txn_first_offset, 1);

    /* The COMMIT marker: no sequence, out of the window, ends the transaction. */
    m = batch(9, 0, -1, 1);
    m.attributes = RECORD_ATTR_TRANSACTIONAL | RECORD_ATTR_CONTROL;
    CHECK_EQ_INT(produce(&f, &m, NULL), 0);
    p = pstate_get(f.s, 9);
    CHECK_EQ_INT(p->txn_first_offset, -1);
    CHECK_EQ_INT(p->n_batches, 3);
    CHECK_EQ_INT(last_seq_of(f.s, 9), 3);
    CHECK_EQ_INT(check1(f.s, 9, 0, 4, 1), 0);
    /* A marker of an older epoch is fenced. */
    REQUIRE(produce1(&f, 9, 1, 0, 1) == 0);
    m = batch(9, 0, -1, 1);
    m.attributes = RECORD_ATTR_TRANSACTIONAL | RECORD_ATTR_CONTROL;
    CHECK_EQ_INT(pstate_check(f.s, &m, NULL), ERR_INVALID_PRODUCER_EPOCH);
    pstate_free(f.s);
}

/* ---- expiration and truncation ------------------------------------------------------------ */

TEST(pstate_expire)
{
    struct fake_log f;
    struct record_batch b;
    size_t n;

    fake_init(&f);
    f.now_ms = 1000;
    REQUIRE(produce1(&f, 1, 0, 0, 1) == 0);
    f.now_ms = 2000;
    REQUIRE(produce1(&f, 2, 0, 0, 1) == 0);
    b = batch(3, 0, 0, 1);
    b.attributes = RECORD_ATTR_TRANSACTIONAL;
    REQUIRE(produce(&f, &b, NULL) == 0); /* ongoing transaction: never expires */
    f.now_ms = 3000;
    REQUIRE(produce1(&f, 4, 0, 0, 1) == 0);

    CHECK_EQ_INT(pstate_expire(f.s, 3000, 2000), 0);
    CHECK_EQ_INT(pstate_expire(f.s, 3000, 1999), 1); /* producer 1: 2000 ms old */
    CHECK(pstate_get(f.s, 1) == NULL);
    CHECK(pstate_get(f.s, 2) != NULL);
    CHECK_EQ_INT(pstate_expire(f.s, 100000, 1000), 2); /* 2 and 4, not 3 */
    CHECK(pstate_get(f.s, 2) == NULL);
    CHECK(pstate_get(f.s, 4) == NULL);
    CHECK(pstate_get(f.s, 3) != NULL);
    pstate_producers(f.s, &n);
    CHECK_EQ_INT(n, 1);
    /* An expired producer is unknown again. */
    CHECK_EQ_INT(check1(f.s, 1, 0, 1, 1), ERR_UNKNOWN_PRODUCER_ID);
    CHECK_EQ_INT(check1(f.s, 1, 0, 0, 1), 0);
    pstate_free(f.s);
}

TEST(pstate_truncate)
{
    struct fake_log f;
    const struct pstate_producer *p;
    struct record_batch b;
    size_t n;

    fake_init(&f);
    REQUIRE(produce1(&f, 1, 0, 0, 2) == 0); /* offsets 0..1 */
    REQUIRE(produce1(&f, 2, 0, 0, 1) == 0); /* 2 */
    REQUIRE(produce1(&f, 1, 0, 2, 2) == 0); /* 3..4 */
    REQUIRE(produce1(&f, 3, 0, 0, 1) == 0); /* 5 */
    b = batch(2, 0, 1, 1);
    b.attributes = RECORD_ATTR_TRANSACTIONAL;
    REQUIRE(produce(&f, &b, NULL) == 0);    /* 6: producer 2's transaction starts */
    REQUIRE(produce1(&f, 1, 0, 4, 3) == 0); /* 7..9 */

    pstate_truncate(f.s, 8); /* cuts into producer 1's last batch: it goes whole */
    p = pstate_get(f.s, 1);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(p->n_batches, 2);
    CHECK_EQ_INT(last_seq_of(f.s, 1), 3);
    CHECK_EQ_INT(p->last_timestamp, 30);
    CHECK_EQ_INT(pstate_get(f.s, 2)->txn_first_offset, 6);

    pstate_truncate(f.s, 5);
    CHECK(pstate_get(f.s, 3) == NULL); /* only had offset 5 */
    p = pstate_get(f.s, 2);
    REQUIRE(p != NULL);
    CHECK_EQ_INT(p->n_batches, 1);
    CHECK_EQ_INT(p->txn_first_offset, -1);
    CHECK_EQ_INT(check1(f.s, 2, 0, 1, 1), 0); /* the truncated batch may be sent again */
    CHECK_EQ_INT(check1(f.s, 1, 0, 4, 3), 0);

    pstate_truncate(f.s, 0);
    pstate_producers(f.s, &n);
    CHECK_EQ_INT(n, 0);
    pstate_free(f.s);
}

/* ---- snapshots ---------------------------------------------------------------------------- */

/* A state with every field set to something distinct, several producers out of id order. */
static void fill(struct fake_log *f)
{
    struct record_batch b;
    struct pstate_producer *p;

    fake_init(f);
    for (int32_t i = 0; i < 7; i++)
        produce1(f, 500, 3, 2 * i, 2);
    produce1(f, 20, 1, 0, 1);
    b = batch(77, 9, 0, 4);
    b.attributes = RECORD_ATTR_TRANSACTIONAL;
    produce(f, &b, NULL);
    p = pstate_int_upsert(f->s, 77);
    p->coordinator_epoch = 12;
    p->last_timestamp = -5;
    f->now_ms = 123456789012;
    produce1(f, 4, 32767, 0, 3);
}

TEST(pstate_snapshot_round_trip)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    struct fake_log f;
    struct pstate *t = pstate_new();
    int64_t off = 0;
    size_t n;

    REQUIRE(dir != NULL);
    fill(&f);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, f.end), 0);
    CHECK(file_exists(dir, "00000000000000000022.snapshot"));
    CHECK_EQ_INT(count_files(dir), 1); /* no temporary file left */
    REQUIRE(pstate_snapshot_load(t, &tsys, dir, f.end, &off) == 0);
    CHECK_EQ_INT(off, 22);
    CHECK(same_state(f.s, t));
    pstate_producers(t, &n);
    CHECK_EQ_INT(n, 4);
    CHECK_EQ_INT(pstate_get(t, 77)->coordinator_epoch, 12);
    CHECK_EQ_INT(pstate_get(t, 77)->txn_first_offset, 15);
    CHECK_EQ_INT(pstate_get(t, 4)->epoch, 32767);
    CHECK_EQ_INT(pstate_get(t, 4)->last_update_ms, 123456789012);
    /* The loaded state keeps working: duplicates and sequences as before. */
    CHECK_EQ_INT(check1(t, 500, 3, 12, 2), ERR_DUPLICATE_SEQUENCE_NUMBER);
    CHECK_EQ_INT(check1(t, 500, 3, 14, 1), 0);
    pstate_free(f.s);
    pstate_free(t);
    remove_dir(dir);
}

TEST(pstate_snapshot_empty_state_and_missing_dir)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    struct fake_log f;
    int64_t off = 0;
    size_t n;

    REQUIRE(dir != NULL);
    fake_init(&f);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 0), 0);
    REQUIRE(produce1(&f, 1, 0, 0, 1) == 0);
    CHECK_EQ_INT(pstate_snapshot_load(f.s, &tsys, dir, 0, &off), 0);
    CHECK_EQ_INT(off, 0);
    pstate_producers(f.s, &n);
    CHECK_EQ_INT(n, 0);
    remove_dir(dir);

    /* No directory: nothing usable, state emptied. */
    REQUIRE(produce1(&f, 1, 0, 0, 1) == 0);
    CHECK_EQ_INT(pstate_snapshot_load(f.s, &tsys, dir, 100, &off), 0);
    CHECK_EQ_INT(off, -1);
    pstate_producers(f.s, &n);
    CHECK_EQ_INT(n, 0);
    fprintf(stderr, "    (one ERROR line expected)\n");
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 5), ERR_IO);
    CHECK_EQ_INT(errno, ENOENT);
    CHECK_EQ_INT(pstate_snapshot_prune(&tsys, dir, 1), 0);
    pstate_free(f.s);
}

TEST(pstate_snapshot_picks_newest_within_log_and_deletes_later)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    struct fake_log f;
    struct pstate *at[4], *t = pstate_new();
    int64_t offs[4], off;

    REQUIRE(dir != NULL);
    fake_init(&f);
    for (int k = 0; k < 4; k++) {
        REQUIRE(produce1(&f, 1, 0, k * 10, 10) == 0);
        offs[k] = f.end; /* 10, 20, 30, 40 */
        CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, f.end), 0);
        at[k] = pstate_new();
        CHECK_EQ_INT(pstate_snapshot_load(at[k], &tsys, dir, f.end, &off), 0);
        CHECK_EQ_INT(off, offs[k]);
    }
    /* The log was cut back to 25 by recovery: the snapshot at 20 is used; 30, 40 deleted. */
    CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, 25, &off), 0);
    CHECK_EQ_INT(off, 20);
    CHECK(same_state(t, at[1]));
    CHECK(file_exists(dir, "00000000000000000010.snapshot"));
    CHECK(file_exists(dir, "00000000000000000020.snapshot"));
    CHECK(!file_exists(dir, "00000000000000000030.snapshot"));
    CHECK(!file_exists(dir, "00000000000000000040.snapshot"));
    /* A snapshot exactly at max_offset is usable. */
    CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, 10, &off), 0);
    CHECK_EQ_INT(off, 10);
    CHECK(same_state(t, at[0]));
    CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, 9, &off), 0);
    CHECK_EQ_INT(off, -1);
    CHECK_EQ_INT(count_files(dir), 0);
    for (int k = 0; k < 4; k++)
        pstate_free(at[k]);
    pstate_free(t);
    pstate_free(f.s);
    remove_dir(dir);
}

TEST(pstate_snapshot_corrupt_newest_falls_back)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    struct fake_log f;
    struct pstate *old = pstate_new(), *t = pstate_new();
    int64_t off;

    REQUIRE(dir != NULL);
    fill(&f);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 100), 0);
    CHECK_EQ_INT(pstate_snapshot_load(old, &tsys, dir, 100, &off), 0);
    REQUIRE(produce1(&f, 20, 1, 1, 1) == 0);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 200), 0);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 300), 0);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 400), 0);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 500), 0);
    damage(dir, "00000000000000000500.snapshot", -3, false); /* a flipped byte: CRC */
    damage(dir, "00000000000000000400.snapshot", -1, true);  /* torn tail: CRC */
    damage(dir, "00000000000000000300.snapshot", 1, false);  /* version */
    damage(dir, "00000000000000000200.snapshot", 4, true);   /* shorter than a header */
    fprintf(stderr, "    (four WARN lines expected)\n");
    CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, 1000, &off), 0);
    CHECK_EQ_INT(off, 100);
    CHECK(same_state(t, old));
    CHECK_EQ_INT(count_files(dir), 1);
    pstate_free(old);
    pstate_free(t);
    pstate_free(f.s);
    remove_dir(dir);
}

TEST(pstate_snapshot_all_corrupt_leaves_state_empty)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    struct fake_log f;
    int64_t off;
    size_t n;

    REQUIRE(dir != NULL);
    fill(&f);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 7), 0);
    damage(dir, "00000000000000000007.snapshot", 8, false); /* the count: CRC catches it */
    CHECK_EQ_INT(pstate_snapshot_load(f.s, &tsys, dir, 7, &off), 0);
    CHECK_EQ_INT(off, -1);
    pstate_producers(f.s, &n);
    CHECK_EQ_INT(n, 0);
    pstate_free(f.s);
    remove_dir(dir);
}

TEST(pstate_snapshot_ignores_other_files_and_removes_temporaries)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf), path[PATH_MAX];
    const char *others[] = {"00000000000000000000.index", "123.snapshot",
                            "0000000000000000000x.snapshot", "00000000000000000050.snapshotx",
                            "99999999999999999999.snapshot"};
    struct fake_log f;
    int64_t off;

    REQUIRE(dir != NULL);
    fill(&f);
    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, others[i]);
        close(open(path, O_WRONLY | O_CREAT, 0644));
    }
    snprintf(path, sizeof path, "%s/00000000000000000060.snapshot.tmp", dir);
    close(open(path, O_WRONLY | O_CREAT, 0644));
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 50), 0);
    CHECK_EQ_INT(pstate_snapshot_load(f.s, &tsys, dir, 1000, &off), 0);
    CHECK_EQ_INT(off, 50);
    CHECK(!file_exists(dir, "00000000000000000060.snapshot.tmp"));
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        CHECK(file_exists(dir, others[i]));
    CHECK_EQ_INT(pstate_snapshot_prune(&tsys, dir, 0), 1);
    CHECK_EQ_INT(count_files(dir), 5);
    pstate_free(f.s);
    remove_dir(dir);
}

TEST(pstate_snapshot_prune)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    struct fake_log f;
    int64_t off;

    REQUIRE(dir != NULL);
    fill(&f);
    /* Offsets past 10 digits of padding, written out of order: numeric, not name, order. */
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 9), 0);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 12345678901234), 0);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 100), 0);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 2000), 0);
    CHECK_EQ_INT(pstate_snapshot_prune(&tsys, dir, 2), 2);
    CHECK(file_exists(dir, "00000000000000002000.snapshot"));
    CHECK(file_exists(dir, "00000012345678901234.snapshot"));
    CHECK_EQ_INT(count_files(dir), 2);
    CHECK_EQ_INT(pstate_snapshot_prune(&tsys, dir, 2), 0);
    CHECK_EQ_INT(pstate_snapshot_prune(&tsys, dir, 1), 1);
    CHECK_EQ_INT(pstate_snapshot_load(f.s, &tsys, dir, INT64_MAX, &off), 0);
    CHECK_EQ_INT(off, 12345678901234);
    pstate_free(f.s);
    remove_dir(dir);
}

/* Rewrites dir/name with its bytes edited by `edit` (which may change the length) and the
 * CRC recomputed, so that only the structural checks can reject it. */
static void rewrite_with_crc(const char *dir, const char *name,
                             size_t (*edit)(uint8_t *buf, size_t len))
{
    char path[PATH_MAX];
    uint8_t buf[4096];
    ssize_t len;
    uint32_t crc;
    int fd;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    fd = open(path, O_RDWR);
    if (fd < 0)
        return;
    len = pread(fd, buf, sizeof buf - 64, 0);
    if (len >= 10) {
        len = (ssize_t)edit(buf, (size_t)len);
        crc = record_crc32c(0, buf + 6, (size_t)len - 6);
        buf[2] = (uint8_t)(crc >> 24), buf[3] = (uint8_t)(crc >> 16);
        buf[4] = (uint8_t)(crc >> 8), buf[5] = (uint8_t)crc;
        if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)len, 0) != len)
            harness_fail(__FILE__, __LINE__, "rewrite");
    }
    close(fd);
}

/* The state written below: producer 1 with one batch, producer 2 with none. */
static size_t edit_count_up(uint8_t *b, size_t len)
{
    b[9]++; /* one producer more than there are */
    return len;
}

static size_t edit_batches_6(uint8_t *b, size_t len)
{
    b[10 + 41] = 6; /* first producer's batch count */
    return len;
}

static size_t edit_batches_2(uint8_t *b, size_t len)
{
    b[10 + 41] = 2; /* more batches than the file holds */
    return len;
}

static size_t edit_trailing(uint8_t *b, size_t len)
{
    b[len] = 0;
    return len + 1;
}

static size_t edit_same_id(uint8_t *b, size_t len)
{
    b[10 + 74 + 7] = 1; /* second producer's id (after 42 + 32 bytes) = the first's */
    return len;
}

/* The window's order and bounds (the snapshot is as of offset 3; producer 1's one batch holds
 * offset 0): a batch past the snapshot's offset, a batch ending before it starts, a second
 * batch that does not follow the first, an ongoing transaction past the snapshot's offset. */
static size_t edit_batch_past_offset(uint8_t *b, size_t len)
{
    b[10 + 42 + 16 + 7] = 3; /* last offset = the snapshot's offset */
    return len;
}

static size_t edit_batch_reversed(uint8_t *b, size_t len)
{
    b[10 + 42 + 8 + 7] = 1; /* first offset 1 > last offset 0 */
    return len;
}

static size_t edit_batches_out_of_order(uint8_t *b, size_t len)
{
    memmove(b + 84 + 32, b + 84, len - 84); /* room for a second batch of producer 1 */
    memcpy(b + 84, b + 52, 32);             /* the same offsets again */
    b[10 + 41] = 2;
    return len + 32;
}

static size_t edit_txn_past_offset(uint8_t *b, size_t len)
{
    memset(b + 10 + 14, 0, 8);
    b[10 + 14 + 7] = 3; /* ongoing transaction from offset 3 */
    return len;
}

static size_t edit_nothing(uint8_t *b, size_t len)
{
    (void)b;
    return len;
}

TEST(pstate_snapshot_structure_checked_beyond_crc)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    size_t (*edits[])(uint8_t *, size_t) = {
        edit_count_up,       edit_batches_6,         edit_batches_2,      edit_trailing,
        edit_same_id,        edit_batch_past_offset, edit_batch_reversed, edit_batches_out_of_order,
        edit_txn_past_offset};
    struct fake_log f;
    struct pstate *t = pstate_new();
    struct pstate_producer *p;
    int64_t off;

    REQUIRE(dir != NULL);
    fake_init(&f);
    REQUIRE(produce1(&f, 1, 0, 0, 1) == 0);
    p = pstate_int_upsert(f.s, 2);
    REQUIRE(p != NULL);
    fprintf(stderr, "    (nine WARN lines expected)\n");
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 3), 0);
        rewrite_with_crc(dir, "00000000000000000003.snapshot", edits[i]);
        CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, 3, &off), 0);
        CHECK_EQ_INT(off, -1);
        CHECK_EQ_INT(count_files(dir), 0);
    }
    /* The same rewrite without an edit loads: the helper itself is sound. */
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 3), 0);
    rewrite_with_crc(dir, "00000000000000000003.snapshot", edit_nothing);
    CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, 3, &off), 0);
    CHECK_EQ_INT(off, 3);
    CHECK(same_state(t, f.s));
    pstate_free(t);
    pstate_free(f.s);
    remove_dir(dir);
}

/* ---- injected failures -------------------------------------------------------------------- */

static int fail_fsync(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

static ssize_t short_write(int fd, const void *buf, size_t len, off_t off)
{
    return pwrite(fd, buf, len > 7 ? 7 : len, off); /* at most 7 bytes a call */
}

static ssize_t enospc_write(int fd, const void *buf, size_t len, off_t off)
{
    (void)fd, (void)buf, (void)len, (void)off;
    errno = ENOSPC;
    return -1;
}

static int calls;
static ssize_t eintr_read(int fd, void *buf, size_t len, off_t off)
{
    if (calls++ % 2 == 0) {
        errno = EINTR;
        return -1;
    }
    return pread(fd, buf, len > 5 ? 5 : len, off);
}

/* The error path closes and unlinks after the failure; these change errno as a real close
 * or unlink may, so a reason read back from errno afterwards would be theirs. */
static int clobbering_close(int fd)
{
    int rc = close(fd);
    errno = EBADF;
    return rc;
}

static int clobbering_unlink(const char *path)
{
    int rc = unlink(path);
    errno = EPERM;
    return rc;
}

/* stderr goes to a temporary file between capture_begin and capture_end, which returns what
 * was written (static buffer). */
static FILE *cap_file;
static int cap_saved = -1;

static void capture_begin(void)
{
    fflush(stderr);
    cap_file = tmpfile();
    cap_saved = dup(STDERR_FILENO);
    if (cap_file && cap_saved >= 0)
        dup2(fileno(cap_file), STDERR_FILENO);
}

static const char *capture_end(void)
{
    static char out[4096];
    size_t n = 0;

    fflush(stderr);
    if (cap_saved >= 0) {
        dup2(cap_saved, STDERR_FILENO);
        close(cap_saved);
        cap_saved = -1;
    }
    if (cap_file) {
        rewind(cap_file);
        n = fread(out, 1, sizeof out - 1, cap_file);
        fclose(cap_file);
        cap_file = NULL;
    }
    out[n] = '\0';
    return out;
}

TEST(pstate_snapshot_write_failures)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    struct fake_log f;
    struct pstate *t = pstate_new();
    int64_t off;
    const char *out;

    REQUIRE(dir != NULL);
    fill(&f);
    /* The failed call is logged with its own errno, taken at the call (base/err.h), even
     * though the clean-up after it changes errno. */
    tsys.fsync = fail_fsync;
    tsys.close = clobbering_close;
    tsys.unlink = clobbering_unlink;
    capture_begin();
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 10), ERR_IO);
    out = capture_end();
    CHECK(strstr(out, "fsync") != NULL);
    CHECK(strstr(out, strerror(EIO)) != NULL);
    CHECK(strstr(out, strerror(EBADF)) == NULL);
    tsys = *sysio_default();
    CHECK_EQ_INT(count_files(dir), 0); /* the temporary file is gone */

    tsys.pwrite = enospc_write;
    tsys.close = clobbering_close;
    tsys.unlink = clobbering_unlink;
    capture_begin();
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, 10), ERR_IO);
    out = capture_end();
    CHECK(strstr(out, strerror(ENOSPC)) != NULL);
    CHECK(strstr(out, strerror(EPERM)) == NULL);
    tsys = *sysio_default();
    CHECK_EQ_INT(count_files(dir), 0);

    /* Short writes and interrupted short reads still make a whole, loadable file. */
    tsys.pwrite = short_write;
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, f.end), 0);
    tsys = *sysio_default();
    tsys.pread = eintr_read;
    calls = 0;
    CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, f.end, &off), 0);
    tsys = *sysio_default();
    CHECK_EQ_INT(off, f.end);
    CHECK(same_state(t, f.s));
    pstate_free(t);
    pstate_free(f.s);
    remove_dir(dir);
}

/* A snapshot whose rename fails (the last step before it counts) returns ERR_IO with one
 * ERROR line naming the rename and its reason, leaves no temporary file, and the partition
 * falls back to the newest snapshot that was written whole: the one before. */
static int eio_rename(const char *from, const char *to)
{
    (void)from, (void)to;
    errno = EIO;
    return -1;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

TEST(pstate_snapshot_rename_failure_keeps_the_previous_snapshot)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    struct fake_log f;
    struct pstate *before = pstate_new(), *t = pstate_new();
    int64_t off = -1, first;
    const char *out;

    REQUIRE(dir != NULL && before != NULL && t != NULL);
    fill(&f);
    first = f.end;
    REQUIRE(pstate_snapshot_write(f.s, &tsys, dir, first) == 0);
    REQUIRE(pstate_snapshot_load(before, &tsys, dir, first, &off) == 0 && off == first);
    REQUIRE(produce1(&f, 500, 3, 14, 2) == 0);
    REQUIRE(produce1(&f, 21, 0, 0, 1) == 0);

    tsys.rename = eio_rename;
    tsys.unlink = clobbering_unlink;
    capture_begin();
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, f.end), ERR_IO);
    out = capture_end();
    CHECK_EQ_INT(count_lines(out), 1);
    CHECK(strstr(out, "ERROR") != NULL && strstr(out, "rename") != NULL);
    CHECK(strstr(out, strerror(EIO)) != NULL && strstr(out, strerror(EPERM)) == NULL);
    capture_begin();
    CHECK_EQ_INT(pstate_snapshot_write_nosync(f.s, &tsys, dir, f.end), ERR_IO);
    out = capture_end();
    CHECK_EQ_INT(count_lines(out), 1);
    CHECK(strstr(out, "rename") != NULL);
    tsys = *sysio_default();

    CHECK_EQ_INT(count_files(dir), 1); /* the first snapshot, no temporary file */
    CHECK(file_exists(dir, "00000000000000000022.snapshot"));
    CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, f.end, &off), 0);
    CHECK_EQ_INT(off, first);
    CHECK(same_state(t, before));
    CHECK(pstate_get(t, 21) == NULL); /* replayed from the log after `first`, not from here */
    pstate_free(before);
    pstate_free(t);
    pstate_free(f.s);
    remove_dir(dir);
}

/* The two halves used off the event loop (write into the page cache on the loop, fsync on
 * the pool) make the same file as pstate_snapshot_write, byte for byte; the first calls no
 * fsync at all, the second fsyncs the file and its directory. */
static size_t read_all(const char *dir, const char *name, uint8_t *buf, size_t cap)
{
    char path[512];
    FILE *fp;
    size_t n;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fp = fopen(path, "rb");
    if (fp == NULL)
        return 0;
    n = fread(buf, 1, cap, fp);
    fclose(fp);
    return n;
}

static int fsyncs;
static int count_fsync(int fd)
{
    fsyncs++;
    return fsync(fd);
}

TEST(pstate_snapshot_write_nosync_then_sync)
{
    char abuf[64], bbuf[64], *a = make_dir(abuf, sizeof abuf), *b = make_dir(bbuf, sizeof bbuf);
    static uint8_t x[8192], y[8192];
    struct fake_log f;
    struct pstate *t = pstate_new();
    size_t nx, ny;
    int64_t off = 0;

    REQUIRE(a != NULL && b != NULL);
    fill(&f);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, a, f.end), 0);
    fsyncs = 0;
    tsys.fsync = count_fsync;
    CHECK_EQ_INT(pstate_snapshot_write_nosync(f.s, &tsys, b, f.end), 0);
    CHECK_EQ_INT(fsyncs, 0);
    CHECK_EQ_INT(pstate_snapshot_sync(&tsys, b, f.end), 0);
    CHECK_EQ_INT(fsyncs, 2); /* the file, then its directory */
    tsys = *sysio_default();
    nx = read_all(a, "00000000000000000022.snapshot", x, sizeof x);
    ny = read_all(b, "00000000000000000022.snapshot", y, sizeof y);
    CHECK(nx > 10);
    CHECK_EQ_INT(nx, ny);
    CHECK(memcmp(x, y, nx) == 0);
    CHECK_EQ_INT(count_files(b), 1); /* no temporary file left */
    REQUIRE(pstate_snapshot_load(t, &tsys, b, 22, &off) == 0);
    CHECK_EQ_INT(off, 22);
    CHECK(same_state(f.s, t));

    fprintf(stderr, "    (two ERROR lines expected)\n");
    tsys.fsync = fail_fsync;
    CHECK_EQ_INT(pstate_snapshot_sync(&tsys, b, 22), ERR_IO);
    tsys = *sysio_default();
    CHECK_EQ_INT(pstate_snapshot_sync(&tsys, b, 30), ERR_IO); /* no such snapshot */
    pstate_free(t);
    pstate_free(f.s);
    remove_dir(a);
    remove_dir(b);
}

TEST(pstate_snapshot_large_table)
{
    char dirbuf[64], *dir = make_dir(dirbuf, sizeof dirbuf);
    struct fake_log f;
    struct pstate *t = pstate_new();
    int64_t off;

    /* More than one 64 KiB write buffer's worth of producers. */
    REQUIRE(dir != NULL);
    fake_init(&f);
    for (int64_t id = 3000; id > 0; id--)
        for (int32_t s = 0; s < (int32_t)(id % 7); s++)
            REQUIRE(produce1(&f, id, (int16_t)(id % 5), s * (1 + (int32_t)(id % 3)),
                             1 + (int32_t)(id % 3)) == 0);
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, f.end), 0);
    CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, f.end, &off), 0);
    CHECK_EQ_INT(off, f.end);
    CHECK(same_state(t, f.s));
    pstate_free(t);
    pstate_free(f.s);
    remove_dir(dir);
}

/* ---- transactions: the last stable offset, markers, verification (issue 10) --------------- */

static int txn1(struct fake_log *f, int64_t pid, int16_t epoch, int32_t seq, int32_t n)
{
    struct record_batch b = batch(pid, epoch, seq, n);
    b.attributes = RECORD_ATTR_TRANSACTIONAL;
    return produce(f, &b, NULL);
}

/* Appends a marker at the log end; *end receives what it closed. */
static int marker1(struct fake_log *f, int64_t pid, int16_t epoch, int32_t coord,
                   struct pstate_txn_end *end)
{
    struct record_batch m = batch(pid, epoch, -1, 1);
    int rc;

    m.attributes = RECORD_ATTR_TRANSACTIONAL | RECORD_ATTR_CONTROL;
    rc = pstate_check_marker(f->s, pid, epoch, coord);
    if (rc != 0)
        return rc;
    m.base_offset = f->end++;
    return pstate_update_marker(f->s, &m, coord, f->now_ms, end);
}

TEST(pstate_first_unstable_offset_moves_with_interleaved_transactions)
{
    struct fake_log f;
    struct pstate_txn_end end;

    fake_init(&f);
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), -1);
    REQUIRE(produce1(&f, 1, 0, 0, 1) == 0); /* 0: plain idempotent */
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), -1);
    REQUIRE(txn1(&f, 2, 0, 0, 2) == 0); /* 1..2: producer 2 opens */
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), 1);
    REQUIRE(txn1(&f, 3, 0, 0, 1) == 0); /* 3: producer 3 opens */
    REQUIRE(txn1(&f, 2, 0, 2, 1) == 0); /* 4: producer 2 goes on */
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), 1);
    /* Producer 2 commits (5): producer 3's transaction holds the LSO at 3. */
    REQUIRE(marker1(&f, 2, 0, 0, &end) == 0);
    CHECK_EQ_INT(end.first_offset, 1);
    CHECK_EQ_INT(end.last_stable_offset, 3);
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), 3);
    REQUIRE(txn1(&f, 2, 0, 3, 1) == 0); /* 6: producer 2's next transaction */
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), 3);
    /* Producer 3 aborts (7): the LSO is producer 2's new first offset. */
    REQUIRE(marker1(&f, 3, 0, 0, &end) == 0);
    CHECK_EQ_INT(end.first_offset, 3);
    CHECK_EQ_INT(end.last_stable_offset, 6);
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), 6);
    REQUIRE(marker1(&f, 2, 0, 0, &end) == 0); /* 8 */
    CHECK_EQ_INT(end.last_stable_offset, 9);  /* nothing open: after the marker */
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), -1);
    /* A marker with no ongoing transaction is accepted and closes nothing. */
    REQUIRE(marker1(&f, 2, 0, 0, &end) == 0);
    CHECK_EQ_INT(end.first_offset, -1);
    /* Truncation below an open transaction forgets it. */
    REQUIRE(txn1(&f, 3, 0, 1, 1) == 0); /* 10 */
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), 10);
    pstate_truncate(f.s, 10);
    CHECK_EQ_INT(pstate_first_unstable_offset(f.s), -1);
    pstate_free(f.s);
}

TEST(pstate_marker_fencing_by_epochs)
{
    struct fake_log f;

    fake_init(&f);
    REQUIRE(txn1(&f, 5, 3, 0, 1) == 0);
    REQUIRE(marker1(&f, 5, 3, 7, NULL) == 0);
    CHECK_EQ_INT(pstate_get(f.s, 5)->coordinator_epoch, 7);
    /* An older coordinator: fenced; an older producer epoch: INVALID_PRODUCER_EPOCH first. */
    CHECK_EQ_INT(pstate_check_marker(f.s, 5, 3, 6), ERR_TRANSACTION_COORDINATOR_FENCED);
    CHECK_EQ_INT(pstate_check_marker(f.s, 5, 2, 6), ERR_INVALID_PRODUCER_EPOCH);
    CHECK_EQ_INT(pstate_check_marker(f.s, 5, 3, 7), 0);
    CHECK_EQ_INT(pstate_check_marker(f.s, 5, 4, 8), 0);
    CHECK_EQ_INT(pstate_check_marker(f.s, 99, 0, -1), 0); /* unknown producer */
    /* A plain batch while a transaction is open is refused (Kafka's INVALID_TXN_STATE). */
    REQUIRE(txn1(&f, 5, 3, 1, 1) == 0);
    CHECK_EQ_INT(check1(f.s, 5, 3, 2, 1), ERR_INVALID_TXN_STATE);
    pstate_free(f.s);
}

TEST(pstate_verification_cache_until_marker)
{
    struct fake_log f;
    uint32_t t1, t2;

    fake_init(&f);
    CHECK(!pstate_txn_verified(f.s, 4, 0));
    t1 = pstate_verify_begin(f.s, 4, 0);
    REQUIRE(t1 != 0);
    CHECK(!pstate_txn_verified(f.s, 4, 0));
    CHECK(pstate_verify_done(f.s, 4, 0, t1));
    CHECK(pstate_txn_verified(f.s, 4, 0));
    CHECK(!pstate_txn_verified(f.s, 4, 1)); /* per epoch */
    REQUIRE(txn1(&f, 4, 0, 0, 1) == 0);
    CHECK(pstate_txn_verified(f.s, 4, 0)); /* open here: no new check */
    REQUIRE(marker1(&f, 4, 0, 0, NULL) == 0);
    CHECK(!pstate_txn_verified(f.s, 4, 0)); /* the marker ends it */
    /* A marker while a check is out voids its answer (the verification guard). */
    t2 = pstate_verify_begin(f.s, 4, 0);
    REQUIRE(marker1(&f, 4, 0, 0, NULL) == 0);
    CHECK(!pstate_verify_done(f.s, 4, 0, t2));
    CHECK(!pstate_txn_verified(f.s, 4, 0));
    /* Pipelined checks of one epoch share the token (both answers count); a check of
     * another epoch replaces it. */
    t1 = pstate_verify_begin(f.s, 4, 0);
    t2 = pstate_verify_begin(f.s, 4, 0);
    CHECK(t1 == t2);
    CHECK(pstate_verify_done(f.s, 4, 0, t1));
    CHECK(pstate_verify_done(f.s, 4, 0, t2));
    t2 = pstate_verify_begin(f.s, 4, 1);
    CHECK(t1 != t2);
    CHECK(!pstate_verify_done(f.s, 4, 0, t1));
    CHECK(pstate_verify_done(f.s, 4, 1, t2));
    pstate_free(f.s);
}

TEST(pstate_snapshot_keeps_ongoing_transactions_and_lso)
{
    struct fake_log f;
    char dir[64];
    struct pstate *t = pstate_new();
    int64_t off;

    REQUIRE(t != NULL);
    REQUIRE(make_dir(dir, sizeof dir) != NULL);
    fake_init(&f);
    REQUIRE(txn1(&f, 1, 0, 0, 2) == 0);       /* 0..1 */
    REQUIRE(txn1(&f, 2, 0, 0, 1) == 0);       /* 2 */
    REQUIRE(marker1(&f, 1, 0, 4, NULL) == 0); /* 3 */
    REQUIRE(txn1(&f, 1, 0, 2, 1) == 0);       /* 4 */
    CHECK_EQ_INT(pstate_snapshot_write(f.s, &tsys, dir, f.end), 0);
    CHECK_EQ_INT(pstate_snapshot_load(t, &tsys, dir, f.end, &off), 0);
    CHECK_EQ_INT(off, f.end);
    CHECK_EQ_INT(pstate_first_unstable_offset(t), 2);
    CHECK_EQ_INT(pstate_get(t, 1)->txn_first_offset, 4);
    CHECK_EQ_INT(pstate_get(t, 1)->coordinator_epoch, 4);
    CHECK_EQ_INT(pstate_get(t, 2)->txn_first_offset, 2);
    pstate_free(t);
    pstate_free(f.s);
    remove_dir(dir);
}

/* Regression (pipelined Produce under KIP-890): batches parked for verification are counted
 * per producer, so a later batch parks behind them instead of overtaking them once the
 * partition is verified. */
TEST(pstate_verify_parked_counts_per_producer)
{
    struct fake_log f;

    fake_init(&f);
    CHECK_EQ_INT(pstate_verify_parked(f.s, 9), 0);
    CHECK(pstate_verify_park(f.s, 9, 1)); /* creates the producer */
    CHECK(pstate_verify_park(f.s, 9, 1));
    CHECK_EQ_INT(pstate_verify_parked(f.s, 9), 2);
    CHECK_EQ_INT(pstate_verify_parked(f.s, 8), 0);
    CHECK(pstate_verify_park(f.s, 9, -1));
    CHECK_EQ_INT(pstate_verify_parked(f.s, 9), 1);
    CHECK(pstate_verify_park(f.s, 9, -1));
    CHECK(pstate_verify_park(f.s, 9, -1)); /* never below zero */
    CHECK_EQ_INT(pstate_verify_parked(f.s, 9), 0);
    CHECK(pstate_verify_park(f.s, 7, -1)); /* unknown producer: nothing to do */
    CHECK_EQ_INT(pstate_verify_parked(f.s, 7), 0);
    pstate_free(f.s);
}
