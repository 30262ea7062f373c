/* SPDX-License-Identifier: Apache-2.0 */
/* image: the in-memory metadata image, atomic application of record batches to it, and its
 * snapshot format. Topics live in two sorted pointer arrays (by name, by id) so both look-ups
 * are a binary search and meta_topics is the by-name array itself; brokers, non-topic config
 * resources and producer-id blocks are small sorted arrays. Integers are big-endian; "str" is
 * as in records.c (4-byte length, 0xFFFFFFFF = NULL). */

/*
** Snapshot layout (version 6):
**   OFFSET  SIZE  FIELD
**        0     1  format version (6)
**        1     8  next producer id (cluster-wide)
**        9     8  metadata offset (meta_image_offset)
**       17     4  broker count B, then B brokers in id order:
**                   i32 id, str rack, u8 fenced, u8 shutting down, i64 broker epoch,
**                   16 incarnation, i32 listener count L (>= 1), L × (str name, str host,
**                   i32 port, i16 security protocol), i32 dir count D, D × 16 directory id;
**                   host and port are the first listener's
**        …     4  topic count T, then T topics in name order:
**                   str name, 16 topic id, i32 partition count P, then P partitions in
**                   partition order: i32 leader, i32 leader epoch, i32 partition epoch,
**                   i32 n_replicas, n_replicas × i32, i32 n_isr, n_isr × i32,
**                   u8 leader recovery state (0 or 1), i32 n_adding, n_adding × i32,
**                   i32 n_removing, n_removing × i32, i32 n_elr, n_elr × i32;
**                   then i32 config count C, C × (str key, str value)
**        …     4  resource count R (configs of non-topic resources), R resources:
**                   i8 resource type, str resource name, i32 count C, C × (str key, str value)
**        …     4  producer-id block count K, K blocks in broker order:
**                   i32 broker id, i64 first id, i32 size
**        …     4  SCRAM credential count S, S credentials in (user, mechanism) order:
**                   str user, i8 mechanism (1 SHA-256, 2 SHA-512), i32 iterations,
**                   i32 salt length L (1..64), L bytes salt, i32 key length K (32 or 64, the
**                   mechanism's), K bytes stored key, K bytes server key
**        …     4  ACL count A, A entries in id order, each as the ACL record body of
**                   records.c (16 id, i8 resource type, str resource name, i8 pattern type,
**                   str principal, str host, i8 operation, i8 permission); acls.c reads it
**        …        the client quotas, as quotas.c's layout comment says
**
** Version 5 (still read) is version 6 without the client quotas (restored none).
** Version 4 (still read) is version 5 without the ACLs (restored none).
** Version 3 (still read) is version 4 without the SCRAM credentials (restored none).
** Version 2 (still read) is version 3 without the ELR (restored empty). Version 1 (still
** read) has no metadata offset (restored as 0), brokers of i32 id, i32 port,
** str host, str rack, u8 fenced (restored with epoch 0, no incarnation, one PLAINTEXT listener
** at host:port, no directories, not shutting down), and partitions that end after the ISR
** (restored RECOVERED, without reassignment).
**
** Nothing may follow; a restore that finds anything malformed leaves the image untouched.
*/
#include "meta/meta_int.h"

#include <assert.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"

#define META_SNAPSHOT_VERSION 6
#define META_RESOURCE_TOPIC 2
#define META_RESOURCE_BROKER 4
#define MIN_ISR_KEY "min.insync.replicas"

/* Configs of a resource other than a topic (topics keep theirs in struct meta_topic). */
struct meta_resource {
    int8_t type;
    char *name;
    int32_t n_configs;
    struct meta_config_entry *configs;
};

/* The latest producer-id block handed to a broker. */
struct meta_pid_block {
    int32_t broker_id;
    int64_t first_id;
    int32_t size;
};

struct meta_image {
    struct meta_topic **by_name; /* sorted by strcmp of name */
    struct meta_topic **by_id;   /* sorted by memcmp of id */
    size_t n_topics, cap_topics;
    struct meta_broker *brokers; /* sorted by id */
    size_t n_brokers, cap_brokers;
    struct meta_resource *resources; /* sorted by (type, name) */
    size_t n_resources, cap_resources;
    struct meta_pid_block *pids; /* sorted by broker id */
    size_t n_pids, cap_pids;
    struct meta_scram *scram; /* sorted by (user, mechanism) */
    size_t n_scram, cap_scram;
    struct meta_acls *acls;       /* NULL until the first entry (acls.c) */
    struct meta_quota_set quotas; /* quotas.c */
    int64_t next_producer_id;
    int64_t offset; /* batches given to meta_image_apply (or refused before it) since the log
                       began; the batch being applied already counts */
};

/* ---- small helpers ---------------------------------------------------------------------- */

/* Makes room for `need` elements in *arr; false on out of memory (the array is unchanged). */
static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *p;
    if (need <= *cap)
        return true;
    ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    if (ncap > SIZE_MAX / elem)
        return false;
    p = realloc(*arr, ncap * elem);
    if (p == NULL)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void free_configs(struct meta_config_entry *c, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        free(c[i].key);
        free(c[i].value);
    }
    free(c);
}

static void free_partition(struct meta_partition *p)
{
    free(p->replicas);
    free(p->isr);
    free(p->adding);
    free(p->removing);
    free(p->elr);
}

static void free_broker(struct meta_broker *b)
{
    free(b->host);
    free(b->rack);
    for (int32_t i = 0; i < b->n_listeners; i++) {
        free(b->listeners[i].name);
        free(b->listeners[i].host);
    }
    free(b->listeners);
    free(b->dirs);
}

static void free_topic(struct meta_topic *t)
{
    if (t == NULL)
        return;
    for (int32_t i = 0; i < t->n_partitions; i++)
        free_partition(&t->partitions[i]);
    free(t->partitions);
    free_configs(t->configs, t->n_configs);
    free(t->name);
    free(t);
}

static void free_contents(struct meta_image *img)
{
    for (size_t i = 0; i < img->n_topics; i++)
        free_topic(img->by_name[i]);
    free(img->by_name);
    free(img->by_id);
    for (size_t i = 0; i < img->n_brokers; i++)
        free_broker(&img->brokers[i]);
    free(img->brokers);
    for (size_t i = 0; i < img->n_resources; i++) {
        free(img->resources[i].name);
        free_configs(img->resources[i].configs, img->resources[i].n_configs);
    }
    free(img->resources);
    free(img->pids);
    for (size_t i = 0; i < img->n_scram; i++) {
        free(img->scram[i].user);
        memset(&img->scram[i], 0, sizeof img->scram[i]);
    }
    free(img->scram);
    meta_acls_free(img->acls);
    meta_quotas_free(&img->quotas);
    memset(img, 0, sizeof *img);
}

struct meta_image *meta_image_new(void)
{
    return calloc(1, sizeof(struct meta_image));
}

void meta_image_free(struct meta_image *img)
{
    if (img == NULL)
        return;
    free_contents(img);
    free(img);
}

/* ---- sorted look-ups: each returns the lower-bound position and sets *found. ------------ */

