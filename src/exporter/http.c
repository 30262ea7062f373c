/* SPDX-License-Identifier: Apache-2.0 */
/* exporter http: the /metrics listener on libmicrohttpd, which parses HTTP and runs its own
 * polling thread. A scrape on that thread asks the loop for a fresh rendering (uv_async_send,
 * the one libuv call safe from another thread), waits on a condition variable until the loop
 * published it under the mutex (the loop renders over several of its iterations: one
 * rendering at a time, exporter_http_publish then exporter_http_done), and answers with a
 * copy followed by the per-partition families, formatted here from the snapshot the loop
 * published with it; the 0.0.4 text and OpenMetrics (chosen from the Accept header) are
 * rendered and kept apart. The loop never blocks on the HTTP thread. The web console shares
 * the listener: its files (console_assets, built in) are answered here, as they hold no
 * broker state; an /api/ request is queued for the loop the same way (uv_async_send, then a
 * wait on the condition variable) and answered there by console_api. GET (and HEAD) of
 * /metrics, / and the console's files and /api/, and POST of /api/ (a body of at most
 * CONSOLE_MAX_BODY) are served: another path is 404, another method
 * 405; requests are bounded by libmicrohttpd's per-connection memory limit (oversized headers
 * refused), a connection limit and an idle timeout, none of which touches the Kafka
 * listeners.
 *
 * Security (docs/console.md): with metrics.ssl.keystore.location the listener speaks HTTPS
 * only (libmicrohttpd's GnuTLS, PEM). With console.authentication=scram every request carries
 * HTTP Basic credentials, checked against the metadata image's SCRAM credentials: the loop
 * copies the user's credentials into a look-up call, the PBKDF2 runs here (never on the
 * loop), a success is remembered HTTP_AUTH_CACHE_S, and a failure is answered 401 after
 * connection.failed.authentication.delay.ms and logged rate-limited. The principal
 * (User:<name>, or User:ANONYMOUS without authentication) and the peer's address go with
 * each /api/ call for console_api's ACL checks. */
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
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "base/metrics.h"
#include "base/slog.h"
#include "console_int.h"
#include "exporter.h"
#include "sasl/sasl.h"

/* A scrape waits this long for the loop before it answers 503 (a loop blocked this long is
 * what the endpoint exists to show, but the HTTP thread must not hang with it). */
#define HTTP_RENDER_WAIT_S 10
#define HTTP_MAX_CONNECTIONS 16
#define HTTP_IDLE_TIMEOUT_S 30
#define HTTP_CONN_MEMORY 32768 /* request line and headers must fit */
/* A successful login is remembered this long (a page load makes a dozen /api/ calls: each
 * must not redo the PBKDF2), in at most HTTP_AUTH_CACHE entries. */
#define HTTP_AUTH_CACHE_S 30
#define HTTP_AUTH_CACHE 8
#define HTTP_REALM "Tally console"
/* libmicrohttpd's pool holds the request line and headers; a POST body is ours, so the
 * connection memory need not cover it. */

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
    /* Under mu: /api/ calls waiting for the loop (oldest first), and the console's handler
     * (NULL: /api/ is 404, as before the console). */
    struct console_call *calls, **calls_tail;
    exporter_console_fn console;
    /* The security settings (exporter_http_security), and, HTTP thread only: the logins
     * that succeeded lately, each as SHA-256(key, user, NUL, password) under a random key
     * of this process (never the password itself), with when it expires. */
    char *keystore_pem;
    bool scram, plain;
    /* console.authentication=plain's users: names and HMAC(cache_key, password) each (the
     * passwords themselves are not kept here). */
    size_t n_plain;
    struct http_plain_user {
        char *name;
        uint8_t digest[SHA256_DIGEST_LENGTH];
    } * plain_users;
    int64_t failed_delay_ms;
    uint8_t cache_key[32];
    struct {
        uint8_t digest[SHA256_DIGEST_LENGTH];
        time_t expires;
    } cache[HTTP_AUTH_CACHE];
    unsigned cache_next;
    struct slog_limit failed_log;
};

/* Who sent a request: the principal the authorizer sees, and the peer's address. */
struct http_who {
    char principal[CONSOLE_MAX_USER + 6];
    char host[64];
};

/* A connection's request between libmicrohttpd's calls of on_request: a POST body is
 * collected here (bounded by CONSOLE_MAX_BODY) before the request is answered. */
struct http_req {
    char body[CONSOLE_MAX_BODY + 1];
    size_t len;
    bool too_large;
    struct http_who who; /* authenticated on the first call */
};

