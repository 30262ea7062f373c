/* SPDX-License-Identifier: Apache-2.0 */
/* records: the metadata batch format, the payload of every raft command entry. One batch is
 * one proposal and applies atomically. Integers are big-endian; "str" is a 4-byte length
 * (0xFFFFFFFF = NULL) followed by that many bytes, no terminator, no NUL inside. */

/*
** Batch layout:
**   OFFSET  SIZE  FIELD
**        0     1  format version (1)
**        1     4  record count N
**        5     …  N records, each:
**                 OFFSET  SIZE  FIELD
**                      0     1  type (enum meta_record_type)
**                      1     4  body length L
**                      5     L  body, by type (must be consumed exactly):
**
**   REGISTER_BROKER  i32 id, i32 port, str host, str rack
**   FENCE_BROKER     i32 id, u8 fenced (0 or 1)
**   TOPIC            str name, 16 topic id
**   PARTITION        16 topic id, i32 partition, i32 leader, i32 leader epoch,
**                    i32 partition epoch, i32 n_replicas, n_replicas × i32,
**                    i32 n_isr, n_isr × i32
**   REMOVE_TOPIC     16 topic id
**   CONFIG           i8 resource type, str resource name, str key, str value (NULL = delete)
**   PRODUCER_IDS     i32 broker id, i64 first id, i32 size
**   REGISTER_BROKER2 i32 id, str rack, 16 incarnation, i32 n_listeners (>= 1), n_listeners ×
**                    (str name, str host, i32 port, i16 security protocol), i32 n_dirs,
**                    n_dirs × 16 directory id; the record's host and port are the first
**                    listener's
**   BROKER_CHANGE    i32 id, i64 broker epoch, i8 fenced, i8 shutting down (each -1 = unchanged,
**                    0 or 1)
**   PARTITION_CHANGE the PARTITION fields, then i8 leader recovery state (0 or 1),
**                    i32 n_adding, n_adding × i32, i32 n_removing, n_removing × i32,
**                    then, only when the ELR is not empty, i32 n_elr (>= 1), n_elr × i32
**   SCRAM            str user, i8 mechanism (1 SHA-256, 2 SHA-512), i32 iterations (0 =
**                    delete); when iterations > 0: i32 salt length S (1..64), S bytes salt,
**                    i32 key length K (32 or 64, the mechanism's), K bytes stored key,
**                    K bytes server key
**   ACL              16 id, i8 resource type, str resource name, i8 pattern type (3 LITERAL,
**                    4 PREFIXED), str principal, str host, i8 operation, i8 permission
**                    (2 DENY, 3 ALLOW): Kafka's AccessControlEntryRecord
**   REMOVE_ACL       16 id: Kafka's RemoveAccessControlEntryRecord
**   CLIENT_QUOTA     u8 part kinds (bit 0: user part, bit 1: client-id part; 1..3), str user,
**                    str client id (NULL: the default entity, or the part absent), i8 key
**                    (enum meta_quota_key), 8 value (IEEE 754 double bits, big-endian),
**                    u8 remove (0 or 1)
**
** Required strings (host, topic name, resource name, key, listener name) are never NULL. A
** reader that meets another version or an unknown record type rejects the batch (ERR_PARSE),
** so every node either applies a batch the same way or refuses it the same way. Types 8-10
** came later than 1-7 without a version change (and 11, SCRAM, 12-13, ACLs, and 14,
** CLIENT_QUOTA, later still): a batch holding none of them reads as it
** always did, and a reader that predates them refuses the batches that hold them. The ELR
** of PARTITION_CHANGE came later still, the same way: written only when not empty, so a
** change without one is the older body, and a reader that predates it refuses (the body is
** not consumed exactly) the changes that carry one.
*/
#include "meta/meta_int.h"

#include "base/arena.h"
#include "base/err.h"

#define META_BATCH_VERSION 1
#define META_BATCH_HEADER 5
#define META_RECORD_HEADER 5

/* Whether an array of `n` int32s is present when it must be. */
static bool i32s_ok(int32_t n, const int32_t *v)
{
    return n >= 0 && (n == 0 || v != NULL);
}

