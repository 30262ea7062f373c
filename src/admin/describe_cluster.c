/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeCluster: cluster id, controller and the unfenced brokers; from v2 (KIP-1073), when
 * asked (IncludeFencedBrokers), the fenced ones too, each with IsFenced. */
#include "authz/authz.h"
#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "meta/meta.h"
#include "net/net.h"

void admin_describe_cluster(struct admin *a, struct net_request *req)
{
    struct DescribeClusterRequest *rq = req->body;
    struct DescribeClusterResponse *rs = arena_alloc(req->arena, sizeof *rs);
    size_t nb;
    const struct meta_broker *b = meta_brokers(a->meta, &nb);

    if (rs == NULL)
        goto err_nomem;
    rs->EndpointType = rq->EndpointType;
    rs->ClusterId = (char *)meta_cluster_id(a->meta);
    rs->ControllerId = meta_controller_id(a->meta);
    /* No authorizer: every cluster operation, when asked for (as Kafka without one). */
    rs->ClusterAuthorizedOperations = rq->IncludeClusterAuthorizedOperations
                                          ? authz_ops(req, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)
                                          : INT32_MIN;
    if (rq->EndpointType != 1) {
        /* Only broker endpoints are served; KIP-919 controller endpoints are not. */
        rs->ErrorCode = ERR_UNSUPPORTED_VERSION;
        rs->ErrorMessage = "Only the broker endpoint type (1) is supported";
        net_respond(req, rs);
        return;
    }
    rs->Brokers.v = arena_alloc(req->arena, (nb + 1) * sizeof *rs->Brokers.v);
    if (rs->Brokers.v == NULL)
        goto err_nomem;
    bool with_fenced = req->hdr.RequestApiVersion >= 2 && rq->IncludeFencedBrokers;
    for (size_t i = 0; i < nb; i++) {
        const struct meta_listener *l = meta_broker_listener(&b[i], req->session->listener);
        if ((b[i].fenced && !with_fenced) || l == NULL)
            continue;
        struct DescribeClusterBroker *o = &rs->Brokers.v[rs->Brokers.n++];
        o->BrokerId = b[i].id;
        o->Host = l->host;
        o->Port = l->port;
        o->Rack = b[i].rack;
        o->IsFenced = b[i].fenced;
    }
    net_respond(req, rs);
    return;

err_nomem:
    net_close_connection(req);
}
