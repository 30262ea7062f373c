/* SPDX-License-Identifier: Apache-2.0 */
/* tally: entry point of the admin CLI. Parses the global options, dispatches to
 * the noun commands and implements the shared librdkafka helpers declared in tally.h. */
#include "tally.h"

#include "kafka_names.h"

#include "base/arena.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BOOTSTRAP "127.0.0.1:9092"
#define DEFAULT_TIMEOUT_MS 10000

static const char usage_text[] =
    "usage: tally [-b HOST:PORT] [--timeout MS] COMMAND ...\n"
    "\n"
    "Administer a Tally (or any Kafka) cluster.\n"
    "\n"
    "Commands:\n"
    "  topics create NAME [--partitions N] [--replication-factor N] [--config K=V ...]\n"
    "  topics list\n"
    "  topics describe [NAME ...] [--under-replicated-partitions] [--unavailable-partitions]\n"
    "  topics delete NAME ...\n"
    "  topics add-partitions NAME --partitions N\n"
    "  configs describe (--topic T | --broker ID)\n"
    "  configs alter (--topic T | --broker ID) [--set K=V ...] [--delete K ...]\n"
    "  cluster describe | new-id\n"
    "  partitions elect-leaders [--preferred|--unclean] (--topic T [--partition P] | --all)\n"
    "  partitions reassign --generate|--execute|--verify|--cancel|--list ...\n"
    "  perf produce --topic T --records N --record-size B [--acks all|1|0] ...\n"
    "  perf consume --topic T --records N [--from-beginning]\n"
    "  producers describe --topic T [--partition N]\n"
    "  groups list [--state S] | describe G | delete G | delete-offsets G --topic T\n"
    "  groups reset-offsets G --topic T[:P] --to-earliest|--to-latest|--to-offset N|\n"
    "         --to-datetime ISO|--shift-by N [--execute]\n"
    "  transactions list [--state S] | describe ID | find-hanging [--broker N]\n"
    "  transactions abort --topic T --partition P --start-offset O\n"
    "  log-dirs describe [--topic-list T,...] [--broker-list N,...]\n"
    "  acls add|list|remove [--allow-principal P] [--operation OP] [--topic T|--group G|\n"
    "         --transactional-id X|--cluster] [--resource-pattern-type literal|prefixed] ...\n"
    "  quotas set (--user U|--user-default) and/or (--client-id C|--client-default)\n"
    "         [--add-config K=V,...] [--delete-config K,...] | quotas describe [ENTITY]\n"
    "  users scram set NAME --mechanism M[,M] [--iterations N] (--password P|--password-stdin)\n"
    "  users scram describe [NAME ...] | users scram delete NAME --mechanism M[,M]\n"
    "  verify [--partitions P] [--records N] [--copiers K] [--faults kill,pause,fence] ...\n"
    "\n"
    "Options (accepted anywhere on the line):\n"
    "  -b, --bootstrap-server HOST:PORT   broker to contact (default " DEFAULT_BOOTSTRAP ")\n"
    "  --timeout MS                       per-request timeout (default 10000)\n"
    "  -X KEY=VALUE, --command-config FILE  client security, librdkafka's names:\n"
    "                                     security.protocol (PLAINTEXT, SSL, SASL_PLAINTEXT,\n"
    "                                     SASL_SSL), sasl.mechanism, sasl.username,\n"
    "                                     sasl.password, ssl.ca.location,\n"
    "                                     ssl.certificate.location, ssl.key.location,\n"
    "                                     ssl.key.password,\n"
    "                                     ssl.endpoint.identification.algorithm (https|none),\n"
    "                                     enable.ssl.certificate.verification; before the\n"
    "                                     command (every command), or after it for acls,\n"
    "                                     quotas, users and verify\n"
    "  -h, --help                         help for tally or for the command given\n"
    "\n"
    "Exit status: 0 ok, 1 the operation failed, 2 bad command line.\n"
    "\n"
    "Called by the name of one of Kafka's tools (a link named kafka-topics.sh,\n"
    "kafka-configs.sh, kafka-consumer-groups.sh, kafka-transactions.sh, kafka-log-dirs.sh or\n"
    "kafka-reassign-partitions.sh), tally takes that tool's options and prints as it does\n"
    "(docs/kafka-cli.md).\n";

int tally_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("tally: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return TALLY_FAIL;
}

int tally_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("tally: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see --help)\n", stderr);
    return TALLY_USAGE;
}

bool tally_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

char *tally_split_kv(const char *arg, const char **value)
{
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg)
        return NULL;
    char *key = strndup(arg, (size_t)(eq - arg));
    if (key == NULL)
        return NULL;
    *value = eq + 1;
    return key;
}

/* librdkafka logs connection failures itself; the CLI reports one line instead. */
static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    (void)level;
    (void)fac;
    (void)buf;
}

