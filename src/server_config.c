/* SPDX-License-Identifier: Apache-2.0 */
/* server_config: tallyd's command line, its embedded defaults, listener and quorum parsing,
 * and the meta.properties check that keeps a data dir with the node that formatted it. */
#include "server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "admin/admin.h"
#include "base/err.h"
#include "base/slog.h"
#include "base/props.h"
#include "base/sysio.h"
#include "config/config.h"
#include "net/tls.h"

/* The metadata quorum preallocates its log in segments of 8 MiB and keeps one spare ahead;
 * with less room than two of them libraft retries creating the next segment forever. */
#define META_MIN_FREE_BYTES (16ULL << 20)

/* Start-up settings read here or by main.c that are not Kafka broker configs (those are known
 * to config/). Any other key is reported once, as Kafka does, and ignored. */
static const char *const startup_keys[] = {
    "cluster.id",
    "controller.bootstrap.servers",
    "controller.quorum.bootstrap.servers",
    NULL,
};

/* What tallyd runs with when given nothing: a single-node cluster on loopback. */
static const char *const embedded_defaults[] = {
    "node.id=1",
    "process.roles=broker,controller",
    "listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
    "controller.listener.names=CONTROLLER",
    "controller.quorum.voters=1@127.0.0.1:9093",
    "log.dirs=./data",
    "auto.create.topics.enable=true",
    "num.partitions=1",
    "default.replication.factor=1",
    NULL,
};

static void usage(FILE *f)
{
    fprintf(f, "usage: tallyd [--config FILE] [--set key=value ...]\n"
               "  --config FILE     a server.properties file (Kafka's config names)\n"
               "  --set key=value   override one setting; may repeat; applied after --config\n"
               "With no arguments: node.id=1, PLAINTEXT on 127.0.0.1:9092, the metadata quorum\n"
               "on 127.0.0.1:9093, data in ./data.\n");
}

/* Parses "NAME://host:port" entries; finds the one named `name`. Returns 0 or -1. */
static int find_listener(const char *list, const char *name, char *host, size_t hostlen, int *port)
{
    char buf[1024];
    char *save, *item;
    snprintf(buf, sizeof buf, "%s", list);
    for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ')
            item++;
        char *sep = strstr(item, "://");
        if (sep == NULL)
            continue;
        *sep = '\0';
        if (strcmp(item, name) != 0)
            continue;
        char *hp = sep + 3;
        char *colon = strrchr(hp, ':');
        if (colon == NULL)
            return -1;
        *colon = '\0';
        char *end;
        long p = strtol(colon + 1, &end, 10);
        if (*end != '\0' || p < 0 || p > 65535)
            return -1;
        /* An empty host means all interfaces, as in Kafka. */
        snprintf(host, hostlen, "%s", *hp ? hp : "0.0.0.0");
        *port = (int)p;
        return 0;
    }
    return -1;
}

/* Lower-case copy of a listener name, as listener.name.<l>. prefixes write it (static buffer:
 * for one message at a time). */
static const char *listener_lower(const char *name)
{
    static char out[64];
    size_t i;
    for (i = 0; name[i] && i + 1 < sizeof out; i++)
        out[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    out[i] = '\0';
    return out;
}

/* Whether `name` is one of the comma-separated names of `list`. */
static bool name_in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *q = list; *q;) {
        while (*q == ' ' || *q == ',')
            q++;
        size_t len = strcspn(q, ", ");
        if (len == n && strncmp(q, name, n) == 0)
            return true;
        q += len;
    }
    return false;
}

