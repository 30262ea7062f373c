/* SPDX-License-Identifier: Apache-2.0 */
/* controller: the active controller at work. While this node leads the metadata quorum (and
 * has applied everything committed before it took over: meta_controller_ready) it keeps the
 * broker sessions of controller_sm.h, looks every CONTROLLER_TICK_MS for expired sessions,
 * offline partitions and preferred leaders to restore, and answers the broker-to-controller
 * APIs — BrokerRegistration, BrokerHeartbeat, AlterPartition, ElectLeaders,
 * AllocateProducerIds and the reassignments' AlterPartitionReassignments and
 * ListPartitionReassignments — by proposing the records its decisions return and answering
 * once they applied. On any other node those APIs answer NOT_CONTROLLER (the caller looks the
 * controller up again). */
#ifndef TALLY_CONTROLLER_H
#define TALLY_CONTROLLER_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

struct meta;
struct net_request;
struct props;
struct tclock;
struct controller;

#define CONTROLLER_TICK_MS 100

struct controller_options {
    uv_loop_t *loop;
    struct tclock *clock;
    struct meta *meta;          /* borrowed; must outlive the controller */
    const struct props *config; /* borrowed: broker.session.timeout.ms, leader balance ... */
    int32_t node_id;
    const char *cluster_id; /* copied */
};

/* Returns 0 and *out, or ERR_NOMEM. The controller watches the quorum from then on. */
int controller_new(const struct controller_options *o, struct controller **out);

/* Stops watching and deciding: from now on every API answers NOT_CONTROLLER. Proposals
 * still out answer their requests when they complete (the quorum's stop fails them), so
 * free the controller only after the quorum stopped. */
void controller_stop(struct controller *c);
void controller_free(struct controller *c);

/* Whether this node acts as the controller now. */
bool controller_active(const struct controller *c);

/* Request handlers: each finishes `req` exactly once. */
void controller_broker_registration(struct controller *c, struct net_request *req);
void controller_broker_heartbeat(struct controller *c, struct net_request *req);
void controller_alter_partition(struct controller *c, struct net_request *req);
void controller_elect_leaders(struct controller *c, struct net_request *req);
void controller_allocate_producer_ids(struct controller *c, struct net_request *req);
/* AlterPartitionReassignments (45) and ListPartitionReassignments (46), client APIs that only
 * the controller answers (other brokers forward them: admin/forward.c). */
void controller_alter_partition_reassignments(struct controller *c, struct net_request *req);
void controller_list_partition_reassignments(struct controller *c, struct net_request *req);

#endif
