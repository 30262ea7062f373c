/* SPDX-License-Identifier: Apache-2.0 */
/* acls: the image's access control entries and Kafka's StandardAuthorizer matching rules on
 * them. Entries are kept twice, as pointers to one allocation each: by id (for removal and
 * the snapshot) and by resource (type, pattern type, name bytes, id), so that the entries of
 * one literal name are one binary search away. A PREFIXED entry applies to a name when it is
 * one of the name's prefixes: per resource type the index counts the prefix lengths in use,
 * and a check searches only for the prefixes of those lengths (a handful in practice) instead
 * of scanning every entry. */
#include "meta/meta_int.h"

#include "base/err.h"
#include "proto/proto.h"

/* Resource type codes are 0..7 (Kafka's UNKNOWN..USER); 8 covers them. */
#define ACL_TYPES 8

/* How many PREFIXED entries of one type have a name of `len` bytes. */
struct acl_len {
    size_t len;
    size_t count;
};

struct meta_acls {
    struct meta_acl **by_id;  /* sorted by id */
    struct meta_acl **by_res; /* sorted by resource_cmp */
    size_t n, cap;
    struct acl_len *lens[ACL_TYPES]; /* sorted by len */
    size_t n_lens[ACL_TYPES], cap_lens[ACL_TYPES];
};

struct meta_acls *meta_acls_new(void)
{
    return calloc(1, sizeof(struct meta_acls));
}

static void acl_free(struct meta_acl *a)
{
    if (a == NULL)
        return;
    free(a->resource_name);
    free(a->principal);
    free(a->host);
    free(a);
}

void meta_acls_free(struct meta_acls *acls)
{
    if (acls == NULL)
        return;
    for (size_t i = 0; i < acls->n; i++)
        acl_free(acls->by_id[i]);
    free(acls->by_id);
    free(acls->by_res);
    for (int t = 0; t < ACL_TYPES; t++)
        free(acls->lens[t]);
    free(acls);
}

/* The resource order, without the id: type, pattern type, then name bytes (a shorter name
 * before the longer one it starts). */
static int resource_key_cmp(const struct meta_acl *e, int8_t type, int8_t pattern, const char *name,
                            size_t len)
{
    size_t m;
    int c;
    if (e->resource_type != type)
        return e->resource_type < type ? -1 : 1;
    if (e->pattern_type != pattern)
        return e->pattern_type < pattern ? -1 : 1;
    m = e->name_len < len ? e->name_len : len;
    c = memcmp(e->resource_name, name, m);
    if (c != 0)
        return c;
    return e->name_len < len ? -1 : e->name_len > len ? 1 : 0;
}

static int resource_cmp(const struct meta_acl *e, const struct meta_acl *k)
{
    int c = resource_key_cmp(e, k->resource_type, k->pattern_type, k->resource_name, k->name_len);
    return c != 0 ? c : memcmp(e->id, k->id, 16);
}