static const char not_found[] = "Not found: this listener serves /metrics and the console at /.\n";
static const char not_allowed[] =
    "Method not allowed: use GET (POST for the console's /api/ actions).\n";
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

static enum MHD_Result answer_metrics(struct exporter_http *h, struct MHD_Connection *conn)
{
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

/* The console's built-in files: "/" is its page. */
static enum MHD_Result answer_asset(struct MHD_Connection *conn, const char *url)
{
    if (strcmp(url, "/") == 0)
        url = "/index.html";
    for (size_t i = 0; i < console_n_assets; i++) {
        const struct console_asset *a = &console_assets[i];
        if (strcmp(a->path, url) != 0)
            continue;
        struct MHD_Response *r =
            MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
        if (r == NULL)
            return MHD_NO;
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        enum MHD_Result rc = MHD_queue_response(conn, MHD_HTTP_OK, r);
        MHD_destroy_response(r);
        return rc;
    }
    return answer_static(conn, MHD_HTTP_NOT_FOUND, not_found, false);
}

static enum MHD_Result answer_json(struct MHD_Connection *conn, unsigned status, const char *json)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(json), (void *)json, MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static void call_free(struct console_call *c)
{
    if (c == NULL)
        return;
    free(c->path);
    for (int i = 0; i < c->n_args; i++) {
        free(c->arg_key[i]);
        free(c->arg_value[i]);
    }
    free(c->body);
    free(c->out);
    free(c);
}

/* MHD_KeyValueIterator over the query string: copies each argument (bounded). */
static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    struct console_call *c = cls;
    (void)kind;
    if (value == NULL)
        value = "";
    if (c->n_args >= CONSOLE_MAX_ARGS || strlen(value) > CONSOLE_MAX_ARG_LEN) {
        c->status = MHD_HTTP_BAD_REQUEST;
        return MHD_NO;
    }
    c->arg_key[c->n_args] = strdup(key);
    c->arg_value[c->n_args] = strdup(value);
    if (c->arg_key[c->n_args] == NULL || c->arg_value[c->n_args] == NULL) {
        free(c->arg_key[c->n_args]);
        free(c->arg_value[c->n_args]);
        c->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        return MHD_NO;
    }
    c->n_args++;
    return MHD_YES;
}

/* On the HTTP thread: queues `c` for the loop and waits for its answer. True when answered
 * (c is the caller's again); false when the loop did not answer in time or the exporter is
 * stopping: then c is no longer the caller's (the loop, or stop, frees it). */
static bool submit(struct exporter_http *h, struct console_call *c)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += HTTP_RENDER_WAIT_S;
    pthread_mutex_lock(&h->mu);
    if (h->stopping) {
        pthread_mutex_unlock(&h->mu);
        call_free(c);
        return false;
    }
    *h->calls_tail = c;
    h->calls_tail = &c->next;
    uv_async_send(&h->async);
    while (!h->stopping && !c->done)
        if (pthread_cond_timedwait(&h->cv, &h->mu, &until) == ETIMEDOUT)
            break;
    bool done = c->done;
    if (!done)
        c->abandoned = true; /* still queued or being answered: the loop (or stop) frees it */
    pthread_mutex_unlock(&h->mu);
    return done;
}

/* On the HTTP thread: an /api/ call, answered by the loop (console_api), or 503 when it does
 * not answer in time. */
static enum MHD_Result answer_api(struct exporter_http *h, struct MHD_Connection *conn,
                                  const char *url, bool post, const struct http_req *req,
                                  const struct http_who *who)
{
    struct console_call *c = calloc(1, sizeof *c);
    if (c == NULL || (c->path = strdup(url)) == NULL) {
        free(c);
        return answer_json(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "{\"error\":\"out of memory\"}");
    }
    c->post = post;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, c);
    if (c->status != 0) {
        unsigned st = c->status;
        call_free(c);
        return answer_json(conn, st, "{\"error\":\"too many or too long query arguments\"}");
    }
    if (req && req->len > 0) {
        if ((c->body = malloc(req->len + 1)) == NULL) {
            call_free(c);
            return answer_json(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
                               "{\"error\":\"out of memory\"}");
        }
        memcpy(c->body, req->body, req->len);
        c->body[req->len] = '\0';
        c->body_len = req->len;
    }
    snprintf(c->principal, sizeof c->principal, "%s", who->principal);
    snprintf(c->host, sizeof c->host, "%s", who->host);
    if (!submit(h, c))
        return answer_json(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                           "{\"error\":\"the broker did not answer in time\"}");
    enum MHD_Result rc;
    if (c->out == NULL) {
        rc = answer_json(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "{\"error\":\"out of memory\"}");
    } else {
        struct MHD_Response *r =
            MHD_create_response_from_buffer(c->out_len, c->out, MHD_RESPMEM_MUST_FREE);
        if (r == NULL) {
            call_free(c);
            return MHD_NO;
        }
        c->out = NULL; /* the response owns it */
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        rc = MHD_queue_response(conn, c->status ? c->status : MHD_HTTP_OK, r);
        MHD_destroy_response(r);
    }
    call_free(c);
    return rc;
}

