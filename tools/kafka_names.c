/* SPDX-License-Identifier: Apache-2.0 */
/* kafka_names: the kafka-*.sh names of the tally binary (kafka_names.h). Each tool has a table
 * of the Kafka options it maps, which actions each may go with, and a table of the Kafka options
 * it knows but refuses, with the tally command that does that job instead. Parsing follows
 * Kafka's (joptsimple): options in any order, "--opt value" or "--opt=value"; no positional
 * arguments except kafka-transactions.sh's subcommand. The work itself is the tally commands'
 * (tally.h), run with kafka_format set; nothing here sends a request but the existence check of
 * --if-exists / --if-not-exists. */
#include "kafka_names.h"

#include "tally.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KN_MAX_VALUES 64 /* values of one repeatable option (--group, --topic, --config) */
#define KN_MAX_ARGS 512  /* arguments of the translated tally command line */
#define KN_DEFAULT_TIMEOUT_MS 30000

/* ---- options --------------------------------------------------------------------------------- */

enum kn_kind { KN_FLAG, KN_VALUE, KN_OPT_VALUE };

/* One Kafka option a tool maps. `actions` is the set of action bits (the tool's own) it may be
 * given with; 0 = any. */
struct kn_opt {
    const char *name;
    enum kn_kind kind;
    unsigned actions;
    int n;                        /* times given */
    const char *v[KN_MAX_VALUES]; /* their values (NULL for a flag or an absent optional value) */
};

/* A Kafka option refused, and what to run instead. */
struct kn_refusal {
    const char *name;
    const char *instead;
};

struct kn_tool;
typedef int (*kn_run_fn)(const struct kn_tool *t, struct tally_ctx *ctx, struct kn_opt *o,
                         const char *sub);

struct kn_tool {
    const char *name;  /* "kafka-topics.sh" */
    const char *tally; /* the tally command family, for messages: "tally topics" */
    const char *usage;
    const struct kn_opt *opts; /* template, NULL-terminated; copied per run */
    const struct kn_refusal *refused;
    bool subcommand; /* takes one positional subcommand (kafka-transactions.sh) */
    kn_run_fn run;
};

#define KN_COMMON                                                                                  \
    {"--bootstrap-server", KN_VALUE, 0, 0, {0}}, {"--command-config", KN_VALUE, 0, 0, {0}},        \
        {"--help", KN_FLAG, 0, 0, {0}},                                                            \
    {                                                                                              \
        "--version", KN_FLAG, 0, 0,                                                                \
        {                                                                                          \
            0                                                                                      \
        }                                                                                          \
    }

