/* SPDX-License-Identifier: Apache-2.0 */
/* dispatch: one table, API key → versions served → handler, and ApiVersions, which
 * advertises exactly the declared APIs that have a row here (proto may declare an API before
 * its handler exists), except the broker-to-controller ones. On a broker that is not the
 * active controller, what only the controller decides (CreateTopics, DeleteTopics,
 * CreatePartitions, AlterConfigs, IncrementalAlterConfigs, ElectLeaders,
 * AlterPartitionReassignments, ListPartitionReassignments, AlterUserScramCredentials,
 * AlterClientQuotas, CreateAcls, DeleteAcls) is forwarded there before it reaches its handler
 * (admin_forward), in a KIP-590 Envelope with the client's principal; the controller unwraps
 * it (the Envelope row) and runs the inner request through this table as the client's. With an
 * authorizer (authz/authz.h) each request's session carries it to the handler, which checks
 * what Kafka checks; admin_forward checks a forwarded request's items first. The request quota
 * (request_percentage, KIP-124) is metered here, around the handler call (or the forward):
 * broker_request_time_begin before it, broker_request_time_end with the loop time it took. */
#include "server.h"

#include <string.h>

#include "admin/admin.h"
#include "authz/authz.h"
#include "broker/broker.h"
#include "controller/controller.h"
#include "exporter/exporter.h"
#include "group/group.h"
#include "txn/txn.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "net/net.h"

/* At most one "is not served" line per this interval: a client retrying an API we do not
 * serve reconnects and retries for as long as it runs. */
#define DISPATCH_WARN_INTERVAL_MS 10000

/* One row per served API: the versions served (advertised in ApiVersions, intersected with
 * what proto declares) and the handler. Requests outside the range get no answer (the client
 * ignored ApiVersions) and lose their connection, as for an API not listed. */
typedef void (*dispatch_fn)(struct dispatch *d, struct net_request *req);

struct dispatch_entry {
    int16_t key;
    int16_t min_version, max_version;
    dispatch_fn fn;
    /* Broker-to-controller APIs: served, but not advertised to clients (Kafka serves them on
     * the controller listener only; Tally's raft listener does not speak Kafka, so they
     * come in on the PLAINTEXT one). */
    bool internal;
};

static void api_versions(struct dispatch *d, struct net_request *req);
static void envelope(struct dispatch *d, struct net_request *req);

/* Adapters from the table's signature to each module's handler. */
#define VIA(module, field, name)                                                                   \
    static void via_##name(struct dispatch *d, struct net_request *req)                            \
    {                                                                                              \
        module##_##name(d->field, req);                                                            \
    }
VIA(broker, broker, produce)
VIA(broker, broker, fetch)
VIA(broker, broker, list_offsets)
VIA(broker, broker, delete_records)
VIA(broker, broker, describe_producers)
VIA(broker, broker, describe_log_dirs)
VIA(group, group, find_coordinator)
VIA(group, group, join_group)
VIA(group, group, sync_group)
VIA(group, group, heartbeat)
VIA(group, group, leave_group)
VIA(group, group, offset_commit)
VIA(group, group, offset_fetch)
VIA(group, group, list_groups)
VIA(group, group, describe_groups)
VIA(group, group, delete_groups)
VIA(group, group, offset_delete)
VIA(broker, broker, write_txn_markers)
VIA(group, group, txn_offset_commit_request)
VIA(txn, txn, init_producer_id)
VIA(txn, txn, add_partitions_to_txn)
VIA(txn, txn, add_offsets_to_txn)
VIA(txn, txn, end_txn)
VIA(txn, txn, describe_transactions)
VIA(txn, txn, list_transactions)
VIA(admin, admin, metadata)
VIA(admin, admin, create_topics)
VIA(admin, admin, delete_topics)
VIA(admin, admin, create_partitions)
VIA(admin, admin, describe_configs)
VIA(admin, admin, alter_configs)
VIA(admin, admin, incremental_alter_configs)
VIA(admin, admin, describe_cluster)
VIA(admin, admin, describe_user_scram_credentials)
VIA(admin, admin, alter_user_scram_credentials)
VIA(admin, admin, describe_quorum)
VIA(admin, admin, describe_client_quotas)
VIA(admin, admin, alter_client_quotas)
VIA(admin, admin, describe_acls)
VIA(admin, admin, create_acls)
VIA(admin, admin, delete_acls)
VIA(controller, controller, broker_registration)
VIA(controller, controller, broker_heartbeat)
VIA(controller, controller, alter_partition)
VIA(controller, controller, elect_leaders)
VIA(controller, controller, allocate_producer_ids)
VIA(controller, controller, alter_partition_reassignments)
VIA(controller, controller, list_partition_reassignments)
VIA(broker, broker, offset_for_leader_epoch)
#undef VIA