/* HMAC-SHA-256(cache_key, user NUL password): both are bounded (CONSOLE_MAX_USER,
 * SASL_MAX_NAME) before this is called. */
static void login_digest(const struct exporter_http *h, const char *user, const char *pass,
                         uint8_t out[SHA256_DIGEST_LENGTH])
{
    uint8_t buf[CONSOLE_MAX_USER + 1 + SASL_MAX_NAME];
    size_t ul = strlen(user), pl = strlen(pass);
    unsigned olen = 0;
    memcpy(buf, user, ul + 1);
    memcpy(buf + ul + 1, pass, pl);
    HMAC(EVP_sha256(), h->cache_key, (int)sizeof h->cache_key, buf, ul + 1 + pl, out, &olen);
    OPENSSL_cleanse(buf, sizeof buf);
}

/* Whether `pass` is user's password by one of its SCRAM credentials (RFC 5802: SaltedPassword
 * = Hi(password, salt, i), ClientKey = HMAC(SaltedPassword, "Client Key"), StoredKey =
 * H(ClientKey), compared with the image's StoredKey in constant time). The credentials come
 * from the loop; the PBKDF2 runs here, on the HTTP thread. */
static bool scram_check(struct exporter_http *h, const char *user, const char *pass)
{
    struct console_call *c = calloc(1, sizeof *c);
    bool ok = false;
    if (c == NULL)
        return false;
    c->lookup = true;
    snprintf(c->principal, sizeof c->principal, "User:%s", user);
    if (!submit(h, c))
        return false;
    if (c->n_cred == 0) {
        /* An unknown user costs the same PBKDF2 as a known one (Kafka's default 4096
         * iterations), so the answer's time does not tell which users exist. */
        uint8_t salted[SASL_SCRAM_MAX_KEY], salt[16] = {0};
        sasl_scram_salted_password(SASL_MECH_SCRAM_SHA_256, (const uint8_t *)pass, strlen(pass),
                                   salt, sizeof salt, 4096, salted);
    }
    for (int i = 0; i < c->n_cred && !ok; i++) {
        const struct console_cred *k = &c->cred[i];
        enum sasl_mech m = k->mechanism == 2 ? SASL_MECH_SCRAM_SHA_512 : SASL_MECH_SCRAM_SHA_256;
        uint8_t salted[SASL_SCRAM_MAX_KEY], stored[SASL_SCRAM_MAX_KEY], server[SASL_SCRAM_MAX_KEY];
        size_t hl = sasl_scram_hash_len(m);
        if ((size_t)k->key_len == hl &&
            sasl_scram_salted_password(m, (const uint8_t *)pass, strlen(pass), k->salt,
                                       (size_t)k->salt_len, k->iterations, salted) == 0 &&
            sasl_scram_keys(m, salted, hl, stored, server) == 0 &&
            CRYPTO_memcmp(stored, k->stored_key, hl) == 0)
            ok = true;
        OPENSSL_cleanse(salted, sizeof salted);
    }
    call_free(c);
    return ok;
}

/* Whether `pass` is PLAIN user `user`'s JAAS password: the HMACs under cache_key compared in
 * constant time (equal lengths whatever the passwords' are). */
static bool plain_check(struct exporter_http *h, const char *user, const char *pass)
{
    uint8_t d[SHA256_DIGEST_LENGTH];
    bool ok = false;
    login_digest(h, "", pass, d);
    for (size_t i = 0; i < h->n_plain; i++)
        if (strcmp(h->plain_users[i].name, user) == 0 &&
            CRYPTO_memcmp(h->plain_users[i].digest, d, sizeof d) == 0)
            ok = true;
    return ok;
}

/* On the HTTP thread: who sent the request. Without console.authentication everyone is
 * User:ANONYMOUS (as on a PLAINTEXT Kafka listener); with it, HTTP Basic credentials checked
 * against the SCRAM users, remembered HTTP_AUTH_CACHE_S after a success. False: not
 * authenticated (after the failed-authentication delay, logged rate-limited). */