/* Kafka's security protocol names and numbers. */
static int protocol_number(const char *name)
{
    static const char *const names[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"};
    for (int i = 0; i < 4; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* The security protocol listener.security.protocol.map gives listener `name`, or NULL. */
static const char *map_protocol(const char *map, const char *name, char *out, size_t outlen)
{
    char buf[1024];
    char *save, *item;
    snprintf(buf, sizeof buf, "%s", map);
    for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ')
            item++;
        char *colon = strchr(item, ':');
        if (colon == NULL)
            continue;
        *colon = '\0';
        if (strcmp(item, name) == 0) {
            char *v = colon + 1;
            v[strcspn(v, " ")] = '\0';
            snprintf(out, outlen, "%s", v);
            return out;
        }
    }
    return NULL;
}

/* listener.name.<listener, lower case>.<rest>, as Kafka scopes listener configs. */
static const char *listener_prop(const struct props *p, const char *listener, const char *rest)
{
    char key[256];
    snprintf(key, sizeof key, "listener.name.%s.%s", listener_lower(listener), rest);
    return props_get(p, key);
}

/* KIP-368: connections.max.reauth.ms for listener l's mechanism m (`lower`: its name in lower
 * case), as Kafka's SaslChannelBuilder reads it: listener.name.<l>.<mechanism>.connections.
 * max.reauth.ms, else listener.name.<l>.connections.max.reauth.ms, else
 * connections.max.reauth.ms (0: sessions never expire). */
static int parse_max_reauth(const struct props *p, struct server_listener *l, enum sasl_mech m,
                            const char *lower)
{
    char rest[96], key[192];
    snprintf(rest, sizeof rest, "%s.connections.max.reauth.ms", lower);
    const char *v = listener_prop(p, l->name, rest);
    if (v) {
        snprintf(key, sizeof key, "listener.name.%s.%s", listener_lower(l->name), rest);
    } else if ((v = listener_prop(p, l->name, "connections.max.reauth.ms")) != NULL) {
        snprintf(key, sizeof key, "listener.name.%s.connections.max.reauth.ms",
                 listener_lower(l->name));
    } else {
        snprintf(key, sizeof key, "connections.max.reauth.ms");
    }
    bool ok = true;
    l->sasl.max_reauth_ms[m] = props_get_int(p, key, 0, &ok);
    if (!ok) {
        fprintf(stderr, "tallyd: %s must be a number of milliseconds\n", key);
        return -1;
    }
    return 0;
}

/* A SASL_PLAINTEXT listener's mechanisms ("listener.name.<l>.sasl.enabled.mechanisms", else
 * "sasl.enabled.mechanisms", whose Kafka default GSSAPI Tally does not serve) and, for PLAIN,
 * its users ("listener.name.<l>.plain.sasl.jaas.config"). SCRAM's JAAS entry is optional (its
 * users live in the metadata log). */
static int parse_sasl_listener(const struct props *p, struct server_listener *l)
{
    char why[512];
    const char *mechs = listener_prop(p, l->name, "sasl.enabled.mechanisms");
    if (mechs == NULL)
        mechs = props_get(p, "sasl.enabled.mechanisms");
    if (mechs == NULL)
        mechs = "GSSAPI";
    if (sasl_config_set_mechanisms(&l->sasl, mechs, why, sizeof why) != 0) {
        fprintf(stderr, "tallyd: listener %s: %s\n", l->name, why);
        return -1;
    }
    for (size_t i = 0; i < l->sasl.n_mechs; i++) {
        enum sasl_mech m = l->sasl.mechs[i];
        char rest[64], lower[32];
        const char *mn = sasl_mech_name(m);
        size_t k;
        for (k = 0; mn[k] && k + 1 < sizeof lower; k++)
            lower[k] = (char)(mn[k] >= 'A' && mn[k] <= 'Z' ? mn[k] + 32 : mn[k]);
        lower[k] = '\0';
        snprintf(rest, sizeof rest, "%s.sasl.jaas.config", lower);
        const char *jaas = listener_prop(p, l->name, rest);
        if (jaas == NULL && m == SASL_MECH_PLAIN) {
            fprintf(stderr,
                    "tallyd: listener %s enables PLAIN but has no listener.name.%s.%s "
                    "(PlainLoginModule with user_<name>=\"<password>\" entries)\n",
                    l->name, listener_lower(l->name), rest);
            return -1;
        }
        if (jaas && sasl_config_add_jaas(&l->sasl, m, jaas, why, sizeof why) != 0) {
            fprintf(stderr, "tallyd: listener.name.%s.%s: %s\n", listener_lower(l->name), rest,
                    why);
            return -1;
        }
        if (parse_max_reauth(p, l, m, lower) != 0)
            return -1;
    }
    return 0;
}

struct ssl_source {
    const struct props *p;
    const struct server_listener *l;
    server_dynamic_fn dyn;
    void *dyn_arg;
};

/* A listener's ssl.* setting: a dynamic listener.name.<l>.<key>, then the static one, then
 * <key>, as Kafka scopes them. */
static const char *ssl_get(const struct ssl_source *src, const char *key)
{
    char scoped[256];
    const char *v = NULL;
    snprintf(scoped, sizeof scoped, "listener.name.%s.%s", listener_lower(src->l->name), key);
    if (src->dyn)
        v = src->dyn(src->dyn_arg, scoped);
    if (v == NULL)
        v = props_get(src->p, scoped);
    return v ? v : props_get(src->p, key);
}

/* Listener l's TLS context from its ssl.* settings: the accepting side, or (client) the
 * broker's connecting side of the inter-broker listener. */
static int tls_ctx_build(const struct props *p, const struct server_listener *l,
                         server_dynamic_fn dyn, void *dyn_arg, bool client, struct tls_ctx **out,
                         char *why, size_t why_len)
{
    const struct ssl_source src = {p, l, dyn, dyn_arg};
    const char *auth = ssl_get(&src, "ssl.client.auth");
    struct tls_config tc = {
        .client = client,
        .keystore_type = ssl_get(&src, "ssl.keystore.type"),
        .keystore_location = ssl_get(&src, "ssl.keystore.location"),
        .keystore_password = ssl_get(&src, "ssl.keystore.password"),
        .key_password = ssl_get(&src, "ssl.key.password"),
        .keystore_chain = ssl_get(&src, "ssl.keystore.certificate.chain"),
        .keystore_key = ssl_get(&src, "ssl.keystore.key"),
        .truststore_type = ssl_get(&src, "ssl.truststore.type"),
        .truststore_location = ssl_get(&src, "ssl.truststore.location"),
        .truststore_password = ssl_get(&src, "ssl.truststore.password"),
        .truststore_certs = ssl_get(&src, "ssl.truststore.certificates"),
        .enabled_protocols = ssl_get(&src, "ssl.enabled.protocols"),
        .cipher_suites = ssl_get(&src, "ssl.cipher.suites"),
        .principal_rules = ssl_get(&src, "ssl.principal.mapping.rules"),
    };
    if (auth == NULL || *auth == '\0' || strcmp(auth, "none") == 0) {
        tc.client_auth = TLS_AUTH_NONE;
    } else if (strcmp(auth, "requested") == 0) {
        tc.client_auth = TLS_AUTH_REQUESTED;
    } else if (strcmp(auth, "required") == 0) {
        tc.client_auth = TLS_AUTH_REQUIRED;
    } else {
        snprintf(why, why_len, "ssl.client.auth is '%s'; it must be none, requested or required",
                 auth);
        return -1;
    }
    return tls_ctx_new(&tc, out, why, why_len);
}

int server_tls_ctx_build(const struct props *p, const struct server_listener *l,
                         server_dynamic_fn dyn, void *dyn_arg, struct tls_ctx **out, char *why,
                         size_t why_len)
{
    return tls_ctx_build(p, l, dyn, dyn_arg, false, out, why, why_len);
}

/* An SSL or SASL_SSL listener's TLS context, from its ssl.* settings. A bad setting stops
 * the start with a line naming the key. */
static int parse_tls_listener(const struct props *p, struct server_listener *l)
{
    char why[512];
    if (server_tls_ctx_build(p, l, NULL, NULL, &l->tls, why, sizeof why) != 0) {
        fprintf(stderr, "tallyd: listener %s: %s\n", l->name, why);
        return -1;
    }
    return 0;
}

/* The broker's client side of inter-broker listener l (see server_config.ib_tls): a client
 * TLS context from l's ssl.* settings, which must include a truststore (brokers verify each
 * other; there is no system CA store to fall back on as Java's), and for SASL the PLAIN login
 * of l's JAAS config. What is not done yet is refused with a line saying so. */
static int parse_inter_broker_client(const struct props *p, const struct server_listener *l,
                                     struct server_config *cfg)
{
    char why[512];
    int16_t sp = l->security_protocol;

    if (sp == SERVER_SSL || sp == SERVER_SASL_SSL) {
        const struct ssl_source src = {p, l, NULL, NULL};
        if (ssl_get(&src, "ssl.truststore.location") == NULL &&
            ssl_get(&src, "ssl.truststore.certificates") == NULL) {
            fprintf(stderr,
                    "tallyd: the inter-broker listener %s is %s: brokers verify each other's "
                    "certificates, so it needs a truststore (listener.name.%s."
                    "ssl.truststore.location, or ssl.truststore.location or "
                    "ssl.truststore.certificates)\n",
                    l->name, sp == SERVER_SSL ? "SSL" : "SASL_SSL", listener_lower(l->name));
            return -1;
        }
        const char *eia = ssl_get(&src, "ssl.endpoint.identification.algorithm");
        if (eia == NULL || strcasecmp(eia, "https") == 0) {
            cfg->ib_verify_host = true;
        } else if (*eia != '\0') {
            fprintf(stderr,
                    "tallyd: ssl.endpoint.identification.algorithm is '%s': https (the peer's "
                    "certificate must name its address) or empty (not checked)\n",
                    eia);
            return -1;
        }
        if (tls_ctx_build(p, l, NULL, NULL, true, &cfg->ib_tls, why, sizeof why) != 0) {
            fprintf(stderr, "tallyd: inter-broker listener %s (client side): %s\n", l->name, why);
            return -1;
        }
    }
    if (sp != SERVER_SASL_PLAINTEXT && sp != SERVER_SASL_SSL)
        return 0;
    const char *mech = props_get(p, "sasl.mechanism.inter.broker.protocol");
    if (mech == NULL || *mech == '\0')
        mech = "GSSAPI";
    enum sasl_mech m = sasl_mech_from_name(mech);
    if (m == SASL_MECH_NONE) {
        fprintf(stderr,
                "tallyd: sasl.mechanism.inter.broker.protocol is %s: brokers authenticate to each "
                "other with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (GSSAPI and OAUTHBEARER are not "
                "implemented)\n",
                mech);
        return -1;
    }
    if (!sasl_config_enabled(&l->sasl, m)) {
        fprintf(stderr,
                "tallyd: the inter-broker listener %s does not enable %s "
                "(listener.name.%s.sasl.enabled.mechanisms), which "
                "sasl.mechanism.inter.broker.protocol names\n",
                l->name, mech, listener_lower(l->name));
        return -1;
    }
    /* The broker's own login: the listener's JAAS config for that mechanism
     * (listener.name.<l>.scram-sha-512.sasl.jaas.config for SCRAM-SHA-512), as Kafka's. */
    char key[64], lower[32];
    size_t k = 0;
    for (const char *q = mech; *q && k + 1 < sizeof lower; q++)
        lower[k++] = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
    lower[k] = '\0';
    snprintf(key, sizeof key, "%s.sasl.jaas.config", lower);
    const char *jaas = listener_prop(p, l->name, key);
    if (sasl_jaas_login(m, jaas, cfg->ib_sasl_user, sizeof cfg->ib_sasl_user, cfg->ib_sasl_pass,
                        sizeof cfg->ib_sasl_pass, why, sizeof why) != 0) {
        fprintf(stderr, "tallyd: listener.name.%s.%s: %s\n", listener_lower(l->name), key, why);
        return -1;
    }
    snprintf(cfg->ib_sasl_mech, sizeof cfg->ib_sasl_mech, "%s", mech);
    return 0;
}

/* The Kafka listeners of `listeners` (all but the controller.listener.names one), each with
 * its protocol from listener.security.protocol.map (and, for SSL and SASL_SSL, its TLS
 * context) and its advertised address; the inter-broker listener goes first. */
static int parse_listeners(const struct props *p, const char *list, struct server_config *cfg)
{
    char buf[1024];
    char *save, *item;
    const char *cnames = props_get(p, "controller.listener.names");
    const char *map = props_get(p, "listener.security.protocol.map");
    const char *adv = props_get(p, "advertised.listeners");

    if (map == NULL || *map == '\0')
        map = "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL";
    snprintf(buf, sizeof buf, "%s", list ? list : "");
    cfg->n_listeners = 0;
    for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ')
            item++;
        char *sep = strstr(item, "://");
        if (sep == NULL || sep == item || (size_t)(sep - item) >= sizeof cfg->listeners[0].name) {
            fprintf(stderr, "tallyd: listeners: '%s' is not NAME://host:port\n", item);
            return -1;
        }
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(sep - item), item);
        if (name_in_list(cnames ? cnames : "CONTROLLER", name))
            continue;
        for (size_t i = 0; i < cfg->n_listeners; i++)
            if (strcmp(cfg->listeners[i].name, name) == 0) {
                fprintf(stderr, "tallyd: listeners: %s is listed twice\n", name);
                return -1;
            }
        if (cfg->n_listeners == SERVER_MAX_LISTENERS) {
            fprintf(stderr, "tallyd: listeners: at most %d Kafka listeners\n",
                    SERVER_MAX_LISTENERS);
            return -1;
        }
        struct server_listener *l = &cfg->listeners[cfg->n_listeners];
        memset(l, 0, sizeof *l);
        snprintf(l->name, sizeof l->name, "%s", name);
        if (find_listener(list, name, l->host, sizeof l->host, &l->port) != 0) {
            fprintf(stderr, "tallyd: listeners: %s must be %s://host:port\n", name, name);
            return -1;
        }
        char proto[64];
        if (map_protocol(map, name, proto, sizeof proto) == NULL) {
            fprintf(stderr,
                    "tallyd: listener %s has no security protocol in "
                    "listener.security.protocol.map ('%s')\n",
                    name, map);
            return -1;
        }
        int pn = protocol_number(proto);
        if (pn < 0) {
            fprintf(stderr,
                    "tallyd: listener.security.protocol.map: unknown security protocol '%s' for "
                    "%s (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)\n",
                    proto, name);
            return -1;
        }
        l->security_protocol = (int16_t)pn;
        cfg->n_listeners++;
        if ((pn == SERVER_SSL || pn == SERVER_SASL_SSL) && parse_tls_listener(p, l) != 0)
            return -1;
        if ((pn == SERVER_SASL_PLAINTEXT || pn == SERVER_SASL_SSL) &&
            parse_sasl_listener(p, l) != 0)
            return -1;
        if (adv && *adv &&
            find_listener(adv, name, l->adv_host, sizeof l->adv_host, &l->adv_port) == 0) {
            /* advertised as configured */
        } else {
            memcpy(l->adv_host, l->host, sizeof l->adv_host);
            l->adv_port = l->port;
        }
        if (strcmp(l->adv_host, "0.0.0.0") == 0) {
            fprintf(stderr,
                    "tallyd: advertised listener host 0.0.0.0 (%s) is not reachable; set "
                    "advertised.listeners\n",
                    name);
            return -1;
        }
    }
    if (adv && *adv) {
        /* Every advertised name must be a listener (Kafka's rule). */
        char ab[1024];
        snprintf(ab, sizeof ab, "%s", adv);
        for (item = strtok_r(ab, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
            while (*item == ' ')
                item++;
            char *sep = strstr(item, "://");
            bool known = false;
            if (sep)
                for (size_t i = 0; i < cfg->n_listeners && !known; i++)
                    known = strlen(cfg->listeners[i].name) == (size_t)(sep - item) &&
                            strncmp(cfg->listeners[i].name, item, (size_t)(sep - item)) == 0;
            if (!known) {
                fprintf(stderr,
                        "tallyd: advertised.listeners: '%s' names no Kafka listener of "
                        "listeners\n",
                        item);
                return -1;
            }
        }
    }
    /* Inter-broker traffic: inter.broker.listener.name, else the listener named after
     * security.inter.broker.protocol (Kafka's default). */
    const char *ib = props_get(p, "inter.broker.listener.name");
    if (ib == NULL || *ib == '\0')
        ib = props_get(p, "security.inter.broker.protocol");
    if (ib == NULL || *ib == '\0')
        ib = "PLAINTEXT";
    size_t ibi = cfg->n_listeners;
    for (size_t i = 0; i < cfg->n_listeners; i++)
        if (strcmp(cfg->listeners[i].name, ib) == 0)
            ibi = i;
    if (ibi == cfg->n_listeners) {
        fprintf(stderr,
                "tallyd: the inter-broker listener %s (inter.broker.listener.name) is not in "
                "listeners ('%s')\n",
                ib, list ? list : "");
        return -1;
    }
    if (parse_inter_broker_client(p, &cfg->listeners[ibi], cfg) != 0)
        return -1;
    if (ibi != 0) {
        struct server_listener tmp = cfg->listeners[0];
        cfg->listeners[0] = cfg->listeners[ibi];
        cfg->listeners[ibi] = tmp;
    }
    _Static_assert(sizeof cfg->host == sizeof cfg->listeners[0].host, "same size");
    _Static_assert(sizeof cfg->adv_host == sizeof cfg->listeners[0].adv_host, "same size");
    memcpy(cfg->host, cfg->listeners[0].host, sizeof cfg->host);
    cfg->port = cfg->listeners[0].port;
    memcpy(cfg->adv_host, cfg->listeners[0].adv_host, sizeof cfg->adv_host);
    cfg->adv_port = cfg->listeners[0].adv_port;
    cfg->auth_failure_delay_ms =
        props_get_int(p, "connection.failed.authentication.delay.ms", 100, NULL);
    return 0;
}

static int parse_voters(const char *list, struct server_config *cfg)
{
    char buf[2048];
    char *save, *item;
    snprintf(buf, sizeof buf, "%s", list);
    cfg->n_voters = 0;
    for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *at = strchr(item, '@');
        if (at == NULL || cfg->n_voters == SERVER_MAX_VOTERS)
            return -1;
        *at = '\0';
        struct meta_voter *v = &cfg->voters[cfg->n_voters++];
        v->id = atoi(item);
        snprintf(v->address, sizeof v->address, "%s", at + 1);
    }
    return cfg->n_voters > 0 ? 0 : -1;
}

