/* SPDX-License-Identifier: Apache-2.0 */
/* proto: the generic decoder, sizer and encoder that walk the field tables of schema_*.c.
 *
 * Every integer on the wire is big-endian. Non-flexible versions use the classic types:
 * STRING = INT16 length + bytes, BYTES/RECORDS = INT32 length + bytes, ARRAY = INT32 count +
 * elements, with length -1 meaning null. Flexible versions use the compact types (unsigned
 * varint length+1, 0 meaning null) and end every struct with a tagged-field section:
 *
 **   SIZE    FIELD
 **   uvarint number of tagged fields
 **   then, per field in ascending tag order:
 **   uvarint tag
 **   uvarint size of the value in bytes
 **   size    the value, encoded as the field's type
 *
 * A request frame (after its 4-byte size) starts with the request header:
 *
 **   OFFSET  SIZE  FIELD
 **        0     2  RequestApiKey
 **        2     2  RequestApiVersion
 **        4     4  CorrelationId
 **        8     2  ClientId length (-1 = null; never compact, even in v2)
 **       10     n  ClientId bytes
 **     10+n     -  v2 (flexible versions) only: tagged-field section
 *
 * A response frame is its 4-byte size, then CorrelationId (4 bytes), then in header v1
 * (flexible versions, except ApiVersions) an empty tagged-field section (one 0 byte).
 *
 * Decoding allocates only from the caller's arena and checks every length and count
 * against the bytes left before using it, so hostile input can only fail its own request.
 * Recursion follows the nesting of the schema, which is finite (no layout contains
 * itself), so the stack depth does not depend on the input. */
#include "proto/proto_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/err.h"

/* The layout every PROTO_ARRAY(T) shares, whatever T is. */
struct proto_array_any {
    void *v;
    int32_t n;
};

typedef PROTO_ARRAY(int) proto_array_layout_check;
_Static_assert(offsetof(proto_array_layout_check, n) == offsetof(struct proto_array_any, n),
               "PROTO_ARRAY layout");
_Static_assert(sizeof(proto_array_layout_check) == sizeof(struct proto_array_any),
               "PROTO_ARRAY size");

/* Strings longer than this cannot be expressed in the classic INT16 length, and Kafka
 * refuses them in compact form too, so the encoder cuts them here (size and encode agree). */
#define PROTO_STRING_MAX INT16_MAX

static bool field_present(const struct proto_field *f, int16_t version)
{
    return version >= f->min_version && version <= f->max_version;
}

static bool field_nullable(const struct proto_field *f, int16_t version)
{
    return f->nullable_min >= 0 && version >= f->nullable_min;
}

/* A field read or written in the struct body (as opposed to the tagged section). */
static bool field_regular(const struct proto_field *f, int16_t version)
{
    return field_present(f, version) && f->tag < 0;
}

/* Tagged fields exist only in flexible versions: in any other version they are absent. */
static bool field_tagged(const struct proto_field *f, int16_t version, bool flexible)
{
    return flexible && field_present(f, version) && f->tag >= 0;
}

/* The size in memory of one value of a type (the element stride of an array). */
static size_t value_size(uint8_t type, const struct proto_struct *sub)
{
    switch (type) {
    case PROTO_BOOL:
        return sizeof(bool);
    case PROTO_INT8:
        return 1;
    case PROTO_INT16:
    case PROTO_UINT16:
        return 2;
    case PROTO_INT32:
    case PROTO_UINT32:
        return 4;
    case PROTO_INT64:
    case PROTO_FLOAT64:
        return 8;
    case PROTO_UUID:
        return sizeof(struct proto_uuid);
    case PROTO_STRING:
        return sizeof(char *);
    case PROTO_BYTES:
    case PROTO_RECORDS:
        return sizeof(struct proto_bytes);
    case PROTO_ARRAY:
        return sizeof(struct proto_array_any);
    case PROTO_STRUCT:
        return sub->size;
    }
    return 0;
}

