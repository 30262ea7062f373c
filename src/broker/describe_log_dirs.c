/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeLogDirs (KIP-113; sizes of the volume from v4, KIP-827): for the one log directory
 * of this broker, each hosted partition asked for (any role) with the bytes of its segments.
 * As Kafka does, partitions asked for but not hosted here and topics left with none are
 * omitted (no error), a null Topics asks for every hosted partition, and a partition named
 * twice is answered once. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "broker_int.h"
#include "net/net.h"
#include "replica/replica.h"

/* The partitions selected, gathered before they are grouped by topic. */
struct selection {
    struct partition **v;
    size_t n, cap;
};

static int select_partition(void *arg, struct partition *p)
{
    struct selection *s = arg;
    if (s->n == s->cap) /* the table changed under the walk: cannot happen on the loop */
        return ERR_NOMEM;
    s->v[s->n++] = p;
    return 0;
}

static int by_topic_then_index(const void *a, const void *b)
{
    const struct partition *x = *(struct partition *const *)a, *y = *(struct partition *const *)b;
    int c = strcmp(partition_topic(x), partition_topic(y));
    if (c != 0)
        return c;
    return (partition_index(x) > partition_index(y)) - (partition_index(x) < partition_index(y));
}

/* Fills r->Topics from the selection: sorted, duplicates dropped, one entry per topic. */
static int group_by_topic(struct arena *ar, struct selection *s, struct DescribeLogDirsResult *r)
{
    size_t n = 0, ntopics = 0;

    if (s->n > 1)
        qsort(s->v, s->n, sizeof *s->v, by_topic_then_index);
    for (size_t i = 0; i < s->n; i++)
        if (i == 0 || s->v[i] != s->v[i - 1])
            s->v[n++] = s->v[i];
    s->n = n;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(partition_topic(s->v[i]), partition_topic(s->v[i - 1])) != 0)
            ntopics++;
    r->Topics.v = arena_alloc(ar, (ntopics + 1) * sizeof *r->Topics.v);
    if (r->Topics.v == NULL)
        return ERR_NOMEM;
    r->Topics.n = 0;
    for (size_t i = 0; i < n;) {
        struct DescribeLogDirsTopic *t = &r->Topics.v[r->Topics.n++];
        size_t j = i;
        while (j < n && strcmp(partition_topic(s->v[j]), partition_topic(s->v[i])) == 0)
            j++;
        t->Name = (char *)partition_topic(s->v[i]);
        t->Partitions.n = (int32_t)(j - i);
        t->Partitions.v = arena_alloc(ar, (j - i) * sizeof *t->Partitions.v);
        if (t->Partitions.v == NULL)
            return ERR_NOMEM;
        for (size_t k = i; k < j; k++) {
            struct partition *p = s->v[k];
            struct DescribeLogDirsPartition *o = &t->Partitions.v[k - i];
            int64_t hw = partition_high_watermark(p), leo = partition_log_end_offset(p);
            o->PartitionIndex = partition_index(p);
            o->PartitionSize = partition_size_bytes(p);
            /* Kafka's lag of a current (not future) log: how far the high watermark is past
             * the log end, never negative — so 0, as the high watermark never passes it. */
            o->OffsetLag = hw > leo ? hw - leo : 0;
            o->IsFutureKey = false;
        }
        i = j;
    }
    return 0;
}

void broker_describe_log_dirs(struct broker *b, struct net_request *req)
{
    struct DescribeLogDirsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct DescribeLogDirsResponse *rs = arena_alloc(ar, sizeof *rs);
    struct DescribeLogDirsResult *r = arena_alloc(ar, sizeof *r);
    struct selection sel = {0};
    char *dir = arena_alloc(ar, PATH_MAX);

    if (rs == NULL || r == NULL || dir == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    memset(r, 0, sizeof *r);
    /* DESCRIBE on the cluster; without it Kafka answers the error and no directory. */
    if (!authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)) {
        rs->ErrorCode = ERR_CLUSTER_AUTHORIZATION_FAILED;
        net_respond(req, rs);
        return;
    }
    if (rq->Topics.n < 0) {
        sel.cap = replica_count(b->replicas);
    } else {
        for (int32_t i = 0; i < rq->Topics.n; i++)
            sel.cap += (size_t)rq->Topics.v[i].Partitions.n;
    }
    sel.v = arena_alloc(ar, (sel.cap + 1) * sizeof *sel.v);
    if (sel.v == NULL)
        goto err_nomem;
    if (rq->Topics.n < 0) {
        if (replica_for_each(b->replicas, select_partition, &sel) != 0)
            goto err_nomem;
    } else {
        for (int32_t i = 0; i < rq->Topics.n; i++) {
            const struct DescribableLogDirTopic *t = &rq->Topics.v[i];
            for (int32_t j = 0; t->Topic && j < t->Partitions.n; j++) {
                struct partition *p = replica_partition(b->replicas, t->Topic, t->Partitions.v[j]);
                if (p != NULL)
                    sel.v[sel.n++] = p;
            }
        }
    }
    if (replica_log_dir(b->replicas, dir, PATH_MAX, &r->TotalBytes, &r->UsableBytes) != 0) {
        /* A directory whose volume cannot be asked is reported as Kafka reports one it
         * cannot read: KAFKA_STORAGE_ERROR, no partitions. */
        r->ErrorCode = ERR_KAFKA_STORAGE_ERROR;
    } else if (group_by_topic(ar, &sel, r) != 0) {
        goto err_nomem;
    }
    r->LogDir = dir;
    rs->Results.v = r;
    rs->Results.n = 1;
    net_respond(req, rs);
    return;

err_nomem:
    slog_error("broker", "out of memory in DescribeLogDirs from %s; closing", req->peer);
    net_close_connection(req);
}
