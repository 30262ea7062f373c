/* SPDX-License-Identifier: Apache-2.0 */
/* What the net client unit tests share (net_fixture.h). */
#include "net_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "fixture.h"
#include "net/net.h"
#include "proto/proto.h"

void fixture_on_answer(void *arg, int err, const void *resp)
{
    struct fixture_answer *a = arg;
    a->done = true;
    a->err = err;
    a->start = err ? -1 : ((const struct AllocateProducerIdsResponse *)resp)->ProducerIdStart;
}

bool fixture_run_until_count(uv_loop_t *loop, const int *v, int want, int polls)
{
    for (int i = 0; i < polls && *v < want; i++) {
        uv_run(loop, UV_RUN_NOWAIT);
        if (*v < want)
            uv_sleep(1);
    }
    return *v >= want;
}

int fixture_listen(uv_loop_t *loop, uv_tcp_t *tcp, void *data, uv_connection_cb on_conn, int *port)
{
    struct sockaddr_in addr;
    struct sockaddr_storage got;
    int len = sizeof got;

    uv_tcp_init(loop, tcp);
    tcp->data = data;
    uv_ip4_addr("127.0.0.1", 0, &addr);
    if (uv_tcp_bind(tcp, (const struct sockaddr *)&addr, 0) != 0 ||
        uv_listen((uv_stream_t *)tcp, 16, on_conn) != 0 ||
        uv_tcp_getsockname(tcp, (struct sockaddr *)&got, &len) != 0)
        return -1;
    *port = ntohs(((struct sockaddr_in *)&got)->sin_port);
    return 0;
}

struct close_arg {
    uv_tcp_t *listener;
    uv_close_cb conn_closed;
};

static void close_walk(uv_handle_t *h, void *arg)
{
    const struct close_arg *c = arg;
    if (!uv_is_closing(h))
        uv_close(h, h == (uv_handle_t *)c->listener ? NULL : c->conn_closed);
}

bool fixture_net_teardown(uv_loop_t *loop, struct net_client *client, uv_tcp_t *listener,
                          uv_close_cb conn_closed)
{
    struct close_arg c = {listener, conn_closed};
    bool stopped = true;
    if (client) {
        stopped = false;
        net_client_stop(client, fixture_set_flag, &stopped);
        stopped = fixture_run_until(loop, &stopped, 5000);
    }
    uv_walk(loop, close_walk, &c);
    uv_run(loop, UV_RUN_DEFAULT);
    return uv_loop_close(loop) == 0 && stopped;
}
