/* SPDX-License-Identifier: Apache-2.0 */
/* txn: producer ids and (later) the transaction coordinator. Today: InitProducerId for
 * idempotent producers, with ids handed out from blocks that the active controller grants
 * (AllocateProducerIds over the outbound client), so an id is never given twice — across
 * restarts or brokers. */
#ifndef TALLY_TXN_H
#define TALLY_TXN_H

#include <stdint.h>

struct net_client;
struct net_request;

struct txn;

/* NULL on out of memory. `client` is borrowed; id blocks are asked of the controller
 * through it (NET_CLIENT_CONTROLLER). */
struct txn *txn_new(struct net_client *client, int32_t node_id);

/* Fails every InitProducerId still waiting for an id block (shutdown), then frees; if a
 * block request is still in flight, the struct is freed when the client answers it (stop
 * the client after this). */
void txn_free(struct txn *t);

/* InitProducerId: without a transactional id, a fresh producer id with epoch 0 (as Kafka
 * does, also when a v3+ client names its current id and epoch: an idempotent producer's
 * "bump" is a new id). With one: not supported yet (no transaction coordinator). */
void txn_init_producer_id(struct txn *t, struct net_request *req);

#endif
