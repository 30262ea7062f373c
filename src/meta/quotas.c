/* SPDX-License-Identifier: Apache-2.0 */
/* quotas: the client-quota part of the metadata image (Kafka's ClientQuotaRecord and the
 * entities it configures), kept apart from image.c: a sorted array of entities, each with the
 * keys set on it, Kafka's precedence for the quota that applies to a connection, and the
 * snapshot part. */

/*
** Snapshot part (image.c's version 6 ends with it):
**   OFFSET  SIZE  FIELD
**        0     4  entity count E, E entities in entity order (meta_quotas):
**                   u8 part kinds (bit 0: user part present, bit 1: client-id part present),
**                   str user (NULL = default; NULL too when absent), str client id (likewise),
**                   u8 key mask M (bit k: key k set, at least one bit, none above
**                   META_QUOTA_N_KEYS), then for each bit of M from the lowest an 8-byte
**                   IEEE 754 double (big-endian bits), finite and > 0
*/
#include "meta/meta_int.h"

#include <math.h>

#include "base/err.h"

static const char *const key_names[META_QUOTA_N_KEYS] = {
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
};

const char *meta_quota_key_name(int key)
{
    return key >= 0 && key < META_QUOTA_N_KEYS ? key_names[key] : NULL;
}

int meta_quota_key_parse(const char *name)
{
    for (int k = 0; name && k < META_QUOTA_N_KEYS; k++)
        if (strcmp(name, key_names[k]) == 0)
            return k;
    return -1;
}

/* One part's order: absent < default < named, then by name. */
static int part_cmp(bool ha, const char *a, bool hb, const char *b)
{
    int ka = ha ? (a ? 2 : 1) : 0, kb = hb ? (b ? 2 : 1) : 0;
    if (ka != kb)
        return ka - kb;
    return ka == 2 ? strcmp(a, b) : 0;
}

static int entity_cmp(const struct meta_quota *q, const struct meta_quota_entity *e)
{
    int c = part_cmp(q->has_user, q->user, e->has_user, e->user);
    return c ? c : part_cmp(q->has_client_id, q->client_id, e->has_client_id, e->client_id);
}

