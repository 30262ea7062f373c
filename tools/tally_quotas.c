/* SPDX-License-Identifier: Apache-2.0 */
/* tally quotas set|describe: client quotas (AlterClientQuotas, DescribeClientQuotas, APIs 49
 * and 48, KIP-546) for user / client-id entities and their defaults, in the manner of
 * kafka-configs.sh --entity-type users|clients. librdkafka 2.0.2 has no quota admin calls, so
 * the requests go over the wire client (tally.h: tally_bootstrap_call) with Tally's own codec,
 * to the first bootstrap broker (a broker that is not the controller forwards Alter there). */
#include "tally.h"

#include "base/arena.h"
#include "base/err.h"
#include "proto/proto.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUOTAS_VERSION 1
#define ARENA_BYTES (16 << 20)
#define MAX_OPS 16

static const char quotas_usage[] =
    "usage: tally quotas set ENTITY [--add-config K=V[,K=V...]] [--delete-config K[,K...]]\n"
    "       tally quotas describe [ENTITY]\n"
    "\n"
    "  Client quotas, as kafka-configs.sh --entity-type users|clients manages them. ENTITY is\n"
    "  one or both of a user part and a client-id part:\n"
    "    --user NAME | --user-default      --client-id ID | --client-default\n"
    "  Keys: producer_byte_rate, consumer_byte_rate (bytes/s, enforced),\n"
    "        request_percentage, controller_mutation_rate (stored; docs/security.md).\n"
    "  describe without ENTITY lists every entity; with one, exactly that entity.\n"
    "\n"
    "  e.g. tally quotas set --client-id ingest --add-config producer_byte_rate=1048576\n"
    "       tally quotas set --user alice --client-default --add-config consumer_byte_rate=2e6\n"
    "       tally quotas set --user alice --delete-config producer_byte_rate\n"
    "       tally quotas describe --client-id ingest\n";

struct part {
    bool present;
    const char *name; /* NULL: the default */
};

struct quota_args {
    struct part user, client;
    char *add[MAX_OPS], *del[MAX_OPS];
    int n_add, n_del;
};

/* Splits a comma-separated list into out (strings of argv, modified in place). */
static int split(char *v, char **out, int *n, const char *opt)
{
    for (char *tok = strtok(v, ","); tok; tok = strtok(NULL, ",")) {
        if (*n == MAX_OPS)
            return tally_usage_error("at most %d keys in %s", MAX_OPS, opt);
        out[(*n)++] = tok;
    }
    return TALLY_OK;
}

static int parse_args(int argc, char **argv, void *args)
{
    struct quota_args *a = args;
    memset(a, 0, sizeof *a);
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        struct part *p = NULL;
        if (strcmp(o, "--user-default") == 0)
            p = &a->user;
        else if (strcmp(o, "--client-default") == 0)
            p = &a->client;
        if (p != NULL) {
            if (p->present)
                return tally_usage_error("%s given twice", o);
            p->present = true;
            continue;
        }
        if (i + 1 >= argc)
            return tally_usage_error("%s needs a value", o);
        char *v = argv[++i];
        if (strcmp(o, "--user") == 0)
            p = &a->user;
        else if (strcmp(o, "--client-id") == 0)
            p = &a->client;
        if (p != NULL) {
            if (p->present)
                return tally_usage_error("the %s part given twice",
                                         p == &a->user ? "user" : "client-id");
            if (v[0] == '\0')
                return tally_usage_error("%s needs a name (or the -default option)", o);
            *p = (struct part){true, v};
            continue;
        }
        int rc;
        if (strcmp(o, "--add-config") == 0)
            rc = split(v, a->add, &a->n_add, o);
        else if (strcmp(o, "--delete-config") == 0)
            rc = split(v, a->del, &a->n_del, o);
        else
            rc = tally_usage_error("unknown option '%s'", o);
        if (rc != TALLY_OK)
            return rc;
    }
    return TALLY_OK;
}

static int call(const struct tally_ctx *ctx, int16_t key, const void *req, struct arena *ar,
                void **out, const char *what)
{
    return tally_bootstrap_call(ctx, key, QUOTAS_VERSION, req, ar, out, what);
}

static void entity_parts(const struct quota_args *a, struct EntityData *e, int32_t *n)
{
    *n = 0;
    if (a->user.present)
        e[(*n)++] = (struct EntityData){"user", (char *)a->user.name};
    if (a->client.present)
        e[(*n)++] = (struct EntityData){"client-id", (char *)a->client.name};
}