static void write_i32s(struct meta_wbuf *w, int32_t n, const int32_t *v)
{
    meta_w_i32(w, n);
    for (int32_t i = 0; i < n; i++)
        meta_w_i32(w, v[i]);
}

/* The fields PARTITION and PARTITION_CHANGE share. */
static int encode_partition(struct meta_wbuf *w, const struct meta_record *r)
{
    if (!i32s_ok(r->u.partition.n_replicas, r->u.partition.replicas) ||
        !i32s_ok(r->u.partition.n_isr, r->u.partition.isr))
        return ERR_INVALID_REQUEST;
    meta_w_bytes(w, r->u.partition.topic_id, 16);
    meta_w_i32(w, r->u.partition.partition);
    meta_w_i32(w, r->u.partition.leader);
    meta_w_i32(w, r->u.partition.leader_epoch);
    meta_w_i32(w, r->u.partition.partition_epoch);
    write_i32s(w, r->u.partition.n_replicas, r->u.partition.replicas);
    write_i32s(w, r->u.partition.n_isr, r->u.partition.isr);
    return 0;
}

static int encode_register2(struct meta_wbuf *w, const struct meta_record *r)
{
    if (r->u.broker.n_listeners < 1 || r->u.broker.listeners == NULL || r->u.broker.n_dirs < 0 ||
        (r->u.broker.n_dirs > 0 && r->u.broker.dirs == NULL))
        return ERR_INVALID_REQUEST;
    for (int32_t i = 0; i < r->u.broker.n_listeners; i++)
        if (r->u.broker.listeners[i].name == NULL || r->u.broker.listeners[i].host == NULL)
            return ERR_INVALID_REQUEST;
    meta_w_i32(w, r->u.broker.id);
    meta_w_str(w, r->u.broker.rack);
    meta_w_bytes(w, r->u.broker.incarnation, 16);
    meta_w_i32(w, r->u.broker.n_listeners);
    for (int32_t i = 0; i < r->u.broker.n_listeners; i++) {
        const struct meta_listener *l = &r->u.broker.listeners[i];
        meta_w_str(w, l->name);
        meta_w_str(w, l->host);
        meta_w_i32(w, l->port);
        meta_w_u16(w, (uint16_t)l->security_protocol);
    }
    meta_w_i32(w, r->u.broker.n_dirs);
    for (int32_t i = 0; i < r->u.broker.n_dirs; i++)
        meta_w_bytes(w, r->u.broker.dirs[i], 16);
    return 0;
}

