/* SPDX-License-Identifier: Apache-2.0 */
/* tally acls add|list|remove: the broker's ACLs (CreateAcls, DescribeAcls, DeleteAcls, APIs
 * 30, 29, 31) in the manner of kafka-acls.sh — the same options, and `list` printed as it
 * prints them. librdkafka 2.0.2 knows no TRANSACTIONAL_ID resource, so the requests go over
 * the wire client (tally.h: tally_bootstrap_call) with Tally's own codec, to the first bootstrap
 * broker (a broker that is not the controller forwards Create and Delete there). */
#include "tally.h"

#include "base/arena.h"
#include "base/err.h"
#include "proto/proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ACLS_VERSION 3
#define ARENA_BYTES (16 << 20)
#define MAX_ITEMS 64 /* principals, hosts, operations, resources of one command */

/* Kafka's codes (the ACL enums of the protocol). */
enum { R_ANY = 1, R_TOPIC = 2, R_GROUP = 3, R_CLUSTER = 4, R_TXN = 5 };
enum { P_ANY = 1, P_MATCH = 2, P_LITERAL = 3, P_PREFIXED = 4 };
enum { PERM_ANY = 1, PERM_DENY = 2, PERM_ALLOW = 3 };
#define OP_ANY 1

static const char acls_usage[] =
    "usage: tally acls add|list|remove [OPTIONS]\n"
    "\n"
    "  The broker's ACLs, as kafka-acls.sh --add / --list / --remove manages them (the\n"
    "  broker needs authorizer.class.name; docs/security.md).\n"
    "\n"
    "  Resources (one or more; list: none means every resource):\n"
    "    --topic T   --group G   --transactional-id X   --cluster\n"
    "    --resource-pattern-type literal|prefixed (add; default literal), or also\n"
    "                            any|match (list, remove; default literal, list: any)\n"
    "  Who and what:\n"
    "    --allow-principal User:NAME   --deny-principal User:NAME   (repeatable)\n"
    "    --allow-host HOST   --deny-host HOST   (default \"*\", every host)\n"
    "    --operation OP   (repeatable; Read, Write, Create, Delete, Alter, Describe,\n"
    "                      ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite,\n"
    "                      All; add: default All)\n"
    "    --principal User:NAME   (list: only that principal's entries)\n"
    "\n"
    "  e.g. tally acls add --allow-principal User:enricher --operation Read --topic orders\n"
    "       tally acls add --allow-principal User:enricher --operation Write \\\n"
    "            --transactional-id enricher- --resource-pattern-type prefixed\n"
    "       tally acls list --topic orders\n";

static const char *const op_names[] = {
    "Unknown",        "Any",   "All",      "Read",          "Write",           "Create",
    "Delete",         "Alter", "Describe", "ClusterAction", "DescribeConfigs", "AlterConfigs",
    "IdempotentWrite"};
#define N_OPS ((int)(sizeof op_names / sizeof op_names[0]))

static int op_parse(const char *s)
{
    for (int i = 2; i < N_OPS; i++)
        if (strcasecmp(s, op_names[i]) == 0)
            return i;
    /* Kafka's upper-case names too (DESCRIBE_CONFIGS). */
    char buf[32];
    size_t k = 0;
    for (const char *p = s; *p && k + 1 < sizeof buf; p++)
        if (*p != '_')
            buf[k++] = *p;
    buf[k] = '\0';
    for (int i = 2; i < N_OPS; i++)
        if (strcasecmp(buf, op_names[i]) == 0)
            return i;
    return -1;
}

static const char *type_name(int t)
{
    switch (t) {
    case R_TOPIC:
        return "TOPIC";
    case R_GROUP:
        return "GROUP";
    case R_CLUSTER:
        return "CLUSTER";
    case R_TXN:
        return "TRANSACTIONAL_ID";
    case 6:
        return "DELEGATION_TOKEN";
    case 7:
        return "USER";
    default:
        return "UNKNOWN";
    }
}

static const char *pattern_name(int p)
{
    return p == P_LITERAL ? "LITERAL" : p == P_PREFIXED ? "PREFIXED" : "UNKNOWN";
}

static const char *op_upper(int op)
{
    static const char *const up[] = {"UNKNOWN",
                                     "ANY",
                                     "ALL",
                                     "READ",
                                     "WRITE",
                                     "CREATE",
                                     "DELETE",
                                     "ALTER",
                                     "DESCRIBE",
                                     "CLUSTER_ACTION",
                                     "DESCRIBE_CONFIGS",
                                     "ALTER_CONFIGS",
                                     "IDEMPOTENT_WRITE"};
    return op >= 0 && op < N_OPS ? up[op] : "UNKNOWN";
}