/* Integer-like values (BOOL to INT64) as int64_t, sign- or zero-extended as their C type. */
static int64_t load_int(uint8_t type, const void *p)
{
    switch (type) {
    case PROTO_BOOL: {
        bool v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case PROTO_INT8: {
        int8_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case PROTO_INT16: {
        int16_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case PROTO_UINT16: {
        uint16_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case PROTO_INT32: {
        int32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case PROTO_UINT32: {
        uint32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case PROTO_INT64: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    }
    return 0;
}

static void store_int(uint8_t type, void *p, int64_t x)
{
    switch (type) {
    case PROTO_BOOL: {
        bool v = x != 0;
        memcpy(p, &v, sizeof v);
        break;
    }
    case PROTO_INT8: {
        int8_t v = (int8_t)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case PROTO_INT16: {
        int16_t v = (int16_t)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case PROTO_UINT16: {
        uint16_t v = (uint16_t)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case PROTO_INT32: {
        int32_t v = (int32_t)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case PROTO_UINT32: {
        uint32_t v = (uint32_t)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case PROTO_INT64:
        memcpy(p, &x, sizeof x);
        break;
    }
}

static struct proto_array_any load_array(const void *p)
{
    struct proto_array_any a;
    memcpy(&a, p, sizeof a);
    return a;
}

static void store_array(void *p, void *v, int32_t n)
{
    struct proto_array_any a = {v, n};
    memcpy(p, &a, sizeof a);
}

/* ---------------------------------------------------------------------------------------- */
/* Decoding                                                                                  */

struct dec {
    const uint8_t *buf;
    size_t pos, end; /* end narrows while a tagged value is read, so it cannot overrun */
    int16_t version;
    bool flexible;
    struct arena *a;
};

static size_t dec_left(const struct dec *d)
{
    return d->end - d->pos;
}

static int get_be(struct dec *d, size_t width, uint64_t *out)
{
    uint64_t v = 0;

    if (dec_left(d) < width)
        return ERR_TRUNCATED;
    for (size_t i = 0; i < width; i++)
        v = v << 8 | d->buf[d->pos + i];
    d->pos += width;
    *out = v;
    return 0;
}

/* An unsigned varint of at most 32 bits (five bytes); longer ones are malformed. */
static int get_uvarint(struct dec *d, uint32_t *out)
{
    uint32_t v = 0;

    for (int shift = 0;; shift += 7) {
        uint8_t b;
        if (d->pos >= d->end)
            return ERR_TRUNCATED;
        b = d->buf[d->pos++];
        if (shift == 28 && (b & 0xf0))
            return ERR_PARSE;
        v |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    *out = v;
    return 0;
}

/* A length or count prefix: compact in flexible versions, else a signed INT16 (`width` 2,
 * strings) or INT32 (`width` 4, bytes and arrays). -1 means null. Checks the value against
 * the bytes left, which bounds every allocation that follows by the input's size. */
static int get_len(struct dec *d, size_t width, bool nullable, int64_t *len)
{
    uint64_t x;
    int64_t n;
    int rc;

    if (d->flexible) {
        uint32_t u;
        rc = get_uvarint(d, &u);
        n = (int64_t)u - 1;
    } else {
        rc = get_be(d, width, &x);
        n = width == 2 ? (int64_t)(int16_t)(uint16_t)x : (int64_t)(int32_t)(uint32_t)x;
    }
    if (rc)
        return rc;
    if (n < -1 || (n == -1 && !nullable) || n > INT32_MAX)
        return ERR_PARSE;
    if (n > (int64_t)dec_left(d))
        return ERR_TRUNCATED;
    *len = n;
    return 0;
}

/* Strings are copied into the arena with a NUL terminator. A NUL inside the wire string
 * becomes the pair C0 80 (modified UTF-8): C code would read "a\0b" as "a", and two names
 * the broker treats as equal must not be different names to the client. Refusing the
 * request instead would close the connection where Kafka answers INVALID_TOPIC_EXCEPTION
 * (Java strings may hold U+0000; the name check refuses them). */
static int get_string(struct dec *d, bool nullable, char **out)
{
    const char *src;
    size_t nuls = 0;
    int64_t n;
    char *s, *w;
    int rc;

    rc = get_len(d, 2, nullable, &n);
    if (rc)
        goto err;
    if (n < 0) {
        *out = NULL;
        return 0;
    }
    src = (const char *)d->buf + d->pos;
    const char *nul = memchr(src, '\0', (size_t)n);
    for (int64_t i = nul ? nul - src : n; i < n; i++)
        nuls += src[i] == '\0';
    s = arena_alloc(d->a, (size_t)n + nuls + 1);
    if (s == NULL) {
        rc = ERR_NOMEM;
        goto err;
    }
    if (nuls == 0) { /* the usual case: a copy */
        memcpy(s, src, (size_t)n);
        s[n] = '\0';
        d->pos += (size_t)n;
        *out = s;
        return 0;
    }
    w = s;
    for (int64_t i = 0; i < n; i++) {
        if (src[i] != '\0') {
            *w++ = src[i];
        } else {
            *w++ = (char)0xc0;
            *w++ = (char)0x80;
        }
    }
    *w = '\0';
    d->pos += (size_t)n;
    *out = s;
    return 0;
err:
    return rc;
}

/* Bytes and records are not copied: they point into the input, which outlives the request. */
static int get_bytes(struct dec *d, bool nullable, struct proto_bytes *out)
{
    int64_t n;
    int rc;

    rc = get_len(d, 4, nullable, &n);
    if (rc)
        return rc;
    out->data = n < 0 ? NULL : d->buf + d->pos;
    out->len = (int32_t)n;
    out->ext = NULL;
    if (n > 0)
        d->pos += (size_t)n;
    return 0;
}

static int decode_struct(struct dec *d, const struct proto_struct *s, uint8_t *out);

static int decode_value(struct dec *d, uint8_t type, const struct proto_struct *sub, bool nullable,
                        uint8_t *out)
{
    uint64_t x;
    int rc;

    switch (type) {
    case PROTO_BOOL:
    case PROTO_INT8:
    case PROTO_INT16:
    case PROTO_UINT16:
    case PROTO_INT32:
    case PROTO_UINT32:
    case PROTO_INT64:
        /* A BOOL is one byte on the wire although sizeof(bool) need not be; any non-zero
         * byte is true, as Kafka reads it. */
        rc = get_be(d, type == PROTO_BOOL ? 1 : value_size(type, NULL), &x);
        if (rc)
            return rc;
        store_int(type, out, (int64_t)x);
        return 0;
    case PROTO_FLOAT64: {
        double v;
        rc = get_be(d, 8, &x);
        if (rc)
            return rc;
        memcpy(&v, &x, sizeof v);
        memcpy(out, &v, sizeof v);
        return 0;
    }
    case PROTO_UUID:
        if (dec_left(d) < sizeof(struct proto_uuid))
            return ERR_TRUNCATED;
        memcpy(out, d->buf + d->pos, sizeof(struct proto_uuid));
        d->pos += sizeof(struct proto_uuid);
        return 0;
    case PROTO_STRING: {
        char *s;
        rc = get_string(d, nullable, &s);
        if (rc)
            return rc;
        memcpy(out, &s, sizeof s);
        return 0;
    }
    case PROTO_BYTES:
    case PROTO_RECORDS: {
        struct proto_bytes b;
        rc = get_bytes(d, nullable, &b);
        if (rc)
            return rc;
        memcpy(out, &b, sizeof b);
        return 0;
    }
    case PROTO_STRUCT:
        return decode_struct(d, sub, out);
    }
    return ERR_PARSE; /* a type no table uses */
}

static int decode_array(struct dec *d, uint8_t elem, const struct proto_struct *sub, bool nullable,
                        uint8_t *out)
{
    size_t stride = value_size(elem, sub);
    uint8_t *v = NULL;
    int64_t n;
    int rc;

    /* get_len has checked the count against the bytes left: every element of every declared
     * layout takes at least one byte, so a count that passes cannot allocate more than
     * stride times the input's size (and the arena bounds even that). */
    rc = get_len(d, 4, nullable, &n);
    if (rc)
        goto err;
    if (n > 0) {
        v = arena_alloc(d->a, (size_t)n * stride);
        if (v == NULL) {
            rc = ERR_NOMEM;
            goto err;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        /* Array elements are never null in Kafka's schemas. */
        rc = decode_value(d, elem, sub, false, v + (size_t)i * stride);
        if (rc)
            goto err;
    }
    store_array(out, v, (int32_t)n);
    return 0;
err:
    return rc;
}

static int decode_field(struct dec *d, const struct proto_field *f, uint8_t *base)
{
    bool nullable = field_nullable(f, d->version);

    if (f->type == PROTO_ARRAY)
        return decode_array(d, f->elem_type, f->sub, nullable, base + f->offset);
    return decode_value(d, f->type, f->sub, nullable, base + f->offset);
}

/* What a field holds when the input does not carry it. An embedded struct holds its own
 * fields' defaults (recursion follows the schema's finite nesting). */
static void set_default(const struct proto_field *f, int16_t version, uint8_t *base)
{
    uint8_t *p = base + f->offset;

    if (f->type == PROTO_STRUCT) {
        for (uint16_t i = 0; i < f->sub->nfields; i++)
            set_default(&f->sub->fields[i], version, p);
    } else if (f->type <= PROTO_INT64) {
        store_int(f->type, p, f->def);
    } else if (f->type == PROTO_FLOAT64) {
        double v = (double)f->def;
        memcpy(p, &v, sizeof v);
    } else if (f->tag >= 0 && field_nullable(f, version)) {
        /* A nullable tagged field defaults to null, so that it is not written back. */
        if (f->type == PROTO_ARRAY)
            store_array(p, NULL, -1);
        else if (f->type == PROTO_BYTES || f->type == PROTO_RECORDS)
            memcpy(p, &(struct proto_bytes){NULL, -1, NULL}, sizeof(struct proto_bytes));
    }
    /* Other strings, bytes and arrays stay as the caller zeroed them: NULL / empty. */
}

static const struct proto_field *find_tagged(const struct proto_struct *s, uint32_t tag,
                                             int16_t version, bool flexible)
{
    if (s == NULL)
        return NULL;
    for (uint16_t i = 0; i < s->nfields; i++) {
        const struct proto_field *f = &s->fields[i];
        if (field_tagged(f, version, flexible) && (uint32_t)f->tag == tag)
            return f;
    }
    return NULL;
}

/* The tagged-field section of a struct of layout `s` (NULL: no known tags). Unknown tags are
 * skipped by their size; a known one is read within its size, and whatever it leaves of
 * that size is skipped too, so a newer peer's longer encoding cannot desynchronise us. */
static int decode_tagged(struct dec *d, const struct proto_struct *s, uint8_t *out)
{
    uint32_t count, tag, size;
    int64_t prev = -1;
    int rc;

    rc = get_uvarint(d, &count);
    if (rc)
        goto err;
    /* Each entry takes at least two bytes, so the loop ends with the input even if the
     * count is hostile. */
    for (uint32_t i = 0; i < count; i++) {
        const struct proto_field *f;
        rc = get_uvarint(d, &tag);
        if (rc)
            goto err;
        /* KIP-482: tags in strictly ascending order, so a tag never comes twice (a second
         * value of a known field would silently replace the first). */
        if ((int64_t)tag <= prev) {
            rc = ERR_PARSE;
            goto err;
        }
        prev = tag;
        rc = get_uvarint(d, &size);
        if (rc)
            goto err;
        if (size > dec_left(d)) {
            rc = ERR_TRUNCATED;
            goto err;
        }
        f = find_tagged(s, tag, d->version, d->flexible);
        if (f) {
            size_t start = d->pos, end = d->end;
            d->end = start + size;
            rc = decode_field(d, f, out);
            d->end = end;
            if (rc)
                goto err;
            d->pos = start;
        }
        d->pos += size;
    }
    return 0;
err:
    return rc;
}

static int decode_struct(struct dec *d, const struct proto_struct *s, uint8_t *out)
{
    int rc;

    for (uint16_t i = 0; i < s->nfields; i++)
        if (!field_regular(&s->fields[i], d->version))
            set_default(&s->fields[i], d->version, out);
    for (uint16_t i = 0; i < s->nfields; i++) {
        const struct proto_field *f = &s->fields[i];
        if (!field_regular(f, d->version))
            continue;
        rc = decode_field(d, f, out);
        if (rc)
            goto err;
    }
    if (d->flexible) {
        rc = decode_tagged(d, s, out);
        if (rc)
            goto err;
    }
    return 0;
err:
    return rc;
}

int proto_decode(const struct proto_struct *s, int16_t version, bool flexible, const uint8_t *buf,
                 size_t len, size_t *consumed, void *out, struct arena *a)
{
    struct dec d = {buf, 0, len, version, flexible, a};
    int rc = decode_struct(&d, s, out);
    if (rc == 0)
        *consumed = d.pos;
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Sizing and encoding: one walk, which only counts when there is no buffer, so the size
 * and the encoding cannot disagree. */

struct enc {
    uint8_t *p; /* NULL: count only */
    size_t n;   /* bytes written (or counted) so far: the position in p */
    int16_t version;
    bool flexible;
    /* Hole mode (proto_encode_response_holes): bytes with an ext are left out of p and
     * recorded as holes instead. Off for plain encoding and for the dry runs that size a
     * tagged value, which must count the wire size. */
    bool holes;
    struct proto_hole *hole; /* where to record holes; NULL: count them only */
    size_t n_holes;          /* holes met so far */
    size_t hole_bytes;       /* their total length */
    /* p's room, 0 when p was sized by a count first; past it nothing more is written and
     * `over` is set (the walk goes on counting). */
    size_t cap;
    bool over;
};

/* Whether len more bytes fit at the position (writing them is then up to the caller). */
static bool room(struct enc *e, size_t len)
{
    if (e->cap == 0 || e->n + len <= e->cap)
        return true;
    e->over = true;
    return false;
}

static void put(struct enc *e, const void *src, size_t len)
{
    if (e->p && len && room(e, len))
        memcpy(e->p + e->n, src, len);
    e->n += len;
}

static void put_be(struct enc *e, uint64_t v, size_t width)
{
    uint8_t b[8];
    for (size_t i = 0; i < width; i++)
        b[i] = (uint8_t)(v >> (8 * (width - 1 - i)));
    put(e, b, width);
}

static void put_uvarint(struct enc *e, uint32_t v)
{
    uint8_t b[5];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v;
    put(e, b, n);
}

/* A length or count prefix, -1 = null; the mirror of get_len. */
static void put_len(struct enc *e, size_t width, int64_t len)
{
    if (e->flexible)
        put_uvarint(e, (uint32_t)(len + 1));
    else
        put_be(e, (uint64_t)len, width);
}

/* Whether s[i] starts a C0 80 pair, get_string's form of a NUL byte. */
static bool held_nul(const char *s, size_t i, size_t len)
{
    return i + 1 < len && (uint8_t)s[i] == 0xc0 && (uint8_t)s[i + 1] == 0x80;
}

/* A string as get_string holds it: each C0 80 pair goes back on the wire as one NUL. */
static void put_string(struct enc *e, const char *s, size_t len)
{
    size_t pairs = 0;

    if (len == 0 || memchr(s, 0xc0, len) == NULL) {
        put_len(e, 2, (int64_t)len);
        put(e, s, len);
        return;
    }
    for (size_t i = 0; i < len; i++) {
        if (held_nul(s, i, len)) {
            pairs++;
            i++;
        }
    }
    put_len(e, 2, (int64_t)(len - pairs));
    for (size_t i = 0; i < len; i++) {
        if (held_nul(s, i, len)) {
            put(e, "", 1);
            i++;
        } else {
            put(e, s + i, 1);
        }
    }
}

static void encode_struct(struct enc *e, const struct proto_struct *s, const uint8_t *in);

static void encode_value(struct enc *e, uint8_t type, const struct proto_struct *sub, bool nullable,
                         const uint8_t *in)
{
    switch (type) {
    case PROTO_BOOL:
    case PROTO_INT8:
    case PROTO_INT16:
    case PROTO_UINT16:
    case PROTO_INT32:
    case PROTO_UINT32:
    case PROTO_INT64:
        put_be(e, (uint64_t)load_int(type, in), type == PROTO_BOOL ? 1 : value_size(type, NULL));
        break;
    case PROTO_FLOAT64: {
        uint64_t x;
        memcpy(&x, in, sizeof x);
        put_be(e, x, 8);
        break;
    }
    case PROTO_UUID:
        put(e, in, sizeof(struct proto_uuid));
        break;
    case PROTO_STRING: {
        const char *s;
        size_t len;
        memcpy(&s, in, sizeof s);
        if (s == NULL && nullable) {
            put_len(e, 2, -1);
            break;
        }
        len = s ? strlen(s) : 0;
        if (len > PROTO_STRING_MAX)
            len = PROTO_STRING_MAX;
        put_string(e, s, len);
        break;
    }
    case PROTO_BYTES:
    case PROTO_RECORDS: {
        struct proto_bytes b;
        memcpy(&b, in, sizeof b);
        if (b.len < 0 && nullable) {
            put_len(e, 4, -1);
            break;
        }
        if (b.len < 0)
            b.len = 0;
        put_len(e, 4, b.len);
        if (e->holes && b.ext && b.len > 0) {
            if (e->hole)
                e->hole[e->n_holes] = (struct proto_hole){e->n, (size_t)b.len, b.ext};
            e->n_holes++;
            e->hole_bytes += (size_t)b.len;
        } else if (b.data == NULL) {
            /* Only an ext-only field can get here (decoded bytes always have data): the
             * wire still needs its declared length, and zeros are better than a crash. */
            if (e->p && room(e, (size_t)b.len))
                memset(e->p + e->n, 0, (size_t)b.len);
            e->n += (size_t)b.len;
        } else {
            put(e, b.data, (size_t)b.len);
        }
        break;
    }
    case PROTO_STRUCT:
        encode_struct(e, sub, in);
        break;
    }
}

static void encode_array(struct enc *e, uint8_t elem, const struct proto_struct *sub, bool nullable,
                         const uint8_t *in)
{
    struct proto_array_any a = load_array(in);
    size_t stride = value_size(elem, sub);

    if (a.n < 0 && nullable) {
        put_len(e, 4, -1);
        return;
    }
    if (a.n < 0)
        a.n = 0;
    put_len(e, 4, a.n);
    for (int32_t i = 0; i < a.n; i++)
        encode_value(e, elem, sub, false, (const uint8_t *)a.v + (size_t)i * stride);
}

static void encode_field(struct enc *e, const struct proto_field *f, const uint8_t *base)
{
    bool nullable = field_nullable(f, e->version);

    if (f->type == PROTO_ARRAY)
        encode_array(e, f->elem_type, f->sub, nullable, base + f->offset);
    else
        encode_value(e, f->type, f->sub, nullable, base + f->offset);
}

static bool tagged_is_set(const struct proto_field *f, int16_t version, const uint8_t *base);

/* Whether any field of a struct that exists at `version` differs from its default: Kafka
 * writes a tagged struct only then (it compares with a freshly constructed one). */
static bool struct_is_set(const struct proto_struct *s, int16_t version, const uint8_t *in)
{
    for (uint16_t i = 0; i < s->nfields; i++)
        if (field_present(&s->fields[i], version) && tagged_is_set(&s->fields[i], version, in))
            return true;
    return false;
}

/* Whether a tagged field differs from its default and so goes on the wire. */
static bool tagged_is_set(const struct proto_field *f, int16_t version, const uint8_t *base)
{
    const uint8_t *p = base + f->offset;
    bool nullable = field_nullable(f, version);

    switch (f->type) {
    case PROTO_FLOAT64: {
        double v;
        memcpy(&v, p, sizeof v);
        return v != (double)f->def;
    }
    case PROTO_UUID:
        for (size_t i = 0; i < sizeof(struct proto_uuid); i++)
            if (p[i])
                return true;
        return false;
    case PROTO_STRING: {
        const char *s;
        memcpy(&s, p, sizeof s);
        return nullable ? s != NULL : s != NULL && *s != '\0';
    }
    case PROTO_BYTES:
    case PROTO_RECORDS: {
        struct proto_bytes b;
        memcpy(&b, p, sizeof b);
        return nullable ? b.len >= 0 : b.len > 0;
    }
    case PROTO_ARRAY: {
        struct proto_array_any a = load_array(p);
        return nullable ? a.n >= 0 : a.n > 0;
    }
    case PROTO_STRUCT:
        return struct_is_set(f->sub, version, p);
    default:
        return load_int(f->type, p) != f->def;
    }
}

/* The next tagged field to write after tag `after` (-1 for the first), or NULL. Tables list
 * fields in schema order, which need not be tag order, so this picks the smallest tag left. */
static const struct proto_field *next_tagged(struct enc *e, const struct proto_struct *s,
                                             const uint8_t *in, int64_t after)
{
    const struct proto_field *best = NULL;

    for (uint16_t i = 0; i < s->nfields; i++) {
        const struct proto_field *f = &s->fields[i];
        if (!field_tagged(f, e->version, e->flexible) || f->tag <= after)
            continue;
        if (best && f->tag >= best->tag)
            continue;
        if (tagged_is_set(f, e->version, in))
            best = f;
    }
    return best;
}

static void encode_struct(struct enc *e, const struct proto_struct *s, const uint8_t *in)
{
    const struct proto_field *f;
    uint32_t count = 0;

    for (uint16_t i = 0; i < s->nfields; i++) {
        f = &s->fields[i];
        if (field_regular(f, e->version))
            encode_field(e, f, in);
    }
    if (!e->flexible)
        return;
    for (f = next_tagged(e, s, in, -1); f; f = next_tagged(e, s, in, f->tag))
        count++;
    put_uvarint(e, count);
    for (f = next_tagged(e, s, in, -1); f; f = next_tagged(e, s, in, f->tag)) {
        /* The size prefix needs the value's size first: count it with a dry run. */
        struct enc dry = {NULL, 0, e->version, e->flexible, false, NULL, 0, 0, 0, false};
        encode_field(&dry, f, in);
        put_uvarint(e, (uint32_t)f->tag);
        put_uvarint(e, (uint32_t)dry.n);
        encode_field(e, f, in);
    }
}

size_t proto_size(const struct proto_struct *s, int16_t version, bool flexible, const void *in)
{
    struct enc e = {NULL, 0, version, flexible, false, NULL, 0, 0, 0, false};
    encode_struct(&e, s, in);
    return e.n;
}

size_t proto_encode(const struct proto_struct *s, int16_t version, bool flexible, const void *in,
                    uint8_t *buf)
{
    struct enc e = {buf, 0, version, flexible, false, NULL, 0, 0, 0, false};
    encode_struct(&e, s, in);
    return e.n;
}

/* ---------------------------------------------------------------------------------------- */
/* Requests, responses and their headers                                                     */

int proto_decode_request(const struct proto_api *api, int16_t version, const uint8_t *body,
                         size_t len, void **out, struct arena *a)
{
    size_t consumed;
    void *req;
    int rc;

    if (version < api->min_version || version > api->max_version)
        return ERR_UNSUPPORTED_VERSION;
    req = arena_alloc(a, api->request->size);
    if (req == NULL)
        return ERR_NOMEM;
    rc = proto_decode(api->request, version, proto_api_flexible(api, version), body, len, &consumed,
                      req, a);
    if (rc)
        return rc;
    *out = req;
    return 0;
}

int proto_decode_request_header(const uint8_t *buf, size_t len, struct RequestHeader *h,
                                size_t *hdr_len, struct arena *a)
{
    /* ClientId keeps the classic INT16 length even in header v2 (for compatibility with
     * brokers that parse it before knowing the version), so decode it non-flexible. */
    struct dec d = {buf, 0, len, 0, false, a};
    const struct proto_api *api;
    uint64_t x;
    int rc;

    rc = get_be(&d, 2, &x);
    if (rc)
        goto err;
    h->RequestApiKey = (int16_t)(uint16_t)x;
    rc = get_be(&d, 2, &x);
    if (rc)
        goto err;
    h->RequestApiVersion = (int16_t)(uint16_t)x;
    rc = get_be(&d, 4, &x);
    if (rc)
        goto err;
    h->CorrelationId = (int32_t)(uint32_t)x;
    rc = get_string(&d, true, &h->ClientId);
    if (rc)
        goto err;

    api = proto_api_find(h->RequestApiKey);
    if (api && h->RequestApiVersion >= api->min_version &&
        h->RequestApiVersion <= api->max_version && proto_api_flexible(api, h->RequestApiVersion)) {
        /* Header v2: the header declares no tagged fields we know, so all are skipped. */
        d.flexible = true;
        rc = decode_tagged(&d, NULL, NULL);
        if (rc)
            goto err;
    }
    *hdr_len = d.pos;
    return 0;
err:
    return rc;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* The response header's size: CorrelationId, then in header v1 (flexible versions) an
 * empty tagged-field section. ApiVersions always answers with header v0: a client that
 * asked with a version we do not support must still be able to read our answer (KIP-511). */
static size_t response_header_size(const struct proto_api *api, int16_t version)
{
    return 4 + (proto_api_flexible(api, version) && api->key != PROTO_API_ApiVersions ? 1 : 0);
}

static void put_response_header(uint8_t *f, size_t hdr, size_t wire_size, int32_t correlation_id)
{
    put_be32(f, (uint32_t)wire_size);
    put_be32(f + 4, (uint32_t)correlation_id);
    if (hdr == 5)
        f[8] = 0; /* empty tagged-field section */
}

/* Most answers (a Produce's, a heartbeat's) are far smaller: they are encoded in one walk
 * into a buffer of this size; a larger one is counted by that walk and encoded again into a
 * buffer of its size. */
#define RESPONSE_GUESS 1024

int proto_encode_response(const struct proto_api *api, int16_t version, int32_t correlation_id,
                          const void *resp, uint8_t **frame, size_t *frame_len)
{
    bool flexible = proto_api_flexible(api, version);
    size_t hdr = response_header_size(api, version);
    size_t total;
    uint8_t *f = malloc(RESPONSE_GUESS);
    struct enc e = {.p = f ? f + 4 + hdr : NULL,
                    .version = version,
                    .flexible = flexible,
                    .cap = RESPONSE_GUESS - 4 - hdr};

    if (f == NULL)
        return ERR_NOMEM;
    encode_struct(&e, api->response, resp);
    total = 4 + hdr + e.n;
    if (total - 4 > INT32_MAX) {
        free(f);
        return ERR_NOMEM;
    }
    if (e.over) {
        free(f);
        f = malloc(total);
        if (f == NULL)
            return ERR_NOMEM;
        proto_encode(api->response, version, flexible, resp, f + 4 + hdr);
    }
    put_response_header(f, hdr, total - 4, correlation_id);
    *frame = f;
    *frame_len = total;
    return 0;
}

/* Two walks in hole mode: the first counts the buffer's bytes and the holes, the second
 * writes the buffer and records the holes (at positions relative to the body, shifted to
 * the frame afterwards). */
int proto_encode_response_holes(const struct proto_api *api, int16_t version,
                                int32_t correlation_id, const void *resp, uint8_t **frame,
                                size_t *frame_len, struct proto_hole **holes, size_t *n_holes)
{
    bool flexible = proto_api_flexible(api, version);
    size_t hdr = response_header_size(api, version);
    struct enc count = {NULL, 0, version, flexible, true, NULL, 0, 0, 0, false};
    struct enc e;
    struct proto_hole *h = NULL;
    size_t total;
    uint8_t *f;

    encode_struct(&count, api->response, resp);
    total = 4 + hdr + count.n;
    if (total - 4 + count.hole_bytes > INT32_MAX)
        return ERR_NOMEM;
    f = malloc(total);
    if (f == NULL)
        goto err;
    if (count.n_holes > 0) {
        h = malloc(count.n_holes * sizeof *h);
        if (h == NULL)
            goto err_after_frame;
    }
    put_response_header(f, hdr, total - 4 + count.hole_bytes, correlation_id);
    e = (struct enc){f + 4 + hdr, 0, version, flexible, true, h, 0, 0, 0, false};
    encode_struct(&e, api->response, resp);
    for (size_t i = 0; i < e.n_holes; i++)
        h[i].at += 4 + hdr;
    *frame = f;
    *frame_len = total;
    *holes = h;
    *n_holes = e.n_holes;
    return 0;
err_after_frame:
    free(f);
err:
    return ERR_NOMEM;
}

int proto_encode_request(const struct proto_api *api, int16_t version, int32_t correlation_id,
                         const char *client_id, const void *req, uint8_t **frame, size_t *frame_len)
{
    bool flexible = proto_api_flexible(api, version);
    size_t id_len = client_id ? strlen(client_id) : 0;
    size_t hdr, body, total;
    struct enc e;
    uint8_t *f;

    if (id_len > PROTO_STRING_MAX)
        id_len = PROTO_STRING_MAX;
    hdr = 2 + 2 + 4 + 2 + id_len + (flexible ? 1 : 0);
    body = proto_size(api->request, version, flexible, req);
    total = 4 + hdr + body;
    if (total - 4 > INT32_MAX)
        return ERR_NOMEM;
    f = malloc(total);
    if (f == NULL)
        return ERR_NOMEM;

    e = (struct enc){f, 0, version, false, false, NULL, 0, 0, 0, false};
    put_be(&e, (uint64_t)(total - 4), 4);
    put_be(&e, (uint64_t)(uint16_t)api->key, 2);
    put_be(&e, (uint64_t)(uint16_t)version, 2);
    put_be(&e, (uint64_t)(uint32_t)correlation_id, 4);
    put_be(&e, client_id ? (uint64_t)id_len : (uint64_t)0xffff, 2);
    put(&e, client_id, id_len);
    if (flexible)
        put_uvarint(&e, 0); /* header v2: no tagged fields */
    proto_encode(api->request, version, flexible, req, f + e.n);
    *frame = f;
    *frame_len = total;
    return 0;
}

int proto_decode_response(const struct proto_api *api, int16_t version, const uint8_t *buf,
                          size_t len, int32_t *correlation_id, void **out, struct arena *a)
{
    bool flexible = proto_api_flexible(api, version);
    struct dec d = {buf, 0, len, version, false, a};
    size_t consumed;
    uint64_t x;
    void *resp;
    int rc;

    rc = get_be(&d, 4, &x);
    if (rc)
        goto err;
    *correlation_id = (int32_t)(uint32_t)x;
    if (out == NULL)
        return 0;
    if (flexible && api->key != PROTO_API_ApiVersions) {
        /* Response header v1: tagged fields, none of which we know. */
        d.flexible = true;
        rc = decode_tagged(&d, NULL, NULL);
        if (rc)
            goto err;
    }
    resp = arena_alloc(a, api->response->size);
    if (resp == NULL) {
        rc = ERR_NOMEM;
        goto err;
    }
    rc = proto_decode(api->response, version, flexible, buf + d.pos, len - d.pos, &consumed, resp,
                      a);
    if (rc)
        goto err;
    *out = resp;
    return 0;
err:
    return rc;
}
