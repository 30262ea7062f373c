/* SPDX-License-Identifier: Apache-2.0 */
/* exporter http: the /metrics listener on libmicrohttpd, which parses HTTP and runs its own
 * polling thread. A scrape on that thread asks the loop for a fresh rendering (uv_async_send,
 * the one libuv call safe from another thread), waits on a condition variable until the loop
 * published it under the mutex (the loop renders over several of its iterations: one
 * rendering at a time, exporter_http_publish then exporter_http_done), and answers with a
 * copy followed by the per-partition families, formatted here from the snapshot the loop
 * published with it; the 0.0.4 text and
 * OpenMetrics (chosen from the Accept header) are rendered and kept apart. The loop never blocks on
 * the HTTP thread. Only GET (and HEAD) of /metrics is served: another path is 404, another method
 * 405; requests are bounded by libmicrohttpd's per-connection memory limit (oversized headers
 * refused), a connection limit and an idle timeout, none of which touches the Kafka
 * listeners. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "base/metrics.h"
#include "base/slog.h"
#include "exporter.h"

/* A scrape waits this long for the loop before it answers 503 (a loop blocked this long is
 * what the endpoint exists to show, but the HTTP thread must not hang with it). */
#define HTTP_RENDER_WAIT_S 10
#define HTTP_MAX_CONNECTIONS 16
#define HTTP_IDLE_TIMEOUT_S 30
#define HTTP_CONN_MEMORY 32768 /* request line and headers must fit */

struct exporter_http {
    uv_loop_t *loop;
    struct MHD_Daemon *daemon;
    uv_async_t async;
    exporter_render_fn render;
    void *arg;
    int port;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* Under mu, per format (metrics_format: 0.0.4 text, OpenMetrics): scrapes asked and
     * renderings published (a scrape waits until rendered reaches the number it took); the
     * last text; stopping (no more async sends). */
    uint64_t asked[2], rendered[2];
    char *text[2];
    size_t len[2];
    struct exporter_snapshot *tail[2]; /* the per-partition rows, formatted by the scrape */
    bool stopping;
    /* Loop only: a rendering under way (render called, exporter_http_done not yet), and the
     * scrapes asked when it started, per format, which its publication answers. */
    bool busy;
    uint64_t serving[2];
};

static const char not_found[] = "Not found: this listener serves /metrics only.\n";
static const char not_allowed[] = "Method not allowed: use GET.\n";
static const char unavailable[] = "The broker did not render its metrics in time.\n";

static enum MHD_Result answer_static(struct MHD_Connection *conn, unsigned status, const char *body,
                                     bool allow)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* On the HTTP thread: a fresh rendering from the loop, copied, with the per-partition
 * families formatted here after it (off the loop); NULL when the loop did not answer in time,
 * the exporter is stopping, or out of memory. */
static char *scrape(struct exporter_http *h, enum metrics_format fmt, size_t *len)
{
    char *copy = NULL;
    struct exporter_snapshot *tail = NULL;
    struct timespec until;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += HTTP_RENDER_WAIT_S;
    pthread_mutex_lock(&h->mu);
    if (h->stopping)
        goto out;
    uint64_t mine = ++h->asked[fmt];
    uv_async_send(&h->async);
    while (!h->stopping && h->rendered[fmt] < mine)
        if (pthread_cond_timedwait(&h->cv, &h->mu, &until) == ETIMEDOUT)
            break;
    if (h->rendered[fmt] >= mine && h->text[fmt] && (copy = malloc(h->len[fmt] + 1)) != NULL) {
        memcpy(copy, h->text[fmt], h->len[fmt] + 1);
        *len = h->len[fmt];
        tail = h->tail[fmt];
        exporter_snapshot_hold(tail);
    }
out:
    pthread_mutex_unlock(&h->mu);
    if (copy && exporter_snapshot_render(tail, fmt, &copy, len) != 0)
        copy = NULL;
    exporter_snapshot_release(tail);
    return copy;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct exporter_http *h = cls;
    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)con_cls;

    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return answer_static(conn, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed, true);
    if (strcmp(url, "/metrics") != 0)
        return answer_static(conn, MHD_HTTP_NOT_FOUND, not_found, false);
    size_t len = 0;
    const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    enum metrics_format fmt =
        exporter_wants_openmetrics(accept) ? METRICS_OPENMETRICS : METRICS_TEXT;
    char *text = scrape(h, fmt, &len);
    if (text == NULL)
        return answer_static(conn, MHD_HTTP_SERVICE_UNAVAILABLE, unavailable, false);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            fmt == METRICS_OPENMETRICS
                                ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                : "text/plain; version=0.0.4; charset=utf-8");
    enum MHD_Result rc = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return rc;
}

/* On the loop: starts a rendering of every format asked, unless one is under way (the scrapes
 * that asked meanwhile are served after it: exporter_http_done wakes this again). uv_async
 * coalesces wake-ups. */