static size_t topic_name_pos(const struct meta_image *img, const char *name, bool *found)
{
    size_t lo = 0, hi = img->n_topics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(img->by_name[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < img->n_topics && strcmp(img->by_name[lo]->name, name) == 0;
    return lo;
}

static size_t topic_id_pos(const struct meta_image *img, const uint8_t id[16], bool *found)
{
    size_t lo = 0, hi = img->n_topics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (memcmp(img->by_id[mid]->id, id, 16) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < img->n_topics && memcmp(img->by_id[lo]->id, id, 16) == 0;
    return lo;
}

static size_t broker_pos(const struct meta_image *img, int32_t id, bool *found)
{
    size_t lo = 0, hi = img->n_brokers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->brokers[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < img->n_brokers && img->brokers[lo].id == id;
    return lo;
}

static int resource_cmp(const struct meta_resource *r, int8_t type, const char *name)
{
    if (r->type != type)
        return r->type < type ? -1 : 1;
    return strcmp(r->name, name);
}

static size_t resource_pos(const struct meta_image *img, int8_t type, const char *name, bool *found)
{
    size_t lo = 0, hi = img->n_resources;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (resource_cmp(&img->resources[mid], type, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < img->n_resources && resource_cmp(&img->resources[lo], type, name) == 0;
    return lo;
}

static size_t pid_pos(const struct meta_image *img, int32_t broker_id, bool *found)
{
    size_t lo = 0, hi = img->n_pids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->pids[mid].broker_id < broker_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < img->n_pids && img->pids[lo].broker_id == broker_id;
    return lo;
}

static size_t config_pos(const struct meta_config_entry *c, int32_t n, const char *key, bool *found)
{
    size_t lo = 0, hi = (size_t)n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(c[mid].key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < (size_t)n && strcmp(c[lo].key, key) == 0;
    return lo;
}

/* ---- look-ups ----------------------------------------------------------------------------- */

const struct meta_topic *meta_image_topic_by_name(const struct meta_image *img, const char *name)
{
    bool found;
    size_t i = topic_name_pos(img, name, &found);
    return found ? img->by_name[i] : NULL;
}

const struct meta_topic *meta_image_topic_by_id(const struct meta_image *img, const uint8_t id[16])
{
    bool found;
    size_t i = topic_id_pos(img, id, &found);
    return found ? img->by_id[i] : NULL;
}

const struct meta_topic *const *meta_image_topics(const struct meta_image *img, size_t *n)
{
    *n = img->n_topics;
    return (const struct meta_topic *const *)img->by_name;
}

const struct meta_broker *meta_image_brokers(const struct meta_image *img, size_t *n)
{
    *n = img->n_brokers;
    return img->brokers;
}

const struct meta_broker *meta_image_broker_by_id(const struct meta_image *img, int32_t id)
{
    bool found;
    size_t i = broker_pos(img, id, &found);
    return found ? &img->brokers[i] : NULL;
}

const struct meta_config_entry *
meta_image_configs(const struct meta_image *img, int8_t resource_type, const char *name, int32_t *n)
{
    bool found;
    size_t i;
    *n = 0;
    if (resource_type == META_RESOURCE_TOPIC) {
        const struct meta_topic *t = meta_image_topic_by_name(img, name);
        if (t == NULL || t->n_configs == 0)
            return NULL;
        *n = t->n_configs;
        return t->configs;
    }
    i = resource_pos(img, resource_type, name, &found);
    if (!found)
        return NULL;
    *n = img->resources[i].n_configs;
    return img->resources[i].configs;
}

const char *meta_image_config_get(const struct meta_image *img, int8_t resource_type,
                                  const char *name, const char *key)
{
    int32_t n;
    bool found;
    const struct meta_config_entry *c = meta_image_configs(img, resource_type, name, &n);
    size_t i;
    if (c == NULL)
        return NULL;
    i = config_pos(c, n, key, &found);
    return found ? c[i].value : NULL;
}

int64_t meta_image_offset(const struct meta_image *img)
{
    return img->offset;
}

void meta_image_refuse(struct meta_image *img)
{
    img->offset++;
}

int64_t meta_image_next_producer_id(const struct meta_image *img)
{
    return img->next_producer_id;
}

bool meta_image_producer_block(const struct meta_image *img, int32_t broker_id, int64_t *first_id,
                               int32_t *size)
{
    bool found;
    size_t i = pid_pos(img, broker_id, &found);
    if (!found)
        return false;
    *first_id = img->pids[i].first_id;
    *size = img->pids[i].size;
    return true;
}

/* ---- validation: the batch is checked record by record against the image as the earlier
 * records of the same batch would leave it, without touching the image. The overlay holds
 * the topics the batch has created, removed or grown so far, and the epochs of the
 * partitions it has created or changed. ----------------------------------------------------- */

struct ov_topic {
    const char *name;
    const uint8_t *id;
    int32_t n_partitions;
    bool removed;
    bool from_image; /* its partitions below the image's count are the image's */
};

struct ov_partition {
    size_t topic; /* index into overlay.t */
    int32_t partition, leader_epoch, partition_epoch;
};

struct overlay {
    struct ov_topic *t;
    size_t n;
    struct ov_partition *p;
    size_t n_p;
};

/* The batch's latest view of the topic with this id, pulled from the image on first use;
 * NULL if it exists in neither. */
static struct ov_topic *ov_by_id(const struct meta_image *img, struct overlay *ov,
                                 const uint8_t id[16])
{
    const struct meta_topic *t;
    for (size_t i = ov->n; i-- > 0;)
        if (memcmp(ov->t[i].id, id, 16) == 0)
            return &ov->t[i];
    t = meta_image_topic_by_id(img, id);
    if (t == NULL)
        return NULL;
    ov->t[ov->n] = (struct ov_topic){t->name, t->id, t->n_partitions, false, true};
    return &ov->t[ov->n++];
}

static bool ov_name_exists(const struct meta_image *img, struct overlay *ov, const char *name)
{
    const struct meta_topic *t;
    for (size_t i = ov->n; i-- > 0;)
        if (!ov->t[i].removed && strcmp(ov->t[i].name, name) == 0)
            return true;
    t = meta_image_topic_by_name(img, name);
    if (t == NULL)
        return false;
    /* An image topic the batch already removed no longer holds its name. */
    return !ov_by_id(img, ov, t->id)->removed;
}

bool meta_topic_names_collide(const char *x, const char *y)
{
    for (; *x && *y; x++, y++) {
        char cx = *x == '.' ? '_' : *x, cy = *y == '.' ? '_' : *y;
        if (cx != cy)
            return false;
    }
    return *x == *y;
}

/* Whether this batch removed the image topic with this id (looks, never pulls). */
static bool ov_removed(const struct overlay *ov, const uint8_t id[16])
{
    for (size_t i = ov->n; i-- > 0;)
        if (memcmp(ov->t[i].id, id, 16) == 0)
            return ov->t[i].removed;
    return false;
}

/* Whether `name` collides with a live topic of another name, in the image or added by
 * this batch. Two CreateTopics requests in flight at once are each checked against the
 * image by admin; only here does the second one see the first. */
static bool ov_name_collides(const struct meta_image *img, struct overlay *ov, const char *name)
{
    for (size_t i = 0; i < ov->n; i++)
        if (!ov->t[i].removed && strcmp(ov->t[i].name, name) != 0 &&
            meta_topic_names_collide(ov->t[i].name, name))
            return true;
    if (strpbrk(name, "._") == NULL)
        return false;
    for (size_t i = 0; i < img->n_topics; i++) {
        const struct meta_topic *t = img->by_name[i];
        if (strcmp(t->name, name) != 0 && meta_topic_names_collide(t->name, name) &&
            !ov_removed(ov, t->id))
            return true;
    }
    return false;
}

/* The epochs the batch so far leaves a partition of an overlay topic with (which must hold
 * it: partition < t->n_partitions). */
static void ov_partition_epochs(const struct meta_image *img, const struct overlay *ov,
                                const struct ov_topic *t, int32_t partition, int32_t *leader_epoch,
                                int32_t *partition_epoch)
{
    size_t ti = (size_t)(t - ov->t);
    const struct meta_topic *it;
    for (size_t i = ov->n_p; i-- > 0;) {
        if (ov->p[i].topic == ti && ov->p[i].partition == partition) {
            *leader_epoch = ov->p[i].leader_epoch;
            *partition_epoch = ov->p[i].partition_epoch;
            return;
        }
    }
    /* Not touched by the batch, so it is one of the image's. */
    it = meta_image_topic_by_id(img, t->id);
    assert(t->from_image && it != NULL && partition < it->n_partitions);
    *leader_epoch = it->partitions[partition].leader_epoch;
    *partition_epoch = it->partitions[partition].partition_epoch;
}

static void ov_partition_set(struct overlay *ov, const struct ov_topic *t, int32_t partition,
                             int32_t leader_epoch, int32_t partition_epoch)
{
    size_t ti = (size_t)(t - ov->t);
    for (size_t i = 0; i < ov->n_p; i++) {
        if (ov->p[i].topic == ti && ov->p[i].partition == partition) {
            ov->p[i].leader_epoch = leader_epoch;
            ov->p[i].partition_epoch = partition_epoch;
            return;
        }
    }
    ov->p[ov->n_p++] = (struct ov_partition){ti, partition, leader_epoch, partition_epoch};
}

static bool has_i32(const int32_t *v, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

static bool distinct_i32s(const int32_t *v, int32_t n)
{
    for (int32_t i = 1; i < n; i++)
        if (has_i32(v, i, v[i]))
            return false;
    return true;
}

/* Each of v[0..n) is one of the replicas. */
static bool within(const int32_t *v, int32_t n, const int32_t *replicas, int32_t n_replicas)
{
    for (int32_t i = 0; i < n; i++)
        if (!has_i32(replicas, n_replicas, v[i]))
            return false;
    return true;
}

/* No member of v[0..n) is in w[0..nw). */
static bool disjoint(const int32_t *v, int32_t n, const int32_t *w, int32_t nw)
{
    for (int32_t i = 0; i < n; i++)
        if (has_i32(w, nw, v[i]))
            return false;
    return true;
}

/* The shape rules of a PARTITION or PARTITION_CHANGE, which need no image. */
static bool partition_shape_ok(const struct meta_record *r)
{
    const int32_t *rep = r->u.partition.replicas;
    int32_t n_rep = r->u.partition.n_replicas, leader = r->u.partition.leader;
    int32_t n_elr = r->type == META_REC_PARTITION_CHANGE ? r->u.partition.n_elr : 0;
    const int32_t *elr = r->u.partition.elr;
    return distinct_i32s(rep, n_rep) && distinct_i32s(r->u.partition.isr, r->u.partition.n_isr) &&
           distinct_i32s(elr, n_elr) && within(elr, n_elr, rep, n_rep) &&
           disjoint(elr, n_elr, r->u.partition.isr, r->u.partition.n_isr) &&
           distinct_i32s(r->u.partition.adding, r->u.partition.n_adding) &&
           distinct_i32s(r->u.partition.removing, r->u.partition.n_removing) &&
           within(r->u.partition.isr, r->u.partition.n_isr, rep, n_rep) &&
           within(r->u.partition.adding, r->u.partition.n_adding, rep, n_rep) &&
           within(r->u.partition.removing, r->u.partition.n_removing, rep, n_rep) && leader >= -1 &&
           (leader == -1 || has_i32(rep, n_rep, leader));
}

/* A PARTITION or PARTITION_CHANGE against the batch's view of its topic. */
static int validate_partition(const struct meta_image *img, struct overlay *ov,
                              const struct meta_record *r)
{
    struct ov_topic *t = ov_by_id(img, ov, r->u.partition.topic_id);
    int32_t idx = r->u.partition.partition, le, pe;
    bool change = r->type == META_REC_PARTITION_CHANGE;

    if (t == NULL || t->removed)
        return ERR_UNKNOWN_TOPIC_ID;
    /* A PARTITION adds exactly the next partition or replaces one; a change needs one. */
    if (idx < 0 || idx > t->n_partitions || (change && idx == t->n_partitions))
        return ERR_INVALID_PARTITIONS;
    if (!partition_shape_ok(r))
        return ERR_INVALID_REQUEST;
    if (idx < t->n_partitions) {
        /* Compare-and-set: a decision taken on an older state of the partition is refused. */
        ov_partition_epochs(img, ov, t, idx, &le, &pe);
        if (pe == INT32_MAX || r->u.partition.partition_epoch != pe + 1 ||
            r->u.partition.leader_epoch < le)
            return ERR_INVALID_UPDATE_VERSION;
    } else {
        t->n_partitions++;
    }
    ov_partition_set(ov, t, idx, r->u.partition.leader_epoch, r->u.partition.partition_epoch);
    return 0;
}

/* The registration of broker `id` as the batch so far leaves it: false if there is none,
 * else true and its epoch (a REGISTER_BROKER2 earlier in the batch gets this batch's
 * offset, an old REGISTER_BROKER 0). */
static bool batch_broker_epoch(const struct meta_image *img, const struct meta_record *recs,
                               size_t upto, int32_t id, int64_t *epoch)
{
    const struct meta_broker *b;
    for (size_t i = upto; i-- > 0;) {
        if (recs[i].type == META_REC_REGISTER_BROKER && recs[i].u.broker.id == id) {
            *epoch = 0;
            return true;
        }
        if (recs[i].type == META_REC_REGISTER_BROKER2 && recs[i].u.broker.id == id) {
            *epoch = img->offset;
            return true;
        }
    }
    b = meta_image_broker_by_id(img, id);
    if (b == NULL)
        return false;
    *epoch = b->epoch;
    return true;
}

static int validate(const struct meta_image *img, const struct meta_record *recs, size_t n)
{
    struct overlay ov = {0};
    int64_t next_pid = img->next_producer_id, epoch;
    struct ov_topic *t;
    int rv = 0;

    /* Each record adds at most three topic entries to the overlay (a TOPIC record may pull the
     * topics holding its id and its name from the image, then add itself) and at most one
     * partition entry. */
    if (n > 0) {
        ov.t = calloc(3 * n, sizeof *ov.t);
        ov.p = calloc(n, sizeof *ov.p);
        if (ov.t == NULL || ov.p == NULL) {
            rv = ERR_NOMEM;
            goto out;
        }
    }
    for (size_t i = 0; i < n && rv == 0; i++) {
        const struct meta_record *r = &recs[i];
        switch (r->type) {
        case META_REC_REGISTER_BROKER:
            break;
        case META_REC_REGISTER_BROKER2:
            if (r->u.broker.id < 0)
                rv = ERR_INVALID_REQUEST;
            break;
        case META_REC_FENCE_BROKER:
            if (!batch_broker_epoch(img, recs, i, r->u.fence.id, &epoch))
                rv = ERR_BROKER_NOT_AVAILABLE;
            break;
        case META_REC_BROKER_CHANGE:
            if (!batch_broker_epoch(img, recs, i, r->u.broker_change.id, &epoch))
                rv = ERR_BROKER_NOT_AVAILABLE;
            else if (epoch != r->u.broker_change.epoch)
                rv = ERR_STALE_BROKER_EPOCH;
            break;
        case META_REC_TOPIC:
            if (r->u.topic.name[0] == '\0') {
                rv = ERR_INVALID_TOPIC_EXCEPTION;
                break;
            }
            t = ov_by_id(img, &ov, r->u.topic.id);
            if (ov_name_exists(img, &ov, r->u.topic.name) || (t && !t->removed)) {
                rv = ERR_TOPIC_ALREADY_EXISTS;
                break;
            }
            if (ov_name_collides(img, &ov, r->u.topic.name)) {
                rv = ERR_INVALID_TOPIC_EXCEPTION;
                break;
            }
            ov.t[ov.n++] = (struct ov_topic){r->u.topic.name, r->u.topic.id, 0, false, false};
            break;
        case META_REC_PARTITION:
        case META_REC_PARTITION_CHANGE:
            rv = validate_partition(img, &ov, r);
            break;
        case META_REC_REMOVE_TOPIC:
            t = ov_by_id(img, &ov, r->u.remove_topic.topic_id);
            if (t == NULL || t->removed)
                rv = ERR_UNKNOWN_TOPIC_ID;
            else
                t->removed = true;
            break;
        case META_REC_CONFIG:
            if (r->u.config.key[0] == '\0')
                rv = ERR_INVALID_CONFIG;
            else if (r->u.config.resource_type == META_RESOURCE_TOPIC &&
                     !ov_name_exists(img, &ov, r->u.config.resource_name))
                rv = ERR_UNKNOWN_TOPIC_OR_PARTITION;
            break;
        case META_REC_SCRAM:
            if (r->u.scram.user[0] == '\0')
                rv = ERR_INVALID_REQUEST;
            break;
        case META_REC_ACL:
        case META_REC_REMOVE_ACL:
            rv = meta_acls_validate(img->acls, recs, i);
            break;
        case META_REC_CLIENT_QUOTA:
            rv = meta_quotas_validate(r);
            break;
        case META_REC_PRODUCER_IDS:
            if (r->u.producer_ids.size <= 0 || r->u.producer_ids.first_id < 0 ||
                r->u.producer_ids.first_id > INT64_MAX - r->u.producer_ids.size)
                rv = ERR_INVALID_REQUEST;
            else if (r->u.producer_ids.first_id < next_pid)
                /* Two brokers racing for the same block: only the first one gets it. */
                rv = ERR_DUPLICATE_RESOURCE;
            else
                next_pid = r->u.producer_ids.first_id + r->u.producer_ids.size;
            break;
        }
    }
out:
    free(ov.t);
    free(ov.p);
    return rv;
}

/* ---- mutations: each assumes validate() accepted the record; returns 0 or ERR_NOMEM. ---- */

static int set_config(struct meta_config_entry **c, int32_t *n, const char *key, const char *value)
{
    bool found;
    size_t i = config_pos(*c, *n, key, &found);
    char *k, *v;

    if (value == NULL) {
        if (!found)
            return 0;
        free((*c)[i].key);
        free((*c)[i].value);
        memmove(&(*c)[i], &(*c)[i + 1], ((size_t)*n - i - 1) * sizeof **c);
        if (--*n == 0) {
            free(*c);
            *c = NULL;
        }
        return 0;
    }
    v = strdup(value);
    if (v == NULL)
        return ERR_NOMEM;
    if (found) {
        free((*c)[i].value);
        (*c)[i].value = v;
        return 0;
    }
    k = strdup(key);
    /* Config arrays have no capacity field (the struct is public), so they grow by one. */
    struct meta_config_entry *nc = k ? realloc(*c, ((size_t)*n + 1) * sizeof **c) : NULL;
    if (nc == NULL) {
        free(k);
        free(v);
        return ERR_NOMEM;
    }
    memmove(&nc[i + 1], &nc[i], ((size_t)*n - i) * sizeof *nc);
    nc[i] = (struct meta_config_entry){k, v};
    *c = nc;
    ++*n;
    return 0;
}

/* Empties the ELR of the topic's partitions that have a leader (meta.h's rule for a change
 * of min.insync.replicas). */
static void clear_elrs(struct meta_topic *t)
{
    for (int32_t j = 0; j < t->n_partitions; j++) {
        struct meta_partition *p = &t->partitions[j];
        if (p->leader < 0)
            continue;
        free(p->elr);
        p->elr = NULL;
        p->n_elr = 0;
    }
}

static int apply_config(struct meta_image *img, const struct meta_record *r)
{
    struct meta_resource *res;
    bool found;
    bool min_isr = strcmp(r->u.config.key, MIN_ISR_KEY) == 0;
    size_t i;
    int rv;

    if (r->u.config.resource_type == META_RESOURCE_TOPIC) {
        struct meta_topic *t =
            (struct meta_topic *)meta_image_topic_by_name(img, r->u.config.resource_name);
        if (min_isr)
            clear_elrs(t);
        return set_config(&t->configs, &t->n_configs, r->u.config.key, r->u.config.value);
    }
    /* A broker's (or the cluster-wide) minimum may be any topic's. */
    if (min_isr && r->u.config.resource_type == META_RESOURCE_BROKER)
        for (size_t k = 0; k < img->n_topics; k++)
            clear_elrs(img->by_name[k]);
    i = resource_pos(img, r->u.config.resource_type, r->u.config.resource_name, &found);
    if (!found) {
        if (r->u.config.value == NULL)
            return 0;
        if (!grow((void **)&img->resources, &img->cap_resources, img->n_resources + 1,
                  sizeof *img->resources))
            return ERR_NOMEM;
        char *name = strdup(r->u.config.resource_name);
        if (name == NULL)
            return ERR_NOMEM;
        memmove(&img->resources[i + 1], &img->resources[i],
                (img->n_resources - i) * sizeof *img->resources);
        img->resources[i] = (struct meta_resource){r->u.config.resource_type, name, 0, NULL};
        img->n_resources++;
    }
    res = &img->resources[i];
    rv = set_config(&res->configs, &res->n_configs, r->u.config.key, r->u.config.value);
    if (rv == 0 && res->n_configs == 0) {
        /* A resource without configs is dropped so the array only holds real entries. */
        free(res->name);
        memmove(&img->resources[i], &img->resources[i + 1],
                (img->n_resources - i - 1) * sizeof *img->resources);
        img->n_resources--;
    }
    return rv;
}

/* Puts a complete registration in place of the id's earlier one, or inserts it. On failure
 * the registration is freed and the image unchanged. */
static int put_broker(struct meta_image *img, struct meta_broker *nb)
{
    bool found;
    size_t i = broker_pos(img, nb->id, &found);
    if (found) {
        free_broker(&img->brokers[i]);
    } else {
        if (!grow((void **)&img->brokers, &img->cap_brokers, img->n_brokers + 1,
                  sizeof *img->brokers)) {
            free_broker(nb);
            return ERR_NOMEM;
        }
        memmove(&img->brokers[i + 1], &img->brokers[i],
                (img->n_brokers - i) * sizeof *img->brokers);
        img->n_brokers++;
    }
    img->brokers[i] = *nb;
    return 0;
}

/* Fills the listener array of `b` from `ls` (copies) and sets host/port from the first one;
 * false on out of memory (what was copied stays in b for free_broker). */
static bool copy_listeners(struct meta_broker *b, const struct meta_listener *ls, int32_t n)
{
    b->listeners = calloc((size_t)n, sizeof *b->listeners);
    if (b->listeners == NULL)
        return false;
    b->n_listeners = n;
    for (int32_t i = 0; i < n; i++) {
        b->listeners[i].name = strdup(ls[i].name);
        b->listeners[i].host = strdup(ls[i].host);
        b->listeners[i].port = ls[i].port;
        b->listeners[i].security_protocol = ls[i].security_protocol;
        if (b->listeners[i].name == NULL || b->listeners[i].host == NULL)
            return false;
    }
    b->host = strdup(ls[0].host);
    b->port = ls[0].port;
    return b->host != NULL;
}

/* The old registration record: unfenced at once, epoch 0, its address as the one PLAINTEXT
 * listener. */
static int apply_register(struct meta_image *img, const struct meta_record *r)
{
    struct meta_broker b = {.id = r->u.broker.id};
    struct meta_listener l = {
        .name = "PLAINTEXT", .host = (char *)r->u.broker.host, .port = r->u.broker.port};

    b.rack = dup_or_null(r->u.broker.rack);
    if ((r->u.broker.rack && b.rack == NULL) || !copy_listeners(&b, &l, 1))
        goto oom;
    return put_broker(img, &b);
oom:
    free_broker(&b);
    return ERR_NOMEM;
}

/* BrokerRegistration's record: fenced until the controller unfences it, with this batch's
 * offset as its epoch. */
static int apply_register2(struct meta_image *img, const struct meta_record *r)
{
    struct meta_broker b = {.id = r->u.broker.id, .fenced = true, .epoch = img->offset};

    memcpy(b.incarnation, r->u.broker.incarnation, 16);
    b.rack = dup_or_null(r->u.broker.rack);
    if ((r->u.broker.rack && b.rack == NULL) ||
        !copy_listeners(&b, r->u.broker.listeners, r->u.broker.n_listeners))
        goto oom;
    if (r->u.broker.n_dirs > 0) {
        b.dirs = malloc((size_t)r->u.broker.n_dirs * sizeof *b.dirs);
        if (b.dirs == NULL)
            goto oom;
        memcpy(b.dirs, r->u.broker.dirs, (size_t)r->u.broker.n_dirs * sizeof *b.dirs);
        b.n_dirs = r->u.broker.n_dirs;
    }
    return put_broker(img, &b);
oom:
    free_broker(&b);
    return ERR_NOMEM;
}

static void apply_broker_change(struct meta_image *img, const struct meta_record *r)
{
    bool found;
    size_t i = broker_pos(img, r->u.broker_change.id, &found);
    assert(found);
    if (r->u.broker_change.fenced >= 0)
        img->brokers[i].fenced = r->u.broker_change.fenced == 1;
    if (r->u.broker_change.fenced == 1)
        img->brokers[i].fenced_at = img->offset;
    if (r->u.broker_change.shutting_down >= 0)
        img->brokers[i].shutting_down = r->u.broker_change.shutting_down == 1;
}

/* Inserts a topic in both arrays; ERR_EXISTS if its name or id is taken (only a snapshot
 * being restored can ask for that, since apply validated first). */
static int insert_topic(struct meta_image *img, struct meta_topic *t)
{
    bool found_name, found_id;
    size_t in = topic_name_pos(img, t->name, &found_name);
    size_t ii = topic_id_pos(img, t->id, &found_id);
    size_t cap = img->cap_topics;

    if (found_name || found_id)
        return ERR_EXISTS;
    if (!grow((void **)&img->by_name, &cap, img->n_topics + 1, sizeof *img->by_name))
        return ERR_NOMEM;
    cap = img->cap_topics;
    if (!grow((void **)&img->by_id, &cap, img->n_topics + 1, sizeof *img->by_id))
        return ERR_NOMEM;
    img->cap_topics = cap;
    memmove(&img->by_name[in + 1], &img->by_name[in], (img->n_topics - in) * sizeof t);
    img->by_name[in] = t;
    memmove(&img->by_id[ii + 1], &img->by_id[ii], (img->n_topics - ii) * sizeof t);
    img->by_id[ii] = t;
    img->n_topics++;
    return 0;
}

static int apply_topic(struct meta_image *img, const struct meta_record *r)
{
    struct meta_topic *t = calloc(1, sizeof *t);
    int rv;
    if (t == NULL)
        return ERR_NOMEM;
    t->name = strdup(r->u.topic.name);
    memcpy(t->id, r->u.topic.id, 16);
    rv = t->name ? insert_topic(img, t) : ERR_NOMEM;
    if (rv != 0)
        free_topic(t);
    return rv;
}

static int32_t *dup_i32s(const int32_t *v, int32_t n, bool *ok)
{
    int32_t *out;
    *ok = true;
    if (n == 0)
        return NULL;
    out = malloc((size_t)n * sizeof *out);
    if (out == NULL)
        *ok = false;
    else
        memcpy(out, v, (size_t)n * sizeof *out);
    return out;
}

/* PARTITION (reassignment, recovery state and ELR reset) or PARTITION_CHANGE (all fields). */
static int apply_partition(struct meta_image *img, const struct meta_record *r)
{
    struct meta_topic *t =
        (struct meta_topic *)meta_image_topic_by_id(img, r->u.partition.topic_id);
    int32_t idx = r->u.partition.partition;
    bool change = r->type == META_REC_PARTITION_CHANGE;
    struct meta_partition p = {
        .partition = idx,
        .leader = r->u.partition.leader,
        .leader_epoch = r->u.partition.leader_epoch,
        .partition_epoch = r->u.partition.partition_epoch,
        .n_replicas = r->u.partition.n_replicas,
        .n_isr = r->u.partition.n_isr,
        .leader_recovery_state = change ? r->u.partition.leader_recovery_state : 0,
        .n_adding = change ? r->u.partition.n_adding : 0,
        .n_removing = change ? r->u.partition.n_removing : 0,
        .n_elr = change ? r->u.partition.n_elr : 0,
    };
    bool ok1, ok2, ok3, ok4, ok5;

    p.replicas = dup_i32s(r->u.partition.replicas, p.n_replicas, &ok1);
    p.isr = dup_i32s(r->u.partition.isr, p.n_isr, &ok2);
    p.adding = dup_i32s(r->u.partition.adding, p.n_adding, &ok3);
    p.removing = dup_i32s(r->u.partition.removing, p.n_removing, &ok4);
    p.elr = dup_i32s(r->u.partition.elr, p.n_elr, &ok5);
    if (!ok1 || !ok2 || !ok3 || !ok4 || !ok5)
        goto oom;
    if (idx == t->n_partitions) {
        /* Partition arrays have no capacity field (public struct), so they grow by one. */
        struct meta_partition *np =
            realloc(t->partitions, ((size_t)t->n_partitions + 1) * sizeof *np);
        if (np == NULL)
            goto oom;
        t->partitions = np;
        t->n_partitions++;
    } else {
        free_partition(&t->partitions[idx]);
    }
    t->partitions[idx] = p;
    return 0;
oom:
    free_partition(&p);
    return ERR_NOMEM;
}

static void apply_remove_topic(struct meta_image *img, const struct meta_record *r)
{
    bool found;
    size_t ii = topic_id_pos(img, r->u.remove_topic.topic_id, &found);
    struct meta_topic *t = img->by_id[ii];
    size_t in = topic_name_pos(img, t->name, &found);

    memmove(&img->by_id[ii], &img->by_id[ii + 1], (img->n_topics - ii - 1) * sizeof t);
    memmove(&img->by_name[in], &img->by_name[in + 1], (img->n_topics - in - 1) * sizeof t);
    img->n_topics--;
    /* The topic's configs live in the topic, so they go with it. */
    free_topic(t);
}

static int apply_producer_ids(struct meta_image *img, const struct meta_record *r)
{
    bool found;
    size_t i = pid_pos(img, r->u.producer_ids.broker_id, &found);
    if (!found) {
        if (!grow((void **)&img->pids, &img->cap_pids, img->n_pids + 1, sizeof *img->pids))
            return ERR_NOMEM;
        memmove(&img->pids[i + 1], &img->pids[i], (img->n_pids - i) * sizeof *img->pids);
        img->n_pids++;
    }
    img->pids[i] = (struct meta_pid_block){r->u.producer_ids.broker_id, r->u.producer_ids.first_id,
                                           r->u.producer_ids.size};
    if (r->u.producer_ids.first_id + r->u.producer_ids.size > img->next_producer_id)
        img->next_producer_id = r->u.producer_ids.first_id + r->u.producer_ids.size;
    return 0;
}

/* Where (user, mechanism) is or would go in the sorted credentials. */
static size_t scram_pos(const struct meta_image *img, const char *user, int8_t mech, bool *found)
{
    size_t lo = 0, hi = img->n_scram;
    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(img->scram[mid].user, user);
        if (c == 0)
            c = img->scram[mid].mechanism - mech;
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

static int apply_scram(struct meta_image *img, const struct meta_record *r)
{
    bool found;
    size_t i = scram_pos(img, r->u.scram.user, r->u.scram.mechanism, &found);
    if (r->u.scram.iterations == 0) {
        if (found) {
            free(img->scram[i].user);
            memmove(&img->scram[i], &img->scram[i + 1],
                    (img->n_scram - i - 1) * sizeof *img->scram);
            img->n_scram--;
        }
        return 0;
    }
    struct meta_scram c = {0};
    c.user = strdup(r->u.scram.user);
    if (c.user == NULL)
        return ERR_NOMEM;
    c.mechanism = r->u.scram.mechanism;
    c.iterations = r->u.scram.iterations;
    c.salt_len = r->u.scram.salt_len;
    memcpy(c.salt, r->u.scram.salt, (size_t)c.salt_len);
    c.key_len = r->u.scram.key_len;
    memcpy(c.stored_key, r->u.scram.stored_key, (size_t)c.key_len);
    memcpy(c.server_key, r->u.scram.server_key, (size_t)c.key_len);
    if (found) {
        free(img->scram[i].user);
    } else {
        if (!grow((void **)&img->scram, &img->cap_scram, img->n_scram + 1, sizeof *img->scram)) {
            free(c.user);
            return ERR_NOMEM;
        }
        memmove(&img->scram[i + 1], &img->scram[i], (img->n_scram - i) * sizeof *img->scram);
        img->n_scram++;
    }
    img->scram[i] = c;
    return 0;
}

const struct meta_acls *meta_image_acls(const struct meta_image *img)
{
    return meta_acls_or_empty(img->acls);
}

const struct meta_quota *meta_image_quotas(const struct meta_image *img, size_t *n)
{
    *n = img->quotas.n;
    return img->quotas.q;
}

bool meta_image_quota_lookup(const struct meta_image *img, const char *user, const char *client_id,
                             int key, double *value)
{
    return meta_quotas_lookup(&img->quotas, user, client_id, key, value);
}

const struct meta_scram *meta_image_scram(const struct meta_image *img, size_t *n)
{
    *n = img->n_scram;
    return img->scram;
}

const struct meta_scram *meta_image_scram_find(const struct meta_image *img, const char *user,
                                               int8_t mechanism)
{
    bool found;
    size_t i = scram_pos(img, user, mechanism, &found);
    return found ? &img->scram[i] : NULL;
}

static int apply_one(struct meta_image *img, const struct meta_record *r)
{
    bool found;
    size_t i;
    switch (r->type) {
    case META_REC_REGISTER_BROKER:
        return apply_register(img, r);
    case META_REC_REGISTER_BROKER2:
        return apply_register2(img, r);
    case META_REC_BROKER_CHANGE:
        apply_broker_change(img, r);
        return 0;
    case META_REC_FENCE_BROKER:
        i = broker_pos(img, r->u.fence.id, &found);
        img->brokers[i].fenced = r->u.fence.fenced;
        return 0;
    case META_REC_TOPIC:
        return apply_topic(img, r);
    case META_REC_PARTITION:
    case META_REC_PARTITION_CHANGE:
        return apply_partition(img, r);
    case META_REC_REMOVE_TOPIC:
        apply_remove_topic(img, r);
        return 0;
    case META_REC_CONFIG:
        return apply_config(img, r);
    case META_REC_PRODUCER_IDS:
        return apply_producer_ids(img, r);
    case META_REC_SCRAM:
        return apply_scram(img, r);
    case META_REC_ACL:
    case META_REC_REMOVE_ACL:
        return meta_acls_apply(&img->acls, r);
    case META_REC_CLIENT_QUOTA:
        return meta_quotas_apply(&img->quotas, r);
    }
    return ERR_PARSE;
}

int meta_image_apply(struct meta_image *img, const uint8_t *buf, size_t len, meta_apply_cb cb,
                     void *arg)
{
    struct arena *a = NULL;
    struct meta_record *recs = NULL;
    size_t n = 0;
    int rv;

    /* Every batch counts, refused ones too: each node sees the same ones, so the offset
     * names the same image version everywhere (and a REGISTER_BROKER2 in this batch takes
     * it as its broker epoch). */
    img->offset++;
    rv = meta_batch_decode(buf, len, &a, &recs, &n);
    if (rv != 0)
        goto out;
    rv = validate(img, recs, n);
    if (rv != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        rv = apply_one(img, &recs[i]);
        if (rv != 0) {
            /* Validation passed, so only memory can fail here, half-way through a committed
             * batch: this node's image would silently differ from every other node's. A
             * replicated state machine cannot go on from that; restart replays the log. */
            slog_error("meta", "out of memory applying a committed batch (record %zu of %zu)",
                       i + 1, n);
            abort();
        }
    }
    if (cb)
        cb(arg, recs, n);
out:
    arena_free(a);
    return rv;
}

/* ---- the whole image as records (for on_apply after a snapshot restore) ------------------ */

/* Whether a partition's state is one a PARTITION record can say (recovered, no
 * reassignment), or needs a PARTITION_CHANGE. */
static bool partition_is_plain(const struct meta_partition *p)
{
    return p->leader_recovery_state == 0 && p->n_adding == 0 && p->n_removing == 0 && p->n_elr == 0;
}

int meta_image_records(const struct meta_image *img, struct arena **arena,
                       struct meta_record **recs, size_t *n)
{
    size_t count = 0, k = 0;
    struct meta_record *out;

    *arena = NULL;
    /* At most three records per broker: its registration, then its fence and its shutdown
     * as they differ from what the registration implies. */
    count += 3 * img->n_brokers;
    for (size_t i = 0; i < img->n_topics; i++)
        count += 1 + (size_t)img->by_name[i]->n_partitions + (size_t)img->by_name[i]->n_configs;
    for (size_t i = 0; i < img->n_resources; i++)
        count += (size_t)img->resources[i].n_configs;
    count += img->n_pids;
    count += img->n_scram;
    {
        size_t n_acls;
        meta_acls_all(meta_acls_or_empty(img->acls), &n_acls);
        count += n_acls;
    }
    count += meta_quotas_count(&img->quotas);

    *arena = arena_new(count * sizeof *out + 64);
    if (*arena == NULL)
        return ERR_NOMEM;
    out = count ? arena_alloc(*arena, count * sizeof *out) : NULL;
    if (count && out == NULL)
        return ERR_NOMEM;

    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct meta_broker *b = &img->brokers[i];
        /* An epoch of 0 is a registration of the old record type (REGISTER_BROKER2 always
         * applies at an offset of 1 or more): it starts unfenced. */
        bool old = b->epoch == 0, starts_fenced = !old;
        out[k].type = old ? META_REC_REGISTER_BROKER : META_REC_REGISTER_BROKER2;
        out[k].u.broker.id = b->id;
        out[k].u.broker.port = b->port;
        out[k].u.broker.host = b->host;
        out[k].u.broker.rack = b->rack;
        if (!old) {
            memcpy(out[k].u.broker.incarnation, b->incarnation, 16);
            out[k].u.broker.n_listeners = b->n_listeners;
            out[k].u.broker.listeners = b->listeners;
            out[k].u.broker.n_dirs = b->n_dirs;
            out[k].u.broker.dirs = (const uint8_t(*)[16])b->dirs;
        }
        k++;
        if (old && b->fenced) {
            out[k].type = META_REC_FENCE_BROKER;
            out[k].u.fence.id = b->id;
            out[k++].u.fence.fenced = true;
        }
        if (b->fenced != starts_fenced || b->shutting_down) {
            out[k].type = META_REC_BROKER_CHANGE;
            out[k].u.broker_change.id = b->id;
            out[k].u.broker_change.epoch = b->epoch;
            out[k].u.broker_change.fenced = b->fenced == starts_fenced ? -1 : b->fenced ? 1 : 0;
            out[k++].u.broker_change.shutting_down = b->shutting_down ? 1 : -1;
        }
    }
    for (size_t i = 0; i < img->n_topics; i++) {
        const struct meta_topic *t = img->by_name[i];
        out[k].type = META_REC_TOPIC;
        out[k].u.topic.name = t->name;
        memcpy(out[k++].u.topic.id, t->id, 16);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct meta_partition *p = &t->partitions[j];
            /* A partition in recovery or reassignment, or with an ELR, is told as the change
             * that left it so;
             * its fields are the whole state either way. */
            out[k].type = partition_is_plain(p) ? META_REC_PARTITION : META_REC_PARTITION_CHANGE;
            memcpy(out[k].u.partition.topic_id, t->id, 16);
            out[k].u.partition.partition = p->partition;
            out[k].u.partition.leader = p->leader;
            out[k].u.partition.leader_epoch = p->leader_epoch;
            out[k].u.partition.partition_epoch = p->partition_epoch;
            out[k].u.partition.n_replicas = p->n_replicas;
            out[k].u.partition.replicas = p->replicas;
            out[k].u.partition.n_isr = p->n_isr;
            out[k].u.partition.isr = p->isr;
            out[k].u.partition.leader_recovery_state = p->leader_recovery_state;
            out[k].u.partition.n_adding = p->n_adding;
            out[k].u.partition.adding = p->adding;
            out[k].u.partition.n_removing = p->n_removing;
            out[k].u.partition.removing = p->removing;
            out[k].u.partition.n_elr = p->n_elr;
            out[k++].u.partition.elr = p->elr;
        }
        for (int32_t j = 0; j < t->n_configs; j++) {
            out[k].type = META_REC_CONFIG;
            out[k].u.config.resource_type = META_RESOURCE_TOPIC;
            out[k].u.config.resource_name = t->name;
            out[k].u.config.key = t->configs[j].key;
            out[k++].u.config.value = t->configs[j].value;
        }
    }
    for (size_t i = 0; i < img->n_resources; i++) {
        const struct meta_resource *res = &img->resources[i];
        for (int32_t j = 0; j < res->n_configs; j++) {
            out[k].type = META_REC_CONFIG;
            out[k].u.config.resource_type = res->type;
            out[k].u.config.resource_name = res->name;
            out[k].u.config.key = res->configs[j].key;
            out[k++].u.config.value = res->configs[j].value;
        }
    }
    for (size_t i = 0; i < img->n_pids; i++) {
        out[k].type = META_REC_PRODUCER_IDS;
        out[k].u.producer_ids.broker_id = img->pids[i].broker_id;
        out[k].u.producer_ids.first_id = img->pids[i].first_id;
        out[k++].u.producer_ids.size = img->pids[i].size;
    }
    for (size_t i = 0; i < img->n_scram; i++) {
        const struct meta_scram *c = &img->scram[i];
        out[k].type = META_REC_SCRAM;
        out[k].u.scram.user = c->user;
        out[k].u.scram.mechanism = c->mechanism;
        out[k].u.scram.iterations = c->iterations;
        out[k].u.scram.salt_len = c->salt_len;
        out[k].u.scram.salt = c->salt;
        out[k].u.scram.key_len = c->key_len;
        out[k].u.scram.stored_key = c->stored_key;
        out[k++].u.scram.server_key = c->server_key;
    }
    k += meta_acls_records(img->acls, out + k);
    k += meta_quotas_records(&img->quotas, out + k);
    assert(k <= count);
    *recs = out;
    *n = k;
    return 0;
}

/* ---- snapshot ---------------------------------------------------------------------------- */

static void write_configs(struct meta_wbuf *w, const struct meta_config_entry *c, int32_t n)
{
    meta_w_i32(w, n);
    for (int32_t i = 0; i < n; i++) {
        meta_w_str(w, c[i].key);
        meta_w_str(w, c[i].value);
    }
}

static void write_i32s(struct meta_wbuf *w, const int32_t *v, int32_t n)
{
    meta_w_i32(w, n);
    for (int32_t i = 0; i < n; i++)
        meta_w_i32(w, v[i]);
}

int meta_image_snapshot(const struct meta_image *img, uint8_t **buf, size_t *len)
{
    struct meta_wbuf w = {0};

    meta_w_u8(&w, META_SNAPSHOT_VERSION);
    meta_w_i64(&w, img->next_producer_id);
    meta_w_i64(&w, img->offset);
    meta_w_u32(&w, (uint32_t)img->n_brokers);
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct meta_broker *b = &img->brokers[i];
        meta_w_i32(&w, b->id);
        meta_w_str(&w, b->rack);
        meta_w_u8(&w, b->fenced ? 1 : 0);
        meta_w_u8(&w, b->shutting_down ? 1 : 0);
        meta_w_i64(&w, b->epoch);
        meta_w_bytes(&w, b->incarnation, 16);
        meta_w_i32(&w, b->n_listeners);
        for (int32_t j = 0; j < b->n_listeners; j++) {
            meta_w_str(&w, b->listeners[j].name);
            meta_w_str(&w, b->listeners[j].host);
            meta_w_i32(&w, b->listeners[j].port);
            meta_w_u16(&w, (uint16_t)b->listeners[j].security_protocol);
        }
        meta_w_i32(&w, b->n_dirs);
        for (int32_t j = 0; j < b->n_dirs; j++)
            meta_w_bytes(&w, b->dirs[j], 16);
    }
    meta_w_u32(&w, (uint32_t)img->n_topics);
    for (size_t i = 0; i < img->n_topics; i++) {
        const struct meta_topic *t = img->by_name[i];
        meta_w_str(&w, t->name);
        meta_w_bytes(&w, t->id, 16);
        meta_w_i32(&w, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct meta_partition *p = &t->partitions[j];
            meta_w_i32(&w, p->leader);
            meta_w_i32(&w, p->leader_epoch);
            meta_w_i32(&w, p->partition_epoch);
            write_i32s(&w, p->replicas, p->n_replicas);
            write_i32s(&w, p->isr, p->n_isr);
            meta_w_u8(&w, (uint8_t)p->leader_recovery_state);
            write_i32s(&w, p->adding, p->n_adding);
            write_i32s(&w, p->removing, p->n_removing);
            write_i32s(&w, p->elr, p->n_elr);
        }
        write_configs(&w, t->configs, t->n_configs);
    }
    meta_w_u32(&w, (uint32_t)img->n_resources);
    for (size_t i = 0; i < img->n_resources; i++) {
        meta_w_u8(&w, (uint8_t)img->resources[i].type);
        meta_w_str(&w, img->resources[i].name);
        write_configs(&w, img->resources[i].configs, img->resources[i].n_configs);
    }
    meta_w_u32(&w, (uint32_t)img->n_pids);
    for (size_t i = 0; i < img->n_pids; i++) {
        meta_w_i32(&w, img->pids[i].broker_id);
        meta_w_i64(&w, img->pids[i].first_id);
        meta_w_i32(&w, img->pids[i].size);
    }
    meta_w_u32(&w, (uint32_t)img->n_scram);
    for (size_t i = 0; i < img->n_scram; i++) {
        const struct meta_scram *c = &img->scram[i];
        meta_w_str(&w, c->user);
        meta_w_u8(&w, (uint8_t)c->mechanism);
        meta_w_i32(&w, c->iterations);
        meta_w_i32(&w, c->salt_len);
        meta_w_bytes(&w, c->salt, (size_t)c->salt_len);
        meta_w_i32(&w, c->key_len);
        meta_w_bytes(&w, c->stored_key, (size_t)c->key_len);
        meta_w_bytes(&w, c->server_key, (size_t)c->key_len);
    }
    meta_acls_write(img->acls, &w);
    meta_quotas_write(&w, &img->quotas);
    if (w.oom) {
        free(w.p);
        return ERR_NOMEM;
    }
    *buf = w.p;
    *len = w.len;
    return 0;
}

/* A malloc()ed copy of a string from the buffer; *s stays NULL for a NULL string. Returns
 * ERR_PARSE if the reader failed or a required string is NULL, ERR_NOMEM, or 0. */
static int read_str(struct meta_rbuf *r, bool required, char **s)
{
    const char *v;
    size_t n;
    *s = NULL;
    meta_r_str(r, &v, &n);
    if (r->bad || (required && v == NULL))
        return ERR_PARSE;
    if (v == NULL)
        return 0;
    *s = strndup(v, n);
    return *s ? 0 : ERR_NOMEM;
}

/* Reads a count whose items take at least `min_size` bytes each, so a hostile count fails
 * here instead of asking for a huge allocation. */
static int read_count(struct meta_rbuf *r, size_t min_size, size_t *count)
{
    uint32_t c = meta_r_u32(r);
    if (r->bad || (int32_t)c < 0 || c > meta_r_left(r) / min_size)
        return ERR_PARSE;
    *count = c;
    return 0;
}

/* Reads configs into a key-sorted array; keys must be strictly increasing, which both keeps
 * the array sorted and rejects duplicates. */
static int read_configs(struct meta_rbuf *r, struct meta_config_entry **out, int32_t *n)
{
    struct meta_config_entry *c = NULL;
    size_t count;
    int rv;

    *out = NULL;
    *n = 0;
    rv = read_count(r, 8, &count);
    if (rv != 0 || count == 0)
        return rv;
    c = calloc(count, sizeof *c);
    if (c == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < count; i++) {
        *n = (int32_t)i + 1; /* so the caller frees what was read so far */
        rv = read_str(r, true, &c[i].key);
        if (rv == 0)
            rv = read_str(r, true, &c[i].value);
        if (rv == 0 && i > 0 && strcmp(c[i - 1].key, c[i].key) >= 0)
            rv = ERR_PARSE;
        if (rv != 0)
            break;
    }
    *out = c;
    return rv;
}

static int read_i32_array(struct meta_rbuf *r, int32_t **out, int32_t *n)
{
    size_t count;
    int rv = read_count(r, 4, &count);
    *out = NULL;
    *n = 0;
    if (rv != 0 || count == 0)
        return rv;
    *out = malloc(count * sizeof **out);
    if (*out == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < count; i++)
        (*out)[i] = meta_r_i32(r);
    *n = (int32_t)count;
    return r->bad ? ERR_PARSE : 0;
}

static int read_topic(struct meta_rbuf *r, int version, struct meta_topic *t)
{
    size_t count;
    uint8_t state;
    int rv;

    rv = read_str(r, true, &t->name);
    if (rv != 0)
        return rv;
    meta_r_bytes(r, t->id, 16);
    rv = read_count(r, version == 1 ? 20 : version == 2 ? 29 : 33, &count);
    if (rv != 0)
        return rv;
    if (count > 0) {
        t->partitions = calloc(count, sizeof *t->partitions);
        if (t->partitions == NULL)
            return ERR_NOMEM;
    }
    for (size_t j = 0; j < count; j++) {
        struct meta_partition *p = &t->partitions[j];
        t->n_partitions = (int32_t)j + 1; /* so free_topic frees what was read so far */
        p->partition = (int32_t)j;
        p->leader = meta_r_i32(r);
        p->leader_epoch = meta_r_i32(r);
        p->partition_epoch = meta_r_i32(r);
        rv = read_i32_array(r, &p->replicas, &p->n_replicas);
        if (rv == 0)
            rv = read_i32_array(r, &p->isr, &p->n_isr);
        if (rv == 0 && version > 1) {
            state = meta_r_u8(r);
            if (r->bad || state > 1)
                return ERR_PARSE;
            p->leader_recovery_state = (int8_t)state;
            rv = read_i32_array(r, &p->adding, &p->n_adding);
            if (rv == 0)
                rv = read_i32_array(r, &p->removing, &p->n_removing);
        }
        if (rv == 0 && version > 2)
            rv = read_i32_array(r, &p->elr, &p->n_elr);
        if (rv != 0)
            return rv;
    }
    return read_configs(r, &t->configs, &t->n_configs);
}

/* A version 1 broker: its address becomes its one PLAINTEXT listener. */
static int read_broker_v1(struct meta_rbuf *r, struct meta_broker *b)
{
    uint8_t fenced;
    char *host;
    int rv;

    b->id = meta_r_i32(r);
    b->port = meta_r_i32(r);
    rv = read_str(r, true, &b->host);
    if (rv == 0)
        rv = read_str(r, false, &b->rack);
    if (rv != 0)
        return rv;
    fenced = meta_r_u8(r);
    if (r->bad || fenced > 1)
        return ERR_PARSE;
    b->fenced = fenced == 1;
    b->listeners = calloc(1, sizeof *b->listeners);
    if (b->listeners == NULL)
        return ERR_NOMEM;
    b->n_listeners = 1;
    b->listeners[0].port = b->port;
    b->listeners[0].name = strdup("PLAINTEXT");
    b->listeners[0].host = host = strdup(b->host);
    return b->listeners[0].name && host ? 0 : ERR_NOMEM;
}

static int read_broker_v2(struct meta_rbuf *r, struct meta_broker *b)
{
    uint8_t fenced, shutting;
    size_t count;
    int rv;

    b->id = meta_r_i32(r);
    rv = read_str(r, false, &b->rack);
    if (rv != 0)
        return rv;
    fenced = meta_r_u8(r);
    shutting = meta_r_u8(r);
    b->epoch = meta_r_i64(r);
    meta_r_bytes(r, b->incarnation, 16);
    if (r->bad || fenced > 1 || shutting > 1 || b->epoch < 0)
        return ERR_PARSE;
    b->fenced = fenced == 1;
    b->shutting_down = shutting == 1;
    rv = read_count(r, 14, &count);
    if (rv != 0)
        return rv;
    if (count == 0)
        return ERR_PARSE;
    b->listeners = calloc(count, sizeof *b->listeners);
    if (b->listeners == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < count; i++) {
        struct meta_listener *l = &b->listeners[i];
        b->n_listeners = (int32_t)i + 1; /* so free_broker frees what was read so far */
        rv = read_str(r, true, &l->name);
        if (rv == 0)
            rv = read_str(r, true, &l->host);
        if (rv != 0)
            return rv;
        l->port = meta_r_i32(r);
        l->security_protocol = (int16_t)meta_r_u16(r);
    }
    b->host = strdup(b->listeners[0].host);
    if (b->host == NULL)
        return ERR_NOMEM;
    b->port = b->listeners[0].port;
    rv = read_count(r, 16, &count);
    if (rv != 0)
        return rv;
    if (count > 0) {
        b->dirs = malloc(count * sizeof *b->dirs);
        if (b->dirs == NULL)
            return ERR_NOMEM;
        for (size_t i = 0; i < count; i++)
            meta_r_bytes(r, b->dirs[i], 16);
        b->n_dirs = (int32_t)count;
    }
    return r->bad ? ERR_PARSE : 0;
}

static int restore_into(struct meta_image *img, struct meta_rbuf *r)
{
    size_t count;
    uint8_t version;
    int rv;

    version = meta_r_u8(r);
    if (r->bad || version < 1 || version > META_SNAPSHOT_VERSION)
        return ERR_PARSE;
    img->next_producer_id = meta_r_i64(r);
    if (version > 1)
        img->offset = meta_r_i64(r);
    if (r->bad || img->offset < 0)
        return ERR_PARSE;

    rv = read_count(r, version == 1 ? 17 : 56, &count);
    if (rv != 0)
        return rv;
    if (count > 0 && (img->brokers = calloc(count, sizeof *img->brokers)) == NULL)
        return ERR_NOMEM;
    img->cap_brokers = count;
    for (size_t i = 0; i < count; i++) {
        struct meta_broker *b = &img->brokers[i];
        img->n_brokers = i + 1;
        rv = version == 1 ? read_broker_v1(r, b) : read_broker_v2(r, b);
        if (rv != 0)
            return rv;
        /* When it was fenced is not kept: a broker fenced in the snapshot counts as fenced
         * at the snapshot's offset, a bound it must reach to be caught up (stricter than the
         * real one, never looser). */
        if (b->fenced)
            b->fenced_at = img->offset;
        if (i > 0 && img->brokers[i - 1].id >= b->id)
            return ERR_PARSE;
    }

    rv = read_count(r, 28, &count);
    if (rv != 0)
        return rv;
    for (size_t i = 0; i < count; i++) {
        struct meta_topic *t = calloc(1, sizeof *t);
        if (t == NULL)
            return ERR_NOMEM;
        rv = read_topic(r, version, t);
        if (rv == 0) {
            rv = insert_topic(img, t);
            if (rv == ERR_EXISTS)
                rv = ERR_PARSE;
        }
        if (rv != 0) {
            free_topic(t);
            return rv;
        }
    }

    rv = read_count(r, 9, &count);
    if (rv != 0)
        return rv;
    if (count > 0 && (img->resources = calloc(count, sizeof *img->resources)) == NULL)
        return ERR_NOMEM;
    img->cap_resources = count;
    for (size_t i = 0; i < count; i++) {
        struct meta_resource *res = &img->resources[i];
        img->n_resources = i + 1;
        res->type = (int8_t)meta_r_u8(r);
        rv = read_str(r, true, &res->name);
        if (rv == 0)
            rv = read_configs(r, &res->configs, &res->n_configs);
        if (rv != 0)
            return rv;
        if (res->type == META_RESOURCE_TOPIC || res->n_configs == 0 ||
            (i > 0 && resource_cmp(&img->resources[i - 1], res->type, res->name) >= 0))
            return ERR_PARSE;
    }

    rv = read_count(r, 16, &count);
    if (rv != 0)
        return rv;
    if (count > 0 && (img->pids = calloc(count, sizeof *img->pids)) == NULL)
        return ERR_NOMEM;
    img->cap_pids = count;
    for (size_t i = 0; i < count; i++) {
        img->pids[i].broker_id = meta_r_i32(r);
        img->pids[i].first_id = meta_r_i64(r);
        img->pids[i].size = meta_r_i32(r);
        img->n_pids = i + 1;
        if (r->bad || (i > 0 && img->pids[i - 1].broker_id >= img->pids[i].broker_id))
            return ERR_PARSE;
    }
    if (version >= 4) {
        rv = read_count(r, 18, &count);
        if (rv != 0)
            return rv;
        if (count > 0 && (img->scram = calloc(count, sizeof *img->scram)) == NULL)
            return ERR_NOMEM;
        img->cap_scram = count;
        for (size_t i = 0; i < count; i++) {
            struct meta_scram *c = &img->scram[i];
            img->n_scram = i + 1;
            rv = read_str(r, true, &c->user);
            if (rv != 0)
                return rv;
            c->mechanism = (int8_t)meta_r_u8(r);
            c->iterations = meta_r_i32(r);
            c->salt_len = meta_r_i32(r);
            if (r->bad || c->user[0] == '\0' || c->iterations < 1 || c->salt_len < 1 ||
                c->salt_len > META_SCRAM_MAX_SALT ||
                (c->mechanism != META_SCRAM_SHA_256 && c->mechanism != META_SCRAM_SHA_512))
                return ERR_PARSE;
            meta_r_bytes(r, c->salt, (size_t)c->salt_len);
            c->key_len = meta_r_i32(r);
            if (r->bad || c->key_len != (c->mechanism == META_SCRAM_SHA_256 ? 32 : 64))
                return ERR_PARSE;
            meta_r_bytes(r, c->stored_key, (size_t)c->key_len);
            meta_r_bytes(r, c->server_key, (size_t)c->key_len);
            if (r->bad)
                return ERR_PARSE;
            if (i > 0) {
                const struct meta_scram *p = &img->scram[i - 1];
                int cmp = strcmp(p->user, c->user);
                if (cmp > 0 || (cmp == 0 && p->mechanism >= c->mechanism))
                    return ERR_PARSE;
            }
        }
    }
    if (version >= 5) {
        rv = meta_acls_read(r, &img->acls);
        if (rv != 0)
            return rv;
    }
    if (version >= 6) {
        rv = meta_quotas_read(r, &img->quotas);
        if (rv != 0)
            return rv;
    }
    if (r->bad || r->off != r->len)
        return ERR_PARSE;
    return 0;
}

int meta_image_restore(struct meta_image *img, const uint8_t *buf, size_t len)
{
    struct meta_rbuf r = {.p = buf, .len = len};
    struct meta_image fresh = {0};
    int rv;

    /* Built aside and swapped in only when complete, so a bad snapshot changes nothing. */
    rv = restore_into(&fresh, &r);
    if (rv != 0) {
        free_contents(&fresh);
        return rv;
    }
    free_contents(img);
    *img = fresh;
    return 0;
}