static int encode_body(struct meta_wbuf *w, const struct meta_record *r)
{
    int rv;

    switch (r->type) {
    case META_REC_REGISTER_BROKER:
        if (r->u.broker.host == NULL)
            return ERR_INVALID_REQUEST;
        meta_w_i32(w, r->u.broker.id);
        meta_w_i32(w, r->u.broker.port);
        meta_w_str(w, r->u.broker.host);
        meta_w_str(w, r->u.broker.rack);
        return 0;
    case META_REC_FENCE_BROKER:
        meta_w_i32(w, r->u.fence.id);
        meta_w_u8(w, r->u.fence.fenced ? 1 : 0);
        return 0;
    case META_REC_TOPIC:
        if (r->u.topic.name == NULL)
            return ERR_INVALID_REQUEST;
        meta_w_str(w, r->u.topic.name);
        meta_w_bytes(w, r->u.topic.id, 16);
        return 0;
    case META_REC_PARTITION:
        return encode_partition(w, r);
    case META_REC_REMOVE_TOPIC:
        meta_w_bytes(w, r->u.remove_topic.topic_id, 16);
        return 0;
    case META_REC_CONFIG:
        if (r->u.config.resource_name == NULL || r->u.config.key == NULL)
            return ERR_INVALID_REQUEST;
        meta_w_u8(w, (uint8_t)r->u.config.resource_type);
        meta_w_str(w, r->u.config.resource_name);
        meta_w_str(w, r->u.config.key);
        meta_w_str(w, r->u.config.value);
        return 0;
    case META_REC_PRODUCER_IDS:
        meta_w_i32(w, r->u.producer_ids.broker_id);
        meta_w_i64(w, r->u.producer_ids.first_id);
        meta_w_i32(w, r->u.producer_ids.size);
        return 0;
    case META_REC_REGISTER_BROKER2:
        return encode_register2(w, r);
    case META_REC_SCRAM: {
        int8_t m = r->u.scram.mechanism;
        int32_t k = m == META_SCRAM_SHA_256 ? 32 : 64;
        if (r->u.scram.user == NULL || (m != META_SCRAM_SHA_256 && m != META_SCRAM_SHA_512) ||
            r->u.scram.iterations < 0)
            return ERR_INVALID_REQUEST;
        meta_w_str(w, r->u.scram.user);
        meta_w_u8(w, (uint8_t)m);
        meta_w_i32(w, r->u.scram.iterations);
        if (r->u.scram.iterations == 0)
            return 0;
        if (r->u.scram.salt == NULL || r->u.scram.salt_len < 1 ||
            r->u.scram.salt_len > META_SCRAM_MAX_SALT || r->u.scram.key_len != k ||
            r->u.scram.stored_key == NULL || r->u.scram.server_key == NULL)
            return ERR_INVALID_REQUEST;
        meta_w_i32(w, r->u.scram.salt_len);
        meta_w_bytes(w, r->u.scram.salt, (size_t)r->u.scram.salt_len);
        meta_w_i32(w, k);
        meta_w_bytes(w, r->u.scram.stored_key, (size_t)k);
        meta_w_bytes(w, r->u.scram.server_key, (size_t)k);
        return 0;
    }
    case META_REC_ACL:
        if (r->u.acl.resource_name == NULL || r->u.acl.principal == NULL || r->u.acl.host == NULL)
            return ERR_INVALID_REQUEST;
        meta_w_bytes(w, r->u.acl.id, 16);
        meta_w_u8(w, (uint8_t)r->u.acl.resource_type);
        meta_w_str(w, r->u.acl.resource_name);
        meta_w_u8(w, (uint8_t)r->u.acl.pattern_type);
        meta_w_str(w, r->u.acl.principal);
        meta_w_str(w, r->u.acl.host);
        meta_w_u8(w, (uint8_t)r->u.acl.operation);
        meta_w_u8(w, (uint8_t)r->u.acl.permission);
        return 0;
    case META_REC_REMOVE_ACL:
        meta_w_bytes(w, r->u.remove_acl.id, 16);
        return 0;
    case META_REC_BROKER_CHANGE:
        if (r->u.broker_change.fenced < -1 || r->u.broker_change.fenced > 1 ||
            r->u.broker_change.shutting_down < -1 || r->u.broker_change.shutting_down > 1)
            return ERR_INVALID_REQUEST;
        meta_w_i32(w, r->u.broker_change.id);
        meta_w_i64(w, r->u.broker_change.epoch);
        meta_w_u8(w, (uint8_t)r->u.broker_change.fenced);
        meta_w_u8(w, (uint8_t)r->u.broker_change.shutting_down);
        return 0;
    case META_REC_CLIENT_QUOTA: {
        const struct meta_quota_entity *e = &r->u.quota.entity;
        if ((!e->has_user && e->user) || (!e->has_client_id && e->client_id) ||
            (!e->has_user && !e->has_client_id))
            return ERR_INVALID_REQUEST;
        uint64_t bits;
        memcpy(&bits, &r->u.quota.value, sizeof bits);
        meta_w_u8(w, (uint8_t)((e->has_user ? 1 : 0) | (e->has_client_id ? 2 : 0)));
        meta_w_str(w, e->user);
        meta_w_str(w, e->client_id);
        meta_w_u8(w, (uint8_t)r->u.quota.key);
        meta_w_i64(w, (int64_t)bits);
        meta_w_u8(w, r->u.quota.remove ? 1 : 0);
        return 0;
    }
    case META_REC_PARTITION_CHANGE:
        if (r->u.partition.leader_recovery_state < 0 || r->u.partition.leader_recovery_state > 1 ||
            !i32s_ok(r->u.partition.n_adding, r->u.partition.adding) ||
            !i32s_ok(r->u.partition.n_removing, r->u.partition.removing) ||
            !i32s_ok(r->u.partition.n_elr, r->u.partition.elr))
            return ERR_INVALID_REQUEST;
        rv = encode_partition(w, r);
        if (rv != 0)
            return rv;
        meta_w_u8(w, (uint8_t)r->u.partition.leader_recovery_state);
        write_i32s(w, r->u.partition.n_adding, r->u.partition.adding);
        write_i32s(w, r->u.partition.n_removing, r->u.partition.removing);
        if (r->u.partition.n_elr > 0)
            write_i32s(w, r->u.partition.n_elr, r->u.partition.elr);
        return 0;
    }
    return ERR_INVALID_REQUEST;
}

