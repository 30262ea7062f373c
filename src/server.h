/* SPDX-License-Identifier: Apache-2.0 */
/* tallyd's top: the parsed server configuration and the request dispatcher that routes each
 * API to its module. Only main.c, dispatch.c and server_config.c include this. */
#ifndef TALLY_SERVER_H
#define TALLY_SERVER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "base/log.h"
#include "meta/meta.h"

struct admin;
struct net_request;
struct props;

#define SERVER_MAX_VOTERS 16

struct server_config {
    struct props *props; /* everything, after defaults, file and --set */
    int32_t node_id;
    char host[128]; /* PLAINTEXT listener */
    int port;
    char adv_host[128]; /* advertised PLAINTEXT listener (= listener unless set) */
    int adv_port;
    char controller[160]; /* CONTROLLER listener host:port (raft) */
    size_t n_voters;
    struct meta_voter voters[SERVER_MAX_VOTERS];
    char log_dir[PATH_MAX]; /* first entry of log.dirs */
    char cluster_id[64];    /* cluster.id if configured, else "" */
    size_t max_frame;       /* socket.request.max.bytes */
};

/* Builds the configuration from the embedded defaults, then --config FILE, then each
 * --set key=value in argv order. Returns 0, or 2 after printing a one-line reason (bad
 * argument, unreadable file, invalid value). --help prints usage and returns 1. */
int server_config_parse(int argc, char **argv, struct server_config *cfg);
void server_config_free(struct server_config *cfg);

/* Checks or creates <log.dir>/meta.properties: node.id must match, cluster.id (if
 * configured) must match; on first start a cluster id is generated. Fills cluster_id.
 * Returns 0, or 1 after logging why the directory is refused. */
int server_format_dir(struct server_config *cfg);

struct broker;
struct txn;

struct dispatch {
    struct admin *admin;
    struct broker *broker;
    struct txn *txn;
    struct log_limit not_served_log; /* "is not served" lines, across all connections */
};

/* net_request_cb: routes one decoded request to its handler. ctx is a struct dispatch. */
void dispatch_request(void *ctx, struct net_request *req);

#endif
