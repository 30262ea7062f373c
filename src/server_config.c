/* SPDX-License-Identifier: Apache-2.0 */
/* server_config: tallyd's command line, its embedded defaults, listener and quorum parsing,
 * and the meta.properties check that keeps a data dir with the node that formatted it. */
#include "server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "admin/admin.h"
#include "base/err.h"
#include "base/log.h"
#include "base/props.h"

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

int server_config_parse(int argc, char **argv, struct server_config *cfg)
{
    struct props *p = props_new();
    const char *file = NULL;
    char why[256];
    bool ok;

    memset(cfg, 0, sizeof *cfg);
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
        int rc = props_load(p, file, &bad);
        if (rc == ERR_IO) {
            fprintf(stderr, "tallyd: cannot read config file %s: %s\n", file, strerror(errno));
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
                fprintf(stderr, "tallyd: --set expects key=value, got '%s'\n", argv[i]);
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
    cfg->node_id =
        (int32_t)props_get_int(p, "node.id", props_get_int(p, "broker.id", 1, NULL), &ok);
    if (!ok || cfg->node_id < 0) {
        fprintf(stderr, "tallyd: node.id must be a non-negative integer\n");
        return 2;
    }
    const char *listeners = props_get(p, "listeners");
    if (find_listener(listeners, "PLAINTEXT", cfg->host, sizeof cfg->host, &cfg->port) != 0) {
        fprintf(stderr, "tallyd: listeners must contain PLAINTEXT://host:port (got '%s')\n",
                listeners);
        return 2;
    }
    const char *adv = props_get(p, "advertised.listeners");
    if (adv && *adv) {
        if (find_listener(adv, "PLAINTEXT", cfg->adv_host, sizeof cfg->adv_host, &cfg->adv_port) !=
            0) {
            fprintf(stderr, "tallyd: advertised.listeners must contain PLAINTEXT://host:port\n");
            return 2;
        }
    } else {
        snprintf(cfg->adv_host, sizeof cfg->adv_host, "%s", cfg->host);
        cfg->adv_port = cfg->port;
    }
    if (strcmp(cfg->adv_host, "0.0.0.0") == 0) {
        fprintf(stderr, "tallyd: advertised listener host 0.0.0.0 is not reachable; set "
                        "advertised.listeners\n");
        return 2;
    }
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
    const char *cid = props_get(p, "cluster.id");
    if (cid)
        snprintf(cfg->cluster_id, sizeof cfg->cluster_id, "%s", cid);
    cfg->max_frame = (size_t)props_get_int(p, "socket.request.max.bytes", 104857600, NULL);
    return 0;
}

void server_config_free(struct server_config *cfg)
{
    props_free(cfg->props);
    cfg->props = NULL;
}

static int mkdirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = buf + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
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

int server_format_dir(struct server_config *cfg)
{
    char path[PATH_MAX + 32];
    struct props *mp;
    int rc = 1;

    if (mkdirs(cfg->log_dir) != 0) {
        log_error("main", "cannot create log dir %s: %s", cfg->log_dir, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof path, "%s/meta.properties", cfg->log_dir);
    mp = props_new();
    if (mp == NULL)
        return 1;
    if (props_load(mp, path, NULL) == 0) {
        bool ok;
        int64_t node = props_get_int(mp, "node.id", -1, &ok);
        const char *cid = props_get(mp, "cluster.id");
        if (!ok || node != cfg->node_id) {
            log_error("main",
                      "log dir %s belongs to node.id %lld, not node.id %d; refusing "
                      "to start (point log.dirs elsewhere or fix node.id)",
                      cfg->log_dir, (long long)node, cfg->node_id);
            goto out;
        }
        if (cid == NULL || *cid == '\0') {
            log_error("main", "%s has no cluster.id; refusing to start", path);
            goto out;
        }
        if (cfg->cluster_id[0] && strcmp(cfg->cluster_id, cid) != 0) {
            log_error("main",
                      "log dir %s belongs to cluster %s, not the configured cluster.id "
                      "%s; refusing to start",
                      cfg->log_dir, cid, cfg->cluster_id);
            goto out;
        }
        snprintf(cfg->cluster_id, sizeof cfg->cluster_id, "%s", cid);
        rc = 0;
        goto out;
    }
    if (errno != ENOENT) {
        log_error("main", "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    if (cfg->cluster_id[0] == '\0')
        new_cluster_id(cfg->cluster_id);
    char node[16];
    snprintf(node, sizeof node, "%d", cfg->node_id);
    if (props_set(mp, "version", "1") || props_set(mp, "cluster.id", cfg->cluster_id) ||
        props_set(mp, "node.id", node) || props_store(mp, path, "written by tallyd") != 0) {
        log_error("main", "cannot write %s: %s", path, strerror(errno));
        goto out;
    }
    log_info("main", "formatted %s for cluster %s, node %d", cfg->log_dir, cfg->cluster_id,
             cfg->node_id);
    rc = 0;
out:
    props_free(mp);
    return rc;
}
