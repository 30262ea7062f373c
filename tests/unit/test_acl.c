/* SPDX-License-Identifier: Apache-2.0 */
/* ACL unit tests: StandardAuthorizer's matching rules on meta/acls.c's index (literal,
 * wildcard, prefixed; principal and host wildcards; DENY over ALLOW; implied operations;
 * allow.everyone.if.no.acl.found), the filters of DescribeAcls / DeleteAcls, the ACL records
 * and their place in snapshots (version 5, version 4 still read), and 10,000 entries. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "meta/meta.h"
#include "proto/proto.h"

#define T PROTO_RESOURCE_TOPIC
#define G PROTO_RESOURCE_GROUP
#define LIT META_ACL_PATTERN_LITERAL
#define PRE META_ACL_PATTERN_PREFIXED
#define ALLOW META_ACL_ALLOW
#define DENY META_ACL_DENY

static void id_of(uint8_t id[16], int n)
{
    memset(id, 0, 16);
    id[0] = 0x42;
    id[14] = (uint8_t)(n >> 8);
    id[15] = (uint8_t)n;
}

static int add(struct meta_acls *acls, int n, int8_t type, const char *name, int8_t pattern,
               const char *principal, const char *host, int8_t op, int8_t perm)
{
    struct meta_acl a = {0};
    id_of(a.id, n);
    a.resource_type = type;
    a.resource_name = (char *)name;
    a.pattern_type = pattern;
    a.principal = (char *)principal;
    a.host = (char *)host;
    a.operation = op;
    a.permission = perm;
    return meta_acls_add(acls, &a);
}

static bool may(const struct meta_acls *acls, const char *principal, const char *host, int8_t op,
                int8_t type, const char *name)
{
    struct meta_acl_check c = {principal, host, op, type, name};
    return meta_acls_authorize(acls, &c, false);
}

TEST(acl_literal_matches_only_its_name)
{
    struct meta_acls *acls = meta_acls_new();
    REQUIRE(acls != NULL);
    CHECK_EQ_INT(add(acls, 1, T, "orders", LIT, "User:alice", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK(may(acls, "User:alice", "10.0.0.1", PROTO_ACL_OP_READ, T, "orders"));
    CHECK(!may(acls, "User:alice", "10.0.0.1", PROTO_ACL_OP_READ, T, "orders2"));
    CHECK(!may(acls, "User:alice", "10.0.0.1", PROTO_ACL_OP_READ, T, "order"));
    CHECK(!may(acls, "User:bob", "10.0.0.1", PROTO_ACL_OP_READ, T, "orders"));
    CHECK(!may(acls, "User:alice", "10.0.0.1", PROTO_ACL_OP_WRITE, T, "orders"));
    /* Another resource type with the same name is another resource. */
    CHECK(!may(acls, "User:alice", "10.0.0.1", PROTO_ACL_OP_READ, G, "orders"));
    meta_acls_free(acls);
}