int meta_batch_encode(const struct meta_record *recs, size_t n, uint8_t **buf, size_t *len)
{
    struct meta_wbuf w = {0};
    int rv;

    if (n > INT32_MAX) {
        rv = ERR_INVALID_REQUEST;
        goto err;
    }
    meta_w_u8(&w, META_BATCH_VERSION);
    meta_w_u32(&w, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        size_t at, body;
        meta_w_u8(&w, (uint8_t)recs[i].type);
        at = w.len;
        meta_w_u32(&w, 0); /* body length, patched below once known */
        rv = encode_body(&w, &recs[i]);
        if (rv != 0)
            goto err;
        if (w.oom)
            break;
        body = w.len - at - 4;
        if (body > UINT32_MAX) {
            rv = ERR_INVALID_REQUEST;
            goto err;
        }
        meta_put_u32(w.p + at, (uint32_t)body);
    }
    if (w.oom) {
        rv = ERR_NOMEM;
        goto err;
    }
    *buf = w.p;
    *len = w.len;
    return 0;

err:
    free(w.p);
    return rv;
}

/* Copies a string view into the arena; NULL stays NULL. Returns false only on ERR_NOMEM. */
static bool dup_str(struct arena *a, const char *s, size_t n, const char **out)
{
    if (s == NULL) {
        *out = NULL;
        return true;
    }
    *out = arena_strndup(a, s, n);
    return *out != NULL;
}

/* Reads `count` int32s into a new arena array. The count was checked against the bytes left
 * before this is called, so a hostile count cannot make it allocate more than the batch. */
static bool read_i32s(struct meta_rbuf *r, struct arena *a, int32_t count, const int32_t **out)
{
    int32_t *v;
    *out = NULL;
    if (count == 0)
        return true;
    v = arena_alloc(a, (size_t)count * sizeof *v);
    if (v == NULL)
        return false;
    for (int32_t i = 0; i < count; i++)
        v[i] = meta_r_i32(r);
    *out = v;
    return true;
}

/* A count, then that many int32s; 0, ERR_PARSE or ERR_NOMEM. */
static int decode_i32s(struct meta_rbuf *r, struct arena *a, int32_t *n, const int32_t **out)
{
    int32_t cnt = meta_r_i32(r);
    if (r->bad || cnt < 0 || (size_t)cnt > meta_r_left(r) / 4)
        return ERR_PARSE;
    *n = cnt;
    if (!read_i32s(r, a, cnt, out))
        return ERR_NOMEM;
    return r->bad ? ERR_PARSE : 0;
}

static int decode_partition(struct meta_rbuf *r, struct arena *a, struct meta_record *rec)
{
    int rv;
    meta_r_bytes(r, rec->u.partition.topic_id, 16);
    rec->u.partition.partition = meta_r_i32(r);
    rec->u.partition.leader = meta_r_i32(r);
    rec->u.partition.leader_epoch = meta_r_i32(r);
    rec->u.partition.partition_epoch = meta_r_i32(r);
    rv = decode_i32s(r, a, &rec->u.partition.n_replicas, &rec->u.partition.replicas);
    if (rv == 0)
        rv = decode_i32s(r, a, &rec->u.partition.n_isr, &rec->u.partition.isr);
    return rv;
}

/* The smallest encoded listener: two empty strings, a port and a protocol. */
#define META_LISTENER_MIN 14

