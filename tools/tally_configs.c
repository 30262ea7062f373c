/* SPDX-License-Identifier: Apache-2.0 */
/* tally configs: describe and alter topic and broker configs. Alteration uses the
 * (non-incremental) AlterConfigs API, which replaces a resource's whole set of
 * dynamic configs, so the current dynamic set is read first and the change is
 * merged into it, as kafka-configs.sh did before KIP-339. */
#include "tally.h"
#include "base/arena.h"
#include "config/config.h"
#include "proto/proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char configs_usage[] =
    "usage: tally configs COMMAND ...\n"
    "\n"
    "  describe (--topic T | --broker ID)\n"
    "      Print every config of the topic or broker with its source (a cluster-wide\n"
    "      dynamic default shows as DYNAMIC_DEFAULT_BROKER_CONFIG).\n"
    "  alter (--topic T | --broker ID | --broker-defaults) [--set K=V ...] [--delete K ...]\n"
    "      Set or remove dynamic configs; the others stay as they are. --broker-defaults\n"
    "      is the cluster-wide dynamic default of every broker.\n"
    "  keys\n"
    "      List every known config with its type, default and documentation (also shown\n"
    "      by tally configs --help).\n";

static const char describe_usage[] =
    "usage: tally configs describe (--topic T | --broker ID) [--all]\n";
static const char alter_usage[] = "usage: tally configs alter (--topic T | --broker ID | "
                                  "--broker-defaults) [--set K=V ...] [--delete K ...]\n";

/* One dynamic config being edited. */
struct kv {
    char *key;
    char *value;
};

struct kv_list {
    struct kv *items;
    size_t cnt, cap;
};

static void kv_list_free(struct kv_list *l)
{
    for (size_t i = 0; i < l->cnt; i++) {
        free(l->items[i].key);
        free(l->items[i].value);
    }
    free(l->items);
    l->items = NULL;
    l->cnt = l->cap = 0;
}

