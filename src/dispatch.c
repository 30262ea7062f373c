/* SPDX-License-Identifier: Apache-2.0 */
/* dispatch: API key → handler, and ApiVersions, which advertises exactly the declared APIs
 * that have a handler here (proto may declare an API before its handler exists). */
#include "server.h"

#include "admin/admin.h"
#include "broker/broker.h"
#include "txn/txn.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/log.h"
#include "net/net.h"

/* At most one "is not served" line per this interval: a client retrying an API we do not
 * serve reconnects and retries for as long as it runs. */
#define DISPATCH_WARN_INTERVAL_MS 10000

static bool handled(int16_t key)
{
    switch (key) {
    case PROTO_API_ApiVersions:
    case PROTO_API_Metadata:
    case PROTO_API_CreateTopics:
    case PROTO_API_DeleteTopics:
    case PROTO_API_CreatePartitions:
    case PROTO_API_DescribeConfigs:
    case PROTO_API_AlterConfigs:
    case PROTO_API_IncrementalAlterConfigs:
    case PROTO_API_DescribeCluster:
    case PROTO_API_Produce:
    case PROTO_API_Fetch:
    case PROTO_API_ListOffsets:
    case PROTO_API_DeleteRecords:
    case PROTO_API_InitProducerId:
    case PROTO_API_DescribeProducers:
        return true;
    }
    return false;
}

static void api_versions(struct net_request *req)
{
    struct ApiVersionsResponse *rs = arena_alloc(req->arena, sizeof *rs);
    size_t n;
    const struct proto_api *apis = proto_apis(&n);

    if (rs == NULL ||
        (rs->ApiKeys.v = arena_alloc(req->arena, n * sizeof *rs->ApiKeys.v)) == NULL) {
        net_close_connection(req);
        return;
    }
    rs->ApiKeys.n = 0;
    for (size_t i = 0; i < n; i++) {
        if (!handled(apis[i].key))
            continue;
        struct ApiVersion *v = &rs->ApiKeys.v[rs->ApiKeys.n++];
        v->ApiKey = apis[i].key;
        v->MinVersion = apis[i].min_version;
        v->MaxVersion = apis[i].max_version;
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
    if (!handled(req->api->key))
        goto no_handler;
    switch (req->api->key) {
    case PROTO_API_Produce:
        broker_produce(d->broker, req);
        return;
    case PROTO_API_Fetch:
        broker_fetch(d->broker, req);
        return;
    case PROTO_API_ListOffsets:
        broker_list_offsets(d->broker, req);
        return;
    case PROTO_API_DeleteRecords:
        broker_delete_records(d->broker, req);
        return;
    case PROTO_API_DescribeProducers:
        broker_describe_producers(d->broker, req);
        return;
    case PROTO_API_InitProducerId:
        txn_init_producer_id(d->txn, req);
        return;
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
no_handler:
    /* Declared in proto but not served (not advertised either): the client ignored
     * ApiVersions, so there is no answer it could expect. */
    log_warn_limited(&d->not_served_log, DISPATCH_WARN_INTERVAL_MS, "dispatch",
                     "%s (key %d) is not served; closing %s", req->api->name, req->api->key,
                     req->peer);
    net_close_connection(req);
}
