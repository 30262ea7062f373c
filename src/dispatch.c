/* SPDX-License-Identifier: Apache-2.0 */
/* dispatch: API key → handler, and ApiVersions, which is answered from proto's table of
 * declared APIs (each declared API has a handler here: the two lists are one). */
#include "server.h"

#include "admin/admin.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "net/net.h"

static void api_versions(struct net_request *req)
{
    struct ApiVersionsResponse *rs = arena_alloc(req->arena, sizeof *rs);
    size_t n;
    const struct proto_api *apis = proto_apis(&n);

    if (rs == NULL || (rs->ApiKeys.v = arena_alloc(req->arena, n * sizeof *rs->ApiKeys.v)) == NULL) {
        net_close_connection(req);
        return;
    }
    rs->ApiKeys.n = (int32_t)n;
    for (size_t i = 0; i < n; i++) {
        rs->ApiKeys.v[i].ApiKey = apis[i].key;
        rs->ApiKeys.v[i].MinVersion = apis[i].min_version;
        rs->ApiKeys.v[i].MaxVersion = apis[i].max_version;
    }
    rs->FinalizedFeaturesEpoch = -1;
    if (!req->version_supported) {
        /* KIP-511: answer in v0 so that any client can read the error and the ranges, then
         * retry with a version it finds there. */
        rs->ErrorCode = ERR_UNSUPPORTED_VERSION;
        net_respond_as(req, 0, rs);
        return;
    }
    net_respond(req, rs);
}

void dispatch_request(void *ctx, struct net_request *req)
{
    struct dispatch *d = ctx;
    switch (req->api->key) {
    case PROTO_API_ApiVersions:
        api_versions(req);
        return;
    case PROTO_API_Metadata:
        admin_metadata(d->admin, req);
        return;
    case PROTO_API_CreateTopics:
        admin_create_topics(d->admin, req);
        return;
    case PROTO_API_DeleteTopics:
        admin_delete_topics(d->admin, req);
        return;
    case PROTO_API_CreatePartitions:
        admin_create_partitions(d->admin, req);
        return;
    case PROTO_API_DescribeConfigs:
        admin_describe_configs(d->admin, req);
        return;
    case PROTO_API_AlterConfigs:
        admin_alter_configs(d->admin, req);
        return;
    case PROTO_API_IncrementalAlterConfigs:
        admin_incremental_alter_configs(d->admin, req);
        return;
    case PROTO_API_DescribeCluster:
        admin_describe_cluster(d->admin, req);
        return;
    }
    /* proto declares an API this table does not route: a programming error, not input. */
    log_error("dispatch", "no handler for %s (key %d); closing %s", req->api->name,
              req->api->key, req->peer);
    net_close_connection(req);
}