/* Kafka cluster ids are base64url UUIDs (22 characters); anything of that alphabet that fits
 * the fixed buffer is accepted. */
static bool cluster_id_valid(const char *id)
{
    size_t n = strlen(id);
    return n > 0 && n < sizeof((struct server_config *)0)->cluster_id &&
           strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == n;
}

/* Whether key=value is one of the embedded defaults (not the operator's setting). */
static bool embedded_default(const char *key, const char *value)
{
    size_t n = strlen(key);
    for (const char *const *d = embedded_defaults; *d; d++)
        if (strncmp(*d, key, n) == 0 && (*d)[n] == '=' && strcmp(*d + n + 1, value) == 0)
            return true;
    return false;
}

/* Reports each key that is not a known config (ignored, as Kafka does) and each Kafka config
 * the operator set that Tally does not apply (config/table.c says so of its row). */
static void warn_unknown_keys(const struct props *p)
{
    for (size_t i = 0; i < props_count(p); i++) {
        const char *k, *v;
        bool known = false;
        props_at(p, i, &k, &v);
        for (const char *const *s = startup_keys; *s && !known; s++)
            known = strcmp(*s, k) == 0;
        const struct config_def *d = config_find_broker(k);
        if (!known && d == NULL && strncmp(k, "listener.name.", 14) == 0) {
            /* listener.name.<listener>.[<mechanism>.]<config>: Kafka's listener scoping. */
            const char *rest = strchr(k + 14, '.');
            const struct config_def *ld = rest ? config_find_broker(rest + 1) : NULL;
            const char *mech_rest = rest ? strchr(rest + 1, '.') : NULL;
            if (ld == NULL && mech_rest)
                ld = config_find_broker(mech_rest + 1);
            known = ld != NULL;
        }
        if (!known && d == NULL)
            slog_warn("main",
                      "the configuration '%s' was supplied but is not a known config; "
                      "ignored",
                      k);
        else if (d != NULL && d->applied == NULL && !embedded_default(k, v))
            slog_info("main", "the configuration '%s' is a Kafka config with no effect in Tally",
                      k);
    }
}