static struct kn_opt *kn_get(struct kn_opt *o, const char *name)
{
    for (; o->name != NULL; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

/* The option's (first) value, or NULL when it was not given. */
static const char *kn_val(struct kn_opt *o, const char *name)
{
    struct kn_opt *x = kn_get(o, name);
    return x != NULL && x->n > 0 ? x->v[0] : NULL;
}

static bool kn_has(struct kn_opt *o, const char *name)
{
    struct kn_opt *x = kn_get(o, name);
    return x != NULL && x->n > 0;
}

static int kn_error(const struct kn_tool *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int kn_error(const struct kn_tool *t, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", t->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static int kn_refuse(const struct kn_tool *t, const char *what, const char *instead)
{
    return kn_error(t, "%s is not supported by Tally's %s; use `%s` instead", what, t->name,
                    instead);
}

/* Fills o from argv[1..argc-1]; *sub gets the subcommand of a tool that takes one. Returns 0 or
 * 1 after printing why. */
static int kn_parse(const struct kn_tool *t, struct kn_opt *o, int argc, char **argv,
                    const char **sub)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = NULL;
        char name[128];
        if (strncmp(a, "--", 2) == 0 && (eq = strchr(a, '=')) != NULL) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
        } else {
            snprintf(name, sizeof name, "%s", strcmp(a, "-h") == 0 ? "--help" : a);
        }
        struct kn_opt *x = name[0] == '-' ? kn_get(o, name) : NULL;
        if (x != NULL) {
            const char *v = NULL;
            if (x->kind == KN_FLAG && eq != NULL)
                return kn_error(t, "option %s takes no value", name);
            if (x->kind != KN_FLAG) {
                if (eq != NULL)
                    v = eq + 1;
                else if (i + 1 < argc && (x->kind == KN_VALUE || argv[i + 1][0] != '-'))
                    v = argv[++i];
                else if (x->kind == KN_VALUE)
                    return kn_error(t, "option %s requires an argument", name);
            }
            if (x->n == KN_MAX_VALUES)
                return kn_error(t, "option %s given more than %d times", name, KN_MAX_VALUES);
            x->v[x->n++] = v;
            continue;
        }
        for (const struct kn_refusal *r = t->refused; r != NULL && r->name != NULL; r++) {
            if (strcmp(r->name, name) == 0) {
                char what[160];
                snprintf(what, sizeof what, "option %s", name);
                return kn_refuse(t, what, r->instead);
            }
        }
        if (name[0] == '-')
            return kn_error(t,
                            "%s is not a recognized option (Tally maps Kafka's common options "
                            "only, see %s --help); the rest is `%s --help`",
                            name, t->name, t->tally);
        if (t->subcommand && *sub == NULL) {
            *sub = a;
            continue;
        }
        return kn_error(t, "unexpected argument '%s' (see %s --help)", a, t->name);
    }
    return 0;
}

/* The one action given of names (action bit i = names[i]): its index, or -1 after printing why. */
static int kn_action(const struct kn_tool *t, struct kn_opt *o, const char *const *names, int n,
                     const char *sentence)
{
    int found = -1;
    for (int i = 0; i < n; i++) {
        if (!kn_has(o, names[i]))
            continue;
        if (found >= 0) {
            kn_error(t, "%s", sentence);
            return -1;
        }
        found = i;
    }
    if (found < 0)
        kn_error(t, "%s", sentence);
    return found;
}

/* Every option given that the action (bit `action` of names[]) does not take: refused as Kafka
 * refuses it. Returns 0 or 1. */
static int kn_check_actions(const struct kn_tool *t, struct kn_opt *o, int action,
                            const char *action_name)
{
    for (; o->name != NULL; o++)
        if (o->n > 0 && o->actions != 0 && (o->actions & (1u << action)) == 0)
            return kn_error(t, "option %s can't be used with option %s", o->name, action_name);
    return 0;
}

/* ---- the translated command line ----------------------------------------------------------------
 */

struct kn_argv {
    char *v[KN_MAX_ARGS + 1];
    int n;
};

static void av_add(struct kn_argv *a, const char *s)
{
    /* Past the bound the line is cut and kn_call refuses it. */
    if (a->n < KN_MAX_ARGS)
        a->v[a->n] = (char *)s;
    a->n++;
}

typedef int (*kn_cmd_fn)(const struct tally_ctx *ctx, int argc, char **argv);

/* Runs the tally command with the line in a: its exit code folded into Kafka's 0 / 1. */
static int kn_call(const struct kn_tool *t, const struct tally_ctx *ctx, kn_cmd_fn fn,
                   struct kn_argv *a)
{
    if (a->n > KN_MAX_ARGS)
        return kn_error(t, "too many arguments");
    a->v[a->n] = NULL;
    return fn(ctx, a->n, a->v) == TALLY_OK ? 0 : 1;
}

/* Whether topic `name` exists (every topic is listed, so that asking cannot auto-create it).
 * 0 with *exists, or 1 after printing why. */
static int kn_topic_exists(const struct tally_ctx *ctx, const char *name, bool *exists)
{
    rd_kafka_t *rk = tally_connect(ctx);
    if (rk == NULL)
        return 1;
    const struct rd_kafka_metadata *md = tally_metadata(rk, ctx, NULL);
    int rc = 1;
    if (md != NULL) {
        *exists = false;
        for (int i = 0; i < md->topic_cnt; i++)
            if (md->topics[i].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
                strcmp(md->topics[i].topic, name) == 0)
                *exists = true;
        rd_kafka_metadata_destroy(md);
        rc = 0;
    }
    rd_kafka_destroy(rk);
    return rc;
}

/* Kafka's --topic also takes a regular expression; Tally's wrappers take a name only. A legal
 * topic name has no character but [a-zA-Z0-9._-], whose only regex one, '.', then matches itself
 * among the names that exist as often as not: such a name is taken as a name. */
static bool kn_plain_topic(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* ---- kafka-topics.sh
 * ------------------------------------------------------------------------------ */

enum { T_CREATE, T_DELETE, T_LIST, T_DESCRIBE, T_ALTER };
#define TB(x) (1u << (x))

static const char topics_usage[] =
    "usage: kafka-topics.sh --bootstrap-server HOST:PORT ACTION [OPTIONS]\n"
    "\n"
    "Tally's kafka-topics.sh: Kafka's options below, run as `tally topics`, printed as Kafka's\n"
    "tool prints. Exactly one action:\n"
    "  --create --topic T [--partitions N] [--replication-factor R] [--config K=V ...]\n"
    "           [--if-not-exists]\n"
    "  --list\n"
    "  --describe [--topic T] [--if-exists] [--under-replicated-partitions]\n"
    "             [--unavailable-partitions]\n"
    "  --alter --topic T --partitions N [--if-exists]\n"
    "  --delete --topic T [--if-exists]\n"
    "--topic takes a topic name (no regular expressions). Also --command-config FILE (only a\n"
    "file without properties), --help. Anything else is refused with the tally command to use.\n";

static const struct kn_opt topics_opts[] = {
    KN_COMMON,
    {"--create", KN_FLAG, 0, 0, {0}},
    {"--delete", KN_FLAG, 0, 0, {0}},
    {"--list", KN_FLAG, 0, 0, {0}},
    {"--describe", KN_FLAG, 0, 0, {0}},
    {"--alter", KN_FLAG, 0, 0, {0}},
    {"--topic", KN_VALUE, TB(T_CREATE) | TB(T_DELETE) | TB(T_DESCRIBE) | TB(T_ALTER), 0, {0}},
    {"--partitions", KN_VALUE, TB(T_CREATE) | TB(T_ALTER), 0, {0}},
    {"--replication-factor", KN_VALUE, TB(T_CREATE), 0, {0}},
    {"--config", KN_VALUE, TB(T_CREATE), 0, {0}},
    {"--if-not-exists", KN_FLAG, TB(T_CREATE), 0, {0}},
    {"--if-exists", KN_FLAG, TB(T_DELETE) | TB(T_DESCRIBE) | TB(T_ALTER), 0, {0}},
    {"--under-replicated-partitions", KN_FLAG, TB(T_DESCRIBE), 0, {0}},
    {"--unavailable-partitions", KN_FLAG, TB(T_DESCRIBE), 0, {0}},
    {NULL, KN_FLAG, 0, 0, {0}},
};

static const struct kn_refusal topics_refused[] = {
    {"--replica-assignment", "tally topics create T --partitions N, then tally partitions "
                             "reassign --execute --reassignment-json-file F"},
    {"--delete-config", "tally configs alter --topic T --delete K"},
    {"--topic-id", "tally topics describe T"},
    {"--exclude-internal", "tally topics list"},
    {"--under-min-isr-partitions", "tally topics describe (ISR per partition)"},
    {"--at-min-isr-partitions", "tally topics describe (ISR per partition)"},
    {"--topics-with-overrides", "tally topics describe (Configs per topic)"},
    {"--partition-size-limit-per-response", "tally topics describe"},
    {"--zookeeper", "--bootstrap-server HOST:PORT"},
    {NULL, NULL},
};

static int kn_topics(const struct kn_tool *t, struct tally_ctx *ctx, struct kn_opt *o,
                     const char *sub)
{
    static const char *const actions[] = {"--create", "--delete", "--list", "--describe",
                                          "--alter"};
    struct kn_argv a = {.n = 0};
    const char *topic = kn_val(o, "--topic");
    bool exists = true;
    (void)sub;

    int act = kn_action(t, o, actions, 5,
                        "Command must include exactly one action: --list, --describe, --create, "
                        "--alter or --delete");
    if (act == T_ALTER && kn_has(o, "--config"))
        return kn_refuse(t, "--alter --config (removed from Kafka's tool too)",
                         "kafka-configs.sh --alter --add-config, or tally configs alter --topic T "
                         "--set K=V");
    if (act < 0 || kn_check_actions(t, o, act, actions[act]) != 0)
        return 1;
    if (kn_get(o, "--topic")->n > 1)
        return kn_refuse(t, "--topic given more than once", "one command per topic");
    if (topic != NULL && !kn_plain_topic(topic))
        return kn_refuse(t, "a regular expression in --topic", "tally topics list | grep -E RE");
    if (topic == NULL && act != T_LIST && act != T_DESCRIBE)
        return kn_error(t, "Missing required argument \"[topic]\"");
    if (kn_has(o, "--if-exists") || kn_has(o, "--if-not-exists")) {
        if (kn_topic_exists(ctx, topic, &exists) != 0)
            return 1;
        /* --if-exists: nothing to do for a missing topic; --if-not-exists: for a present one. */
        if (kn_has(o, "--if-exists") ? !exists : exists)
            return 0;
    }

    av_add(&a, "topics");
    switch (act) {
    case T_LIST:
        av_add(&a, "list");
        break;
    case T_CREATE: {
        av_add(&a, "create");
        av_add(&a, topic);
        if (kn_has(o, "--partitions")) {
            av_add(&a, "--partitions");
            av_add(&a, kn_val(o, "--partitions"));
        }
        if (kn_has(o, "--replication-factor")) {
            av_add(&a, "--replication-factor");
            av_add(&a, kn_val(o, "--replication-factor"));
        }
        struct kn_opt *c = kn_get(o, "--config");
        for (int i = 0; i < c->n; i++) {
            av_add(&a, "--config");
            av_add(&a, c->v[i]);
        }
        break;
    }
    case T_DELETE:
        av_add(&a, "delete");
        av_add(&a, topic);
        break;
    case T_ALTER:
        if (!kn_has(o, "--partitions"))
            return kn_refuse(t, "--alter without --partitions",
                             "kafka-configs.sh --alter --add-config, or tally configs alter "
                             "--topic T --set K=V");
        av_add(&a, "add-partitions");
        av_add(&a, topic);
        av_add(&a, "--partitions");
        av_add(&a, kn_val(o, "--partitions"));
        break;
    case T_DESCRIBE:
        av_add(&a, "describe");
        if (topic != NULL)
            av_add(&a, topic);
        if (kn_has(o, "--under-replicated-partitions"))
            av_add(&a, "--under-replicated-partitions");
        if (kn_has(o, "--unavailable-partitions"))
            av_add(&a, "--unavailable-partitions");
        break;
    }
    return kn_call(t, ctx, tally_topics_main, &a);
}

/* ---- kafka-configs.sh
 * ----------------------------------------------------------------------------- */

enum { C_DESCRIBE, C_ALTER };

static const char configs_usage[] =
    "usage: kafka-configs.sh --bootstrap-server HOST:PORT ENTITY ACTION\n"
    "\n"
    "Tally's kafka-configs.sh: Kafka's options below, run as `tally configs`, printed as Kafka's\n"
    "tool prints. ENTITY is --entity-type topics|brokers --entity-name NAME (or --topic T,\n"
    "--broker ID), or --entity-type brokers --entity-default (or --broker-defaults) for the\n"
    "cluster-wide broker defaults (--alter only). ACTION is one of:\n"
    "  --describe [--all]                  the configs set on the entity (every config: --all)\n"
    "  --alter [--add-config K=V,K2=[A,B]] [--delete-config K,K2]\n"
    "--entity-type users --entity-name NAME: SCRAM credentials, as tally users scram:\n"
    "  --alter --add-config 'SCRAM-SHA-512=[iterations=8192,password=P]' | --delete-config M\n"
    "Also --command-config FILE (only a file without properties), --help. Clients, IPs and\n"
    "broker loggers are refused with the tally command to use.\n";

static const struct kn_opt configs_opts[] = {
    KN_COMMON,
    {"--describe", KN_FLAG, 0, 0, {0}},
    {"--alter", KN_FLAG, 0, 0, {0}},
    {"--entity-type", KN_VALUE, 0, 0, {0}},
    {"--entity-name", KN_VALUE, 0, 0, {0}},
    {"--entity-default", KN_FLAG, 0, 0, {0}},
    {"--topic", KN_VALUE, 0, 0, {0}},
    {"--broker", KN_VALUE, 0, 0, {0}},
    {"--broker-defaults", KN_FLAG, 0, 0, {0}},
    {"--all", KN_FLAG, TB(C_DESCRIBE), 0, {0}},
    {"--add-config", KN_VALUE, TB(C_ALTER), 0, {0}},
    {"--delete-config", KN_VALUE, TB(C_ALTER), 0, {0}},
    {NULL, KN_FLAG, 0, 0, {0}},
};

static const struct kn_refusal configs_refused[] = {
    {"--add-config-file", "tally configs alter --topic T --set K=V ..."},
    {"--user", "--entity-type users --entity-name NAME, or tally users scram / tally quotas"},
    {"--client", "tally quotas (--client-id)"},
    {"--ip", "tally configs (Tally has no connection quotas yet)"},
    {"--broker-logger", "tally configs describe --broker ID"},
    {"--force", "tally configs alter"},
    {"--zookeeper", "--bootstrap-server HOST:PORT"},
    {NULL, NULL},
};

/* Splits Kafka's --add-config list in place: entries separated by commas, except inside
 * [...], whose brackets are dropped ("k=[a,b]" is k=a,b). Each entry goes to a as --set.
 * Returns 0 or 1 after printing why. */
static int kn_add_configs(const struct kn_tool *t, char *s, struct kn_argv *a)
{
    char *w = s, *start = s;
    int depth = 0;
    for (char *r = s;; r++) {
        if (*r == '[') {
            depth++;
            continue;
        }
        if (*r == ']' && depth > 0) {
            depth--;
            continue;
        }
        if ((*r == ',' && depth == 0) || *r == '\0') {
            bool end = *r == '\0';
            *w++ = '\0';
            if (*start != '\0') {
                const char *eq = strchr(start, '=');
                if (eq == NULL || eq == start)
                    return kn_error(t, "--add-config needs K=V entries, not '%s'", start);
                av_add(a, "--set");
                av_add(a, start);
            }
            if (end)
                break;
            start = w;
            continue;
        }
        *w++ = *r;
    }
    if (depth != 0)
        return kn_error(t, "--add-config has an unclosed '['");
    return 0;
}

/* One SCRAM entry of --add-config, "SCRAM-SHA-512=[iterations=8192,password=...]" (brackets
 * optional for one key), set with `tally users scram set`. Kafka's default iterations: 4096. */
static int kn_scram_set(const struct kn_tool *t, struct tally_ctx *ctx, const char *user, char *e)
{
    struct kn_argv a = {.n = 0};
    char *eq = strchr(e, '=');
    const char *iterations = NULL, *password = NULL;

    if (eq == NULL)
        return kn_error(t, "--add-config needs K=V entries, not '%s'", e);
    *eq = '\0';
    char *v = eq + 1;
    size_t vl = strlen(v);
    if (vl >= 2 && v[0] == '[' && v[vl - 1] == ']') {
        v[vl - 1] = '\0';
        v++;
    }
    if (strcmp(e, "SCRAM-SHA-256") != 0 && strcmp(e, "SCRAM-SHA-512") != 0)
        return kn_refuse(t, "a users config other than SCRAM-SHA-256/512",
                         "tally quotas set --user NAME --add-config K=V");
    for (char *kv = strtok(v, ","); kv; kv = strtok(NULL, ",")) {
        if (strncmp(kv, "iterations=", 11) == 0)
            iterations = kv + 11;
        else if (strncmp(kv, "password=", 9) == 0)
            password = kv + 9;
        else
            return kn_error(t, "%s takes iterations= and password=, not '%s'", e, kv);
    }
    if (password == NULL)
        return kn_error(t, "%s needs password=", e);
    av_add(&a, "users");
    av_add(&a, "scram");
    av_add(&a, "set");
    av_add(&a, user);
    av_add(&a, "--mechanism");
    av_add(&a, e);
    av_add(&a, "--password");
    av_add(&a, password);
    if (iterations) {
        av_add(&a, "--iterations");
        av_add(&a, iterations);
    }
    return kn_call(t, ctx, tally_users_main, &a);
}

/* --entity-type users: SCRAM credentials (tally users scram). --describe shows them for the
 * user (every user without --entity-name); --alter --add-config sets each SCRAM entry,
 * --delete-config SCRAM-SHA-256,... deletes. Quota keys are refused naming tally quotas. */
static int kn_users(const struct kn_tool *t, struct tally_ctx *ctx, struct kn_opt *o, int act,
                    const char *name)
{
    struct kn_argv a = {.n = 0};
    int rc = 1;
    char *add = NULL, *del = NULL;

    av_add(&a, "users");
    av_add(&a, "scram");
    if (act == C_DESCRIBE) {
        av_add(&a, "describe");
        if (name)
            av_add(&a, name);
        return kn_call(t, ctx, tally_users_main, &a);
    }
    if (name == NULL)
        return kn_error(t, "--alter of users needs --entity-name");
    if (!kn_has(o, "--add-config") && !kn_has(o, "--delete-config"))
        return kn_error(t, "At least one of --add-config or --delete-config must be specified "
                           "with --alter");
    if (kn_has(o, "--add-config")) {
        if ((add = strdup(kn_val(o, "--add-config"))) == NULL)
            return kn_error(t, "out of memory");
        /* Entries separated by commas outside [...]; each is set on its own. */
        char *start = add;
        int depth = 0;
        for (char *r = add;; r++) {
            if (*r == '[')
                depth++;
            else if (*r == ']' && depth > 0)
                depth--;
            if ((*r == ',' && depth == 0) || *r == '\0') {
                bool end = *r == '\0';
                *r = '\0';
                if (*start != '\0' && kn_scram_set(t, ctx, name, start) != 0)
                    goto out;
                if (end)
                    break;
                start = r + 1;
            }
        }
    }
    if (kn_has(o, "--delete-config")) {
        if ((del = strdup(kn_val(o, "--delete-config"))) == NULL) {
            kn_error(t, "out of memory");
            goto out;
        }
        for (const char *k = strtok(del, ","); k; k = strtok(NULL, ","))
            if (strcmp(k, "SCRAM-SHA-256") != 0 && strcmp(k, "SCRAM-SHA-512") != 0) {
                kn_refuse(t, "a users config other than SCRAM-SHA-256/512",
                          "tally quotas set --user NAME --delete-config K");
                goto out;
            }
        av_add(&a, "delete");
        av_add(&a, name);
        av_add(&a, "--mechanism");
        av_add(&a, kn_val(o, "--delete-config"));
        if (kn_call(t, ctx, tally_users_main, &a) != 0)
            goto out;
    }
    rc = 0;
out:
    free(add);
    free(del);
    return rc;
}

static int kn_configs(const struct kn_tool *t, struct tally_ctx *ctx, struct kn_opt *o,
                      const char *sub)
{
    static const char *const actions[] = {"--describe", "--alter"};
    struct kn_argv a = {.n = 0};
    const char *type = kn_val(o, "--entity-type"), *name = kn_val(o, "--entity-name");
    bool defaults = kn_has(o, "--entity-default") || kn_has(o, "--broker-defaults");
    char *copies[2] = {NULL, NULL};
    int rc = 1;
    (void)sub;

    int act =
        kn_action(t, o, actions, 2, "Command must include exactly one action: --describe, --alter");
    if (act < 0 || kn_check_actions(t, o, act, actions[act]) != 0)
        return 1;
    if (kn_has(o, "--topic")) {
        type = "topics";
        name = kn_val(o, "--topic");
    } else if (kn_has(o, "--broker")) {
        type = "brokers";
        name = kn_val(o, "--broker");
    } else if (kn_has(o, "--broker-defaults")) {
        type = "brokers";
    }
    if (type == NULL)
        return kn_error(t, "Missing required argument \"[entity-type]\"");
    if (strcmp(type, "users") == 0 && !defaults)
        return kn_users(t, ctx, o, act, name);
    if (strcmp(type, "topics") != 0 && strcmp(type, "brokers") != 0)
        return kn_refuse(
            t, "--entity-type other than topics and brokers",
            "tally configs (topic and broker configs), tally users scram (users' SCRAM "
            "credentials), tally quotas");
    if (defaults && strcmp(type, "topics") == 0)
        return kn_error(t, "--entity-default is for brokers only");
    if (!defaults && name == NULL)
        return kn_refuse(t, "--entity-type without --entity-name",
                         strcmp(type, "topics") == 0 ? "tally topics list, then --entity-name T"
                                                     : "tally cluster describe, then --entity-name "
                                                       "ID");

    av_add(&a, "configs");
    if (act == C_DESCRIBE) {
        if (defaults)
            return kn_refuse(t, "--describe of --entity-default",
                             "tally configs describe --broker ID (the defaults show as "
                             "DYNAMIC_DEFAULT_BROKER_CONFIG)");
        av_add(&a, "describe");
        av_add(&a, strcmp(type, "topics") == 0 ? "--topic" : "--broker");
        av_add(&a, name);
        if (kn_has(o, "--all"))
            av_add(&a, "--all");
        return kn_call(t, ctx, tally_configs_main, &a);
    }

    av_add(&a, "alter");
    if (defaults) {
        av_add(&a, "--broker-defaults");
    } else {
        av_add(&a, strcmp(type, "topics") == 0 ? "--topic" : "--broker");
        av_add(&a, name);
    }
    if (!kn_has(o, "--add-config") && !kn_has(o, "--delete-config")) {
        kn_error(t, "At least one of --add-config or --delete-config must be specified with "
                    "--alter");
        goto out;
    }
    if (kn_has(o, "--add-config")) {
        if ((copies[0] = strdup(kn_val(o, "--add-config"))) == NULL) {
            kn_error(t, "out of memory");
            goto out;
        }
        if (kn_add_configs(t, copies[0], &a) != 0)
            goto out;
    }
    if (kn_has(o, "--delete-config")) {
        if ((copies[1] = strdup(kn_val(o, "--delete-config"))) == NULL) {
            kn_error(t, "out of memory");
            goto out;
        }
        for (char *k = strtok(copies[1], ","); k != NULL; k = strtok(NULL, ",")) {
            av_add(&a, "--delete");
            av_add(&a, k);
        }
    }
    rc = kn_call(t, ctx, tally_configs_main, &a);
out:
    free(copies[0]);
    free(copies[1]);
    return rc;
}

/* ---- kafka-consumer-groups.sh
 * --------------------------------------------------------------------- */

enum { G_LIST, G_DESCRIBE, G_DELETE, G_RESET, G_DELETE_OFFSETS };

static const char groups_usage[] =
    "usage: kafka-consumer-groups.sh --bootstrap-server HOST:PORT ACTION [OPTIONS]\n"
    "\n"
    "Tally's kafka-consumer-groups.sh: Kafka's options below, run as `tally groups`, printed as\n"
    "Kafka's tool prints. Exactly one action:\n"
    "  --list [--state [S,...]]\n"
    "  --describe --group G ... [--offsets]   GROUP TOPIC PARTITION CURRENT-OFFSET\n"
    "                                         LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID\n"
    "  --delete --group G ...\n"
    "  --delete-offsets --group G --topic T[:P,...] ...\n"
    "  --reset-offsets --group G --topic T[:P,...] ... (--to-earliest | --to-latest |\n"
    "                  --to-offset N | --shift-by N | --to-datetime ISO) [--dry-run | --execute]\n"
    "Also --timeout MS, --command-config FILE (only a file without properties), --help.\n";

static const struct kn_opt groups_opts[] = {
    KN_COMMON,
    {"--list", KN_FLAG, 0, 0, {0}},
    {"--describe", KN_FLAG, 0, 0, {0}},
    {"--delete", KN_FLAG, 0, 0, {0}},
    {"--reset-offsets", KN_FLAG, 0, 0, {0}},
    {"--delete-offsets", KN_FLAG, 0, 0, {0}},
    {"--group",
     KN_VALUE,
     TB(G_DESCRIBE) | TB(G_DELETE) | TB(G_RESET) | TB(G_DELETE_OFFSETS),
     0,
     {0}},
    {"--topic", KN_VALUE, TB(G_RESET) | TB(G_DELETE_OFFSETS), 0, {0}},
    {"--state", KN_OPT_VALUE, TB(G_LIST), 0, {0}},
    {"--offsets", KN_FLAG, TB(G_DESCRIBE), 0, {0}},
    {"--to-earliest", KN_FLAG, TB(G_RESET), 0, {0}},
    {"--to-latest", KN_FLAG, TB(G_RESET), 0, {0}},
    {"--to-offset", KN_VALUE, TB(G_RESET), 0, {0}},
    {"--shift-by", KN_VALUE, TB(G_RESET), 0, {0}},
    {"--to-datetime", KN_VALUE, TB(G_RESET), 0, {0}},
    {"--dry-run", KN_FLAG, TB(G_RESET), 0, {0}},
    {"--execute", KN_FLAG, TB(G_RESET), 0, {0}},
    {"--timeout", KN_VALUE, 0, 0, {0}},
    {NULL, KN_FLAG, 0, 0, {0}},
};

static const struct kn_refusal groups_refused[] = {
    {"--all-groups", "tally groups list, then --group G for each"},
    {"--all-topics", "tally groups describe G (its topics), then --topic T for each"},
    {"--members", "tally groups describe G (members, client ids, hosts, assignments)"},
    {"--verbose", "tally groups describe G"},
    {"--to-current", "tally groups reset-offsets G --topic T --shift-by 0"},
    {"--by-duration", "tally groups reset-offsets G --topic T --to-datetime ISO"},
    {"--from-file", "tally groups reset-offsets G --topic T:P --to-offset N"},
    {"--export", "tally groups reset-offsets (prints the plan)"},
    {"--zookeeper", "--bootstrap-server HOST:PORT"},
    {NULL, NULL},
};

static int kn_groups(const struct kn_tool *t, struct tally_ctx *ctx, struct kn_opt *o,
                     const char *sub)
{
    static const char *const actions[] = {"--list", "--describe", "--delete", "--reset-offsets",
                                          "--delete-offsets"};
    struct kn_argv a = {.n = 0};
    struct kn_opt *groups = kn_get(o, "--group"), *topics = kn_get(o, "--topic");
    (void)sub;

    int act = kn_action(t, o, actions, 5,
                        "Command must include exactly one action: --list, --describe, --delete, "
                        "--reset-offsets, --delete-offsets");
    if (act < 0 || kn_check_actions(t, o, act, actions[act]) != 0)
        return 1;
    if (act != G_LIST && groups->n == 0)
        return kn_error(t, "Option %s takes one of these options: --all-groups, --group",
                        actions[act]);
    av_add(&a, "groups");
    switch (act) {
    case G_LIST: {
        av_add(&a, "list");
        struct kn_opt *st = kn_get(o, "--state");
        if (st->n > 0) {
            /* --state alone lists every group with its state, as Kafka's does. */
            av_add(&a, "--state");
            av_add(&a, st->v[0] != NULL
                           ? st->v[0]
                           : "Empty,Stable,PreparingRebalance,CompletingRebalance,Dead");
        }
        break;
    }
    case G_DESCRIBE:
        av_add(&a, "describe");
        for (int i = 0; i < groups->n; i++)
            av_add(&a, groups->v[i]);
        break;
    case G_DELETE:
        av_add(&a, "delete");
        for (int i = 0; i < groups->n; i++)
            av_add(&a, groups->v[i]);
        break;
    case G_RESET:
    case G_DELETE_OFFSETS:
        if (groups->n > 1)
            return kn_refuse(t, "more than one --group with this action", "one command per group");
        if (topics->n == 0)
            return kn_error(t, "Option %s takes one of these options: --all-topics, --topic",
                            actions[act]);
        av_add(&a, act == G_RESET ? "reset-offsets" : "delete-offsets");
        av_add(&a, groups->v[0]);
        for (int i = 0; i < topics->n; i++) {
            av_add(&a, "--topic");
            av_add(&a, topics->v[i]);
        }
        if (act == G_DELETE_OFFSETS)
            break;
        static const char *const modes[] = {"--to-earliest", "--to-latest", "--to-offset",
                                            "--shift-by", "--to-datetime"};
        int mode = kn_action(t, o, modes, 5,
                             "Option --reset-offsets takes exactly one of --to-earliest, "
                             "--to-latest, --to-offset, --shift-by, --to-datetime");
        if (mode < 0)
            return 1;
        av_add(&a, modes[mode]);
        if (mode >= 2)
            av_add(&a, kn_val(o, modes[mode]));
        if (kn_has(o, "--execute") && kn_has(o, "--dry-run"))
            return kn_error(t, "Option --execute can't be used with option --dry-run");
        if (kn_has(o, "--execute"))
            av_add(&a, "--execute");
        break;
    }
    return kn_call(t, ctx, tally_groups_main, &a);
}

/* ---- kafka-transactions.sh
 * ------------------------------------------------------------------------- */

static const char txn_usage[] =
    "usage: kafka-transactions.sh --bootstrap-server HOST:PORT COMMAND [OPTIONS]\n"
    "\n"
    "Tally's kafka-transactions.sh: Kafka's commands below, run as `tally transactions` (and\n"
    "`tally producers`). COMMAND (also accepted as --COMMAND) is one of:\n"
    "  list\n"
    "  describe --transactional-id ID\n"
    "  find-hanging --broker-id N [--max-transaction-timeout MINUTES]\n"
    "  abort --topic T --partition P --start-offset O\n"
    "  describe-producers --topic T --partition P\n"
    "Also --command-config FILE (only a file without properties), --help.\n";

static const struct kn_opt txn_opts[] = {
    KN_COMMON,
    {"--list", KN_FLAG, 0, 0, {0}},
    {"--describe", KN_FLAG, 0, 0, {0}},
    {"--find-hanging", KN_FLAG, 0, 0, {0}},
    {"--abort", KN_FLAG, 0, 0, {0}},
    {"--describe-producers", KN_FLAG, 0, 0, {0}},
    {"--transactional-id", KN_VALUE, 0, 0, {0}},
    {"--broker-id", KN_VALUE, 0, 0, {0}},
    {"--max-transaction-timeout", KN_VALUE, 0, 0, {0}},
    {"--topic", KN_VALUE, 0, 0, {0}},
    {"--partition", KN_VALUE, 0, 0, {0}},
    {"--start-offset", KN_VALUE, 0, 0, {0}},
    {NULL, KN_FLAG, 0, 0, {0}},
};

static const struct kn_refusal txn_refused[] = {
    {"--producer-id", "tally transactions abort --topic T --partition P --start-offset O"},
    {"--producer-epoch", "tally transactions abort --topic T --partition P --start-offset O"},
    {"--coordinator-epoch", "tally transactions abort --topic T --partition P --start-offset O"},
    {"--duration-filter", "tally transactions list"},
    {"--transactional-id-pattern", "tally transactions list"},
    {"--producer-id-filter", "tally transactions list"},
    {NULL, NULL},
};

static int kn_txn(const struct kn_tool *t, struct tally_ctx *ctx, struct kn_opt *o, const char *sub)
{
    static const char *const cmds[] = {"list", "describe", "find-hanging", "abort",
                                       "describe-producers"};
    /* Which options each command takes, by name. */
    static const char *const takes[][4] = {
        {NULL},
        {"--transactional-id", NULL},
        {"--broker-id", "--max-transaction-timeout", NULL},
        {"--topic", "--partition", "--start-offset", NULL},
        {"--topic", "--partition", NULL},
    };
    struct kn_argv a = {.n = 0};
    int cmd = -1, given = 0;

    for (int i = 0; i < 5; i++) {
        char flag[40];
        snprintf(flag, sizeof flag, "--%s", cmds[i]);
        if (kn_has(o, flag) || (sub != NULL && strcmp(sub, cmds[i]) == 0)) {
            cmd = i;
            given++;
        }
    }
    if (sub != NULL && cmd < 0)
        return kn_error(t, "unknown command '%s' (see %s --help)", sub, t->name);
    if (given != 1)
        return kn_error(t, "give exactly one command: list, describe, find-hanging, abort, "
                           "describe-producers");
    for (struct kn_opt *x = o; x->name != NULL; x++) {
        if (x->n == 0 || x->kind == KN_FLAG)
            continue;
        bool ok =
            strcmp(x->name, "--bootstrap-server") == 0 || strcmp(x->name, "--command-config") == 0;
        for (int k = 0; k < 4 && takes[cmd][k] != NULL; k++)
            ok = ok || strcmp(takes[cmd][k], x->name) == 0;
        if (!ok) {
            if (cmd == 2 && strcmp(x->name, "--topic") == 0)
                return kn_refuse(t, "find-hanging --topic",
                                 "tally transactions find-hanging --broker N (the leader)");
            return kn_error(t, "option %s can't be used with command %s", x->name, cmds[cmd]);
        }
    }
    switch (cmd) {
    case 0:
        av_add(&a, "transactions");
        av_add(&a, "list");
        break;
    case 1:
        if (!kn_has(o, "--transactional-id"))
            return kn_error(t, "describe needs --transactional-id");
        av_add(&a, "transactions");
        av_add(&a, "describe");
        av_add(&a, kn_val(o, "--transactional-id"));
        break;
    case 2:
        if (!kn_has(o, "--broker-id"))
            return kn_error(t, "find-hanging needs --broker-id N");
        av_add(&a, "transactions");
        av_add(&a, "find-hanging");
        av_add(&a, "--broker");
        av_add(&a, kn_val(o, "--broker-id"));
        if (kn_has(o, "--max-transaction-timeout")) {
            av_add(&a, "--max-transaction-timeout");
            av_add(&a, kn_val(o, "--max-transaction-timeout"));
        }
        break;
    case 3:
        av_add(&a, "transactions");
        av_add(&a, "abort");
        for (int k = 0; takes[3][k] != NULL; k++) {
            if (!kn_has(o, takes[3][k]))
                return kn_error(t, "abort needs --topic, --partition and --start-offset");
            av_add(&a, takes[3][k]);
            av_add(&a, kn_val(o, takes[3][k]));
        }
        break;
    case 4:
        if (!kn_has(o, "--topic") || !kn_has(o, "--partition"))
            return kn_error(t, "describe-producers needs --topic and --partition");
        av_add(&a, "producers");
        av_add(&a, "describe");
        av_add(&a, "--topic");
        av_add(&a, kn_val(o, "--topic"));
        av_add(&a, "--partition");
        av_add(&a, kn_val(o, "--partition"));
        return kn_call(t, ctx, tally_producers_main, &a);
    }
    return kn_call(t, ctx, tally_txn_main, &a);
}

/* ---- kafka-log-dirs.sh
 * ---------------------------------------------------------------------------- */

static const char logdirs_usage[] =
    "usage: kafka-log-dirs.sh --bootstrap-server HOST:PORT --describe [--topic-list T1,T2]\n"
    "                         [--broker-list 1,2]\n"
    "\n"
    "Tally's kafka-log-dirs.sh, run as `tally log-dirs describe`: two header lines, then one\n"
    "JSON line as Kafka's tool prints. Also --command-config FILE (only a file without\n"
    "properties), --help.\n";

static const struct kn_opt logdirs_opts[] = {
    KN_COMMON,
    {"--describe", KN_FLAG, 0, 0, {0}},
    {"--topic-list", KN_VALUE, 0, 0, {0}},
    {"--broker-list", KN_VALUE, 0, 0, {0}},
    {NULL, KN_FLAG, 0, 0, {0}},
};

static int kn_logdirs(const struct kn_tool *t, struct tally_ctx *ctx, struct kn_opt *o,
                      const char *sub)
{
    struct kn_argv a = {.n = 0};
    (void)sub;
    if (!kn_has(o, "--describe"))
        return kn_error(t, "Missing required argument \"[describe]\"");
    av_add(&a, "log-dirs");
    av_add(&a, "describe");
    static const char *const lists[] = {"--topic-list", "--broker-list"};
    for (int i = 0; i < 2; i++) {
        if (kn_has(o, lists[i])) {
            av_add(&a, lists[i]);
            av_add(&a, kn_val(o, lists[i]));
        }
    }
    return kn_call(t, ctx, tally_logdirs_main, &a);
}

/* ---- kafka-reassign-partitions.sh
 * ----------------------------------------------------------------- */

static const char reassign_usage[] =
    "usage: kafka-reassign-partitions.sh --bootstrap-server HOST:PORT ACTION [OPTIONS]\n"
    "\n"
    "Tally's kafka-reassign-partitions.sh, run as `tally partitions reassign` (the same files\n"
    "and messages as Kafka's). Exactly one action:\n"
    "  --generate --topics-to-move-json-file F --broker-list 1,2 [--disable-rack-aware]\n"
    "  --execute --reassignment-json-file F [--throttle B] [--additional]\n"
    "  --verify --reassignment-json-file F [--preserve-throttles]\n"
    "  --cancel --reassignment-json-file F [--preserve-throttles]\n"
    "  --list\n"
    "Tally has no racks, so --disable-rack-aware changes nothing. Also --timeout MS,\n"
    "--command-config FILE (only a file without properties), --help.\n";

enum { R_GENERATE, R_EXECUTE, R_VERIFY, R_CANCEL, R_LIST };

static const struct kn_opt reassign_opts[] = {
    KN_COMMON,
    {"--generate", KN_FLAG, 0, 0, {0}},
    {"--execute", KN_FLAG, 0, 0, {0}},
    {"--verify", KN_FLAG, 0, 0, {0}},
    {"--cancel", KN_FLAG, 0, 0, {0}},
    {"--list", KN_FLAG, 0, 0, {0}},
    {"--topics-to-move-json-file", KN_VALUE, TB(R_GENERATE), 0, {0}},
    {"--broker-list", KN_VALUE, TB(R_GENERATE), 0, {0}},
    {"--disable-rack-aware", KN_FLAG, TB(R_GENERATE), 0, {0}},
    {"--reassignment-json-file", KN_VALUE, TB(R_EXECUTE) | TB(R_VERIFY) | TB(R_CANCEL), 0, {0}},
    {"--throttle", KN_VALUE, TB(R_EXECUTE), 0, {0}},
    {"--additional", KN_FLAG, TB(R_EXECUTE), 0, {0}},
    {"--preserve-throttles", KN_FLAG, TB(R_VERIFY) | TB(R_CANCEL), 0, {0}},
    {"--timeout", KN_VALUE, 0, 0, {0}},
    {NULL, KN_FLAG, 0, 0, {0}},
};

static const struct kn_refusal reassign_refused[] = {
    {"--replica-alter-log-dirs-throttle",
     "tally partitions reassign --execute --throttle B (one log directory per broker)"},
    {"--bootstrap-controller", "--bootstrap-server HOST:PORT"},
    {"--zookeeper", "--bootstrap-server HOST:PORT"},
    {NULL, NULL},
};

static int kn_reassign(const struct kn_tool *t, struct tally_ctx *ctx, struct kn_opt *o,
                       const char *sub)
{
    static const char *const actions[] = {"--generate", "--execute", "--verify", "--cancel",
                                          "--list"};
    struct kn_argv a = {.n = 0};
    (void)sub;
    int act = kn_action(t, o, actions, 5,
                        "Command must include exactly one action: --generate, --execute, "
                        "--verify, --cancel, --list");
    if (act < 0 || kn_check_actions(t, o, act, actions[act]) != 0)
        return 1;
    av_add(&a, "partitions");
    av_add(&a, "reassign");
    av_add(&a, actions[act]);
    /* The same options, less the one that means nothing without racks. */
    for (struct kn_opt *x = o; x->name != NULL; x++) {
        if (x->n == 0 || x->actions == 0 || strcmp(x->name, "--disable-rack-aware") == 0)
            continue;
        av_add(&a, x->name);
        if (x->kind == KN_VALUE)
            av_add(&a, x->v[0]);
    }
    return kn_call(t, ctx, tally_reassign_main, &a);
}

/* ---- kafka-acls.sh
 * ------------------------------------------------------------------------------------ */

enum { A_ADD, A_REMOVE, A_LIST };

static const char acls_usage[] =
    "usage: kafka-acls.sh --bootstrap-server HOST:PORT ACTION [OPTIONS]\n"
    "\n"
    "Tally's kafka-acls.sh: Kafka's options below, run as `tally acls`, printed as Kafka's tool\n"
    "prints. Exactly one action: --add, --remove (without asking: --force is implied) or --list.\n"
    "  resources: --topic T, --group G, --transactional-id X, --cluster (repeatable),\n"
    "             --resource-pattern-type literal|prefixed|any|match\n"
    "  who:       --allow-principal P, --deny-principal P, --allow-host H, --deny-host H,\n"
    "             --principal P (with --list)\n"
    "  what:      --operation OP (Read, Write, Create, Delete, Alter, Describe, ClusterAction,\n"
    "             DescribeConfigs, AlterConfigs, IdempotentWrite, All)\n"
    "Also --force, --command-config FILE (only a file without properties), --help.\n";

static const struct kn_opt acls_opts[] = {
    KN_COMMON,
    {"--add", KN_FLAG, 0, 0, {0}},
    {"--remove", KN_FLAG, 0, 0, {0}},
    {"--list", KN_FLAG, 0, 0, {0}},
    {"--topic", KN_VALUE, 0, 0, {0}},
    {"--group", KN_VALUE, 0, 0, {0}},
    {"--transactional-id", KN_VALUE, 0, 0, {0}},
    {"--cluster", KN_FLAG, 0, 0, {0}},
    {"--resource-pattern-type", KN_VALUE, 0, 0, {0}},
    {"--allow-principal", KN_VALUE, TB(A_ADD) | TB(A_REMOVE), 0, {0}},
    {"--deny-principal", KN_VALUE, TB(A_ADD) | TB(A_REMOVE), 0, {0}},
    {"--allow-host", KN_VALUE, TB(A_ADD) | TB(A_REMOVE), 0, {0}},
    {"--deny-host", KN_VALUE, TB(A_ADD) | TB(A_REMOVE), 0, {0}},
    {"--operation", KN_VALUE, TB(A_ADD) | TB(A_REMOVE), 0, {0}},
    {"--principal", KN_VALUE, TB(A_LIST), 0, {0}},
    {"--force", KN_FLAG, TB(A_ADD) | TB(A_REMOVE), 0, {0}},
    {NULL, KN_FLAG, 0, 0, {0}},
};

static const struct kn_refusal acls_refused[] = {
    {"--producer", "tally acls add --operation Write --operation Describe --topic T (and "
                   "--transactional-id X)"},
    {"--consumer", "tally acls add --operation Read --operation Describe --topic T --group G"},
    {"--delegation-token", "tally acls (delegation tokens are not served)"},
    {"--user-principal", "tally acls (USER resources are not served by the tool)"},
    {"--authorizer-properties", "--bootstrap-server HOST:PORT"},
    {"--zookeeper", "--bootstrap-server HOST:PORT"},
    {NULL, NULL},
};

static int kn_acls(const struct kn_tool *t, struct tally_ctx *ctx, struct kn_opt *o,
                   const char *sub)
{
    static const char *const actions[] = {"--add", "--remove", "--list"};
    static const char *const cmds[] = {"add", "remove", "list"};
    struct kn_argv a = {.n = 0};
    (void)sub;
    int act = kn_action(t, o, actions, 3,
                        "Command must include exactly one action: --list, --add, --remove.");
    if (act < 0 || kn_check_actions(t, o, act, actions[act]) != 0)
        return 1;
    av_add(&a, "acls");
    av_add(&a, cmds[act]);
    /* Every option but the action and --force maps to tally acls' own of the same name. */
    for (struct kn_opt *x = o; x->name != NULL; x++) {
        if (x->n == 0 || strcmp(x->name, "--force") == 0 || strcmp(x->name, actions[act]) == 0 ||
            strcmp(x->name, "--bootstrap-server") == 0 ||
            strcmp(x->name, "--command-config") == 0 || strcmp(x->name, "--help") == 0 ||
            strcmp(x->name, "--version") == 0)
            continue;
        for (int i = 0; i < x->n; i++) {
            av_add(&a, x->name);
            if (x->kind == KN_VALUE)
                av_add(&a, x->v[i]);
        }
    }
    return kn_call(t, ctx, tally_acls_main, &a);
}

/* ---- dispatch
 * ------------------------------------------------------------------------------------- */

static const struct kn_tool tools[] = {
    {"kafka-topics.sh", "tally topics", topics_usage, topics_opts, topics_refused, false,
     kn_topics},
    {"kafka-configs.sh", "tally configs", configs_usage, configs_opts, configs_refused, false,
     kn_configs},
    {"kafka-consumer-groups.sh", "tally groups", groups_usage, groups_opts, groups_refused, false,
     kn_groups},
    {"kafka-transactions.sh", "tally transactions", txn_usage, txn_opts, txn_refused, true, kn_txn},
    {"kafka-log-dirs.sh", "tally log-dirs", logdirs_usage, logdirs_opts, NULL, false, kn_logdirs},
    {"kafka-reassign-partitions.sh", "tally partitions reassign", reassign_usage, reassign_opts,
     reassign_refused, false, kn_reassign},
    {"kafka-acls.sh", "tally acls", acls_usage, acls_opts, acls_refused, false, kn_acls},
};

static const struct kn_tool *kn_find(const char *prog)
{
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (strcmp(tools[i].name, prog) == 0)
            return &tools[i];
    return NULL;
}

bool kafka_names_is_tool(const char *prog)
{
    return kn_find(prog) != NULL;
}

/* --command-config FILE: Tally's wrappers connect with no client properties, so only a file
 * that sets none (blank lines and # or ! comments) is accepted. Returns 0 or 1. */
static int kn_command_config(const struct kn_tool *t, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    if (f == NULL)
        return kn_error(t, "--command-config %s: %s", path, strerror(errno));
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        char *p = line + strspn(line, " \t\r\n");
        if (*p == '\0' || *p == '#' || *p == '!')
            continue;
        p[strcspn(p, "=: \t\r\n")] = '\0';
        rc = kn_error(t,
                      "--command-config sets '%s': Tally's wrappers pass no client properties; "
                      "use `%s` against a listener that needs none",
                      p, t->tally);
    }
    fclose(f);
    return rc;
}

int kafka_names_main(const char *prog, int argc, char **argv)
{
    const struct kn_tool *t = kn_find(prog);
    size_t n_opts = 0;
    const char *sub = NULL;

    if (t == NULL)
        return 1;
    while (t->opts[n_opts].name != NULL)
        n_opts++;
    struct kn_opt *o = malloc((n_opts + 1) * sizeof *o);
    if (o == NULL)
        return kn_error(t, "out of memory");
    memcpy(o, t->opts, (n_opts + 1) * sizeof *o);

    int rc = kn_parse(t, o, argc, argv, &sub);
    if (rc != 0)
        goto out;
    if (kn_has(o, "--help") || argc < 2) {
        fputs(t->usage, kn_has(o, "--help") ? stdout : stderr);
        rc = kn_has(o, "--help") ? 0 : 1;
        goto out;
    }
    if (kn_has(o, "--version")) {
        rc = kn_refuse(t, "--version", "tally cluster describe");
        goto out;
    }
    if (!kn_has(o, "--bootstrap-server")) {
        rc = kn_error(t, "Missing required argument \"[bootstrap-server]\"");
        goto out;
    }
    if (kn_has(o, "--command-config") && (rc = kn_command_config(t, kn_val(o, "--command-config"))))
        goto out;

    struct tally_ctx ctx = {.bootstrap = kn_val(o, "--bootstrap-server"),
                            .timeout_ms = KN_DEFAULT_TIMEOUT_MS,
                            .kafka_format = true};
    const char *timeout = kn_get(o, "--timeout") != NULL ? kn_val(o, "--timeout") : NULL;
    if (timeout != NULL) {
        char *end;
        errno = 0;
        long ms = strtol(timeout, &end, 10);
        if (errno != 0 || end == timeout || *end != '\0' || ms <= 0 || ms > 3600000) {
            rc = kn_error(t, "--timeout needs a positive number of ms");
            goto out;
        }
        ctx.timeout_ms = (int)ms;
    }
    rc = t->run(t, &ctx, o, sub);
out:
    free(o);
    return rc;
}