static int quotas_set(const struct tally_ctx *ctx, void *args, struct arena *ar)
{
    struct quota_args *a = args;
    struct EntityData ent[2];
    struct OpData ops[2 * MAX_OPS];
    struct AlterEntryData entry = {0};
    struct AlterClientQuotasRequest rq = {0};
    struct AlterClientQuotasResponse *rs = NULL;
    int32_t n = 0;

    if (!a->user.present && !a->client.present)
        return tally_usage_error("quotas set needs --user/--user-default and/or "
                                 "--client-id/--client-default");
    if (a->n_add + a->n_del == 0)
        return tally_usage_error("quotas set needs --add-config or --delete-config");
    for (int i = 0; i < a->n_add; i++) {
        char *eq = strchr(a->add[i], '='), *end;
        if (eq == NULL)
            return tally_usage_error("--add-config '%s' is not K=V", a->add[i]);
        *eq = '\0';
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end != '\0' || !isfinite(v))
            return tally_usage_error("the value of %s is not a number", a->add[i]);
        ops[n++] = (struct OpData){a->add[i], v, false};
    }
    for (int i = 0; i < a->n_del; i++)
        ops[n++] = (struct OpData){a->del[i], 0, true};
    entity_parts(a, ent, &entry.Entity.n);
    entry.Entity.v = ent;
    entry.Ops.v = ops;
    entry.Ops.n = n;
    rq.Entries.v = &entry;
    rq.Entries.n = 1;
    int rc = call(ctx, PROTO_API_AlterClientQuotas, &rq, ar, (void **)&rs, "AlterClientQuotas");
    if (rc != TALLY_OK)
        return rc;
    if (rs->Entries.n != 1)
        return tally_fail("AlterClientQuotas answered %d entries for 1", rs->Entries.n);
    if (rs->Entries.v[0].ErrorCode != 0)
        return tally_fail("%s: %s", err_name(rs->Entries.v[0].ErrorCode),
                          rs->Entries.v[0].ErrorMessage ? rs->Entries.v[0].ErrorMessage : "");
    printf("Completed updating quotas.\n");
    return TALLY_OK;
}

static void print_value(double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        printf("%.1f", v);
    else
        printf("%g", v);
}

/* kafka-configs.sh's line: "Quota configs for user-principal 'alice', client-id 'app' are
 * producer_byte_rate=1024.0" (the default entity as "the default ..."). */
static void print_entry(const struct EntryData *d)
{
    printf("Quota configs for ");
    for (int32_t i = 0; i < d->Entity.n; i++) {
        const struct EntityData *e = &d->Entity.v[i];
        bool user = e->EntityType && strcmp(e->EntityType, "user") == 0;
        const char *kind = user ? "user-principal" : "client-id";
        if (i > 0)
            printf(", ");
        if (e->EntityName)
            printf("%s '%s'", kind, e->EntityName);
        else
            printf("the default %s", kind);
    }
    printf(" are ");
    for (int32_t k = 0; k < d->Values.n; k++) {
        printf("%s%s=", k ? ", " : "", d->Values.v[k].Key);
        print_value(d->Values.v[k].Value);
    }
    printf("\n");
}

static int quotas_describe(const struct tally_ctx *ctx, void *args, struct arena *ar)
{
    struct quota_args *a = args;
    struct ComponentData comp[2];
    struct DescribeClientQuotasRequest rq = {0};
    struct DescribeClientQuotasResponse *rs = NULL;

    if (a->n_add + a->n_del > 0)
        return tally_usage_error("quotas describe takes no --add-config / --delete-config");
    if (a->user.present)
        comp[rq.Components.n++] =
            (struct ComponentData){"user", a->user.name ? 0 : 1, (char *)a->user.name};
    if (a->client.present)
        comp[rq.Components.n++] =
            (struct ComponentData){"client-id", a->client.name ? 0 : 1, (char *)a->client.name};
    rq.Components.v = comp;
    rq.Strict = rq.Components.n > 0;
    int rc =
        call(ctx, PROTO_API_DescribeClientQuotas, &rq, ar, (void **)&rs, "DescribeClientQuotas");
    if (rc != TALLY_OK)
        return rc;
    if (rs->ErrorCode != 0)
        return tally_fail("%s: %s", err_name(rs->ErrorCode),
                          rs->ErrorMessage ? rs->ErrorMessage : "");
    for (int32_t i = 0; i < rs->Entries.n; i++)
        print_entry(&rs->Entries.v[i]);
    return TALLY_OK;
}

int tally_quotas_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    static const struct tally_verb verbs[] = {
        {"set", quotas_set},
        {"describe", quotas_describe},
        {NULL, NULL},
    };
    static const struct tally_noun noun = {"quotas", quotas_usage, parse_args, verbs, ARENA_BYTES};
    struct quota_args a;
    return tally_noun_main(&noun, ctx, argc, argv, &a);
}
