/* SPDX-License-Identifier: Apache-2.0 */
/* mutation_quota: the controller mutation quota (controller_mutation_rate, KIP-599) where
 * this controller decides topic mutations: CreateTopics and CreatePartitions take the
 * partitions they create, DeleteTopics the partitions it deletes, from a token bucket per
 * (principal, client id) (broker/client_quota.h) of burst rate × controller.quota.window.num ×
 * controller.quota.window.size.seconds. Kafka's two modes, by the request's version:
 * - strict (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+): a topic is refused
 *   with THROTTLING_QUOTA_EXCEEDED while the bucket is below 0, and nothing is taken for it;
 *   one that finds it at 0 or above passes whole and may take it below 0
 *   (StrictControllerMutationQuota). The answer's throttle is that of the last refusal.
 * - permissive (older versions, whose clients do not know the error): every topic passes, and
 *   the answer is throttled by what the bucket then owes (PermissiveControllerMutationQuota).
 * The throttle goes in the answer's ThrottleTimeMs and mutes the connection as long
 * (net_mute), as Kafka's ControllerApis do; a request that came in a KIP-590 Envelope
 * (envelope.c) is metered for the client inside it, and its forwarding broker mutes that
 * client. Exempt: what another broker sends as itself (its ClientId, with CLUSTER_ACTION on
 * the cluster, as in dispatch.c): the brokers' own topic creations. */
#include <string.h>

#include "admin_int.h"
#include "authz/authz.h"
#include "base/err.h"
#include "base/tclock.h"
#include "broker/client_quota.h"
#include "meta/meta.h"
#include "net/net.h"

int admin_mutation_setup(struct admin *a)
{
    int64_t num = admin_config_int(a, "controller.quota.window.num", 11);
    int64_t secs = admin_config_int(a, "controller.quota.window.size.seconds", 1);
    a->mutations =
        cq_table_new((int)(num >= 1 && num <= INT32_MAX ? num : 11), (secs >= 1 ? secs : 1) * 1000);
    return a->mutations ? 0 : -1;
}

static bool from_broker(struct net_request *req)
{
    const char *id = req->hdr.ClientId;
    return id != NULL &&
           strncmp(id, ADMIN_BROKER_CLIENT_ID_PREFIX, sizeof ADMIN_BROKER_CLIENT_ID_PREFIX - 1) ==
               0 &&
           authz_allowed_quiet(req, PROTO_ACL_OP_CLUSTER_ACTION, PROTO_RESOURCE_CLUSTER,
                               AUTHZ_CLUSTER);
}

void admin_mutation_begin(struct admin *a, struct net_request *req, int16_t strict_since,
                          struct admin_mutation *m)
{
    const char *principal = req->session->principal;
    const char *user = strncmp(principal, "User:", 5) == 0 ? principal + 5 : principal;
    struct cq_entry *e;

    memset(m, 0, sizeof *m);
    m->strict = req->hdr.RequestApiVersion >= strict_since;
    if (a->mutations == NULL || a->clock == NULL || from_broker(req) ||
        !meta_quota_lookup(a->meta, user, req->hdr.ClientId, META_QUOTA_CONTROLLER_MUTATION_RATE,
                           &m->rate))
        return;
    e = cq_table_entry(a->mutations, principal, req->hdr.ClientId, tclock_mono_ms(a->clock));
    if (e == NULL)
        return; /* out of memory: never throttled for our lack of it */
    m->bucket = cq_entry_bucket(e);
    m->burst = cq_table_burst(a->mutations, m->rate);
}

int admin_mutation_take(struct admin *a, struct admin_mutation *m, int32_t partitions)
{
    if (m->bucket == NULL)
        return 0;
    int64_t now = tclock_mono_ms(a->clock), ms;
    if (m->strict && cq_bucket_exceeded(m->bucket, now, m->rate, m->burst)) {
        m->throttle_ms = cq_bucket_throttle_ms(m->bucket, now, m->rate, m->burst);
        return ERR_THROTTLING_QUOTA_EXCEEDED;
    }
    ms = cq_bucket_record(m->bucket, now, m->rate, m->burst, partitions > 0 ? partitions : 0);
    if (!m->strict && ms > m->throttle_ms)
        m->throttle_ms = ms;
    return 0;
}

int32_t admin_mutation_end(struct net_request *req, const struct admin_mutation *m)
{
    if (m->throttle_ms <= 0)
        return 0;
    net_mute(req, m->throttle_ms);
    return m->throttle_ms > INT32_MAX ? INT32_MAX : (int32_t)m->throttle_ms;
}