bool tally_security_conf(rd_kafka_conf_t *conf, const struct tally_ctx *ctx)
{
    char errstr[512];
    const char *name, *v;
    for (int i = 0; i < tally_security_count(); i++) {
        if ((v = tally_security_get(ctx, i, &name)) != NULL &&
            rd_kafka_conf_set(conf, name, v, errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
            tally_fail("bad client configuration %s: %s", name, errstr);
            return false;
        }
    }
    return true;
}

rd_kafka_t *tally_connect(const struct tally_ctx *ctx)
{
    char errstr[512];
    char num[32];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();

    snprintf(num, sizeof num, "%d", ctx->timeout_ms);
    if (rd_kafka_conf_set(conf, "bootstrap.servers", ctx->bootstrap, errstr, sizeof errstr) !=
            RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "socket.timeout.ms", num, errstr, sizeof errstr) !=
            RD_KAFKA_CONF_OK ||
        rd_kafka_conf_set(conf, "client.id", "tally", errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        tally_fail("bad client configuration: %s", errstr);
        return NULL;
    }
    /* The client security settings (-X / --command-config), as librdkafka names them. */
    if (!tally_security_conf(conf, ctx)) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_log_cb(conf, quiet_log);

    /* A producer handle is the lightest one that can run admin requests. On
     * success rd_kafka_new takes ownership of conf. */
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        tally_fail("cannot create client: %s", errstr);
        return NULL;
    }

    /* Check the cluster answers at all, so that an unreachable address gives the
     * same one-line message whichever command was asked for. */
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, NULL, &md, ctx->timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tally_fail("cannot reach %s: %s", ctx->bootstrap, rd_kafka_err2str(err));
        rd_kafka_destroy(rk);
        return NULL;
    }
    rd_kafka_metadata_destroy(md);
    return rk;
}

const struct rd_kafka_metadata *tally_metadata(rd_kafka_t *rk, const struct tally_ctx *ctx,
                                               const char *topic)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_topic_t *rkt = NULL;
    rd_kafka_resp_err_t err;

    if (topic != NULL) {
        rkt = rd_kafka_topic_new(rk, topic, NULL);
        if (rkt == NULL) {
            tally_fail("bad topic name '%s': %s", topic, rd_kafka_err2str(rd_kafka_last_error()));
            return NULL;
        }
    }
    err = rd_kafka_metadata(rk, rkt == NULL, rkt, &md, ctx->timeout_ms);
    if (rkt != NULL)
        rd_kafka_topic_destroy(rkt);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tally_fail("cannot get metadata from %s: %s", ctx->bootstrap, rd_kafka_err2str(err));
        return NULL;
    }
    return md;
}

rd_kafka_AdminOptions_t *tally_admin_options(rd_kafka_t *rk, const struct tally_ctx *ctx,
                                             rd_kafka_admin_op_t api)
{
    char errstr[256];
    rd_kafka_AdminOptions_t *opts = rd_kafka_AdminOptions_new(rk, api);
    if (opts == NULL)
        return NULL;
    rd_kafka_AdminOptions_set_request_timeout(opts, ctx->timeout_ms, errstr, sizeof errstr);
    if (api == RD_KAFKA_ADMIN_OP_CREATETOPICS || api == RD_KAFKA_ADMIN_OP_DELETETOPICS ||
        api == RD_KAFKA_ADMIN_OP_CREATEPARTITIONS)
        rd_kafka_AdminOptions_set_operation_timeout(opts, ctx->timeout_ms, errstr, sizeof errstr);
    return opts;
}

rd_kafka_event_t *tally_admin_wait(rd_kafka_queue_t *q, const struct tally_ctx *ctx,
                                   rd_kafka_event_type_t want, const char *what)
{
    /* The client enforces the request timeout itself; the extra margin only guards
     * against never hearing back at all. */
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, ctx->timeout_ms + 5000);
    if (ev == NULL) {
        tally_fail("%s: timed out after %d ms", what, ctx->timeout_ms);
        return NULL;
    }
    if (rd_kafka_event_type(ev) != want) {
        tally_fail("%s: unexpected event %s", what, rd_kafka_event_name(ev));
        rd_kafka_event_destroy(ev);
        return NULL;
    }
    if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        tally_fail("%s failed: %s", what, rd_kafka_event_error_string(ev));
        rd_kafka_event_destroy(ev);
        return NULL;
    }
    return ev;
}