static bool authenticate(struct exporter_http *h, struct MHD_Connection *conn, struct http_who *who)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    who->host[0] = '\0';
    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET)
            inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, who->host,
                      sizeof who->host);
        else if (sa->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, who->host,
                      sizeof who->host);
    }
    if (!h->scram && !h->plain) {
        snprintf(who->principal, sizeof who->principal, "User:ANONYMOUS");
        return true;
    }
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(conn, &pass);
    bool ok = false;
    if (user == NULL) {
        free(pass);
        return false; /* no credentials: asked for them, not a failed login */
    }
    if (pass != NULL && user[0] != '\0' && strlen(user) <= CONSOLE_MAX_USER &&
        strlen(pass) <= SASL_MAX_NAME) {
        uint8_t d[SHA256_DIGEST_LENGTH];
        time_t now = time(NULL);
        login_digest(h, user, pass, d);
        for (unsigned i = 0; i < HTTP_AUTH_CACHE && !ok; i++)
            ok = h->cache[i].expires > now && CRYPTO_memcmp(h->cache[i].digest, d, sizeof d) == 0;
        if (!ok && (h->plain ? plain_check(h, user, pass) : scram_check(h, user, pass))) {
            ok = true;
            unsigned i = h->cache_next++ % HTTP_AUTH_CACHE;
            memcpy(h->cache[i].digest, d, sizeof d);
            h->cache[i].expires = now + HTTP_AUTH_CACHE_S;
        }
    }
    if (ok) {
        snprintf(who->principal, sizeof who->principal, "User:%s", user);
    } else {
        char esc[128];
        slog_warn_limited(&h->failed_log, 1000, "console",
                          "Failed authentication with /%s (Authentication failed: invalid "
                          "credentials for user %s over HTTP Basic)",
                          who->host, slog_escape(user, strlen(user), esc, sizeof esc));
        /* As Kafka's listeners delay a failed client's answer
         * (connection.failed.authentication.delay.ms). */
        if (h->failed_delay_ms > 0) {
            struct timespec d = {(time_t)(h->failed_delay_ms / 1000),
                                 (long)(h->failed_delay_ms % 1000) * 1000000L};
            nanosleep(&d, NULL);
        }
    }
    if (pass)
        OPENSSL_cleanse(pass, strlen(pass));
    free(pass);
    free(user);
    return ok;
}