static int check_roles(struct props *p, struct server_config *cfg);

int server_config_parse(int argc, char **argv, struct server_config *cfg)
{
    struct props *p = props_new();
    const char *file = NULL;
    char why[256];
    bool ok;

    memset(cfg, 0, sizeof *cfg);
    cfg->lock_fds[0] = cfg->lock_fds[1] = -1;
    if (p == NULL)
        return 2;
    cfg->props = p;
    for (const char *const *d = embedded_defaults; *d; d++)
        props_set_line(p, *d);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            file = argv[++i];
        } else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
            i++;
        } else {
            fprintf(stderr, "tallyd: unknown argument '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (file) {
        int bad = 0;
        int rc = props_load(p, sysio_default(), file, &bad);
        if (rc == ERR_NOTFOUND || rc == ERR_IO) {
            /* An ERR_IO's reason is on the line props_load logged. */
            fprintf(stderr, "tallyd: cannot read config file %s%s\n", file,
                    rc == ERR_NOTFOUND ? ": no such file" : "");
            return 2;
        }
        if (rc != 0) {
            fprintf(stderr, "tallyd: %s:%d: expected key=value\n", file, bad);
            return 2;
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
            if (props_set_line(p, argv[++i]) != 0) {
                fprintf(stderr,
                        "tallyd: --set expects key=value of at most 4095 bytes, got '%.64s%s' "
                        "(%zu bytes)\n",
                        argv[i], strlen(argv[i]) > 64 ? "..." : "", strlen(argv[i]));
                return 2;
            }
        } else if (strcmp(argv[i], "--config") == 0) {
            i++;
        }
    }

    if (admin_check_config(p, why, sizeof why) != 0) {
        fprintf(stderr, "tallyd: invalid configuration: %s\n", why);
        return 2;
    }
    warn_unknown_keys(p);
    const char *id_key = props_get(p, "node.id") ? "node.id" : "broker.id";
    const char *id_text = props_get(p, id_key);
    int64_t node = props_get_int(p, id_key, 1, &ok);
    if (!ok || node < 0 || node > INT32_MAX) {
        fprintf(stderr, "tallyd: %s must be an integer from 0 to %d, got '%.64s'\n", id_key,
                INT32_MAX, id_text ? id_text : "");
        return 2;
    }
    cfg->node_id = (int32_t)node;
    const char *listeners = props_get(p, "listeners");
    if (parse_listeners(p, listeners, cfg) != 0)
        return 2;
    char chost[128];
    int cport;
    const char *cname = props_get(p, "controller.listener.names");
    if (find_listener(listeners, cname ? cname : "CONTROLLER", chost, sizeof chost, &cport) != 0) {
        fprintf(stderr,
                "tallyd: listeners must contain %s://host:port for the metadata "
                "quorum\n",
                cname ? cname : "CONTROLLER");
        return 2;
    }
    snprintf(cfg->controller, sizeof cfg->controller, "%s:%d", chost, cport);
    /* The raft transport has no TLS nor authentication: anyone who reaches it can take part
     * in the metadata quorum's votes and log. Off loopback only when the operator says the
     * network is trusted. */
    if (strncmp(chost, "127.", 4) != 0 && strcmp(chost, "::1") != 0 &&
        strcmp(chost, "localhost") != 0 &&
        !props_get_bool(p, "controller.listener.insecure.ok", false, NULL)) {
        fprintf(stderr,
                "tallyd: the %s listener (%s) is the metadata quorum's raft transport, which is "
                "plaintext and unauthenticated; bind it to a loopback address, or set "
                "controller.listener.insecure.ok=true on a network only the cluster's nodes "
                "reach\n",
                cname ? cname : "CONTROLLER", cfg->controller);
        return 2;
    }
    if (parse_voters(props_get(p, "controller.quorum.voters"), cfg) != 0) {
        fprintf(stderr, "tallyd: controller.quorum.voters must be id@host:port[,...]\n");
        return 2;
    }
    const char *dirs = props_get(p, "log.dirs");
    if (dirs == NULL)
        dirs = props_get(p, "log.dir");
    size_t dl = strcspn(dirs ? dirs : "", ",");
    if (dirs == NULL || dl == 0 || dl >= sizeof cfg->log_dir) {
        fprintf(stderr, "tallyd: log.dirs must name a directory\n");
        return 2;
    }
    memcpy(cfg->log_dir, dirs, dl);
    cfg->log_dir[dl] = '\0';
    const char *mdir = props_get(p, "metadata.log.dir");
    mdir = mdir && *mdir ? mdir : cfg->log_dir;
    if (strlen(mdir) >= sizeof cfg->meta_parent) {
        fprintf(stderr, "tallyd: metadata.log.dir is too long\n");
        return 2;
    }
    snprintf(cfg->meta_parent, sizeof cfg->meta_parent, "%s", mdir);
    snprintf(cfg->meta_dir, sizeof cfg->meta_dir, "%s/__cluster_metadata-0", mdir);
    const char *cid = props_get(p, "cluster.id");
    if (cid) {
        if (!cluster_id_valid(cid)) {
            fprintf(stderr,
                    "tallyd: cluster.id must be 1 to %zu characters of A-Z a-z 0-9 - _ (got %zu "
                    "bytes)\n",
                    sizeof cfg->cluster_id - 1, strlen(cid));
            return 2;
        }
        snprintf(cfg->cluster_id, sizeof cfg->cluster_id, "%s", cid);
    }
    cfg->max_frame = (size_t)props_get_int(p, "socket.request.max.bytes", 104857600, NULL);
    cfg->connect_timeout_ms = props_get_int(p, "socket.connection.setup.timeout.ms", 10000, NULL);
    cfg->connect_timeout_max_ms =
        props_get_int(p, "socket.connection.setup.timeout.max.ms", 30000, NULL);
    return check_roles(p, cfg);
}