static int decode_register2(struct meta_rbuf *r, struct arena *a, struct meta_record *rec)
{
    struct meta_listener *ls;
    uint8_t(*dirs)[16];
    const char *s;
    size_t n;
    int32_t cnt;

    rec->u.broker.id = meta_r_i32(r);
    meta_r_str(r, &s, &n);
    if (r->bad)
        return ERR_PARSE;
    if (!dup_str(a, s, n, &rec->u.broker.rack))
        return ERR_NOMEM;
    meta_r_bytes(r, rec->u.broker.incarnation, 16);
    cnt = meta_r_i32(r);
    if (r->bad || cnt < 1 || (size_t)cnt > meta_r_left(r) / META_LISTENER_MIN)
        return ERR_PARSE;
    ls = arena_alloc(a, (size_t)cnt * sizeof *ls);
    if (ls == NULL)
        return ERR_NOMEM;
    for (int32_t i = 0; i < cnt; i++) {
        const char *name, *host;
        size_t nn, nh;
        meta_r_str(r, &name, &nn);
        meta_r_str(r, &host, &nh);
        ls[i].port = meta_r_i32(r);
        ls[i].security_protocol = (int16_t)meta_r_u16(r);
        if (r->bad || name == NULL || host == NULL)
            return ERR_PARSE;
        ls[i].name = arena_strndup(a, name, nn);
        ls[i].host = arena_strndup(a, host, nh);
        if (ls[i].name == NULL || ls[i].host == NULL)
            return ERR_NOMEM;
    }
    rec->u.broker.n_listeners = cnt;
    rec->u.broker.listeners = ls;
    rec->u.broker.host = ls[0].host;
    rec->u.broker.port = ls[0].port;
    cnt = meta_r_i32(r);
    if (r->bad || cnt < 0 || (size_t)cnt > meta_r_left(r) / 16)
        return ERR_PARSE;
    rec->u.broker.n_dirs = cnt;
    if (cnt > 0) {
        dirs = arena_alloc(a, (size_t)cnt * sizeof *dirs);
        if (dirs == NULL)
            return ERR_NOMEM;
        for (int32_t i = 0; i < cnt; i++)
            meta_r_bytes(r, dirs[i], 16);
        rec->u.broker.dirs = (const uint8_t(*)[16])dirs;
    }
    return r->bad ? ERR_PARSE : 0;
}