struct resource {
    int8_t type;
    const char *name;
};

struct acl_args {
    struct resource res[MAX_ITEMS];
    int n_res;
    const char *allow_p[MAX_ITEMS], *deny_p[MAX_ITEMS];
    int n_allow_p, n_deny_p;
    const char *allow_h[MAX_ITEMS], *deny_h[MAX_ITEMS];
    int n_allow_h, n_deny_h;
    int8_t ops[MAX_ITEMS];
    int n_ops;
    int pattern; /* 0: the command's default */
    const char *principal;
};

static int parse_args(int argc, char **argv, void *args)
{
    struct acl_args *a = args;
    memset(a, 0, sizeof *a);
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        bool flag = strcmp(o, "--cluster") == 0;
        if (!flag && i + 1 >= argc)
            return tally_usage_error("%s needs a value", o);
        const char *v = flag ? NULL : argv[++i];
        bool full = a->n_res == MAX_ITEMS || a->n_allow_p == MAX_ITEMS ||
                    a->n_deny_p == MAX_ITEMS || a->n_allow_h == MAX_ITEMS ||
                    a->n_deny_h == MAX_ITEMS || a->n_ops == MAX_ITEMS;
        if (full)
            return tally_usage_error("at most %d of each option", MAX_ITEMS);
        if (flag)
            a->res[a->n_res++] = (struct resource){R_CLUSTER, "kafka-cluster"};
        else if (strcmp(o, "--topic") == 0)
            a->res[a->n_res++] = (struct resource){R_TOPIC, v};
        else if (strcmp(o, "--group") == 0)
            a->res[a->n_res++] = (struct resource){R_GROUP, v};
        else if (strcmp(o, "--transactional-id") == 0)
            a->res[a->n_res++] = (struct resource){R_TXN, v};
        else if (strcmp(o, "--allow-principal") == 0)
            a->allow_p[a->n_allow_p++] = v;
        else if (strcmp(o, "--deny-principal") == 0)
            a->deny_p[a->n_deny_p++] = v;
        else if (strcmp(o, "--allow-host") == 0)
            a->allow_h[a->n_allow_h++] = v;
        else if (strcmp(o, "--deny-host") == 0)
            a->deny_h[a->n_deny_h++] = v;
        else if (strcmp(o, "--principal") == 0)
            a->principal = v;
        else if (strcmp(o, "--operation") == 0) {
            int op = op_parse(v);
            if (op < 0)
                return tally_usage_error("unknown operation '%s'", v);
            a->ops[a->n_ops++] = (int8_t)op;
        } else if (strcmp(o, "--resource-pattern-type") == 0) {
            a->pattern = strcasecmp(v, "literal") == 0    ? P_LITERAL
                         : strcasecmp(v, "prefixed") == 0 ? P_PREFIXED
                         : strcasecmp(v, "any") == 0      ? P_ANY
                         : strcasecmp(v, "match") == 0    ? P_MATCH
                                                          : -1;
            if (a->pattern < 0)
                return tally_usage_error("--resource-pattern-type is literal, prefixed, any or "
                                         "match, not '%s'",
                                         v);
        } else
            return tally_usage_error("unknown option '%s'", o);
    }
    return TALLY_OK;
}

static int call(const struct tally_ctx *ctx, int16_t key, const void *req, struct arena *ar,
                void **out, const char *what)
{
    return tally_bootstrap_call(ctx, key, ACLS_VERSION, req, ar, out, what);
}