static const struct dispatch_entry table[] = {
    {PROTO_API_Produce, 0, 9, via_produce, false},
    {PROTO_API_Fetch, 0, 13, via_fetch, false},
    {PROTO_API_ListOffsets, 0, 7, via_list_offsets, false},
    {PROTO_API_Metadata, 0, 12, via_metadata, false},
    {PROTO_API_SaslHandshake, 0, 1, dispatch_sasl_handshake, false},
    {PROTO_API_ApiVersions, 0, 3, api_versions, false},
    {PROTO_API_CreateTopics, 0, 7, via_create_topics, false},
    {PROTO_API_DeleteTopics, 0, 6, via_delete_topics, false},
    {PROTO_API_DeleteRecords, 0, 2, via_delete_records, false},
    {PROTO_API_InitProducerId, 0, 4, via_init_producer_id, false},
    {PROTO_API_DescribeConfigs, 0, 4, via_describe_configs, false},
    {PROTO_API_AlterConfigs, 0, 2, via_alter_configs, false},
    {PROTO_API_CreatePartitions, 0, 3, via_create_partitions, false},
    {PROTO_API_IncrementalAlterConfigs, 0, 1, via_incremental_alter_configs, false},
    {PROTO_API_DescribeCluster, 0, 2, via_describe_cluster, false},
    {PROTO_API_DescribeProducers, 0, 0, via_describe_producers, false},
    {PROTO_API_DescribeLogDirs, 0, 4, via_describe_log_dirs, false},
    {PROTO_API_SaslAuthenticate, 0, 2, dispatch_sasl_authenticate, false},
    {PROTO_API_OffsetCommit, 0, 8, via_offset_commit, false},
    {PROTO_API_OffsetFetch, 0, 8, via_offset_fetch, false},
    {PROTO_API_FindCoordinator, 0, 4, via_find_coordinator, false},
    {PROTO_API_JoinGroup, 0, 9, via_join_group, false},
    {PROTO_API_Heartbeat, 0, 4, via_heartbeat, false},
    {PROTO_API_LeaveGroup, 0, 5, via_leave_group, false},
    {PROTO_API_SyncGroup, 0, 5, via_sync_group, false},
    {PROTO_API_DescribeGroups, 0, 5, via_describe_groups, false},
    {PROTO_API_ListGroups, 0, 4, via_list_groups, false},
    {PROTO_API_DeleteGroups, 0, 2, via_delete_groups, false},
    {PROTO_API_OffsetDelete, 0, 0, via_offset_delete, false},
    /* The transaction coordinator (issue 10). */
    {PROTO_API_AddPartitionsToTxn, 0, 4, via_add_partitions_to_txn, false},
    {PROTO_API_AddOffsetsToTxn, 0, 3, via_add_offsets_to_txn, false},
    {PROTO_API_EndTxn, 0, 3, via_end_txn, false},
    {PROTO_API_DescribeTransactions, 0, 0, via_describe_transactions, false},
    {PROTO_API_ListTransactions, 0, 0, via_list_transactions, false},
    /* Transactions, partition side (issue 10, T2): the coordinator's marker call. */
    {PROTO_API_WriteTxnMarkers, 0, 1, via_write_txn_markers, false},
    {PROTO_API_TxnOffsetCommit, 0, 3, via_txn_offset_commit_request, false},
    /* Broker-to-controller APIs: any broker answers them, only the active controller
     * grants them (controller/controller.c). */
    {PROTO_API_BrokerRegistration, 0, 3, via_broker_registration, true},
    {PROTO_API_BrokerHeartbeat, 0, 1, via_broker_heartbeat, true},
    {PROTO_API_AlterPartition, 0, 3, via_alter_partition, true},
    {PROTO_API_AllocateProducerIds, 0, 0, via_allocate_producer_ids, true},
    /* KIP-590: a forwarded request with its client's identity (admin/envelope.c). */
    {PROTO_API_Envelope, 0, 0, envelope, true},
    /* Replication (the cluster issue). */
    {PROTO_API_OffsetForLeaderEpoch, 0, 4, via_offset_for_leader_epoch, false},
    {PROTO_API_ElectLeaders, 0, 2, via_elect_leaders, false},
    /* Reassignments (KIP-455), decided by the controller and forwarded there. */
    {PROTO_API_AlterPartitionReassignments, 0, 0, via_alter_partition_reassignments, false},
    {PROTO_API_ListPartitionReassignments, 0, 0, via_list_partition_reassignments, false},
    /* SCRAM users (KIP-554), in the metadata log; Alter is forwarded to the controller. */
    {PROTO_API_DescribeUserScramCredentials, 0, 0, via_describe_user_scram_credentials, false},
    {PROTO_API_AlterUserScramCredentials, 0, 0, via_alter_user_scram_credentials, false},
    /* ACLs (admin/acls.c), in the metadata log; Create and Delete are forwarded. */
    {PROTO_API_DescribeAcls, 0, 3, via_describe_acls, false},
    {PROTO_API_CreateAcls, 0, 3, via_create_acls, false},
    {PROTO_API_DeleteAcls, 0, 3, via_delete_acls, false},
    /* Client quotas (KIP-546), in the metadata log; Alter is forwarded to the controller. */
    {PROTO_API_DescribeClientQuotas, 0, 1, via_describe_client_quotas, false},
    {PROTO_API_AlterClientQuotas, 0, 1, via_alter_client_quotas, false},
    /* The metadata quorum, answered by its leader (admin/describe_quorum.c). */
    {PROTO_API_DescribeQuorum, 0, 1, via_describe_quorum, false},
};