int tally_noun_main(const struct tally_noun *noun, const struct tally_ctx *ctx, int argc,
                    char **argv, void *args)
{
    const struct tally_verb *v;
    char names[256];
    size_t k = 0;

    if (argc < 2) {
        fputs(noun->usage, stderr);
        return TALLY_USAGE;
    }
    if (tally_is_help(argv[1])) {
        fputs(noun->usage, stdout);
        return TALLY_OK;
    }
    for (v = noun->verbs; v->name && strcmp(v->name, argv[1]) != 0; v++)
        ;
    if (v->name == NULL) {
        names[0] = '\0';
        for (const struct tally_verb *x = noun->verbs; x->name && k < sizeof names; x++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "", x->name);
        return tally_usage_error("unknown %s command '%s' (%s)", noun->name, argv[1], names);
    }
    /* The security options go to a copy of ctx; the rest, in order, to the noun's parser. */
    struct tally_ctx sctx = *ctx;
    int n = 0, rc = TALLY_OK;
    for (int i = 0; i < argc && rc == TALLY_OK; i++) {
        bool x = strcmp(argv[i], "-X") == 0, file = strcmp(argv[i], "--command-config") == 0;
        if (i >= 2 && (x || file)) {
            if (i + 1 >= argc)
                return tally_usage_error("%s needs a value", argv[i]);
            rc =
                x ? tally_security_option(&sctx, argv[++i]) : tally_security_file(&sctx, argv[++i]);
        } else {
            argv[n++] = argv[i];
        }
    }
    if (rc == TALLY_OK)
        rc = noun->parse(n, argv, args);
    if (rc != TALLY_OK)
        return rc;
    struct arena *ar = arena_new(noun->arena_bytes);
    if (ar == NULL)
        return tally_fail("out of memory");
    rc = v->run(&sctx, args, ar);
    arena_free(ar);
    return rc;
}

/* Parses a positive int; returns false on junk or overflow. */
static bool parse_positive(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v <= 0 || v > 3600000)
        return false;
    *out = (int)v;
    return true;
}

int main(int argc, char **argv)
{
    struct tally_ctx ctx = {.bootstrap = DEFAULT_BOOTSTRAP, .timeout_ms = DEFAULT_TIMEOUT_MS};
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int n = 0;

    /* Busybox-style: a link by one of Kafka's tool names runs that tool (kafka_names.h). */
    if (argc > 0) {
        char *prog = strdup(argv[0]);
        bool kafka = prog != NULL && kafka_names_is_tool(basename(prog));
        int krc = kafka ? kafka_names_main(basename(prog), argc, argv) : 0;
        free(prog);
        if (kafka) {
            free(rest);
            return krc;
        }
    }
    if (rest == NULL)
        return tally_fail("out of memory");

    /* Global options may appear anywhere so that `tally topics list -b h:p` works;
     * everything else is passed on in order. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-b") == 0 || strcmp(argv[i], "--bootstrap-server") == 0) {
            if (i + 1 >= argc) {
                free(rest);
                return tally_usage_error("%s needs HOST:PORT", argv[i]);
            }
            ctx.bootstrap = argv[++i];
        } else if (strcmp(argv[i], "--timeout") == 0) {
            if (i + 1 >= argc || !parse_positive(argv[i + 1], &ctx.timeout_ms)) {
                free(rest);
                return tally_usage_error("--timeout needs a positive number of ms");
            }
            i++;
        } else if (n == 0 &&
                   (strcmp(argv[i], "-X") == 0 || strcmp(argv[i], "--command-config") == 0)) {
            /* Before the command only: after it they are the command's (perf passes -X to
             * librdkafka; the noun commands take them themselves, tally_noun_main). */
            int rc = i + 1 >= argc                ? tally_usage_error("%s needs a value", argv[i])
                     : strcmp(argv[i], "-X") == 0 ? tally_security_option(&ctx, argv[i + 1])
                                                  : tally_security_file(&ctx, argv[i + 1]);
            if (rc != TALLY_OK) {
                free(rest);
                return rc;
            }
            i++;
        } else {
            rest[n++] = argv[i];
        }
    }

    int rc;
    if (n == 0) {
        fputs(usage_text, stderr);
        rc = TALLY_USAGE;
    } else if (tally_is_help(rest[0])) {
        fputs(usage_text, stdout);
        rc = TALLY_OK;
    } else if (strcmp(rest[0], "topics") == 0 || strcmp(rest[0], "topic") == 0) {
        rc = tally_topics_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "configs") == 0 || strcmp(rest[0], "config") == 0) {
        rc = tally_configs_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "cluster") == 0) {
        rc = tally_cluster_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "partitions") == 0 || strcmp(rest[0], "partition") == 0) {
        rc = tally_partitions_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "perf") == 0) {
        rc = tally_perf_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "verify") == 0) {
        rc = tally_verify_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "producers") == 0 || strcmp(rest[0], "producer") == 0) {
        rc = tally_producers_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "groups") == 0 || strcmp(rest[0], "group") == 0) {
        rc = tally_groups_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "transactions") == 0 || strcmp(rest[0], "transaction") == 0) {
        rc = tally_txn_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "log-dirs") == 0) {
        rc = tally_logdirs_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "acls") == 0 || strcmp(rest[0], "acl") == 0) {
        rc = tally_acls_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "quotas") == 0 || strcmp(rest[0], "quota") == 0) {
        rc = tally_quotas_main(&ctx, n, rest);
    } else if (strcmp(rest[0], "users") == 0 || strcmp(rest[0], "user") == 0) {
        rc = tally_users_main(&ctx, n, rest);
    } else {
        rc = tally_usage_error("unknown command '%s'", rest[0]);
    }
    free(rest);
    return rc;
}