/* Decodes one body; returns 0, ERR_PARSE or ERR_NOMEM. */
static int decode_body(struct meta_rbuf *r, struct arena *a, struct meta_record *rec)
{
    const char *s1, *s2, *s3;
    size_t n1, n2, n3;
    uint8_t b;
    int rv;

    switch (rec->type) {
    case META_REC_REGISTER_BROKER:
        rec->u.broker.id = meta_r_i32(r);
        rec->u.broker.port = meta_r_i32(r);
        meta_r_str(r, &s1, &n1);
        meta_r_str(r, &s2, &n2);
        if (r->bad || s1 == NULL)
            return ERR_PARSE;
        if (!dup_str(a, s1, n1, &rec->u.broker.host) || !dup_str(a, s2, n2, &rec->u.broker.rack))
            return ERR_NOMEM;
        return 0;
    case META_REC_FENCE_BROKER:
        rec->u.fence.id = meta_r_i32(r);
        b = meta_r_u8(r);
        if (r->bad || b > 1)
            return ERR_PARSE;
        rec->u.fence.fenced = b == 1;
        return 0;
    case META_REC_TOPIC:
        meta_r_str(r, &s1, &n1);
        meta_r_bytes(r, rec->u.topic.id, 16);
        if (r->bad || s1 == NULL)
            return ERR_PARSE;
        if (!dup_str(a, s1, n1, &rec->u.topic.name))
            return ERR_NOMEM;
        return 0;
    case META_REC_PARTITION:
        return decode_partition(r, a, rec);
    case META_REC_REMOVE_TOPIC:
        meta_r_bytes(r, rec->u.remove_topic.topic_id, 16);
        return r->bad ? ERR_PARSE : 0;
    case META_REC_CONFIG:
        rec->u.config.resource_type = (int8_t)meta_r_u8(r);
        meta_r_str(r, &s1, &n1);
        meta_r_str(r, &s2, &n2);
        meta_r_str(r, &s3, &n3);
        if (r->bad || s1 == NULL || s2 == NULL)
            return ERR_PARSE;
        if (!dup_str(a, s1, n1, &rec->u.config.resource_name) ||
            !dup_str(a, s2, n2, &rec->u.config.key) || !dup_str(a, s3, n3, &rec->u.config.value))
            return ERR_NOMEM;
        return 0;
    case META_REC_PRODUCER_IDS:
        rec->u.producer_ids.broker_id = meta_r_i32(r);
        rec->u.producer_ids.first_id = meta_r_i64(r);
        rec->u.producer_ids.size = meta_r_i32(r);
        return r->bad ? ERR_PARSE : 0;
    case META_REC_REGISTER_BROKER2:
        return decode_register2(r, a, rec);
    case META_REC_SCRAM: {
        meta_r_str(r, &s1, &n1);
        rec->u.scram.mechanism = (int8_t)meta_r_u8(r);
        rec->u.scram.iterations = meta_r_i32(r);
        int8_t m = rec->u.scram.mechanism;
        if (r->bad || s1 == NULL || (m != META_SCRAM_SHA_256 && m != META_SCRAM_SHA_512) ||
            rec->u.scram.iterations < 0)
            return ERR_PARSE;
        if (!dup_str(a, s1, n1, &rec->u.scram.user))
            return ERR_NOMEM;
        if (rec->u.scram.iterations == 0)
            return 0;
        int32_t sl = meta_r_i32(r);
        if (r->bad || sl < 1 || sl > META_SCRAM_MAX_SALT)
            return ERR_PARSE;
        /* Copied, as the strings are: the record outlives the buffer. */
        uint8_t *salt = arena_alloc(a, (size_t)sl);
        if (salt == NULL)
            return ERR_NOMEM;
        meta_r_bytes(r, salt, (size_t)sl);
        int32_t k = meta_r_i32(r);
        if (r->bad || k != (m == META_SCRAM_SHA_256 ? 32 : 64))
            return ERR_PARSE;
        uint8_t *keys = arena_alloc(a, 2 * (size_t)k);
        if (keys == NULL)
            return ERR_NOMEM;
        meta_r_bytes(r, keys, (size_t)k);
        meta_r_bytes(r, keys + k, (size_t)k);
        rec->u.scram.salt_len = sl;
        rec->u.scram.salt = salt;
        rec->u.scram.key_len = k;
        rec->u.scram.stored_key = keys;
        rec->u.scram.server_key = keys + k;
        return r->bad ? ERR_PARSE : 0;
    }
    case META_REC_ACL:
        meta_r_bytes(r, rec->u.acl.id, 16);
        rec->u.acl.resource_type = (int8_t)meta_r_u8(r);
        meta_r_str(r, &s1, &n1);
        rec->u.acl.pattern_type = (int8_t)meta_r_u8(r);
        meta_r_str(r, &s2, &n2);
        meta_r_str(r, &s3, &n3);
        rec->u.acl.operation = (int8_t)meta_r_u8(r);
        rec->u.acl.permission = (int8_t)meta_r_u8(r);
        if (r->bad || s1 == NULL || s2 == NULL || s3 == NULL)
            return ERR_PARSE;
        if (!dup_str(a, s1, n1, &rec->u.acl.resource_name) ||
            !dup_str(a, s2, n2, &rec->u.acl.principal) || !dup_str(a, s3, n3, &rec->u.acl.host))
            return ERR_NOMEM;
        return 0;
    case META_REC_REMOVE_ACL:
        meta_r_bytes(r, rec->u.remove_acl.id, 16);
        return r->bad ? ERR_PARSE : 0;
    case META_REC_BROKER_CHANGE:
        rec->u.broker_change.id = meta_r_i32(r);
        rec->u.broker_change.epoch = meta_r_i64(r);
        rec->u.broker_change.fenced = (int8_t)meta_r_u8(r);
        rec->u.broker_change.shutting_down = (int8_t)meta_r_u8(r);
        if (r->bad || rec->u.broker_change.fenced < -1 || rec->u.broker_change.fenced > 1 ||
            rec->u.broker_change.shutting_down < -1 || rec->u.broker_change.shutting_down > 1)
            return ERR_PARSE;
        return 0;
    case META_REC_CLIENT_QUOTA: {
        struct meta_quota_entity *e = &rec->u.quota.entity;
        uint8_t kinds = meta_r_u8(r), rm;
        uint64_t bits;
        meta_r_str(r, &s1, &n1);
        meta_r_str(r, &s2, &n2);
        rec->u.quota.key = (int8_t)meta_r_u8(r);
        bits = (uint64_t)meta_r_i64(r);
        rm = meta_r_u8(r);
        if (r->bad || kinds == 0 || kinds > 3 || rm > 1 || (!(kinds & 1) && s1) ||
            (!(kinds & 2) && s2))
            return ERR_PARSE;
        e->has_user = kinds & 1;
        e->has_client_id = (kinds & 2) != 0;
        memcpy(&rec->u.quota.value, &bits, sizeof bits);
        rec->u.quota.remove = rm == 1;
        if (!dup_str(a, s1, n1, &e->user) || !dup_str(a, s2, n2, &e->client_id))
            return ERR_NOMEM;
        return 0;
    }
    case META_REC_PARTITION_CHANGE:
        rv = decode_partition(r, a, rec);
        if (rv != 0)
            return rv;
        b = meta_r_u8(r);
        if (r->bad || b > 1)
            return ERR_PARSE;
        rec->u.partition.leader_recovery_state = (int8_t)b;
        rv = decode_i32s(r, a, &rec->u.partition.n_adding, &rec->u.partition.adding);
        if (rv == 0)
            rv = decode_i32s(r, a, &rec->u.partition.n_removing, &rec->u.partition.removing);
        /* The ELR, present only when not empty (an empty one written out is malformed, so
         * that each change has one encoding). */
        if (rv == 0 && meta_r_left(r) > 0) {
            rv = decode_i32s(r, a, &rec->u.partition.n_elr, &rec->u.partition.elr);
            if (rv == 0 && rec->u.partition.n_elr == 0)
                rv = ERR_PARSE;
        }
        return rv;
    }
    return ERR_PARSE;
}