static const struct dispatch_entry *entry_find(int16_t key)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].key == key)
            return &table[i];
    return NULL;
}

static void api_versions(struct dispatch *d, struct net_request *req)
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
    (void)d;
    for (size_t i = 0; i < n; i++) {
        const struct dispatch_entry *e = entry_find(apis[i].key);
        int16_t lo, hi;
        if (e == NULL || e->internal)
            continue;
        lo = e->min_version > apis[i].min_version ? e->min_version : apis[i].min_version;
        hi = e->max_version < apis[i].max_version ? e->max_version : apis[i].max_version;
        if (lo > hi)
            continue;
        struct ApiVersion *v = &rs->ApiKeys.v[rs->ApiKeys.n++];
        v->ApiKey = apis[i].key;
        v->MinVersion = lo;
        v->MaxVersion = hi;
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

/* The inner request of an envelope goes to its API's handler, as a client's own request would
 * (admin_envelope allows only the forwarded APIs, all rows of the table). */
static void envelope_run(void *ctx, struct net_request *inner)
{
    struct dispatch *d = ctx;
    const struct dispatch_entry *e = entry_find(inner->api->key);
    int16_t v = inner->hdr.RequestApiVersion;
    if (e == NULL || v < e->min_version || v > e->max_version) {
        net_close_connection(inner); /* the envelope answers INVALID_REQUEST */
        return;
    }
    e->fn(d, inner);
}

static void envelope(struct dispatch *d, struct net_request *req)
{
    admin_envelope(d->admin, req, envelope_run, d);
}

/* Requests the request quota (KIP-124) does not meter, as Kafka exempts them: the
 * broker-to-controller and cluster-action APIs (the internal rows, WriteTxnMarkers), the
 * SASL exchange (Kafka's authenticator answers it before any quota applies), and what another
 * broker sends (its ClientId, e.g. follower fetches and forwarded admin requests, which Kafka
 * does not throttle either) when its principal may CLUSTER_ACTION (every principal may
 * without an authorizer, when anyone may do anything anyway): a client that only calls itself
 * a broker is metered. */
static bool request_quota_exempt(const struct dispatch_entry *e, struct net_request *req)
{
    const char *id = req->hdr.ClientId;
    if (e->internal || e->key == PROTO_API_WriteTxnMarkers || e->key == PROTO_API_SaslHandshake ||
        e->key == PROTO_API_SaslAuthenticate)
        return true;
    return id != NULL &&
           strncmp(id, ADMIN_BROKER_CLIENT_ID_PREFIX, sizeof ADMIN_BROKER_CLIENT_ID_PREFIX - 1) ==
               0 &&
           authz_allowed_quiet(req, PROTO_ACL_OP_CLUSTER_ACTION, PROTO_RESOURCE_CLUSTER,
                               AUTHZ_CLUSTER);
}

void dispatch_request(void *ctx, struct net_request *req)
{
    struct dispatch *d = ctx;
    const struct dispatch_entry *e = entry_find(req->api->key);
    int16_t v = req->hdr.RequestApiVersion;

    /* ApiVersions at an unsupported version still gets its v0 answer (KIP-511). */
    if (e && (!req->version_supported || (v >= e->min_version && v <= e->max_version))) {
        /* A SASL listener serves nothing else before its client authenticated. */
        if (!dispatch_sasl_gate(d, req))
            return;
        /* Before the controller has unfenced this broker only the APIs that get it there (and
         * ApiVersions) are served: its image may still lag the cluster's. */
        if (!d->serving && !e->internal && e->key != PROTO_API_ApiVersions &&
            e->key != PROTO_API_SaslHandshake && e->key != PROTO_API_SaslAuthenticate) {
            slog_debug("dispatch", "%s from %s before this broker serves; closing", req->api->name,
                       req->peer);
            net_close_connection(req);
            return;
        }
        /* The API, not req: a handler that answers at once frees the request. */
        const struct proto_api *api = req->api;
        struct broker_request_time rt;
        req->session->authz = d->authz;
        bool timed = d->broker != NULL && !request_quota_exempt(e, req) &&
                     broker_request_time_begin(d->broker, req, &rt);
        uint64_t t0 = d->exporter || timed ? uv_hrtime() : 0;
        if (e->internal || !req->version_supported || !admin_forward(d->admin, req))
            e->fn(d, req);
        uint64_t dt = t0 ? uv_hrtime() - t0 : 0;
        exporter_request(d->exporter, api, d->exporter ? dt : 0);
        if (timed)
            broker_request_time_end(d->broker, &rt, dt);
        return;
    }
    /* Declared in proto but not served (not advertised either): the client ignored
     * ApiVersions, so there is no answer it could expect. */
    slog_warn_limited(&d->not_served_log, DISPATCH_WARN_INTERVAL_MS, "dispatch",
                      "%s (key %d) is not served; closing %s", req->api->name, req->api->key,
                      req->peer);
    net_close_connection(req);
}