static enum MHD_Result answer_unauthorized(struct MHD_Connection *conn)
{
    static const char body[] = "{\"error\":\"authentication required (HTTP Basic, a SCRAM user "
                               "of the broker)\"}";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result rc = MHD_queue_basic_auth_fail_response(conn, HTTP_REALM, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    struct exporter_http *h = cls;
    (void)version;
    bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    bool api = h->console != NULL && strncmp(url, "/api/", 5) == 0;
    struct http_who who;

    /* Every path needs the login when console.authentication is on (/metrics too: a scraper
     * sends Basic credentials); a POST is checked on its first call, before its body. */
    if (!(post && api && *con_cls != NULL) && !authenticate(h, conn, &who))
        return answer_unauthorized(conn);
    if (post && api) {
        /* libmicrohttpd calls once with the headers, then with each piece of the body, then
         * with none left: collect, bounded, and answer on the last call. */
        struct http_req *req = *con_cls;
        if (req == NULL) {
            if ((req = calloc(1, sizeof *req)) == NULL)
                return MHD_NO;
            req->who = who;
            *con_cls = req;
            return MHD_YES;
        }
        if (*upload_data_size > 0) {
            if (req->len + *upload_data_size > CONSOLE_MAX_BODY)
                req->too_large = true;
            else {
                memcpy(req->body + req->len, upload_data, *upload_data_size);
                req->len += *upload_data_size;
            }
            *upload_data_size = 0;
            return MHD_YES;
        }
        if (req->too_large)
            return answer_json(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                               "{\"error\":\"request body too large (at most 4096 bytes)\"}");
        return answer_api(h, conn, url, true, req, &req->who);
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return answer_static(conn, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed, true);
    if (strcmp(url, "/metrics") == 0)
        return answer_metrics(h, conn);
    if (api)
        return answer_api(h, conn, url, false, NULL, &who);
    if (h->console != NULL)
        return answer_asset(conn, url);
    return answer_static(conn, MHD_HTTP_NOT_FOUND, not_found, false);
}

/* MHD_OPTION_NOTIFY_COMPLETED: frees a POST's collected body. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)conn;
    (void)code;
    free(*con_cls);
    *con_cls = NULL;
}

/* On the loop: answers the queued /api/ calls (each under no lock: console_api reads only
 * the loop's state and the call's inputs, which the HTTP thread does not touch meanwhile). */
static void run_calls(struct exporter_http *h)
{
    for (;;) {
        pthread_mutex_lock(&h->mu);
        struct console_call *c = h->calls;
        if (c == NULL || h->stopping) {
            pthread_mutex_unlock(&h->mu);
            return;
        }
        h->calls = c->next;
        if (h->calls == NULL)
            h->calls_tail = &h->calls;
        bool abandoned = c->abandoned;
        pthread_mutex_unlock(&h->mu);
        if (abandoned) {
            call_free(c);
            continue;
        }
        h->console(h->arg, c);
        pthread_mutex_lock(&h->mu);
        abandoned = c->abandoned;
        c->done = true;
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->mu);
        if (abandoned)
            call_free(c);
    }
}

/* On the loop: starts a rendering of every format asked, unless one is under way (the scrapes
 * that asked meanwhile are served after it: exporter_http_done wakes this again). uv_async
 * coalesces wake-ups. */
static void on_async(uv_async_t *a)
{
    struct exporter_http *h = a->data;
    unsigned formats = 0;

    run_calls(h);
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
    while (h->calls) {
        struct console_call *c = h->calls;
        h->calls = c->next;
        call_free(c); /* every waiter left when the thread was joined */
    }
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h->keystore_pem);
    for (size_t i = 0; i < h->n_plain; i++)
        free(h->plain_users[i].name);
    free(h->plain_users);
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
                        exporter_console_fn console, void *arg,
                        const struct exporter_http_security *sec, struct exporter_http **out)
{
    struct sockaddr_storage ss;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    /* MHD_USE_POLL: poll(), level-triggered (not select, which fails on descriptors past
     * FD_SETSIZE, and a broker holding thousands of segment files has those). Not epoll
     * either: with libmicrohttpd 0.9.75's epoll, connections whose client sent part of a
     * request and closed before they were accepted stayed open until the idle timeout and
     * held the connection limit, so a burst of them shut the listener out for 30 s
     * (test_console.py); poll() sees the end of those at once, and the listener serves at
     * most HTTP_MAX_CONNECTIONS + 1 descriptors. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;

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
    h->console = console;
    h->calls_tail = &h->calls;
    h->arg = arg;
    h->scram = sec && sec->scram;
    h->failed_delay_ms = sec ? sec->failed_delay_ms : 0;
    struct MHD_OptionItem tls[3] = {{MHD_OPTION_END, 0, NULL}};
    if (sec && sec->keystore_pem) {
        /* GnuTLS takes the key and the chain from PEM; one file holds both, as a Kafka PEM
         * keystore does, and each option finds its own blocks in it. */
        if ((h->keystore_pem = strdup(sec->keystore_pem)) == NULL) {
            free(h);
            slog_error("exporter", "out of memory");
            return 1;
        }
        flags |= MHD_USE_TLS;
        tls[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, h->keystore_pem};
        tls[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, h->keystore_pem};
        tls[2] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    }
    if (sasl_random(h->cache_key, sizeof h->cache_key) != 0) {
        free(h->keystore_pem);
        free(h);
        slog_error("exporter", "no random bytes for the login cache");
        return 1;
    }
    h->plain = sec && sec->plain;
    if (h->plain && sec->n_plain > 0 &&
        (h->plain_users = calloc(sec->n_plain, sizeof *h->plain_users)) == NULL)
        goto oom;
    for (size_t i = 0; h->plain && i < sec->n_plain; i++) {
        const struct sasl_user *u = sec->plain_users[i];
        if ((h->plain_users[i].name = strdup(u->name)) == NULL)
            goto oom;
        h->n_plain = i + 1;
        /* A password longer than SASL_MAX_NAME cannot log in (as over SASL): an empty digest
         * matches nothing login_digest makes. */
        if (strlen(u->password) <= SASL_MAX_NAME)
            login_digest(h, "", u->password, h->plain_users[i].digest);
    }
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if (uv_async_init(loop, &h->async, on_async) != 0) {
        http_free(h);
        slog_error("exporter", "cannot create the scrape wake-up handle");
        return 1;
    }
    h->async.data = h;
    h->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_log, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)HTTP_MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)HTTP_IDLE_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (h->daemon == NULL) {
        slog_error("exporter",
                   "metrics.listener: cannot listen on %s:%d (in use, not an address of this "
                   "host, or metrics.ssl.keystore.location's key or certificate unusable)",
                   host, port);
        uv_close((uv_handle_t *)&h->async, on_async_closed);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : port;
    *out = h;
    return 0;
oom:
    for (size_t i = 0; i < h->n_plain; i++)
        free(h->plain_users[i].name);
    free(h->plain_users);
    free(h->keystore_pem);
    free(h);
    slog_error("exporter", "out of memory");
    return 1;
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