int meta_batch_decode(const uint8_t *buf, size_t len, struct arena **arena,
                      struct meta_record **recs, size_t *n)
{
    struct meta_rbuf r = {.p = buf, .len = len};
    struct meta_record *out;
    struct arena *a;
    uint32_t count;
    size_t limit;
    int rv;

    *arena = NULL;
    if (meta_r_u8(&r) != META_BATCH_VERSION)
        return ERR_PARSE;
    count = meta_r_u32(&r);
    /* Every record takes at least its header, so the count is bounded by the bytes left. */
    if (r.bad || count > meta_r_left(&r) / META_RECORD_HEADER)
        return ERR_PARSE;

    /* Decoded strings and arrays are copies of bytes in the batch plus per-allocation
     * rounding: at most five roundings of 16 bytes per record (a PARTITION_CHANGE's five
     * arrays), and for a listener (at least
     * 14 bytes of batch) its struct and two roundings, under 72 bytes: six times the batch
     * covers everything. */
    if (len > SIZE_MAX / 64)
        return ERR_PARSE;
    limit = (size_t)count * (sizeof *out + 5 * 16) + 6 * len + 64;
    a = arena_new(limit);
    if (a == NULL)
        return ERR_NOMEM;
    *arena = a;
    out = count ? arena_alloc(a, (size_t)count * sizeof *out) : NULL;
    if (count && out == NULL)
        return ERR_NOMEM;

    for (uint32_t i = 0; i < count; i++) {
        uint8_t type = meta_r_u8(&r);
        uint32_t body = meta_r_u32(&r);
        struct meta_rbuf br;
        const uint8_t *p;

        p = meta_r_take(&r, body);
        if (p == NULL || type < META_REC_REGISTER_BROKER || type > META_REC_CLIENT_QUOTA)
            return ERR_PARSE;
        br = (struct meta_rbuf){.p = p, .len = body};
        memset(&out[i], 0, sizeof out[i]);
        out[i].type = (enum meta_record_type)type;
        rv = decode_body(&br, a, &out[i]);
        if (rv != 0)
            return rv;
        if (br.off != br.len)
            return ERR_PARSE;
    }
    if (r.off != r.len)
        return ERR_PARSE;
    *recs = out;
    *n = count;
    return 0;
}