/* process.roles, the voters and cluster.id must agree (Kafka's KRaft rules): a node with the
 * controller role is a voter and a voter has it; a broker-only node is not a voter; a node
 * that is not the only voter needs the cluster's id configured, or every voter would format
 * a cluster of its own. Tally runs every controller as a broker too: "controller" alone is
 * refused. controller.quorum.bootstrap.servers (Kafka 3.9) is taken as
 * controller.bootstrap.servers: the Kafka (PLAINTEXT) listeners of controller nodes, since
 * Tally's CONTROLLER listener is the raft transport and speaks no Kafka protocol. */
static int check_roles(struct props *p, struct server_config *cfg)
{
    const char *roles = props_get(p, "process.roles");
    bool broker = false, controller = false, voter = false;
    char buf[128];
    char *save, *item;

    snprintf(buf, sizeof buf, "%s", roles ? roles : "broker,controller");
    for (item = strtok_r(buf, ", ", &save); item; item = strtok_r(NULL, ", ", &save)) {
        if (strcmp(item, "broker") == 0)
            broker = true;
        else if (strcmp(item, "controller") == 0)
            controller = true;
        else {
            fprintf(stderr, "tallyd: process.roles: unknown role '%s' (broker, controller)\n",
                    item);
            return 2;
        }
    }
    for (size_t i = 0; i < cfg->n_voters; i++)
        voter = voter || cfg->voters[i].id == cfg->node_id;
    if (!broker) {
        fprintf(stderr, "tallyd: process.roles=controller (a controller-only node) is not "
                        "implemented: every Tally controller is also a broker; use "
                        "process.roles=broker,controller\n");
        return 2;
    }
    if (controller && !voter) {
        fprintf(stderr,
                "tallyd: process.roles includes controller but node.id %d is not in "
                "controller.quorum.voters\n",
                cfg->node_id);
        return 2;
    }
    if (!controller && voter) {
        fprintf(stderr,
                "tallyd: node.id %d is listed in controller.quorum.voters but process.roles is "
                "broker only; a voter needs process.roles=broker,controller\n",
                cfg->node_id);
        return 2;
    }
    if ((cfg->n_voters > 1 || !voter) && cfg->cluster_id[0] == '\0') {
        fprintf(stderr, "tallyd: cluster.id is required when the quorum has more than one voter "
                        "or this node is broker-only: every node of a cluster must be given the "
                        "same id (generate one with `tally cluster new-id` and set it on every "
                        "node)\n");
        return 2;
    }
    const char *qb = props_get(p, "controller.quorum.bootstrap.servers");
    if (qb && *qb && props_get(p, "controller.bootstrap.servers") == NULL &&
        props_set(p, "controller.bootstrap.servers", qb) != 0) {
        fprintf(stderr, "tallyd: out of memory\n");
        return 2;
    }
    cfg->broker_only = !controller;
    return 0;
}

