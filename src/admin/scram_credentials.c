/* SPDX-License-Identifier: Apache-2.0 */
/* DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), KIP-554: SCRAM users
 * live in the metadata log as SCRAM records (salt, iterations, StoredKey, ServerKey), so they
 * survive restarts and replicate with the rest of the metadata. */
#include <string.h>

#include "authz/authz.h"
#include "admin_int.h"
#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "meta/meta.h"
#include "net/net.h"
#include "sasl/sasl.h"

/* Kafka's bounds (ScramMechanism's minimum and maximum iterations). */
#define SCRAM_MIN_ITERATIONS SASL_SCRAM_MIN_ITERATIONS
#define SCRAM_MAX_ITERATIONS SASL_SCRAM_MAX_ITERATIONS

static enum sasl_mech mech_of(int8_t m)
{
    return m == META_SCRAM_SHA_256   ? SASL_MECH_SCRAM_SHA_256
           : m == META_SCRAM_SHA_512 ? SASL_MECH_SCRAM_SHA_512
                                     : SASL_MECH_NONE;
}

void admin_describe_user_scram_credentials(struct admin *a, struct net_request *req)
{
    struct DescribeUserScramCredentialsRequest *rq = req->body;
    struct arena *ar = req->arena;
    struct DescribeUserScramCredentialsResponse *rs = arena_alloc(ar, sizeof *rs);
    size_t nc;
    const struct meta_scram *c = meta_scram_credentials(a->meta, &nc);

    if (rs == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    /* DESCRIBE on the cluster (KIP-554), else the error at the top. */
    if (!authz_allowed(req, PROTO_ACL_OP_DESCRIBE, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER)) {
        rs->ErrorCode = ERR_CLUSTER_AUTHORIZATION_FAILED;
        rs->ErrorMessage = "Cluster authorization failed";
        net_respond(req, rs);
        return;
    }
    /* Null or empty: every user with a credential (Kafka describes all for both). */
    bool all = rq->Users.n <= 0;
    size_t cap = all ? nc : (size_t)rq->Users.n;
    rs->Results.v = arena_alloc(ar, (cap + 1) * sizeof *rs->Results.v);
    if (rs->Results.v == NULL)
        goto err_nomem;
    if (all) {
        for (size_t i = 0; i < nc;) {
            struct DescribeUserScramCredentialsResult *r = &rs->Results.v[rs->Results.n++];
            size_t j = i;
            while (j < nc && strcmp(c[j].user, c[i].user) == 0)
                j++;
            r->User = c[i].user;
            r->CredentialInfos.v = arena_alloc(ar, (j - i) * sizeof *r->CredentialInfos.v);
            if (r->CredentialInfos.v == NULL)
                goto err_nomem;
            for (size_t k = i; k < j; k++)
                r->CredentialInfos.v[r->CredentialInfos.n++] =
                    (struct CredentialInfo){c[k].mechanism, c[k].iterations};
            i = j;
        }
        net_respond(req, rs);
        return;
    }
    for (int32_t u = 0; u < rq->Users.n; u++) {
        struct DescribeUserScramCredentialsResult *r = &rs->Results.v[rs->Results.n++];
        const char *name = rq->Users.v[u].Name ? rq->Users.v[u].Name : "";
        r->User = (char *)name;
        bool dup = false;
        for (int32_t k = 0; k < rq->Users.n && !dup; k++)
            dup = k != u && rq->Users.v[k].Name && strcmp(rq->Users.v[k].Name, name) == 0;
        if (dup) {
            r->ErrorCode = ERR_DUPLICATE_RESOURCE;
            r->ErrorMessage = "Cannot describe SCRAM credentials for the same user twice in a "
                              "single request";
            continue;
        }
        r->CredentialInfos.v = arena_alloc(ar, 3 * sizeof *r->CredentialInfos.v);
        if (r->CredentialInfos.v == NULL)
            goto err_nomem;
        for (int8_t m = META_SCRAM_SHA_256; m <= META_SCRAM_SHA_512; m++) {
            const struct meta_scram *one = meta_scram_find(a->meta, name, m);
            if (one)
                r->CredentialInfos.v[r->CredentialInfos.n++] =
                    (struct CredentialInfo){one->mechanism, one->iterations};
        }
        if (r->CredentialInfos.n == 0) {
            r->ErrorCode = ERR_RESOURCE_NOT_FOUND;
            r->ErrorMessage = "Attempt to describe a user credential that does not exist";
        }
    }
    net_respond(req, rs);
    return;

err_nomem:
    slog_error("admin", "out of memory in DescribeUserScramCredentials from %s; closing",
               req->peer);
    net_close_connection(req);
}

struct alter_call {
    struct net_request *req;
    struct AlterUserScramCredentialsResponse *rs;
    bool *proposed; /* per result: part of the proposal */
};

static void on_applied(void *arg, int err)
{
    struct alter_call *c = arg;
    for (int32_t i = 0; i < c->rs->Results.n; i++)
        if (c->proposed[i]) {
            c->rs->Results.v[i].ErrorCode = (int16_t)err_wire(err);
            if (err == 0)
                slog_info("admin", "altered the SCRAM credentials of user %s",
                          c->rs->Results.v[i].User);
        }
    net_respond(c->req, c->rs);
}

/* The result for `name`, made on its first mention (results follow the request's order). */
static int32_t result_of(struct AlterUserScramCredentialsResponse *rs, const char *name)
{
    for (int32_t i = 0; i < rs->Results.n; i++)
        if (strcmp(rs->Results.v[i].User, name) == 0)
            return i;
    rs->Results.v[rs->Results.n].User = (char *)name;
    return rs->Results.n++;
}

static const char *entry_name(const struct AlterUserScramCredentialsRequest *rq, int32_t nd,
                              size_t i, int8_t *mech)
{
    const char *name;
    if (i < (size_t)nd) {
        name = rq->Deletions.v[i].Name;
        *mech = rq->Deletions.v[i].Mechanism;
    } else {
        name = rq->Upsertions.v[i - (size_t)nd].Name;
        *mech = rq->Upsertions.v[i - (size_t)nd].Mechanism;
    }
    return name ? name : "";
}

static void fail(struct AlterUserScramCredentialsResult *r, int16_t err, const char *msg)
{
    if (r->ErrorCode == 0) {
        r->ErrorCode = err;
        r->ErrorMessage = (char *)msg;
    }
}

void admin_alter_user_scram_credentials(struct admin *a, struct net_request *req)
{
    struct AlterUserScramCredentialsRequest *rq = req->body;
    struct arena *ar = req->arena;
    int32_t nd = rq->Deletions.n > 0 ? rq->Deletions.n : 0;
    int32_t nu = rq->Upsertions.n > 0 ? rq->Upsertions.n : 0;
    size_t total = (size_t)nd + (size_t)nu;
    struct AlterUserScramCredentialsResponse *rs = arena_alloc(ar, sizeof *rs);
    struct alter_call *call = arena_alloc(ar, sizeof *call);
    struct meta_record *recs = arena_alloc(ar, (total + 1) * sizeof *recs);
    int32_t *user_of = arena_alloc(ar, (total + 1) * sizeof *user_of); /* entry → result */
    uint8_t *keys = arena_alloc(ar, (total + 1) * 2 * META_SCRAM_MAX_KEY);

    if (rs == NULL || call == NULL || recs == NULL || user_of == NULL || keys == NULL)
        goto err_nomem;
    memset(rs, 0, sizeof *rs);
    memset(recs, 0, (total + 1) * sizeof *recs);
    rs->Results.v = arena_alloc(ar, (total + 1) * sizeof *rs->Results.v);
    call->proposed = arena_alloc(ar, (total + 1) * sizeof *call->proposed);
    if (rs->Results.v == NULL || call->proposed == NULL)
        goto err_nomem;
    memset(rs->Results.v, 0, (total + 1) * sizeof *rs->Results.v);
    memset(call->proposed, 0, (total + 1) * sizeof *call->proposed);

    /* ALTER on the cluster (KIP-554): without it every user gets the error, nothing
     * changes. */
    bool denied = !authz_allowed(req, PROTO_ACL_OP_ALTER, PROTO_RESOURCE_CLUSTER, AUTHZ_CLUSTER);
    /* One result per user, whose records all apply or none: one entry that fails fails the
     * user. A (user, mechanism) pair named twice is DUPLICATE_RESOURCE (Kafka's rule). */
    for (size_t i = 0; i < total; i++) {
        bool del = i < (size_t)nd;
        const struct ScramCredentialUpsertion *u = del ? NULL : &rq->Upsertions.v[i - (size_t)nd];
        int8_t m, m2;
        const char *name = entry_name(rq, nd, i, &m);
        int32_t k = result_of(rs, name);
        struct AlterUserScramCredentialsResult *r = &rs->Results.v[k];
        user_of[i] = k;
        if (denied) {
            fail(r, ERR_CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed");
            continue;
        }
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++)
            dup = strcmp(entry_name(rq, nd, j, &m2), name) == 0 && m2 == m;
        if (dup) {
            r->ErrorCode = ERR_DUPLICATE_RESOURCE;
            r->ErrorMessage = "A user credential cannot be altered twice in the same request";
            continue;
        }
        if (name[0] == '\0') {
            fail(r, ERR_UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
            continue;
        }
        enum sasl_mech sm = mech_of(m);
        if (sm == SASL_MECH_NONE) {
            fail(r, ERR_UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism");
            continue;
        }
        struct meta_record *rec = &recs[i];
        rec->type = META_REC_SCRAM;
        rec->u.scram.user = name;
        rec->u.scram.mechanism = m;
        if (del) {
            if (meta_scram_find(a->meta, name, m) == NULL)
                fail(r, ERR_RESOURCE_NOT_FOUND,
                     "Attempt to delete a user credential that does not exist");
            continue;
        }
        size_t h = sasl_scram_hash_len(sm);
        uint8_t *stored = keys + i * 2 * META_SCRAM_MAX_KEY, *server = stored + META_SCRAM_MAX_KEY;
        if (u->Iterations < SCRAM_MIN_ITERATIONS) {
            fail(r, ERR_UNACCEPTABLE_CREDENTIAL, "Too few iterations");
        } else if (u->Iterations > SCRAM_MAX_ITERATIONS) {
            fail(r, ERR_UNACCEPTABLE_CREDENTIAL, "Too many iterations");
        } else if (u->Salt.len < 1 || u->Salt.len > META_SCRAM_MAX_SALT) {
            fail(r, ERR_UNACCEPTABLE_CREDENTIAL, "The salt must be 1 to 64 bytes");
        } else if (u->SaltedPassword.len < 0 || (size_t)u->SaltedPassword.len != h ||
                   sasl_scram_keys(sm, u->SaltedPassword.data, h, stored, server) != 0) {
            fail(r, ERR_UNACCEPTABLE_CREDENTIAL,
                 "The salted password must be as long as the mechanism's hash");
        } else {
            rec->u.scram.iterations = u->Iterations;
            rec->u.scram.salt_len = u->Salt.len;
            rec->u.scram.salt = u->Salt.data;
            rec->u.scram.key_len = (int32_t)h;
            rec->u.scram.stored_key = stored;
            rec->u.scram.server_key = server;
        }
    }
    /* The users without an error go in one batch. */
    size_t n = 0;
    struct meta_record *batch = arena_alloc(ar, (total + 1) * sizeof *batch);
    if (batch == NULL)
        goto err_nomem;
    for (size_t i = 0; i < total; i++)
        if (rs->Results.v[user_of[i]].ErrorCode == 0) {
            batch[n++] = recs[i];
            call->proposed[user_of[i]] = true;
        }
    call->req = req;
    call->rs = rs;
    admin_propose_or_respond(a, req, rs, batch, n, on_applied, call);
    return;

err_nomem:
    slog_error("admin", "out of memory in AlterUserScramCredentials from %s; closing", req->peer);
    net_close_connection(req);
}
