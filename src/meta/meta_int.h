/* SPDX-License-Identifier: Apache-2.0 */
/* meta internals shared by records.c (batch format), image.c (image and snapshot format) and
 * quorum.c (raft glue): big-endian writer and bounds-checked reader, batch decoding. */
#ifndef TALLY_META_INT_H
#define TALLY_META_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "meta/meta.h"

struct arena;

/* Every string in the meta formats: a 4-byte big-endian length, then that many bytes without
 * a terminator. This length marks a NULL string. */
#define META_STR_NULL 0xFFFFFFFFu

/* ---- writer: a growable buffer whose first allocation failure sticks in `oom`, so encoders
 * write straight through and check once at the end. -------------------------------------- */

struct meta_wbuf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
};

static inline uint8_t *meta_w_reserve(struct meta_wbuf *w, size_t n)
{
    if (w->oom)
        return NULL;
    if (w->cap - w->len < n) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap - w->len < n) {
            if (cap > SIZE_MAX / 2)
                goto oom;
            cap *= 2;
        }
        uint8_t *p = realloc(w->p, cap);
        if (p == NULL)
            goto oom;
        w->p = p;
        w->cap = cap;
    }
    w->len += n;
    return w->p + w->len - n;
oom:
    w->oom = true;
    return NULL;
}

static inline void meta_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void meta_w_u8(struct meta_wbuf *w, uint8_t v)
{
    uint8_t *p = meta_w_reserve(w, 1);
    if (p)
        p[0] = v;
}

static inline void meta_w_u16(struct meta_wbuf *w, uint16_t v)
{
    uint8_t *p = meta_w_reserve(w, 2);
    if (p) {
        p[0] = (uint8_t)(v >> 8);
        p[1] = (uint8_t)v;
    }
}

static inline void meta_w_u32(struct meta_wbuf *w, uint32_t v)
{
    uint8_t *p = meta_w_reserve(w, 4);
    if (p)
        meta_put_u32(p, v);
}

static inline void meta_w_i32(struct meta_wbuf *w, int32_t v)
{
    meta_w_u32(w, (uint32_t)v);
}

static inline void meta_w_i64(struct meta_wbuf *w, int64_t v)
{
    meta_w_u32(w, (uint32_t)((uint64_t)v >> 32));
    meta_w_u32(w, (uint32_t)(uint64_t)v);
}

static inline void meta_w_bytes(struct meta_wbuf *w, const void *b, size_t n)
{
    uint8_t *p = meta_w_reserve(w, n);
    if (p && n)
        memcpy(p, b, n);
}

/* A string longer than the format can carry marks the buffer failed, like an allocation. */
static inline void meta_w_str(struct meta_wbuf *w, const char *s)
{
    size_t n;
    if (s == NULL) {
        meta_w_u32(w, META_STR_NULL);
        return;
    }
    n = strlen(s);
    if (n >= META_STR_NULL) {
        w->oom = true;
        return;
    }
    meta_w_u32(w, (uint32_t)n);
    meta_w_bytes(w, s, n);
}

/* ---- reader: every read checks the bounds; the first failure sticks in `bad` and later
 * reads return zeroes, so a decoder checks `bad` once per record. ---------------------- */

struct meta_rbuf {
    const uint8_t *p;
    size_t len, off;
    bool bad;
};

static inline const uint8_t *meta_r_take(struct meta_rbuf *r, size_t n)
{
    if (r->bad || r->len - r->off < n) {
        r->bad = true;
        return NULL;
    }
    r->off += n;
    return r->p + r->off - n;
}

static inline size_t meta_r_left(const struct meta_rbuf *r)
{
    return r->bad ? 0 : r->len - r->off;
}

static inline uint8_t meta_r_u8(struct meta_rbuf *r)
{
    const uint8_t *p = meta_r_take(r, 1);
    return p ? p[0] : 0;
}

static inline uint16_t meta_r_u16(struct meta_rbuf *r)
{
    const uint8_t *p = meta_r_take(r, 2);
    return p ? (uint16_t)(p[0] << 8 | p[1]) : 0;
}