void server_config_free(struct server_config *cfg)
{
    for (size_t i = 0; i < cfg->n_listeners; i++) {
        sasl_config_free(&cfg->listeners[i].sasl);
        tls_ctx_free(cfg->listeners[i].tls);
        cfg->listeners[i].tls = NULL;
    }
    cfg->n_listeners = 0;
    tls_ctx_free(cfg->ib_tls);
    cfg->ib_tls = NULL;
    memset(cfg->ib_sasl_pass, 0, sizeof cfg->ib_sasl_pass);
    props_free(cfg->props);
    cfg->props = NULL;
    for (int i = 0; i < 2; i++) {
        if (cfg->lock_fds[i] >= 0)
            close(cfg->lock_fds[i]);
        cfg->lock_fds[i] = -1;
    }
}

/* mkdir -p. 0 or -errno (base/err.h). */
static int mkdirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = buf + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return -errno;
            *s = '/';
        }
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -errno : 0;
}

/* A Kafka-style cluster id: 16 random bytes in unpadded base64url (22 characters). */
static void new_cluster_id(char out[23])
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t b[18] = {0};
    if (getrandom(b, 16, 0) != 16)
        for (int i = 0; i < 16; i++)
            b[i] = (uint8_t)rand();
    for (int i = 0, o = 0; i < 18 && o < 22; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
        for (int k = 3; k >= 0 && o < 22; k--)
            out[o++] = b64[(v >> (6 * k)) & 63];
    }
    out[22] = '\0';
}