static void on_async(uv_async_t *a)
{
    struct exporter_http *h = a->data;
    unsigned formats = 0;

    if (h->busy)
        return;
    pthread_mutex_lock(&h->mu);
    for (int fmt = 0; fmt < 2; fmt++)
        if (!h->stopping && h->asked[fmt] != h->rendered[fmt]) {
            h->serving[fmt] = h->asked[fmt];
            formats |= 1u << fmt;
        }
    pthread_mutex_unlock(&h->mu);
    if (formats == 0)
        return;
    h->busy = true;
    h->render(h->arg, formats);
}

void exporter_http_publish(struct exporter_http *h, enum metrics_format fmt, char *text, size_t len,
                           struct exporter_snapshot *tail)
{
    pthread_mutex_lock(&h->mu);
    free(h->text[fmt]);
    h->text[fmt] = text; /* NULL: "no text", the waiting scrapes answer 503 */
    h->len[fmt] = len;
    struct exporter_snapshot *old = h->tail[fmt];
    h->tail[fmt] = tail;
    h->rendered[fmt] = h->serving[fmt];
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    exporter_snapshot_release(old); /* a scrape still formatting it holds its own */
}

void exporter_http_done(struct exporter_http *h)
{
    h->busy = false;
    uv_async_send(&h->async); /* scrapes that asked meanwhile */
}

bool exporter_wants_openmetrics(const char *accept)
{
    /* The q of each of the two media types (absent: 0; present without q: 1). */
    double q_om = 0, q_text = 0;
    const char *p = accept;

    while (p && *p) {
        size_t n = strcspn(p, ",");
        char range[256];
        size_t k = n < sizeof range - 1 ? n : sizeof range - 1;
        memcpy(range, p, k);
        range[k] = '\0';
        p += n + (p[n] == ',');
        char *type = range + strspn(range, " \t");
        size_t tl = strcspn(type, " \t;");
        double q = 1;
        const char *qp = strstr(type + tl, "q=");
        if (qp)
            q = strtod(qp + 2, NULL);
        if (tl == 28 && strncasecmp(type, "application/openmetrics-text", 28) == 0)
            q_om = q > q_om ? q : q_om;
        else if (tl == 10 && strncasecmp(type, "text/plain", 10) == 0)
            q_text = q > q_text ? q : q_text;
    }
    return q_om > 0 && q_om >= q_text;
}

/* libmicrohttpd's messages (refused requests among them): at most one line per 10 s, as a
 * client can cause them at will. Only the HTTP thread logs through here (the start-up
 * messages come before it runs), so the limit needs no lock. */
static void on_log(void *cls, const char *fmt, va_list ap)
{
    static struct slog_limit limit;
    char line[512];
    (void)cls;
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n')
        line[--n] = '\0';
    slog_warn_limited(&limit, 10000, "exporter", "http: %s", line);
}

static void http_free(struct exporter_http *h)
{
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h->text[0]);
    free(h->text[1]);
    exporter_snapshot_release(h->tail[0]);
    exporter_snapshot_release(h->tail[1]);
    free(h);
}

static void on_async_closed(uv_handle_t *handle)
{
    http_free(handle->data);
}

int exporter_http_start(uv_loop_t *loop, const char *host, int port, exporter_render_fn render,
                        void *arg, struct exporter_http **out)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    /* MHD_USE_AUTO: epoll (not select, which fails on descriptors past FD_SETSIZE, and a
     * broker holding thousands of segment files has those). */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;

    memset(&ss, 0, sizeof ss);
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        flags |= MHD_USE_IPv6;
    } else {
        slog_error("exporter", "metrics.listener: \"%s\" is not a numeric IPv4 or IPv6 address",
                   host);
        return 1;
    }
    struct exporter_http *h = calloc(1, sizeof *h);
    if (h == NULL) {
        slog_error("exporter", "out of memory");
        return 1;
    }
    h->loop = loop;
    h->render = render;
    h->arg = arg;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if (uv_async_init(loop, &h->async, on_async) != 0) {
        http_free(h);
        slog_error("exporter", "cannot create the scrape wake-up handle");
        return 1;
    }
    h->async.data = h;
    h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER,
                                 on_log, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT_S,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
                                 MHD_OPTION_END);
    if (h->daemon == NULL) {
        slog_error("exporter",
                   "metrics.listener: cannot listen on %s:%d (in use, or not an "
                   "address of this host)",
                   host, port);
        uv_close((uv_handle_t *)&h->async, on_async_closed);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : port;
    *out = h;
    return 0;
}

int exporter_http_port(const struct exporter_http *h)
{
    return h->port;
}

void exporter_http_stop(struct exporter_http *h)
{
    if (h == NULL)
        return;
    pthread_mutex_lock(&h->mu);
    h->stopping = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    /* Joins the HTTP thread: a scrape waiting for the loop saw `stopping` and answers 503. */
    MHD_stop_daemon(h->daemon);
    h->daemon = NULL;
    uv_close((uv_handle_t *)&h->async, on_async_closed);
}