static inline uint32_t meta_r_u32(struct meta_rbuf *r)
{
    const uint8_t *p = meta_r_take(r, 4);
    if (p == NULL)
        return 0;
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline int32_t meta_r_i32(struct meta_rbuf *r)
{
    return (int32_t)meta_r_u32(r);
}

static inline int64_t meta_r_i64(struct meta_rbuf *r)
{
    uint64_t hi = meta_r_u32(r);
    uint64_t lo = meta_r_u32(r);
    return (int64_t)(hi << 32 | lo);
}

static inline void meta_r_bytes(struct meta_rbuf *r, void *out, size_t n)
{
    const uint8_t *p = meta_r_take(r, n);
    if (p)
        memcpy(out, p, n);
    else
        memset(out, 0, n);
}

/* A string view into the buffer: *s = NULL for a NULL string. A string holding a NUL byte is
 * malformed, because every consumer treats these as C strings. */
static inline void meta_r_str(struct meta_rbuf *r, const char **s, size_t *n)
{
    uint32_t len = meta_r_u32(r);
    const uint8_t *p;
    *s = NULL;
    *n = 0;
    if (r->bad || len == META_STR_NULL)
        return;
    p = meta_r_take(r, len);
    if (p == NULL)
        return;
    if (memchr(p, '\0', len) != NULL) {
        r->bad = true;
        return;
    }
    *s = (const char *)p;
    *n = len;
}

/* ---- batches (records.c) ------------------------------------------------------------------ */

/* Decodes a batch into records whose strings and arrays live in *arena (caller frees it with
 * arena_free, also on error when non-NULL). Returns 0, ERR_PARSE or ERR_NOMEM. */
int meta_batch_decode(const uint8_t *buf, size_t len, struct arena **arena,
                      struct meta_record **recs, size_t *n);

/* ---- image internals (image.c) ----------------------------------------------------------- */

/* Records that describe the whole image (brokers with their fence and shutdown state,
 * topics, partitions, configs, producer-id blocks), for telling on_apply about a restored
 * snapshot: every broker as the record type that registered it (REGISTER_BROKER for epoch 0,
 * else REGISTER_BROKER2) then FENCE_BROKER / BROKER_CHANGE as its state differs from what
 * that record implies; every partition as PARTITION, or as PARTITION_CHANGE when it is
 * RECOVERING or under reassignment. They describe the image rather than rebuild it (a
 * REGISTER_BROKER2 applied elsewhere would get another epoch): a subscriber reads epochs and
 * offsets from the image. Borrowed pointers into the image; recs itself lives in *arena.
 * Returns 0 or ERR_NOMEM. */
int meta_image_records(const struct meta_image *img, struct arena **arena,
                       struct meta_record **recs, size_t *n);

/* ---- client quotas (quotas.c): the quota part of the image ------------------------------ */

/* The image's client-quota entities, sorted as meta_quotas says; an entity with no key set
 * is dropped. */
struct meta_quota_set {
    struct meta_quota *q;
    size_t n, cap;
};

void meta_quotas_free(struct meta_quota_set *qs);
/* Apply rule of a CLIENT_QUOTA record: a known key, a set value finite and > 0, a named part
 * not empty; else INVALID_REQUEST. */
int meta_quotas_validate(const struct meta_record *r);
/* Applies a validated CLIENT_QUOTA record. Returns 0 or ERR_NOMEM (the set unchanged). */
int meta_quotas_apply(struct meta_quota_set *qs, const struct meta_record *r);
/* The entity exactly, or NULL. */
const struct meta_quota *meta_quotas_find(const struct meta_quota_set *qs,
                                          const struct meta_quota_entity *e);
/* meta_quota_lookup on a set. */
bool meta_quotas_lookup(const struct meta_quota_set *qs, const char *user, const char *client_id,
                        int key, double *value);
/* How many CLIENT_QUOTA records meta_quotas_records writes (one per key set). */
size_t meta_quotas_count(const struct meta_quota_set *qs);
/* Writes them into out (room for meta_quotas_count), borrowing the set's strings. */
size_t meta_quotas_records(const struct meta_quota_set *qs, struct meta_record *out);
/* The snapshot part (image.c's layout comment) and its reader, which fills an empty set and
 * returns 0, ERR_PARSE or ERR_NOMEM (what was read so far stays for meta_quotas_free). */
void meta_quotas_write(struct meta_wbuf *w, const struct meta_quota_set *qs);
int meta_quotas_read(struct meta_rbuf *r, struct meta_quota_set *qs);

/* Counts a batch that never reached meta_image_apply (a malformed raft envelope), so the
 * offset still counts every batch. */
void meta_image_refuse(struct meta_image *img);

/* ---- ACL internals (acls.c) ---------------------------------------------------------- */

/* `acls`, or a static empty set when NULL (an image without ACLs has none allocated). */
const struct meta_acls *meta_acls_or_empty(const struct meta_acls *acls);
/* Validates recs[i] (ACL or REMOVE_ACL) against `acls` (may be NULL) as recs[0..i) leave it:
 * 0, INVALID_REQUEST, DUPLICATE_RESOURCE or RESOURCE_NOT_FOUND (meta.h's rules). */
int meta_acls_validate(const struct meta_acls *acls, const struct meta_record *recs, size_t i);
/* Applies a validated ACL / REMOVE_ACL record; *acls is created on the first entry. 0 or
 * ERR_NOMEM. */
int meta_acls_apply(struct meta_acls **acls, const struct meta_record *r);
/* Writes every entry as an ACL record into out[] (room for all of them, borrowed strings);
 * returns the count. */
size_t meta_acls_records(const struct meta_acls *acls, struct meta_record *out);
/* The snapshot section: u32 count A, A entries in id order, each as the ACL record body
 * (records.c). Read returns 0 and *out (NULL when A = 0), ERR_PARSE (malformed, unsorted,
 * an invalid entry) or ERR_NOMEM. */
void meta_acls_write(const struct meta_acls *acls, struct meta_wbuf *w);
int meta_acls_read(struct meta_rbuf *r, struct meta_acls **out);

#endif