/* The 16 bytes of a 22-character base64url UUID (new_cluster_id's form). 0 or -1. */
static int uuid_from_b64(const char *s, uint8_t out[16])
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t b[18] = {0};
    if (strlen(s) != 22)
        return -1;
    for (int i = 0, o = 0; i < 22; i += 4) {
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
            const char *c = i + k < 22 ? strchr(b64, s[i + k]) : b64;
            if (c == NULL || *c == '\0')
                return -1;
            v = v << 6 | (uint32_t)(c - b64);
        }
        b[o++] = (uint8_t)(v >> 16);
        b[o++] = (uint8_t)(v >> 8);
        b[o++] = (uint8_t)v;
    }
    memcpy(out, b, 16);
    return 0;
}

/* True if `dir` holds a file or directory other than "." and "..". */
static bool dir_has_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool any = false;
    if (d == NULL)
        return false;
    while (!any && (e = readdir(d)) != NULL)
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return any;
}

/* True if `dir` holds at least one non-empty regular file: libraft's metadata files,
 * segments and snapshots. A missing dir, or one with only empty files, holds no metadata. */
static bool dir_has_data(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    bool any = false;
    if (d == NULL)
        return false;
    while (!any && (e = readdir(d)) != NULL) {
        char path[PATH_MAX * 2];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        any = e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    }
    closedir(d);
    return any;
}

size_t server_count_partition_dirs(const struct server_config *cfg)
{
    DIR *d = opendir(cfg->log_dir);
    struct dirent *e;
    struct stat mst;
    bool have_mst = stat(cfg->meta_parent, &mst) == 0;
    size_t n = 0;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        const char *dash = strrchr(e->d_name, '-');
        char path[PATH_MAX * 2];
        struct stat st;
        if (e->d_name[0] == '.' || dash == NULL || dash == e->d_name || dash[1] == '\0' ||
            strspn(dash + 1, "0123456789") != strlen(dash + 1) ||
            strncmp(e->d_name, "__cluster_metadata-", 19) == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", cfg->log_dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || meta_dir_holds_log(path))
            continue;
        /* metadata.log.dir may be any directory, one named like a partition's too. */
        if (have_mst && st.st_dev == mst.st_dev && st.st_ino == mst.st_ino)
            continue;
        n++;
    }
    closedir(d);
    return n;
}

/* Takes an exclusive lock on <dir>/.lock (Kafka's per-log-dir lock file). The descriptor
 * stays open for the life of the process: the kernel drops the lock when it exits, however
 * it exits. */
static int lock_dir(const char *dir, int *fd_out)
{
    char path[PATH_MAX + 16];
    int fd;
    snprintf(path, sizeof path, "%s/.lock", dir);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        slog_error("main", "cannot open %s: %s; refusing to start", path, strerror(errno));
        return 1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e == EWOULDBLOCK)
            slog_error("main",
                       "log dir %s is in use by another process (%s is locked; another "
                       "tallyd on the same data?); refusing to start",
                       dir, path);
        else
            slog_error("main", "cannot lock %s: %s; refusing to start", path, strerror(e));
        close(fd);
        return 1;
    }
    *fd_out = fd;
    return 0;
}

