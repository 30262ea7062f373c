/* SPDX-License-Identifier: Apache-2.0 */
/* AddOffsetsToTxn v0–3: the group's __consumer_offsets partition (abs(javaHash(group)) %
 * its partition count, as the group coordinator places it) joins the transaction, so the
 * markers reach the group coordinator's TxnOffsetCommit offsets. Errors as AddPartitionsToTxn;
 * v0–1 clients get INVALID_PRODUCER_EPOCH for PRODUCER_FENCED (KIP-588). */
#include <stdlib.h>
#include <string.h>

#include "authz/authz.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/jhash.h"
#include "base/props.h"
#include "meta/meta.h"
#include "net/net.h"
#include "txn_int.h"

#define PRODUCER_FENCED_FROM 2
#define OFFSETS_TOPIC "__consumer_offsets"

static void answer(struct net_request *req, int16_t err)
{
    struct AddOffsetsToTxnResponse *rs = txn_response_new(req, sizeof *rs);
    if (rs == NULL)
        return;
    rs->ErrorCode = txn_answer_code(req, err, PRODUCER_FENCED_FROM);
    net_respond(req, rs);
}

static void on_added(void *arg, int16_t err, struct txn_meta *m)
{
    (void)m;
    answer(arg, err);
}

void txn_add_offsets_to_txn(struct txn *t, struct net_request *req)
{
    struct AddOffsetsToTxnRequest *rq = req->body;
    const struct meta_topic *ot;
    struct tshard *sh;
    struct txn_meta *m;
    struct txn_transit tr;
    bool write;
    int16_t err;
    int32_t n;
    int rc;

    if (rq->TransactionalId == NULL || rq->TransactionalId[0] == '\0' || rq->GroupId == NULL) {
        answer(req, ERR_INVALID_REQUEST);
        return;
    }
    /* WRITE on the transactional id, READ on the group (Kafka's order). */
    if (!authz_allowed(req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TRANSACTIONAL_ID,
                       rq->TransactionalId)) {
        answer(req, ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        return;
    }
    if (!authz_allowed(req, PROTO_ACL_OP_READ, PROTO_RESOURCE_GROUP, rq->GroupId)) {
        answer(req, ERR_GROUP_AUTHORIZATION_FAILED);
        return;
    }
    err = txn_shard_for(t, rq->TransactionalId, &sh);
    if (err == 0 && (m = txn_entry_find(sh, rq->TransactionalId)) == NULL)
        err = ERR_INVALID_PRODUCER_ID_MAPPING;
    if (err != 0) {
        answer(req, err);
        return;
    }
    ot = meta_topic_by_name(t->meta, OFFSETS_TOPIC);
    n = ot && ot->n_partitions > 0
            ? ot->n_partitions
            : (int32_t)props_get_int(t->config, "offsets.topic.num.partitions", 50, NULL);
    struct txn_tp part = {(char *)OFFSETS_TOPIC, java_partition_for(rq->GroupId, n)};
    rc = txn_sm_add_partitions(m, rq->ProducerId, rq->ProducerEpoch, &part, 1,
                               tclock_now_ms(t->clock), &write, &tr);
    if (rc != 0 || !write) {
        answer(req, rc == ERR_NOMEM ? ERR_COORDINATOR_NOT_AVAILABLE : (int16_t)rc);
        return;
    }
    txn_write(sh, m, &tr, on_added, req);
}