static int acls_add(const struct tally_ctx *ctx, void *args, struct arena *ar)
{
    struct acl_args *a = args;
    static const char *const any_host[] = {"*"};
    const char *const *ah = a->n_allow_h ? a->allow_h : any_host;
    const char *const *dh = a->n_deny_h ? a->deny_h : any_host;
    int nah = a->n_allow_h ? a->n_allow_h : 1, ndh = a->n_deny_h ? a->n_deny_h : 1;
    int8_t all = 2;
    const int8_t *ops = a->n_ops ? a->ops : &all;
    int n_ops = a->n_ops ? a->n_ops : 1;
    int pattern = a->pattern ? a->pattern : P_LITERAL;

    if (a->n_res == 0)
        return tally_usage_error("add needs a resource (--topic, --group, --transactional-id, "
                                 "--cluster)");
    if (a->n_allow_p + a->n_deny_p == 0)
        return tally_usage_error("add needs --allow-principal or --deny-principal");
    if (pattern != P_LITERAL && pattern != P_PREFIXED)
        return tally_usage_error("add takes --resource-pattern-type literal or prefixed");
    size_t n = (size_t)a->n_res * (size_t)n_ops *
               ((size_t)a->n_allow_p * (size_t)nah + (size_t)a->n_deny_p * (size_t)ndh);
    struct CreateAclsRequest rq = {0};
    rq.Creations.v = arena_alloc(ar, n * sizeof *rq.Creations.v);
    if (rq.Creations.v == NULL)
        return tally_fail("out of memory");
    for (int r = 0; r < a->n_res; r++)
        for (int o = 0; o < n_ops; o++)
            for (int deny = 0; deny < 2; deny++) {
                int np = deny ? a->n_deny_p : a->n_allow_p, nh = deny ? ndh : nah;
                for (int p = 0; p < np; p++)
                    for (int h = 0; h < nh; h++)
                        rq.Creations.v[rq.Creations.n++] =
                            (struct AclCreation){a->res[r].type,
                                                 (char *)a->res[r].name,
                                                 (int8_t)pattern,
                                                 (char *)(deny ? a->deny_p[p] : a->allow_p[p]),
                                                 (char *)(deny ? dh[h] : ah[h]),
                                                 ops[o],
                                                 deny ? PERM_DENY : PERM_ALLOW};
            }
    struct CreateAclsResponse *rs = NULL;
    int rc = call(ctx, PROTO_API_CreateAcls, &rq, ar, (void **)&rs, "CreateAcls");
    if (rc != TALLY_OK)
        return rc;
    for (int32_t i = 0; i < rs->Results.n && i < rq.Creations.n; i++) {
        const struct AclCreation *c = &rq.Creations.v[i];
        const struct AclCreationResult *r = &rs->Results.v[i];
        if (r->ErrorCode != 0) {
            rc = tally_fail("cannot add %s %s on %s %s (%s): %s%s%s", c->Principal,
                            op_upper(c->Operation), type_name(c->ResourceType), c->ResourceName,
                            pattern_name(c->ResourcePatternType), err_name(r->ErrorCode),
                            r->ErrorMessage ? ": " : "", r->ErrorMessage ? r->ErrorMessage : "");
            continue;
        }
        printf("Adding ACL for resource `ResourcePattern(resourceType=%s, name=%s, "
               "patternType=%s)`: (principal=%s, host=%s, operation=%s, permissionType=%s)\n",
               type_name(c->ResourceType), c->ResourceName, pattern_name(c->ResourcePatternType),
               c->Principal, c->Host, op_upper(c->Operation),
               c->PermissionType == PERM_DENY ? "DENY" : "ALLOW");
    }
    return rc;
}

static void print_resource(const struct DescribeAclsResource *r)
{
    printf("Current ACLs for resource `ResourcePattern(resourceType=%s, name=%s, patternType=%s)`:"
           " \n",
           type_name(r->ResourceType), r->ResourceName ? r->ResourceName : "",
           pattern_name(r->PatternType));
    for (int32_t j = 0; j < r->Acls.n; j++) {
        const struct AclDescription *d = &r->Acls.v[j];
        printf(" \t(principal=%s, host=%s, operation=%s, permissionType=%s)\n",
               d->Principal ? d->Principal : "", d->Host ? d->Host : "", op_upper(d->Operation),
               d->PermissionType == PERM_DENY ? "DENY" : "ALLOW");
    }
    printf("\n");
}

static int acls_list(const struct tally_ctx *ctx, void *args, struct arena *ar)
{
    struct acl_args *a = args;
    int n = a->n_res ? a->n_res : 1, rc = TALLY_OK;
    for (int i = 0; i < n; i++) {
        struct DescribeAclsRequest rq = {
            .ResourceTypeFilter = a->n_res ? a->res[i].type : R_ANY,
            .ResourceNameFilter = a->n_res ? (char *)a->res[i].name : NULL,
            .PatternTypeFilter = (int8_t)(a->pattern ? a->pattern
                                          : a->n_res ? P_LITERAL
                                                     : P_ANY),
            .PrincipalFilter = (char *)a->principal,
            .HostFilter = NULL,
            .Operation = OP_ANY,
            .PermissionType = PERM_ANY,
        };
        struct DescribeAclsResponse *rs = NULL;
        int c = call(ctx, PROTO_API_DescribeAcls, &rq, ar, (void **)&rs, "DescribeAcls");
        if (c != TALLY_OK)
            return c;
        if (rs->ErrorCode != 0) {
            rc = tally_fail("DescribeAcls: %s%s%s", err_name(rs->ErrorCode),
                            rs->ErrorMessage ? ": " : "", rs->ErrorMessage ? rs->ErrorMessage : "");
            continue;
        }
        for (int32_t k = 0; k < rs->Resources.n; k++)
            print_resource(&rs->Resources.v[k]);
    }
    return rc;
}

