/* SPDX-License-Identifier: Apache-2.0 */
/* What the net client unit tests share (test_net_client.c, test_net_client_tls.c): catching
 * an AllocateProducerIds answer, an in-test listener on loopback, polling a loop until a counter
 * reaches a value, and tearing a client and an in-test server down with their loop. No TEST()s live
 * here. */
#ifndef TALLY_TEST_NET_FIXTURE_H
#define TALLY_TEST_NET_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

struct net_client;

/* One AllocateProducerIds answer: done once it came; start is its ProducerIdStart, or -1
 * when err is set. */
struct fixture_answer {
    bool done;
    int err;
    int64_t start;
};

/* A net_client_send callback; arg is a struct fixture_answer. */
void fixture_on_answer(void *arg, int err, const void *resp);

/* Runs the loop without waiting, sleeping 1 ms between runs, until *v >= want or `polls`
 * runs; returns *v >= want. */
bool fixture_run_until_count(uv_loop_t *loop, const int *v, int want, int polls);

/* Inits `tcp` on `loop` (its data `data`), listening on 127.0.0.1 at a port the system picks
 * (set in *port) with `on_conn` for each connection. Returns 0 or -1. */
int fixture_listen(uv_loop_t *loop, uv_tcp_t *tcp, void *data, uv_connection_cb on_conn, int *port);

/* Stops `client` (NULL: none) and runs the loop until it stopped (5 s at most), closes
 * every handle still open (`listener` with no callback, the others, server connections,
 * with `conn_closed`), runs the loop out and closes it. Returns true if the client stopped
 * and the loop closed. */
bool fixture_net_teardown(uv_loop_t *loop, struct net_client *client, uv_tcp_t *listener,
                          uv_close_cb conn_closed);

#endif