static struct kv *kv_find(struct kv_list *l, const char *key)
{
    for (size_t i = 0; i < l->cnt; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return &l->items[i];
    return NULL;
}

/* Sets key to value (copies both), replacing an existing entry. Returns 0 or -1 on
 * out of memory. */
static int kv_set(struct kv_list *l, const char *key, const char *value)
{
    char *v = strdup(value != NULL ? value : "");
    if (v == NULL)
        return -1;
    struct kv *e = kv_find(l, key);
    if (e != NULL) {
        free(e->value);
        e->value = v;
        return 0;
    }
    if (l->cnt == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct kv *items = realloc(l->items, cap * sizeof *items);
        if (items == NULL) {
            free(v);
            return -1;
        }
        l->items = items;
        l->cap = cap;
    }
    char *k = strdup(key);
    if (k == NULL) {
        free(v);
        return -1;
    }
    l->items[l->cnt++] = (struct kv){.key = k, .value = v};
    return 0;
}

/* Removes key; returns false when it was not there. */
static bool kv_del(struct kv_list *l, const char *key)
{
    struct kv *e = kv_find(l, key);
    if (e == NULL)
        return false;
    free(e->key);
    free(e->value);
    *e = l->items[--l->cnt];
    return true;
}

static const char *restype_word(rd_kafka_ResourceType_t type)
{
    return type == RD_KAFKA_RESOURCE_TOPIC ? "topic" : "broker";
}

/* True when entry was set dynamically on this very resource, i.e. belongs in the
 * set that AlterConfigs replaces. Old brokers report no source, only is_default. */
static bool is_dynamic(const rd_kafka_ConfigEntry_t *e, rd_kafka_ResourceType_t type)
{
    rd_kafka_ConfigSource_t src = rd_kafka_ConfigEntry_source(e);
    if (rd_kafka_ConfigEntry_is_read_only(e))
        return false;
    if (src == RD_KAFKA_CONFIG_SOURCE_UNKNOWN_CONFIG)
        return !rd_kafka_ConfigEntry_is_default(e);
    return type == RD_KAFKA_RESOURCE_TOPIC ? src == RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG
                                           : src == RD_KAFKA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG;
}

/* Runs DescribeConfigs for one resource. On TALLY_OK *evp owns the result event
 * (caller destroys) and *resp points into it; otherwise the reason was printed. */
static int describe_resource(rd_kafka_t *rk, const struct tally_ctx *ctx,
                             rd_kafka_ResourceType_t type, const char *name, rd_kafka_event_t **evp,
                             const rd_kafka_ConfigResource_t **resp)
{
    int rc = TALLY_FAIL;
    rd_kafka_ConfigResource_t *cr = rd_kafka_ConfigResource_new(type, name);
    if (cr == NULL)
        return tally_fail("out of memory");
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts = tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
    rd_kafka_DescribeConfigs(rk, &cr, 1, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT, "describe configs");
    if (ev != NULL) {
        size_t cnt;
        const rd_kafka_ConfigResource_t **res = rd_kafka_DescribeConfigs_result_resources(
            rd_kafka_event_DescribeConfigs_result(ev), &cnt);
        if (cnt != 1) {
            tally_fail("describe configs of %s '%s': broker returned %zu resources",
                       restype_word(type), name, cnt);
        } else if (rd_kafka_ConfigResource_error(res[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            const char *msg = rd_kafka_ConfigResource_error_string(res[0]);
            tally_fail("cannot describe configs of %s '%s': %s%s%s", restype_word(type), name,
                       rd_kafka_err2name(rd_kafka_ConfigResource_error(res[0])),
                       msg != NULL && *msg ? ": " : "", msg != NULL ? msg : "");
        } else {
            *resp = res[0];
            *evp = ev;
            ev = NULL;
            rc = TALLY_OK;
        }
        if (ev != NULL)
            rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_ConfigResource_destroy(cr);
    return rc;
}

int tally_print_topic_configs(rd_kafka_t *rk, const struct tally_ctx *ctx, const char *topic)
{
    rd_kafka_event_t *ev;
    const rd_kafka_ConfigResource_t *res;
    if (describe_resource(rk, ctx, RD_KAFKA_RESOURCE_TOPIC, topic, &ev, &res) != TALLY_OK)
        return TALLY_FAIL;
    size_t cnt;
    const rd_kafka_ConfigEntry_t **entries = rd_kafka_ConfigResource_configs(res, &cnt);
    int printed = 0;
    for (size_t i = 0; i < cnt; i++) {
        if (!is_dynamic(entries[i], RD_KAFKA_RESOURCE_TOPIC))
            continue;
        const char *v = rd_kafka_ConfigEntry_value(entries[i]);
        printf("%s%s=%s", printed++ ? "," : "", rd_kafka_ConfigEntry_name(entries[i]),
               v != NULL ? v : "");
    }
    rd_kafka_event_destroy(ev);
    return TALLY_OK;
}

/* Parses "--topic T" / "--broker ID" at argv[*i]; returns 1 when consumed, 0 when
 * argv[*i] is something else, TALLY_USAGE (after printing) when malformed. */
static int parse_target(int argc, char **argv, int *i, rd_kafka_ResourceType_t *type,
                        const char **name)
{
    const char *a = argv[*i];
    rd_kafka_ResourceType_t t;
    if (strcmp(a, "--broker-defaults") == 0) {
        if (*name != NULL)
            return tally_usage_error("give exactly one of --topic or --broker");
        *type = RD_KAFKA_RESOURCE_BROKER;
        *name = "";
        return 1;
    }
    if (strcmp(a, "--topic") == 0)
        t = RD_KAFKA_RESOURCE_TOPIC;
    else if (strcmp(a, "--broker") == 0)
        t = RD_KAFKA_RESOURCE_BROKER;
    else
        return 0;
    if (*i + 1 >= argc)
        return tally_usage_error("%s needs a value", a);
    if (*name != NULL)
        return tally_usage_error("give exactly one of --topic or --broker");
    const char *v = argv[++*i];
    if (t == RD_KAFKA_RESOURCE_BROKER) {
        char *end;
        errno = 0;
        long id = strtol(v, &end, 10);
        if (errno != 0 || end == v || *end != '\0' || id < 0 || id > 2147483647L)
            return tally_usage_error("--broker needs a broker id, not '%s'", v);
    }
    *type = t;
    *name = v;
    return 1;
}

static const char *source_name(const rd_kafka_ConfigEntry_t *e)
{
    rd_kafka_ConfigSource_t src = rd_kafka_ConfigEntry_source(e);
    if (src == RD_KAFKA_CONFIG_SOURCE_UNKNOWN_CONFIG)
        return rd_kafka_ConfigEntry_is_default(e) ? "DEFAULT_CONFIG" : "UNKNOWN_CONFIG";
    return rd_kafka_ConfigSource_name(src);
}

/* kafka-configs.sh --describe: "Dynamic configs for topic T are:" (or "All configs ..." with
 * all) and one line per config, "  k=v sensitive=false synonyms={SOURCE:k=v, ...}", only the
 * configs set on the resource itself unless all. */
static void print_kafka_describe(const rd_kafka_ConfigResource_t *res, rd_kafka_ResourceType_t type,
                                 const char *name, bool all)
{
    size_t cnt;
    const rd_kafka_ConfigEntry_t **entries = rd_kafka_ConfigResource_configs(res, &cnt);
    printf("%s configs for %s %s are:\n", all ? "All" : "Dynamic", restype_word(type), name);
    for (size_t i = 0; i < cnt; i++) {
        const rd_kafka_ConfigEntry_t *e = entries[i];
        if (!all && !is_dynamic(e, type))
            continue;
        const char *v = rd_kafka_ConfigEntry_value(e);
        printf("  %s=%s sensitive=%s synonyms={", rd_kafka_ConfigEntry_name(e), v ? v : "null",
               rd_kafka_ConfigEntry_is_sensitive(e) ? "true" : "false");
        size_t ns = 0;
        const rd_kafka_ConfigEntry_t **syn = rd_kafka_ConfigEntry_synonyms(e, &ns);
        for (size_t j = 0; j < ns; j++) {
            const char *sv = rd_kafka_ConfigEntry_value(syn[j]);
            printf("%s%s:%s=%s", j ? ", " : "", source_name(syn[j]),
                   rd_kafka_ConfigEntry_name(syn[j]), sv ? sv : "null");
        }
        printf("}\n");
    }
}

static int configs_describe(const struct tally_ctx *ctx, int argc, char **argv)
{
    rd_kafka_ResourceType_t type = RD_KAFKA_RESOURCE_TOPIC;
    const char *name = NULL;
    bool all = false;

    for (int i = 2; i < argc; i++) {
        if (tally_is_help(argv[i])) {
            fputs(describe_usage, stdout);
            return TALLY_OK;
        }
    }
    for (int i = 2; i < argc; i++) {
        int r = parse_target(argc, argv, &i, &type, &name);
        if (r == TALLY_USAGE)
            return r;
        if (r == 0 && strcmp(argv[i], "--all") == 0)
            all = true; /* the default here; kafka-configs.sh's --all */
        else if (r == 0)
            return tally_usage_error("unexpected argument '%s'", argv[i]);
    }
    if (name == NULL)
        return tally_usage_error("configs describe needs --topic T or --broker ID");
    if (*name == '\0')
        return tally_usage_error("configs describe takes --broker ID: the cluster-wide "
                                 "defaults show there as DYNAMIC_DEFAULT_BROKER_CONFIG");

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    rd_kafka_event_t *ev;
    const rd_kafka_ConfigResource_t *res;
    int rc = describe_resource(rk, ctx, type, name, &ev, &res);
    if (rc == TALLY_OK && ctx->kafka_format) {
        print_kafka_describe(res, type, name, all);
        rd_kafka_event_destroy(ev);
    } else if (rc == TALLY_OK) {
        size_t cnt;
        const rd_kafka_ConfigEntry_t **entries = rd_kafka_ConfigResource_configs(res, &cnt);
        printf("Configs for %s %s:\n", restype_word(type), name);
        for (size_t i = 0; i < cnt; i++) {
            const rd_kafka_ConfigEntry_t *e = entries[i];
            const char *v = rd_kafka_ConfigEntry_value(e);
            if (rd_kafka_ConfigEntry_is_sensitive(e))
                v = "(sensitive)";
            printf("  %s=%s\t%s%s\n", rd_kafka_ConfigEntry_name(e), v != NULL ? v : "",
                   source_name(e), rd_kafka_ConfigEntry_is_read_only(e) ? ",read-only" : "");
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_destroy(rk);
    return rc;
}

/* Writes the whole dynamic set want to the resource with AlterConfigs. */
static int alter_resource(rd_kafka_t *rk, const struct tally_ctx *ctx, rd_kafka_ResourceType_t type,
                          const char *name, const struct kv_list *want)
{
    int rc = TALLY_FAIL;
    rd_kafka_ConfigResource_t *cr = rd_kafka_ConfigResource_new(type, name);
    if (cr == NULL)
        return tally_fail("out of memory");
    for (size_t i = 0; i < want->cnt; i++) {
        rd_kafka_resp_err_t err =
            rd_kafka_ConfigResource_set_config(cr, want->items[i].key, want->items[i].value);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            tally_fail("bad config '%s': %s", want->items[i].key, rd_kafka_err2str(err));
            rd_kafka_ConfigResource_destroy(cr);
            return TALLY_FAIL;
        }
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts = tally_admin_options(rk, ctx, RD_KAFKA_ADMIN_OP_ALTERCONFIGS);
    rd_kafka_AlterConfigs(rk, &cr, 1, opts, q);
    rd_kafka_event_t *ev =
        tally_admin_wait(q, ctx, RD_KAFKA_EVENT_ALTERCONFIGS_RESULT, "alter configs");
    if (ev != NULL) {
        size_t cnt;
        const rd_kafka_ConfigResource_t **res =
            rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(ev), &cnt);
        if (cnt != 1) {
            tally_fail("alter configs of %s '%s': broker returned %zu resources",
                       restype_word(type), name, cnt);
        } else if (rd_kafka_ConfigResource_error(res[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            const char *msg = rd_kafka_ConfigResource_error_string(res[0]);
            tally_fail("cannot alter configs of %s '%s': %s%s%s", restype_word(type), name,
                       rd_kafka_err2name(rd_kafka_ConfigResource_error(res[0])),
                       msg != NULL && *msg ? ": " : "", msg != NULL ? msg : "");
        } else {
            if (ctx->kafka_format)
                printf("Completed updating config for %s %s.\n", restype_word(type), name);
            else
                printf("Altered configs of %s %s.\n", restype_word(type), name);
            rc = TALLY_OK;
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_queue_destroy(q);
    rd_kafka_ConfigResource_destroy(cr);
    return rc;
}

/* The address of the controller (AlterConfigs is served there). Returns 0 with host
 * (malloc()ed) and port, or TALLY_FAIL (printed). */
static int controller_address(rd_kafka_t *rk, const struct tally_ctx *ctx, char **host, int *port)
{
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    int32_t id = rd_kafka_controllerid(rk, ctx->timeout_ms);
    int rc = tally_fail("no controller is known");
    if (md == NULL)
        return TALLY_FAIL;
    for (int i = 0; i < md->broker_cnt; i++) {
        if (md->brokers[i].id == id || (id < 0 && i == 0)) {
            *host = strdup(md->brokers[i].host);
            *port = md->brokers[i].port;
            rc = *host ? TALLY_OK : tally_fail("out of memory");
            break;
        }
    }
    rd_kafka_metadata_destroy(md);
    return rc;
}

/* --broker-defaults: IncrementalAlterConfigs on the broker resource "" (librdkafka's admin
 * API refuses an empty resource name), encoded with Tally's own codec: each --set is a
 * SET and each --delete a DELETE, in command-line order. */
static int alter_broker_defaults(const struct tally_ctx *ctx, int argc, char **argv)
{
    const struct proto_api *api = proto_api_find(PROTO_API_IncrementalAlterConfigs);
    struct IncrementalAlterableConfig *cfgs = calloc((size_t)argc, sizeof *cfgs);
    struct IncrementalAlterConfigsResource res = {.ResourceType = 4, .ResourceName = ""};
    struct IncrementalAlterConfigsRequest req = {0};
    uint8_t *frame = NULL, *resp = NULL;
    size_t frame_len = 0, resp_len = 0;
    char *host = NULL, *keys[256] = {0};
    int port = 0, n = 0, rc = TALLY_FAIL;
    struct tally_wire *w = NULL;
    struct arena *a = arena_new(1 << 20);
    rd_kafka_t *rk = NULL;

    if (api == NULL || cfgs == NULL || a == NULL) {
        rc = tally_fail("out of memory");
        goto out;
    }
    for (int i = 2; i < argc && n < 256; i++) {
        if (strcmp(argv[i], "--set") == 0) {
            const char *v;
            keys[n] = tally_split_kv(argv[++i], &v);
            cfgs[n] = (struct IncrementalAlterableConfig){keys[n], 0, (char *)v};
            n++;
        } else if (strcmp(argv[i], "--delete") == 0) {
            cfgs[n++] = (struct IncrementalAlterableConfig){argv[++i], 1, NULL};
        }
    }
    res.Configs.v = cfgs;
    res.Configs.n = n;
    req.Resources.v = &res;
    req.Resources.n = 1;
    if (proto_encode_request(api, 0, 1, "tally", &req, &frame, &frame_len) != 0) {
        rc = tally_fail("out of memory");
        goto out;
    }
    if ((rk = tally_connect(ctx)) == NULL || controller_address(rk, ctx, &host, &port) != 0)
        goto out;
    if ((w = tally_wire_connect(ctx, host, port)) == NULL ||
        tally_wire_roundtrip(w, frame, frame_len, &resp, &resp_len, "IncrementalAlterConfigs") != 0)
        goto out;
    void *out = NULL;
    int32_t corr;
    if (proto_decode_response(api, 0, resp, resp_len, &corr, &out, a) != 0 || corr != 1) {
        rc = tally_fail("IncrementalAlterConfigs: cannot decode the response");
        goto out;
    }
    struct IncrementalAlterConfigsResponse *r = out;
    if (r->Responses.n != 1) {
        rc = tally_fail("alter the broker defaults: broker returned %d resources",
                        (int)r->Responses.n);
    } else if (r->Responses.v[0].ErrorCode != 0) {
        const char *msg = r->Responses.v[0].ErrorMessage;
        rc = tally_fail("cannot alter the broker defaults: %s%s%s",
                        rd_kafka_err2name((rd_kafka_resp_err_t)r->Responses.v[0].ErrorCode),
                        msg && *msg ? ": " : "", msg ? msg : "");
    } else {
        printf(ctx->kafka_format ? "Completed updating default config for brokers in the cluster.\n"
                                 : "Altered the cluster-wide broker defaults.\n");
        rc = TALLY_OK;
    }
out:
    tally_wire_close(w);
    if (rk != NULL)
        rd_kafka_destroy(rk);
    for (int i = 0; i < n && i < 256; i++)
        free(keys[i]);
    free(host);
    free(frame);
    free(resp);
    free(cfgs);
    arena_free(a);
    return rc;
}

static int configs_alter(const struct tally_ctx *ctx, int argc, char **argv)
{
    rd_kafka_ResourceType_t type = RD_KAFKA_RESOURCE_TOPIC;
    const char *name = NULL;
    int changes = 0;

    for (int i = 2; i < argc; i++) {
        if (tally_is_help(argv[i])) {
            fputs(alter_usage, stdout);
            return TALLY_OK;
        }
    }
    /* First pass validates the command line before anything goes to the broker. */
    for (int i = 2; i < argc; i++) {
        int r = parse_target(argc, argv, &i, &type, &name);
        if (r == TALLY_USAGE)
            return r;
        if (r == 1)
            continue;
        if (strcmp(argv[i], "--set") == 0) {
            const char *v;
            char *k;
            if (i + 1 >= argc || (k = tally_split_kv(argv[i + 1], &v)) == NULL)
                return tally_usage_error("--set needs KEY=VALUE");
            free(k);
            i++;
            changes++;
        } else if (strcmp(argv[i], "--delete") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0')
                return tally_usage_error("--delete needs a config name");
            i++;
            changes++;
        } else {
            return tally_usage_error("unexpected argument '%s'", argv[i]);
        }
    }
    if (name == NULL)
        return tally_usage_error("configs alter needs --topic T or --broker ID");
    if (changes == 0)
        return tally_usage_error("configs alter needs at least one --set or --delete");
    if (*name == '\0')
        return alter_broker_defaults(ctx, argc, argv);

    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return TALLY_FAIL;
    struct kv_list want = {0};
    rd_kafka_event_t *ev;
    const rd_kafka_ConfigResource_t *res;
    int rc = describe_resource(rk, ctx, type, name, &ev, &res);
    if (rc != TALLY_OK)
        goto out;

    size_t cnt;
    const rd_kafka_ConfigEntry_t **entries = rd_kafka_ConfigResource_configs(res, &cnt);
    for (size_t i = 0; i < cnt && rc == TALLY_OK; i++) {
        if (!is_dynamic(entries[i], type))
            continue;
        if (rd_kafka_ConfigEntry_is_sensitive(entries[i])) {
            /* The broker does not return sensitive values, so a whole-set write would
             * erase them; refuse rather than lose a secret silently. */
            rc = tally_fail("%s '%s' has sensitive config '%s'; cannot rewrite it safely",
                            restype_word(type), name, rd_kafka_ConfigEntry_name(entries[i]));
        } else if (kv_set(&want, rd_kafka_ConfigEntry_name(entries[i]),
                          rd_kafka_ConfigEntry_value(entries[i])) != 0) {
            rc = tally_fail("out of memory");
        }
    }
    rd_kafka_event_destroy(ev);

    /* Changes apply in command-line order, so `--delete a --set a=1` sets a. */
    for (int i = 2; i < argc && rc == TALLY_OK; i++) {
        if (strcmp(argv[i], "--topic") == 0 || strcmp(argv[i], "--broker") == 0) {
            i++;
        } else if (strcmp(argv[i], "--set") == 0) {
            const char *v;
            char *k = tally_split_kv(argv[++i], &v);
            if (k == NULL || kv_set(&want, k, v) != 0)
                rc = tally_fail("out of memory");
            free(k);
        } else if (strcmp(argv[i], "--delete") == 0) {
            const char *k = argv[++i];
            if (!kv_del(&want, k))
                rc = tally_fail("config '%s' is not set on %s '%s'", k, restype_word(type), name);
        }
    }
    if (rc == TALLY_OK)
        rc = alter_resource(rk, ctx, type, name, &want);
out:
    kv_list_free(&want);
    rd_kafka_destroy(rk);
    return rc;
}

int tally_configs_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc < 2) {
        fputs(configs_usage, stderr);
        return TALLY_USAGE;
    }
    if (tally_is_help(argv[1]) || strcmp(argv[1], "keys") == 0) {
        if (tally_is_help(argv[1]))
            printf("%s\n", configs_usage);
        config_print_help(stdout); /* the broker's own table (src/config/table.c) */
        return TALLY_OK;
    }
    if (strcmp(argv[1], "describe") == 0)
        return configs_describe(ctx, argc, argv);
    if (strcmp(argv[1], "alter") == 0)
        return configs_alter(ctx, argc, argv);
    return tally_usage_error("unknown configs command '%s'", argv[1]);
}