static size_t entity_pos(const struct meta_quota_set *qs, const struct meta_quota_entity *e,
                         bool *found)
{
    size_t lo = 0, hi = qs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = entity_cmp(&qs->q[mid], e);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static void free_entity(struct meta_quota *q)
{
    free(q->user);
    free(q->client_id);
}

void meta_quotas_free(struct meta_quota_set *qs)
{
    for (size_t i = 0; i < qs->n; i++)
        free_entity(&qs->q[i]);
    free(qs->q);
    memset(qs, 0, sizeof *qs);
}

int meta_quotas_validate(const struct meta_record *r)
{
    const struct meta_quota_entity *e = &r->u.quota.entity;
    if (!e->has_user && !e->has_client_id)
        return ERR_INVALID_REQUEST;
    if ((e->has_user && e->user && e->user[0] == '\0') ||
        (e->has_client_id && e->client_id && e->client_id[0] == '\0'))
        return ERR_INVALID_REQUEST;
    if (r->u.quota.key < 0 || r->u.quota.key >= META_QUOTA_N_KEYS)
        return ERR_INVALID_REQUEST;
    if (!r->u.quota.remove && !(isfinite(r->u.quota.value) && r->u.quota.value > 0))
        return ERR_INVALID_REQUEST;
    return 0;
}

const struct meta_quota *meta_quotas_find(const struct meta_quota_set *qs,
                                          const struct meta_quota_entity *e)
{
    bool found;
    size_t i = entity_pos(qs, e, &found);
    return found ? &qs->q[i] : NULL;
}

int meta_quotas_apply(struct meta_quota_set *qs, const struct meta_record *r)
{
    const struct meta_quota_entity *e = &r->u.quota.entity;
    uint8_t bit = (uint8_t)(1u << r->u.quota.key);
    bool found;
    size_t i = entity_pos(qs, e, &found);

    if (r->u.quota.remove) {
        if (!found)
            return 0;
        qs->q[i].set &= (uint8_t)~bit;
        if (qs->q[i].set == 0) {
            free_entity(&qs->q[i]);
            memmove(&qs->q[i], &qs->q[i + 1], (qs->n - i - 1) * sizeof *qs->q);
            qs->n--;
        }
        return 0;
    }
    if (!found) {
        struct meta_quota q = {.has_user = e->has_user, .has_client_id = e->has_client_id};
        if ((e->has_user && e->user && (q.user = strdup(e->user)) == NULL) ||
            (e->has_client_id && e->client_id && (q.client_id = strdup(e->client_id)) == NULL))
            goto oom;
        if (qs->n == qs->cap) {
            size_t cap = qs->cap ? qs->cap * 2 : 8;
            struct meta_quota *p = realloc(qs->q, cap * sizeof *p);
            if (p == NULL)
                goto oom;
            qs->q = p;
            qs->cap = cap;
        }
        memmove(&qs->q[i + 1], &qs->q[i], (qs->n - i) * sizeof *qs->q);
        qs->q[i] = q;
        qs->n++;
        goto set;
    oom:
        free_entity(&q);
        return ERR_NOMEM;
    }
set:
    qs->q[i].set |= bit;
    qs->q[i].values[r->u.quota.key] = r->u.quota.value;
    return 0;
}

/* Whether entity e of the set sets `key`; *value receives it. */
static bool try_entity(const struct meta_quota_set *qs, bool has_user, const char *user,
                       bool has_client, const char *client, int key, double *value)
{
    struct meta_quota_entity e = {has_user, has_client, user, client};
    const struct meta_quota *q = meta_quotas_find(qs, &e);
    if (q == NULL || !(q->set & (1u << key)))
        return false;
    *value = q->values[key];
    return true;
}

bool meta_quotas_lookup(const struct meta_quota_set *qs, const char *user, const char *client_id,
                        int key, double *value)
{
    if (key < 0 || key >= META_QUOTA_N_KEYS || qs->n == 0)
        return false;
    if (client_id == NULL)
        client_id = "";
    /* Kafka's order, most specific first. An empty name cannot be set (validate), so an
     * empty client id matches only the defaults. */
    const char *u = user && user[0] ? user : NULL, *c = client_id[0] ? client_id : NULL;
    if (u && c && try_entity(qs, true, u, true, c, key, value))
        return true;
    if (u && try_entity(qs, true, u, true, NULL, key, value))
        return true;
    if (u && try_entity(qs, true, u, false, NULL, key, value))
        return true;
    if (c && try_entity(qs, true, NULL, true, c, key, value))
        return true;
    if (try_entity(qs, true, NULL, true, NULL, key, value))
        return true;
    if (try_entity(qs, true, NULL, false, NULL, key, value))
        return true;
    if (c && try_entity(qs, false, NULL, true, c, key, value))
        return true;
    return try_entity(qs, false, NULL, true, NULL, key, value);
}

size_t meta_quotas_count(const struct meta_quota_set *qs)
{
    size_t n = 0;
    for (size_t i = 0; i < qs->n; i++)
        for (int k = 0; k < META_QUOTA_N_KEYS; k++)
            n += (qs->q[i].set >> k) & 1u;
    return n;
}

size_t meta_quotas_records(const struct meta_quota_set *qs, struct meta_record *out)
{
    size_t n = 0;
    for (size_t i = 0; i < qs->n; i++) {
        const struct meta_quota *q = &qs->q[i];
        for (int k = 0; k < META_QUOTA_N_KEYS; k++) {
            if (!(q->set & (1u << k)))
                continue;
            memset(&out[n], 0, sizeof out[n]);
            out[n].type = META_REC_CLIENT_QUOTA;
            out[n].u.quota.entity =
                (struct meta_quota_entity){q->has_user, q->has_client_id, q->user, q->client_id};
            out[n].u.quota.key = (int8_t)k;
            out[n++].u.quota.value = q->values[k];
        }
    }
    return n;
}

static uint64_t double_bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double bits_double(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

void meta_quotas_write(struct meta_wbuf *w, const struct meta_quota_set *qs)
{
    meta_w_u32(w, (uint32_t)qs->n);
    for (size_t i = 0; i < qs->n; i++) {
        const struct meta_quota *q = &qs->q[i];
        meta_w_u8(w, (uint8_t)((q->has_user ? 1 : 0) | (q->has_client_id ? 2 : 0)));
        meta_w_str(w, q->user);
        meta_w_str(w, q->client_id);
        meta_w_u8(w, q->set);
        for (int k = 0; k < META_QUOTA_N_KEYS; k++)
            if (q->set & (1u << k))
                meta_w_i64(w, (int64_t)double_bits(q->values[k]));
    }
}

static int read_name(struct meta_rbuf *r, bool present, char **out)
{
    const char *s;
    size_t n;
    meta_r_str(r, &s, &n);
    if (r->bad || (!present && s != NULL) || (s != NULL && n == 0))
        return ERR_PARSE;
    if (s == NULL)
        return 0;
    *out = strndup(s, n);
    return *out ? 0 : ERR_NOMEM;
}

int meta_quotas_read(struct meta_rbuf *r, struct meta_quota_set *qs)
{
    uint32_t count = meta_r_u32(r);
    int rv;

    /* Each entity takes at least 18 bytes, so a hostile count cannot allocate much. */
    if (r->bad || count > meta_r_left(r) / 18)
        return ERR_PARSE;
    if (count > 0 && (qs->q = calloc(count, sizeof *qs->q)) == NULL)
        return ERR_NOMEM;
    qs->cap = count;
    for (uint32_t i = 0; i < count; i++) {
        struct meta_quota *q = &qs->q[i];
        qs->n = i + 1;
        uint8_t kinds = meta_r_u8(r);
        if (r->bad || kinds == 0 || kinds > 3)
            return ERR_PARSE;
        q->has_user = kinds & 1;
        q->has_client_id = (kinds & 2) != 0;
        if ((rv = read_name(r, q->has_user, &q->user)) != 0 ||
            (rv = read_name(r, q->has_client_id, &q->client_id)) != 0)
            return rv;
        q->set = meta_r_u8(r);
        if (r->bad || q->set == 0 || q->set >> META_QUOTA_N_KEYS)
            return ERR_PARSE;
        for (int k = 0; k < META_QUOTA_N_KEYS; k++) {
            if (!(q->set & (1u << k)))
                continue;
            q->values[k] = bits_double((uint64_t)meta_r_i64(r));
            if (r->bad || !isfinite(q->values[k]) || q->values[k] <= 0)
                return ERR_PARSE;
        }
        if (i > 0) {
            struct meta_quota_entity e = {q->has_user, q->has_client_id, q->user, q->client_id};
            if (entity_cmp(&qs->q[i - 1], &e) >= 0)
                return ERR_PARSE;
        }
    }
    return 0;
}
