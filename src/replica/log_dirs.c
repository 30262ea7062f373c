/* SPDX-License-Identifier: Apache-2.0 */
/* What DescribeLogDirs reports of the log directory: its absolute path, the size of the
 * volume it is on, and the hosted partitions with the bytes of their segments. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/statvfs.h>

#include "base/err.h"
#include "log/log.h"
#include "replica_int.h"

int replica_log_dir(const struct replica_mgr *rm, char *path, size_t path_len, int64_t *total,
                    int64_t *usable)
{
    char abs[PATH_MAX];
    struct statvfs vfs;

    /* Kafka names the directory by its absolute path; a relative log.dirs (the default
     * ./data) is resolved here, where it is used, since the directory exists by now. */
    snprintf(path, path_len, "%s", realpath(rm->dir, abs) ? abs : rm->dir);
    *total = -1;
    *usable = -1;
    if (statvfs(rm->dir, &vfs) != 0)
        return ERR_IO;
    /* Usable is what an unprivileged writer may still take (f_bavail), as Java's
     * FileStore.getUsableSpace answers; total is the whole volume. */
    *total = (int64_t)vfs.f_blocks * (int64_t)vfs.f_frsize;
    *usable = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
    return 0;
}

int replica_for_each(struct replica_mgr *rm, int (*fn)(void *arg, struct partition *p), void *arg)
{
    for (size_t i = 0; i < rm->n_buckets; i++)
        for (struct partition *p = rm->buckets[i]; p; p = p->hash_next) {
            int rc = fn(arg, p);
            if (rc != 0)
                return rc;
        }
    return 0;
}

int replica_walk_slice(struct replica_mgr *rm, struct replica_walk *w, uint64_t (*now_ns)(void),
                       uint64_t budget_ns, void (*fn)(void *arg, struct partition *p), void *arg)
{
    if (w->next == 0)
        w->n_buckets = rm->n_buckets;
    else if (w->n_buckets != rm->n_buckets)
        return REPLICA_WALK_RESTART; /* the table was rebuilt: the buckets moved */
    uint64_t until = now_ns() + budget_ns;
    while (w->next < rm->n_buckets) {
        for (struct partition *p = rm->buckets[w->next]; p; p = p->hash_next)
            fn(arg, p);
        w->next++;
        if (w->next < rm->n_buckets && now_ns() >= until)
            return REPLICA_WALK_MORE;
    }
    return REPLICA_WALK_DONE;
}

int64_t partition_size_bytes(const struct partition *p)
{
    return log_size_bytes(p->log);
}

size_t partition_segment_count(const struct partition *p)
{
    return log_segment_count(p->log);
}