TEST(acl_wildcard_name_principal_and_host)
{
    struct meta_acls *acls = meta_acls_new();
    REQUIRE(acls != NULL);
    CHECK_EQ_INT(add(acls, 1, T, "*", LIT, "User:alice", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK_EQ_INT(add(acls, 2, G, "g1", LIT, "User:*", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK_EQ_INT(add(acls, 3, G, "g2", LIT, "User:bob", "10.0.0.7", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK(may(acls, "User:alice", "1.2.3.4", PROTO_ACL_OP_READ, T, "anything"));
    CHECK(!may(acls, "User:bob", "1.2.3.4", PROTO_ACL_OP_READ, T, "anything"));
    CHECK(may(acls, "User:carol", "1.2.3.4", PROTO_ACL_OP_READ, G, "g1"));
    CHECK(may(acls, "User:bob", "10.0.0.7", PROTO_ACL_OP_READ, G, "g2"));
    CHECK(!may(acls, "User:bob", "10.0.0.8", PROTO_ACL_OP_READ, G, "g2"));
    meta_acls_free(acls);
}

TEST(acl_prefixed_matches_names_that_start_with_it)
{
    struct meta_acls *acls = meta_acls_new();
    REQUIRE(acls != NULL);
    CHECK_EQ_INT(add(acls, 1, T, "enriched_", PRE, "User:alice", "*", PROTO_ACL_OP_WRITE, ALLOW),
                 0);
    CHECK_EQ_INT(add(acls, 2, T, "e", PRE, "User:bob", "*", PROTO_ACL_OP_WRITE, ALLOW), 0);
    CHECK(may(acls, "User:alice", "h", PROTO_ACL_OP_WRITE, T, "enriched_orders"));
    CHECK(may(acls, "User:alice", "h", PROTO_ACL_OP_WRITE, T, "enriched_"));
    CHECK(!may(acls, "User:alice", "h", PROTO_ACL_OP_WRITE, T, "enriched"));
    CHECK(!may(acls, "User:alice", "h", PROTO_ACL_OP_WRITE, T, "xenriched_orders"));
    CHECK(may(acls, "User:bob", "h", PROTO_ACL_OP_WRITE, T, "enriched_orders"));
    CHECK(!may(acls, "User:bob", "h", PROTO_ACL_OP_WRITE, T, "orders"));
    /* A prefixed entry is not a literal one of the same name, and the other way round. */
    CHECK_EQ_INT(add(acls, 3, T, "pay", LIT, "User:carol", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK(!may(acls, "User:carol", "h", PROTO_ACL_OP_READ, T, "payments"));
    CHECK(may(acls, "User:carol", "h", PROTO_ACL_OP_READ, T, "pay"));
    /* Removing the last prefix of a length forgets that length. */
    uint8_t id[16];
    id_of(id, 2);
    CHECK(meta_acls_remove(acls, id));
    CHECK(!meta_acls_remove(acls, id));
    CHECK(!may(acls, "User:bob", "h", PROTO_ACL_OP_WRITE, T, "enriched_orders"));
    CHECK(may(acls, "User:alice", "h", PROTO_ACL_OP_WRITE, T, "enriched_orders"));
    meta_acls_free(acls);
}

TEST(acl_deny_beats_allow)
{
    struct meta_acls *acls = meta_acls_new();
    REQUIRE(acls != NULL);
    CHECK_EQ_INT(add(acls, 1, T, "*", LIT, "User:*", "*", META_ACL_OP_ALL, ALLOW), 0);
    CHECK_EQ_INT(add(acls, 2, T, "secret_", PRE, "User:alice", "*", PROTO_ACL_OP_READ, DENY), 0);
    CHECK_EQ_INT(add(acls, 3, T, "audit", LIT, "User:bob", "10.0.0.9", META_ACL_OP_ALL, DENY), 0);
    CHECK(!may(acls, "User:alice", "h", PROTO_ACL_OP_READ, T, "secret_keys"));
    /* A DENY of READ denies READ only: DESCRIBE is implied by ALLOWs, never by DENYs. */
    CHECK(may(acls, "User:alice", "h", PROTO_ACL_OP_DESCRIBE, T, "secret_keys"));
    CHECK(may(acls, "User:alice", "h", PROTO_ACL_OP_WRITE, T, "secret_keys"));
    CHECK(may(acls, "User:bob", "h", PROTO_ACL_OP_READ, T, "secret_keys"));
    CHECK(!may(acls, "User:bob", "10.0.0.9", PROTO_ACL_OP_DESCRIBE, T, "audit"));
    CHECK(may(acls, "User:bob", "10.0.0.8", PROTO_ACL_OP_DESCRIBE, T, "audit"));
    meta_acls_free(acls);
}

TEST(acl_implied_operations)
{
    static const int8_t implies_describe[] = {PROTO_ACL_OP_READ, PROTO_ACL_OP_WRITE,
                                              PROTO_ACL_OP_DELETE, PROTO_ACL_OP_ALTER};
    for (size_t i = 0; i < sizeof implies_describe; i++) {
        struct meta_acls *acls = meta_acls_new();
        REQUIRE(acls != NULL);
        CHECK_EQ_INT(add(acls, 1, T, "t", LIT, "User:a", "*", implies_describe[i], ALLOW), 0);
        CHECK(may(acls, "User:a", "h", PROTO_ACL_OP_DESCRIBE, T, "t"));
        CHECK(!may(acls, "User:a", "h", PROTO_ACL_OP_DESCRIBE_CONFIGS, T, "t"));
        meta_acls_free(acls);
    }
    struct meta_acls *acls = meta_acls_new();
    REQUIRE(acls != NULL);
    CHECK_EQ_INT(add(acls, 1, T, "t", LIT, "User:a", "*", PROTO_ACL_OP_ALTER_CONFIGS, ALLOW), 0);
    CHECK(may(acls, "User:a", "h", PROTO_ACL_OP_DESCRIBE_CONFIGS, T, "t"));
    CHECK(!may(acls, "User:a", "h", PROTO_ACL_OP_DESCRIBE, T, "t"));
    CHECK(!may(acls, "User:a", "h", PROTO_ACL_OP_ALTER, T, "t"));
    /* CREATE implies nothing; ALL implies everything. */
    CHECK_EQ_INT(add(acls, 2, T, "c", LIT, "User:a", "*", PROTO_ACL_OP_CREATE, ALLOW), 0);
    CHECK(!may(acls, "User:a", "h", PROTO_ACL_OP_DESCRIBE, T, "c"));
    CHECK_EQ_INT(add(acls, 3, T, "all", LIT, "User:a", "*", META_ACL_OP_ALL, ALLOW), 0);
    for (int8_t op = PROTO_ACL_OP_READ; op <= PROTO_ACL_OP_IDEMPOTENT_WRITE; op++)
        CHECK(may(acls, "User:a", "h", op, T, "all"));
    meta_acls_free(acls);
}

TEST(acl_allow_everyone_only_without_any_acl_on_the_resource)
{
    struct meta_acls *acls = meta_acls_new();
    REQUIRE(acls != NULL);
    struct meta_acl_check c = {"User:bob", "h", PROTO_ACL_OP_READ, T, "free"};
    CHECK(meta_acls_authorize(acls, &c, true));
    CHECK(!meta_acls_authorize(acls, &c, false));
    /* An entry for someone else on the resource (here through a prefix) makes it guarded. */
    CHECK_EQ_INT(add(acls, 1, T, "fr", PRE, "User:alice", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK(!meta_acls_authorize(acls, &c, true));
    c.resource_name = "other";
    CHECK(meta_acls_authorize(acls, &c, true));
    meta_acls_free(acls);
}

/* Kafka's authorizeByResourceType (InitProducerId without a transactional id: WRITE on any
 * topic). */
TEST(acl_authorize_any_resource_of_a_type)
{
    struct meta_acls *acls = meta_acls_new();
    REQUIRE(acls != NULL);
    CHECK(meta_acls_authorize_any(acls, "User:a", "h", PROTO_ACL_OP_WRITE, T, true));
    CHECK(!meta_acls_authorize_any(acls, "User:a", "h", PROTO_ACL_OP_WRITE, T, false));
    CHECK_EQ_INT(add(acls, 1, T, "logs_", PRE, "User:a", "*", PROTO_ACL_OP_WRITE, ALLOW), 0);
    CHECK_EQ_INT(add(acls, 2, G, "g", LIT, "User:b", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK(meta_acls_authorize_any(acls, "User:a", "h", PROTO_ACL_OP_WRITE, T, false));
    CHECK(!meta_acls_authorize_any(acls, "User:b", "h", PROTO_ACL_OP_WRITE, T, true));
    CHECK(!meta_acls_authorize_any(acls, "User:a", "h", PROTO_ACL_OP_READ, T, false));
    /* A DENY covering everything the ALLOW names takes it back. */
    CHECK_EQ_INT(add(acls, 3, T, "*", LIT, "User:a", "*", PROTO_ACL_OP_WRITE, DENY), 0);
    CHECK(!meta_acls_authorize_any(acls, "User:a", "h", PROTO_ACL_OP_WRITE, T, false));
    meta_acls_free(acls);
}

TEST(acl_ids_and_bindings)
{
    struct meta_acls *acls = meta_acls_new();
    REQUIRE(acls != NULL);
    CHECK_EQ_INT(add(acls, 5, T, "t", LIT, "User:a", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK_EQ_INT(add(acls, 5, T, "u", LIT, "User:a", "*", PROTO_ACL_OP_READ, ALLOW), ERR_EXISTS);
    CHECK_EQ_INT(add(acls, 2, T, "u", LIT, "User:a", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    size_t n;
    const struct meta_acl *const *all = meta_acls_all(acls, &n);
    REQUIRE(n == 2);
    CHECK_EQ_STR(all[0]->resource_name, "u"); /* id order */
    struct meta_acl b = *all[1];
    CHECK(meta_acls_find_binding(acls, &b) == all[1]);
    b.host = "10.0.0.1";
    CHECK(meta_acls_find_binding(acls, &b) == NULL);
    meta_acls_free(acls);
}

TEST(acl_filters)
{
    struct meta_acls *acls = meta_acls_new();
    REQUIRE(acls != NULL);
    CHECK_EQ_INT(add(acls, 1, T, "orders", LIT, "User:a", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK_EQ_INT(add(acls, 2, T, "*", LIT, "User:b", "*", PROTO_ACL_OP_WRITE, DENY), 0);
    CHECK_EQ_INT(add(acls, 3, T, "ord", PRE, "User:a", "h1", PROTO_ACL_OP_READ, ALLOW), 0);
    CHECK_EQ_INT(add(acls, 4, G, "orders", LIT, "User:a", "*", PROTO_ACL_OP_READ, ALLOW), 0);
    size_t n;
    const struct meta_acl *const *all = meta_acls_all(acls, &n);
    REQUIRE(n == 4);
    struct {
        struct meta_acl_filter f;
        const char *expect; /* which of ids 1..4 match */
    } cases[] = {
        {{META_ACL_ANY, NULL, META_ACL_ANY, NULL, NULL, META_ACL_ANY, META_ACL_ANY}, "1234"},
        {{T, NULL, META_ACL_ANY, NULL, NULL, META_ACL_ANY, META_ACL_ANY}, "123"},
        {{T, "orders", META_ACL_ANY, NULL, NULL, META_ACL_ANY, META_ACL_ANY}, "1"},
        {{T, "orders", META_ACL_PATTERN_MATCH, NULL, NULL, META_ACL_ANY, META_ACL_ANY}, "123"},
        {{T, "ord", PRE, NULL, NULL, META_ACL_ANY, META_ACL_ANY}, "3"},
        {{T, "ord", LIT, NULL, NULL, META_ACL_ANY, META_ACL_ANY}, ""},
        {{META_ACL_ANY, NULL, LIT, "User:a", NULL, META_ACL_ANY, META_ACL_ANY}, "14"},
        {{META_ACL_ANY, NULL, META_ACL_ANY, NULL, "h1", META_ACL_ANY, META_ACL_ANY}, "3"},
        {{META_ACL_ANY, NULL, META_ACL_ANY, NULL, NULL, PROTO_ACL_OP_WRITE, META_ACL_ANY}, "2"},
        {{META_ACL_ANY, NULL, META_ACL_ANY, NULL, NULL, META_ACL_ANY, DENY}, "2"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char got[8] = {0};
        size_t g = 0;
        for (size_t i = 0; i < n; i++)
            if (meta_acl_filter_match(&cases[k].f, all[i]))
                got[g++] = (char)('0' + all[i]->id[15]);
        if (strcmp(got, cases[k].expect) != 0) {
            char m[96];
            snprintf(m, sizeof m, "filter case %zu: got \"%s\", want \"%s\"", k, got,
                     cases[k].expect);
            harness_fail(__FILE__, __LINE__, m);
        }
    }
    meta_acls_free(acls);
}

/* 10,000 entries, literal and prefixed mixed: every check still finds its entry, and none
 * of another name applies. (Speed is bench/'s business; the index makes it a handful of
 * binary searches.) */
TEST(acl_ten_thousand_entries)
{
    struct meta_acls *acls = meta_acls_new();
    char name[64];
    REQUIRE(acls != NULL);
    for (int i = 0; i < 10000; i++) {
        snprintf(name, sizeof name, i % 2 ? "topic-%05d" : "pre-%04d-", i);
        REQUIRE(add(acls, i + 1, T, name, i % 2 ? LIT : PRE, "User:app", "*", PROTO_ACL_OP_READ,
                    ALLOW) == 0);
    }
    int allowed = 0;
    for (int i = 0; i < 10000; i++) {
        snprintf(name, sizeof name, i % 2 ? "topic-%05d" : "pre-%04d-x", i);
        allowed += may(acls, "User:app", "h", PROTO_ACL_OP_READ, T, name);
    }
    CHECK_EQ_INT(allowed, 10000);
    CHECK(!may(acls, "User:app", "h", PROTO_ACL_OP_READ, T, "topic-1"));
    CHECK(!may(acls, "User:app", "h", PROTO_ACL_OP_READ, T, "pre-0001-x")); /* odd: literal */
    meta_acls_free(acls);
}

/* ---- records and snapshots ---------------------------------------------------------------- */

static struct meta_record rec_acl(int n, const char *name, int8_t pattern, int8_t perm)
{
    struct meta_record r = {.type = META_REC_ACL};
    id_of(r.u.acl.id, n);
    r.u.acl.resource_type = T;
    r.u.acl.resource_name = name;
    r.u.acl.pattern_type = pattern;
    r.u.acl.principal = "User:alice";
    r.u.acl.host = "*";
    r.u.acl.operation = PROTO_ACL_OP_WRITE;
    r.u.acl.permission = perm;
    return r;
}

static struct meta_record rec_remove(int n)
{
    struct meta_record r = {.type = META_REC_REMOVE_ACL};
    id_of(r.u.remove_acl.id, n);
    return r;
}

static int apply(struct meta_image *img, const struct meta_record *recs, size_t n)
{
    uint8_t *buf;
    size_t len;
    int rv = meta_batch_encode(recs, n, &buf, &len);
    if (rv != 0)
        return rv;
    rv = meta_image_apply(img, buf, len, NULL, NULL);
    free(buf);
    return rv;
}

#define APPLY(img, ...)                                                                            \
    apply(img, (struct meta_record[]){__VA_ARGS__},                                                \
          sizeof((struct meta_record[]){__VA_ARGS__}) / sizeof(struct meta_record))

TEST(acl_records_apply_refuse_and_snapshot)
{
    struct meta_image *img = meta_image_new(), *again = meta_image_new();
    uint8_t *snap;
    size_t len, n;
    REQUIRE(img != NULL && again != NULL);

    CHECK_EQ_INT(APPLY(img, rec_acl(1, "orders", LIT, ALLOW), rec_acl(2, "enr_", PRE, DENY)), 0);
    meta_acls_all(meta_image_acls(img), &n);
    CHECK_EQ_INT(n, 2);
    struct meta_acl_check c = {"User:alice", "h", PROTO_ACL_OP_WRITE, T, "orders"};
    CHECK(meta_acls_authorize(meta_image_acls(img), &c, false));
    /* A duplicate id, an unknown removal, or an invalid field refuses the whole batch. */
    CHECK_EQ_INT(APPLY(img, rec_acl(3, "x", LIT, ALLOW), rec_acl(1, "y", LIT, ALLOW)),
                 ERR_DUPLICATE_RESOURCE);
    CHECK_EQ_INT(APPLY(img, rec_acl(3, "x", LIT, ALLOW), rec_remove(9)), ERR_RESOURCE_NOT_FOUND);
    struct meta_record bad = rec_acl(3, "x", META_ACL_PATTERN_MATCH, ALLOW);
    CHECK_EQ_INT(APPLY(img, bad), ERR_INVALID_REQUEST);
    bad = rec_acl(3, "", LIT, ALLOW);
    CHECK_EQ_INT(APPLY(img, bad), ERR_INVALID_REQUEST);
    meta_acls_all(meta_image_acls(img), &n);
    CHECK_EQ_INT(n, 2);
    /* Added and removed in one batch; removed then re-added under the same id. */
    CHECK_EQ_INT(APPLY(img, rec_acl(4, "t4", LIT, ALLOW), rec_remove(4), rec_remove(1),
                       rec_acl(1, "orders2", LIT, ALLOW)),
                 0);
    meta_acls_all(meta_image_acls(img), &n);
    CHECK_EQ_INT(n, 2);
    CHECK(!meta_acls_authorize(meta_image_acls(img), &c, false));

    REQUIRE(meta_image_snapshot(img, &snap, &len) == 0);
    CHECK_EQ_INT(snap[0], 6);
    CHECK_EQ_INT(meta_image_restore(again, snap, len), 0);
    const struct meta_acl *a =
        meta_acls_find(meta_image_acls(again), rec_acl(1, "", 0, 0).u.acl.id);
    REQUIRE(a != NULL);
    CHECK_EQ_STR(a->resource_name, "orders2");
    CHECK_EQ_INT(a->pattern_type, LIT);
    c.resource_name = "enr_x";
    CHECK(!meta_acls_authorize(meta_image_acls(again), &c, true)); /* the DENY came back */
    /* Every truncation is refused. */
    for (size_t k = 1; k < len; k++)
        CHECK(meta_image_restore(again, snap, k) != 0);
    meta_acls_all(meta_image_acls(again), &n);
    CHECK_EQ_INT(n, 2);
    free(snap);

    /* Version 4: no ACL section (and no quota section, version 6's); restores with none. */
    struct meta_image *empty = meta_image_new(), *old = meta_image_new();
    REQUIRE(meta_image_snapshot(empty, &snap, &len) == 0);
    snap[0] = 4;
    CHECK_EQ_INT(meta_image_restore(old, snap, len - 8), 0);
    meta_acls_all(meta_image_acls(old), &n);
    CHECK_EQ_INT(n, 0);
    free(snap);
    meta_image_free(empty);
    meta_image_free(old);
    meta_image_free(again);
    meta_image_free(img);
}

/* ---- the authorizer's configuration (authz/authz.c) -------------------------------------- */

#include "authz/authz.h"
#include "base/props.h"
#include "net/net.h"

TEST(acl_authorizer_class_names)
{
    struct props *p = props_new();
    char why[256];
    bool on = true;
    REQUIRE(p != NULL);
    CHECK_EQ_INT(authz_config(p, &on, why, sizeof why), 0);
    CHECK(!on);
    REQUIRE(props_set(p, "authorizer.class.name", AUTHZ_STANDARD) == 0);
    CHECK_EQ_INT(authz_config(p, &on, why, sizeof why), 0);
    CHECK(on);
    REQUIRE(props_set(p, "authorizer.class.name", AUTHZ_ACL_AUTHORIZER) == 0);
    CHECK_EQ_INT(authz_config(p, &on, why, sizeof why), 0);
    CHECK(on);
    REQUIRE(props_set(p, "authorizer.class.name", "com.example.Mine") == 0);
    CHECK_EQ_INT(authz_config(p, &on, why, sizeof why), ERR_INVALID_CONFIG);
    CHECK(strstr(why, "com.example.Mine") != NULL && strstr(why, AUTHZ_STANDARD) != NULL);
    props_free(p);
}

TEST(acl_peer_host_and_super_users)
{
    char host[64];
    authz_peer_host("127.0.0.1:40123", host, sizeof host);
    CHECK_EQ_STR(host, "127.0.0.1");
    authz_peer_host("::1:40123", host, sizeof host);
    CHECK_EQ_STR(host, "::1");

    /* Super users skip the ACLs entirely (the image is never asked: meta is NULL here);
     * Kafka's ';' list with blanks around each principal. */
    struct props *p = props_new();
    REQUIRE(p != NULL);
    REQUIRE(props_set(p, "super.users", " User:admin ; User:ANONYMOUS;;") == 0);
    struct authz *z = authz_new(NULL, p);
    REQUIRE(z != NULL);
    struct net_session s = {0};
    struct net_request req = {0};
    req.session = &s;
    req.peer = "10.0.0.1:5";
    s.authz = z;
    snprintf(s.principal, sizeof s.principal, "User:admin");
    CHECK(authz_on(&req));
    CHECK(authz_allowed(&req, PROTO_ACL_OP_ALTER, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER));
    snprintf(s.principal, sizeof s.principal, "User:ANONYMOUS");
    CHECK(authz_allowed(&req, PROTO_ACL_OP_WRITE, PROTO_RESOURCE_TOPIC, "t"));
    /* No authorizer on the session: everything is allowed, as Kafka without one. */
    s.authz = NULL;
    snprintf(s.principal, sizeof s.principal, "User:bob");
    CHECK(!authz_on(&req));
    CHECK(authz_allowed(&req, PROTO_ACL_OP_DELETE, PROTO_RESOURCE_TOPIC, "t"));
    CHECK_EQ_INT(authz_ops(&req, PROTO_RESOURCE_TOPIC, "t"),
                 proto_authorized_ops(PROTO_RESOURCE_TOPIC));
    authz_free(z);
    props_free(p);
}