int server_format_dir(struct server_config *cfg)
{
    char path[PATH_MAX + 32];
    struct props *mp;
    size_t nparts;
    int rc = 1, bad = 0, lrc;

    if ((lrc = mkdirs(cfg->log_dir)) != 0) {
        slog_error("main", "cannot create log dir %s: %s", cfg->log_dir, strerror(-lrc));
        return 1;
    }
    if (lock_dir(cfg->log_dir, &cfg->lock_fds[0]) != 0)
        return 1;
    if (strcmp(cfg->meta_parent, cfg->log_dir) != 0) {
        if ((lrc = mkdirs(cfg->meta_parent)) != 0) {
            slog_error("main", "cannot create metadata.log.dir %s: %s", cfg->meta_parent,
                       strerror(-lrc));
            return 1;
        }
        if (lock_dir(cfg->meta_parent, &cfg->lock_fds[1]) != 0)
            return 1;
    }
    snprintf(path, sizeof path, "%s/meta.properties", cfg->log_dir);
    mp = props_new();
    if (mp == NULL)
        return 1;
    lrc = props_load(mp, sysio_default(), path, &bad);
    if (lrc == 0) {
        bool ok;
        int64_t node = props_get_int(mp, "node.id", -1, &ok);
        const char *cid = props_get(mp, "cluster.id");
        if (!ok) {
            const char *text = props_get(mp, "node.id");
            slog_error("main",
                       "%s holds no valid node.id (got '%.64s'; expected an integer from 0 to "
                       "%d); refusing to start",
                       path, text ? text : "", INT32_MAX);
            goto out;
        }
        if (node != cfg->node_id) {
            slog_error("main",
                       "log dir %s belongs to node.id %lld, not node.id %d; refusing "
                       "to start (point log.dirs elsewhere or fix node.id)",
                       cfg->log_dir, (long long)node, cfg->node_id);
            goto out;
        }
        if (cid == NULL || *cid == '\0') {
            slog_error("main", "%s has no cluster.id; refusing to start", path);
            goto out;
        }
        if (!cluster_id_valid(cid)) {
            slog_error("main",
                       "%s holds an invalid cluster.id (%zu bytes; expected up to %zu characters "
                       "of A-Z a-z 0-9 - _); refusing to start",
                       path, strlen(cid), sizeof cfg->cluster_id - 1);
            goto out;
        }
        if (cfg->cluster_id[0] && strcmp(cfg->cluster_id, cid) != 0) {
            slog_error("main",
                       "log dir %s belongs to cluster %s, not the configured cluster.id "
                       "%s; refusing to start",
                       cfg->log_dir, cid, cfg->cluster_id);
            goto out;
        }
        snprintf(cfg->cluster_id, sizeof cfg->cluster_id, "%s", cid);
        /* directory.id (Kafka 3.7+): this log dir's identity, which a broker restarted in
         * place names again in its registration. Added to an older file once. */
        const char *did = props_get(mp, "directory.id");
        if (did == NULL || uuid_from_b64(did, cfg->dir_id) != 0) {
            char idstr[23];
            new_cluster_id(idstr);
            uuid_from_b64(idstr, cfg->dir_id);
            if (props_set(mp, "directory.id", idstr) ||
                props_store(mp, sysio_default(), path, "written by tallyd") != 0) {
                slog_error("main", "cannot add directory.id to %s (out of memory, or see above)",
                           path);
                goto out;
            }
        }
        rc = 0;
        goto out;
    }
    if (lrc == ERR_IO) {
        slog_error("main", "cannot read %s (see above); refusing to start", path);
        goto out;
    }
    if (lrc != ERR_NOTFOUND) {
        slog_error("main",
                   "%s is damaged (line %d is not key=value, or longer than 4 KiB); "
                   "refusing to start",
                   path, bad);
        goto out;
    }
    /* No meta.properties. On a directory that already holds data this is damage or an
     * operator's mistake, not a first start: formatting it would give the data a new cluster
     * id and start with empty metadata (Kafka refuses too). */
    nparts = server_count_partition_dirs(cfg);
    if (nparts > 0 || dir_has_entries(cfg->meta_dir)) {
        slog_error("main",
                   "%s is missing but %s holds %zu partition directories%s; refusing to start "
                   "rather than format it as a new cluster (restore meta.properties with this "
                   "dir's cluster.id and node.id)",
                   path, cfg->log_dir, nparts,
                   dir_has_entries(cfg->meta_dir) ? " and a metadata log" : "");
        goto out;
    }
    if (cfg->cluster_id[0] == '\0')
        new_cluster_id(cfg->cluster_id);
    char node[16];
    snprintf(node, sizeof node, "%d", cfg->node_id);
    char dirid[23];
    new_cluster_id(dirid);
    uuid_from_b64(dirid, cfg->dir_id);
    if (props_set(mp, "version", "1") || props_set(mp, "cluster.id", cfg->cluster_id) ||
        props_set(mp, "node.id", node) || props_set(mp, "directory.id", dirid) ||
        props_store(mp, sysio_default(), path, "written by tallyd") != 0) {
        slog_error("main", "cannot write %s (out of memory, or see above)", path);
        goto out;
    }
    slog_info("main", "formatted %s for cluster %s, node %d", cfg->log_dir, cfg->cluster_id,
              cfg->node_id);
    rc = 0;
out:
    props_free(mp);
    return rc;
}

/* Binds host:port as libuv's listener will (SO_REUSEADDR) and closes it again, so that a
 * port in use is reported by name before anything starts. */
static int check_port(const char *what, const char *host, int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd, one = 1, rc = 0;
    if (port == 0 || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return 0; /* any port, or a name or IPv6 address: the listener reports it */
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno == EADDRINUSE) {
        slog_error("main",
                   "the %s listener %s:%d is already in use (address in use: another tallyd "
                   "or another program listens there); refusing to start",
                   what, host, port);
        rc = 1;
    }
    close(fd);
    return rc;
}

int server_check_start(const struct server_config *cfg)
{
    char chost[160], *colon;
    struct statvfs vfs;
    size_t nparts;

    snprintf(chost, sizeof chost, "%s", cfg->controller);
    colon = strrchr(chost, ':');
    if (colon) {
        *colon = '\0';
        if (check_port("CONTROLLER", chost, atoi(colon + 1)) != 0)
            return 1;
    }
    for (size_t i = 0; i < cfg->n_listeners; i++)
        if (check_port(cfg->listeners[i].name, cfg->listeners[i].host, cfg->listeners[i].port) != 0)
            return 1;

    /* Missing or empty metadata beside partition data: starting would bootstrap an empty
     * cluster and then treat every partition as belonging to no topic. */
    nparts = server_count_partition_dirs(cfg);
    if (nparts > 0 && !dir_has_data(cfg->meta_dir)) {
        slog_error("main",
                   "the metadata log %s is %s but %s holds %zu partition directories; refusing "
                   "to start with empty metadata (restore the metadata directory from a backup, "
                   "or move the partition directories away to start a new cluster)",
                   cfg->meta_dir, dir_has_entries(cfg->meta_dir) ? "empty" : "missing",
                   cfg->log_dir, nparts);
        return 1;
    }

    if (statvfs(cfg->meta_parent, &vfs) == 0 &&
        (unsigned long long)vfs.f_bavail * vfs.f_frsize < META_MIN_FREE_BYTES) {
        slog_error("main",
                   "only %llu KiB free on the file system of %s; the metadata log needs at least "
                   "%llu MiB (free space, or point metadata.log.dir elsewhere); refusing to start",
                   (unsigned long long)vfs.f_bavail * vfs.f_frsize / 1024, cfg->meta_parent,
                   META_MIN_FREE_BYTES >> 20);
        return 1;
    }
    return 0;
}
