/* SPDX-License-Identifier: Apache-2.0 */
/* exporter console: the web console's internals, shared by http.c (which receives the requests
 * on libmicrohttpd's thread), console_api.c (which answers /api/ on the event loop from the
 * broker's state) and the generated asset table (build/gen/console_assets.c, from console/).
 * docs/console.md describes the endpoints. */
#ifndef TALLY_EXPORTER_CONSOLE_INT_H
#define TALLY_EXPORTER_CONSOLE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct exporter;

/* Bounds of one /api/ request, enforced by http.c before the loop sees it. */
#define CONSOLE_MAX_ARGS 16     /* query-string arguments kept (more: 400) */
#define CONSOLE_MAX_BODY 4096   /* a POST body (more: 413) */
#define CONSOLE_MAX_ARG_LEN 512 /* one argument's value (longer: 400) */
#define CONSOLE_MAX_USER 255    /* a Basic user name (longer: 401), as SASL_MAX_NAME */

/* One /api/ request, handed from the HTTP thread to the loop. The HTTP thread fills the
 * inputs and owns them; the loop fills the outputs (out: malloc()ed, then owned by http.c). */
struct console_call {
    bool post; /* POST, else GET or HEAD */
    /* Who asks (console.authentication): "User:<name>", "User:ANONYMOUS" without
     * authentication, from host (the peer's address), for the authorizer. */
    char principal[CONSOLE_MAX_USER + 6];
    char host[64];
    /* A credential look-up rather than an /api/ call: the loop copies user's SCRAM
     * credentials of the metadata image (KIP-554) into cred (n_cred of them) for the HTTP
     * thread to check a password against, off the loop. */
    bool lookup;
    int n_cred;
    struct console_cred {
        int8_t mechanism; /* META_SCRAM_SHA_256 or META_SCRAM_SHA_512 */
        int32_t iterations;
        int32_t salt_len, key_len;
        uint8_t salt[64], stored_key[64];
    } cred[2];
    char *path;
    int n_args;
    char *arg_key[CONSOLE_MAX_ARGS], *arg_value[CONSOLE_MAX_ARGS];
    char *body; /* NUL-terminated, NULL when none */
    size_t body_len;
    unsigned status;
    char *out;
    size_t out_len;
    /* http.c's: the next queued call; done once answered; abandoned when its HTTP request
     * stopped waiting (the loop then frees it). */
    struct console_call *next;
    bool done, abandoned;
};

/* Answers `c` on the loop (console_api.c): sets status, out and out_len (JSON; out NULL only
 * when out of memory, which http.c answers 500). */
void console_api(struct exporter *e, struct console_call *c);
/* On the loop: fills a look-up call's credentials (console_call.lookup). */
void console_lookup(struct exporter *e, struct console_call *c);
/* A query argument of `c` (NULL when absent). */
const char *console_arg(const struct console_call *c, const char *key);

/* What console_api reads, from exporter.c (NULL while the module is not running). */
struct meta;
struct replica_mgr;
struct group_coord;
struct txn;
struct props;
struct meta *exporter_meta(struct exporter *e);
struct replica_mgr *exporter_replicas(struct exporter *e);
struct group_coord *exporter_groups(struct exporter *e);
struct txn *exporter_txn(struct exporter *e);
int32_t exporter_node_id(const struct exporter *e);
const struct props *exporter_config(const struct exporter *e);
bool exporter_write_enabled(const struct exporter *e);
/* The console's authorizer (NULL: none, everything allowed). */
struct authz;
struct authz *exporter_authz(struct exporter *e);
/* Creates a topic (console.write.enable): exporter_options.create_topic, or
 * ERR_COORDINATOR_NOT_AVAILABLE when none was given. */
int exporter_create_topic(struct exporter *e, const char *name, int32_t partitions,
                          int16_t replication_factor);

/* The console's files, built into the binary (build/gen/console_assets.c). */
struct console_asset {
    const char *path; /* "/index.html", "/app.js", ... */
    const char *content_type;
    const unsigned char *data;
    size_t len;
};
extern const struct console_asset console_assets[];
extern const size_t console_n_assets;

#endif