static int acls_remove(const struct tally_ctx *ctx, void *args, struct arena *ar)
{
    struct acl_args *a = args;
    const char *no_p = NULL;
    int8_t any_op = OP_ANY;
    const int8_t *ops = a->n_ops ? a->ops : &any_op;
    int n_ops = a->n_ops ? a->n_ops : 1;
    int pattern = a->pattern ? a->pattern : P_LITERAL;

    if (a->n_res == 0)
        return tally_usage_error("remove needs a resource (--topic, --group, "
                                 "--transactional-id, --cluster)");
    /* One filter per resource × operation × principal (with its permission), host any
     * unless given: what kafka-acls.sh --remove deletes. */
    int np = a->n_allow_p + a->n_deny_p;
    size_t n = (size_t)a->n_res * (size_t)n_ops * (size_t)(np ? np : 1);
    struct DeleteAclsRequest rq = {0};
    rq.Filters.v = arena_alloc(ar, n * sizeof *rq.Filters.v);
    if (rq.Filters.v == NULL)
        return tally_fail("out of memory");
    for (int r = 0; r < a->n_res; r++)
        for (int o = 0; o < n_ops; o++)
            for (int p = 0; p < (np ? np : 1); p++) {
                bool deny = p >= a->n_allow_p;
                const char *who = np == 0 ? no_p
                                  : deny  ? a->deny_p[p - a->n_allow_p]
                                          : a->allow_p[p];
                const char *host = deny ? (a->n_deny_h ? a->deny_h[0] : NULL)
                                        : (a->n_allow_h ? a->allow_h[0] : NULL);
                rq.Filters.v[rq.Filters.n++] =
                    (struct DeleteAclsFilter){a->res[r].type,
                                              (char *)a->res[r].name,
                                              (int8_t)pattern,
                                              (char *)who,
                                              (char *)host,
                                              ops[o],
                                              (int8_t)(np == 0 ? PERM_ANY
                                                       : deny  ? PERM_DENY
                                                               : PERM_ALLOW)};
            }
    struct DeleteAclsResponse *rs = NULL;
    int rc = call(ctx, PROTO_API_DeleteAcls, &rq, ar, (void **)&rs, "DeleteAcls");
    if (rc != TALLY_OK)
        return rc;
    for (int32_t i = 0; i < rs->FilterResults.n; i++) {
        const struct DeleteAclsFilterResult *f = &rs->FilterResults.v[i];
        if (f->ErrorCode != 0) {
            rc = tally_fail("DeleteAcls: %s%s%s", err_name(f->ErrorCode),
                            f->ErrorMessage ? ": " : "", f->ErrorMessage ? f->ErrorMessage : "");
            continue;
        }
        for (int32_t j = 0; j < f->MatchingAcls.n; j++) {
            const struct DeleteAclsMatchingAcl *m = &f->MatchingAcls.v[j];
            printf("Removed ACL for resource `ResourcePattern(resourceType=%s, name=%s, "
                   "patternType=%s)`: (principal=%s, host=%s, operation=%s, permissionType=%s)\n",
                   type_name(m->ResourceType), m->ResourceName, pattern_name(m->PatternType),
                   m->Principal, m->Host, op_upper(m->Operation),
                   m->PermissionType == PERM_DENY ? "DENY" : "ALLOW");
        }
    }
    return rc;
}

int tally_acls_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    static const struct tally_verb verbs[] = {
        {"add", acls_add},
        {"list", acls_list},
        {"remove", acls_remove},
        {NULL, NULL},
    };
    static const struct tally_noun noun = {"acls", acls_usage, parse_args, verbs, ARENA_BYTES};
    struct acl_args a;
    return tally_noun_main(&noun, ctx, argc, argv, &a);
}