static size_t id_pos(const struct meta_acls *acls, const uint8_t id[16], bool *found)
{
    size_t lo = 0, hi = acls->n;
    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = memcmp(acls->by_id[mid]->id, id, 16);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t res_pos(const struct meta_acls *acls, const struct meta_acl *k)
{
    size_t lo = 0, hi = acls->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (resource_cmp(acls->by_res[mid], k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first entry of the resource (type, pattern, name[0..len)). */
static size_t key_lower(const struct meta_acls *acls, int8_t type, int8_t pattern, const char *name,
                        size_t len)
{
    size_t lo = 0, hi = acls->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (resource_key_cmp(acls->by_res[mid], type, pattern, name, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool type_ok(int8_t t)
{
    return t >= 0 && t < ACL_TYPES;
}

/* Counts a PREFIXED name length in (delta 1) or out (delta -1). False only when out of
 * memory adding one. */
static bool lens_update(struct meta_acls *acls, int8_t type, size_t len, int delta)
{
    struct acl_len *v = acls->lens[type];
    size_t n = acls->n_lens[type], i = 0;
    while (i < n && v[i].len < len)
        i++;
    if (i < n && v[i].len == len) {
        if (delta > 0) {
            v[i].count++;
        } else if (--v[i].count == 0) {
            memmove(&v[i], &v[i + 1], (n - i - 1) * sizeof *v);
            acls->n_lens[type]--;
        }
        return true;
    }
    if (delta < 0)
        return true;
    if (n == acls->cap_lens[type]) {
        size_t cap = n ? 2 * n : 8;
        struct acl_len *p = realloc(v, cap * sizeof *p);
        if (p == NULL)
            return false;
        acls->lens[type] = v = p;
        acls->cap_lens[type] = cap;
    }
    memmove(&v[i + 1], &v[i], (n - i) * sizeof *v);
    v[i] = (struct acl_len){len, 1};
    acls->n_lens[type]++;
    return true;
}

int meta_acls_add(struct meta_acls *acls, const struct meta_acl *a)
{
    struct meta_acl *e;
    bool found;
    size_t i, j;

    if (!type_ok(a->resource_type) || a->resource_name == NULL || a->principal == NULL ||
        a->host == NULL)
        return ERR_INVALID_REQUEST;
    i = id_pos(acls, a->id, &found);
    if (found)
        return ERR_EXISTS;
    if (acls->n == acls->cap) {
        size_t cap = acls->cap ? 2 * acls->cap : 16;
        struct meta_acl **p = realloc(acls->by_id, cap * sizeof *p);
        if (p == NULL)
            return ERR_NOMEM;
        acls->by_id = p;
        p = realloc(acls->by_res, cap * sizeof *p);
        if (p == NULL)
            return ERR_NOMEM;
        acls->by_res = p;
        acls->cap = cap;
    }
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return ERR_NOMEM;
    *e = *a;
    e->resource_name = strdup(a->resource_name);
    e->principal = strdup(a->principal);
    e->host = strdup(a->host);
    e->name_len = e->resource_name ? strlen(e->resource_name) : 0;
    if (e->resource_name == NULL || e->principal == NULL || e->host == NULL ||
        (e->pattern_type == META_ACL_PATTERN_PREFIXED &&
         !lens_update(acls, e->resource_type, e->name_len, 1))) {
        acl_free(e);
        return ERR_NOMEM;
    }
    memmove(&acls->by_id[i + 1], &acls->by_id[i], (acls->n - i) * sizeof *acls->by_id);
    acls->by_id[i] = e;
    j = res_pos(acls, e);
    memmove(&acls->by_res[j + 1], &acls->by_res[j], (acls->n - j) * sizeof *acls->by_res);
    acls->by_res[j] = e;
    acls->n++;
    return 0;
}

bool meta_acls_remove(struct meta_acls *acls, const uint8_t id[16])
{
    bool found;
    size_t i = id_pos(acls, id, &found), j;
    struct meta_acl *e;

    if (!found)
        return false;
    e = acls->by_id[i];
    j = res_pos(acls, e);
    memmove(&acls->by_id[i], &acls->by_id[i + 1], (acls->n - i - 1) * sizeof *acls->by_id);
    memmove(&acls->by_res[j], &acls->by_res[j + 1], (acls->n - j - 1) * sizeof *acls->by_res);
    acls->n--;
    if (e->pattern_type == META_ACL_PATTERN_PREFIXED)
        lens_update(acls, e->resource_type, e->name_len, -1);
    acl_free(e);
    return true;
}

const struct meta_acl *meta_acls_find(const struct meta_acls *acls, const uint8_t id[16])
{
    bool found;
    size_t i = id_pos(acls, id, &found);
    return found ? acls->by_id[i] : NULL;
}

const struct meta_acl *const *meta_acls_all(const struct meta_acls *acls, size_t *n)
{
    *n = acls->n;
    return (const struct meta_acl *const *)acls->by_id;
}

const struct meta_acl *meta_acls_find_binding(const struct meta_acls *acls,
                                              const struct meta_acl *a)
{
    size_t len = strlen(a->resource_name);
    for (size_t i = key_lower(acls, a->resource_type, a->pattern_type, a->resource_name, len);
         i < acls->n; i++) {
        const struct meta_acl *e = acls->by_res[i];
        if (resource_key_cmp(e, a->resource_type, a->pattern_type, a->resource_name, len) != 0)
            break;
        if (e->operation == a->operation && e->permission == a->permission &&
            strcmp(e->principal, a->principal) == 0 && strcmp(e->host, a->host) == 0)
            return e;
    }
    return NULL;
}

/* ---- matching ----------------------------------------------------------------------------- */

static bool principal_matches(const char *acl, const char *principal)
{
    if (strcmp(acl, principal) == 0)
        return true;
    /* "User:*" is every principal of type User. */
    return strcmp(acl, "User:*") == 0 && strncmp(principal, "User:", 5) == 0;
}

static bool host_matches(const char *acl, const char *host)
{
    return strcmp(acl, "*") == 0 || (host != NULL && strcmp(acl, host) == 0);
}

/* Whether an ALLOW of `acl_op` allows `op`. */
static bool allow_implies(int8_t acl_op, int8_t op)
{
    if (acl_op == META_ACL_OP_ALL || acl_op == op)
        return true;
    if (op == PROTO_ACL_OP_DESCRIBE)
        return acl_op == PROTO_ACL_OP_READ || acl_op == PROTO_ACL_OP_WRITE ||
               acl_op == PROTO_ACL_OP_DELETE || acl_op == PROTO_ACL_OP_ALTER;
    if (op == PROTO_ACL_OP_DESCRIBE_CONFIGS)
        return acl_op == PROTO_ACL_OP_ALTER_CONFIGS;
    return false;
}

/* What the entries of one resource key say so far. */
struct verdict {
    bool any;     /* some entry matched the resource */
    bool allowed; /* some ALLOW applied */
    bool denied;  /* some DENY applied */
};

static void visit(const struct meta_acls *acls, const struct meta_acl_check *c, int8_t pattern,
                  const char *name, size_t len, struct verdict *v)
{
    for (size_t i = key_lower(acls, c->resource_type, pattern, name, len); i < acls->n; i++) {
        const struct meta_acl *e = acls->by_res[i];
        if (resource_key_cmp(e, c->resource_type, pattern, name, len) != 0)
            return;
        v->any = true;
        if (!principal_matches(e->principal, c->principal) || !host_matches(e->host, c->host))
            continue;
        if (e->permission == META_ACL_DENY &&
            (e->operation == META_ACL_OP_ALL || e->operation == c->operation))
            v->denied = true;
        else if (e->permission == META_ACL_ALLOW && allow_implies(e->operation, c->operation))
            v->allowed = true;
    }
}

bool meta_acls_authorize(const struct meta_acls *acls, const struct meta_acl_check *c,
                         bool allow_if_no_acl)
{
    struct verdict v = {false, false, false};
    const char *name = c->resource_name ? c->resource_name : "";
    size_t len = strlen(name);

    if (!type_ok(c->resource_type))
        return false;
    visit(acls, c, META_ACL_PATTERN_LITERAL, name, len, &v);
    if (strcmp(name, META_ACL_WILDCARD) != 0)
        visit(acls, c, META_ACL_PATTERN_LITERAL, META_ACL_WILDCARD, 1, &v);
    for (size_t i = 0; i < acls->n_lens[c->resource_type] && !v.denied; i++) {
        size_t l = acls->lens[c->resource_type][i].len;
        if (l > len)
            break;
        visit(acls, c, META_ACL_PATTERN_PREFIXED, name, l, &v);
    }
    if (v.denied)
        return false;
    if (v.allowed)
        return true;
    return !v.any && allow_if_no_acl;
}

bool meta_acls_authorize_any(const struct meta_acls *acls, const char *principal, const char *host,
                             int8_t op, int8_t type, bool allow_if_no_acl)
{
    bool any = false;
    if (!type_ok(type))
        return false;
    for (size_t i = key_lower(acls, type, 0, "", 0); i < acls->n; i++) {
        const struct meta_acl *e = acls->by_res[i];
        if (e->resource_type != type)
            break;
        any = true;
        if (e->permission != META_ACL_ALLOW || !principal_matches(e->principal, principal) ||
            !host_matches(e->host, host) || !allow_implies(e->operation, op))
            continue;
        /* The resource this entry allows (a prefix stands for a name that is exactly it),
         * checked in full: a DENY that covers it wins. */
        struct meta_acl_check c = {principal, host, op, type, e->resource_name};
        if (meta_acls_authorize(acls, &c, false))
            return true;
    }
    return !any && allow_if_no_acl;
}

/* ---- filters ------------------------------------------------------------------------------ */

bool meta_acl_filter_match(const struct meta_acl_filter *f, const struct meta_acl *a)
{
    if (f->resource_type != META_ACL_ANY && f->resource_type != a->resource_type)
        return false;
    if (f->operation != META_ACL_ANY && f->operation != a->operation)
        return false;
    if (f->permission != META_ACL_ANY && f->permission != a->permission)
        return false;
    if (f->principal != NULL && strcmp(f->principal, a->principal) != 0)
        return false;
    if (f->host != NULL && strcmp(f->host, a->host) != 0)
        return false;
    switch (f->pattern_type) {
    case META_ACL_ANY:
        return f->resource_name == NULL || strcmp(f->resource_name, a->resource_name) == 0;
    case META_ACL_PATTERN_MATCH:
        /* The entries that apply to a resource named so: with no name, every entry. */
        if (f->resource_name == NULL)
            return true;
        if (a->pattern_type == META_ACL_PATTERN_LITERAL)
            return strcmp(a->resource_name, f->resource_name) == 0 ||
                   strcmp(a->resource_name, META_ACL_WILDCARD) == 0;
        return strncmp(f->resource_name, a->resource_name, a->name_len) == 0;
    case META_ACL_PATTERN_LITERAL:
    case META_ACL_PATTERN_PREFIXED:
        return f->pattern_type == a->pattern_type &&
               (f->resource_name == NULL || strcmp(f->resource_name, a->resource_name) == 0);
    default:
        return false;
    }
}

/* ---- the image's side: validation, apply, records, snapshot (meta_int.h) ---------------- */

static const struct meta_acls empty_acls;

const struct meta_acls *meta_acls_or_empty(const struct meta_acls *acls)
{
    return acls ? acls : &empty_acls;
}

/* Whether entry `id` exists once recs[0..upto) have applied. */
static bool batch_acl_present(const struct meta_acls *acls, const struct meta_record *recs,
                              size_t upto, const uint8_t id[16])
{
    for (size_t i = upto; i-- > 0;) {
        if (recs[i].type == META_REC_ACL && memcmp(recs[i].u.acl.id, id, 16) == 0)
            return true;
        if (recs[i].type == META_REC_REMOVE_ACL && memcmp(recs[i].u.remove_acl.id, id, 16) == 0)
            return false;
    }
    return acls != NULL && meta_acls_find(acls, id) != NULL;
}

int meta_acls_validate(const struct meta_acls *acls, const struct meta_record *recs, size_t i)
{
    const struct meta_record *r = &recs[i];
    if (r->type == META_REC_REMOVE_ACL)
        return batch_acl_present(acls, recs, i, r->u.remove_acl.id) ? 0 : ERR_RESOURCE_NOT_FOUND;
    if (r->u.acl.resource_type < PROTO_RESOURCE_TOPIC ||
        r->u.acl.resource_type > PROTO_RESOURCE_USER ||
        (r->u.acl.pattern_type != META_ACL_PATTERN_LITERAL &&
         r->u.acl.pattern_type != META_ACL_PATTERN_PREFIXED) ||
        r->u.acl.operation < META_ACL_OP_ALL || r->u.acl.operation > PROTO_ACL_OP_DESCRIBE_TOKENS ||
        (r->u.acl.permission != META_ACL_DENY && r->u.acl.permission != META_ACL_ALLOW) ||
        r->u.acl.resource_name[0] == '\0' || r->u.acl.principal[0] == '\0' ||
        r->u.acl.host[0] == '\0')
        return ERR_INVALID_REQUEST;
    return batch_acl_present(acls, recs, i, r->u.acl.id) ? ERR_DUPLICATE_RESOURCE : 0;
}

static struct meta_acl acl_of_record(const struct meta_record *r)
{
    struct meta_acl a = {0};
    memcpy(a.id, r->u.acl.id, 16);
    a.resource_type = r->u.acl.resource_type;
    a.pattern_type = r->u.acl.pattern_type;
    a.operation = r->u.acl.operation;
    a.permission = r->u.acl.permission;
    a.resource_name = (char *)r->u.acl.resource_name;
    a.principal = (char *)r->u.acl.principal;
    a.host = (char *)r->u.acl.host;
    return a;
}

int meta_acls_apply(struct meta_acls **acls, const struct meta_record *r)
{
    if (r->type == META_REC_REMOVE_ACL) {
        if (*acls != NULL)
            meta_acls_remove(*acls, r->u.remove_acl.id);
        return 0;
    }
    if (*acls == NULL && (*acls = meta_acls_new()) == NULL)
        return ERR_NOMEM;
    struct meta_acl a = acl_of_record(r);
    return meta_acls_add(*acls, &a);
}

size_t meta_acls_records(const struct meta_acls *acls, struct meta_record *out)
{
    size_t n = acls ? acls->n : 0;
    for (size_t i = 0; i < n; i++) {
        const struct meta_acl *a = acls->by_id[i];
        memset(&out[i], 0, sizeof out[i]);
        out[i].type = META_REC_ACL;
        memcpy(out[i].u.acl.id, a->id, 16);
        out[i].u.acl.resource_type = a->resource_type;
        out[i].u.acl.pattern_type = a->pattern_type;
        out[i].u.acl.operation = a->operation;
        out[i].u.acl.permission = a->permission;
        out[i].u.acl.resource_name = a->resource_name;
        out[i].u.acl.principal = a->principal;
        out[i].u.acl.host = a->host;
    }
    return n;
}

void meta_acls_write(const struct meta_acls *acls, struct meta_wbuf *w)
{
    size_t n = acls ? acls->n : 0;
    meta_w_u32(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        const struct meta_acl *a = acls->by_id[i];
        meta_w_bytes(w, a->id, 16);
        meta_w_u8(w, (uint8_t)a->resource_type);
        meta_w_str(w, a->resource_name);
        meta_w_u8(w, (uint8_t)a->pattern_type);
        meta_w_str(w, a->principal);
        meta_w_str(w, a->host);
        meta_w_u8(w, (uint8_t)a->operation);
        meta_w_u8(w, (uint8_t)a->permission);
    }
}

/* The smallest snapshot entry: the id, four one-byte codes and three 4-byte lengths. */
#define ACL_SNAPSHOT_MIN (16 + 4 + 12)

int meta_acls_read(struct meta_rbuf *r, struct meta_acls **out)
{
    uint32_t count = meta_r_u32(r);
    struct meta_acls *acls = NULL;
    int rv = 0;

    *out = NULL;
    if (r->bad || count > meta_r_left(r) / ACL_SNAPSHOT_MIN)
        return ERR_PARSE;
    if (count == 0)
        return 0;
    if ((acls = meta_acls_new()) == NULL)
        return ERR_NOMEM;
    for (uint32_t i = 0; i < count && rv == 0; i++) {
        struct meta_record rec = {.type = META_REC_ACL};
        char *s[3] = {NULL, NULL, NULL};
        const char *v;
        size_t n;
        meta_r_bytes(r, rec.u.acl.id, 16);
        rec.u.acl.resource_type = (int8_t)meta_r_u8(r);
        meta_r_str(r, &v, &n);
        if (v != NULL)
            s[0] = strndup(v, n);
        rec.u.acl.pattern_type = (int8_t)meta_r_u8(r);
        meta_r_str(r, &v, &n);
        if (v != NULL)
            s[1] = strndup(v, n);
        meta_r_str(r, &v, &n);
        if (v != NULL)
            s[2] = strndup(v, n);
        rec.u.acl.operation = (int8_t)meta_r_u8(r);
        rec.u.acl.permission = (int8_t)meta_r_u8(r);
        rec.u.acl.resource_name = s[0];
        rec.u.acl.principal = s[1];
        rec.u.acl.host = s[2];
        if (r->bad || s[0] == NULL || s[1] == NULL || s[2] == NULL)
            rv = r->bad ? ERR_PARSE : ERR_NOMEM;
        else
            rv = meta_acls_validate(acls, &rec, 0);
        if (rv == 0 && i > 0 && memcmp(acls->by_id[acls->n - 1]->id, rec.u.acl.id, 16) >= 0)
            rv = ERR_PARSE; /* ids strictly increasing: sorted, no duplicate */
        if (rv == ERR_INVALID_REQUEST || rv == ERR_DUPLICATE_RESOURCE)
            rv = ERR_PARSE;
        if (rv == 0)
            rv = meta_acls_apply(&acls, &rec);
        free(s[0]);
        free(s[1]);
        free(s[2]);
    }
    if (rv != 0) {
        meta_acls_free(acls);
        return rv;
    }
    *out = acls;
    return 0;
}
