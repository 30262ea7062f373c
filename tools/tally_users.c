/* SPDX-License-Identifier: Apache-2.0 */
/* tally users scram set|describe|delete: SCRAM credentials (AlterUserScramCredentials and
 * DescribeUserScramCredentials, APIs 51 and 50, KIP-554) in the manner of kafka-configs.sh
 * --entity-type users --add-config 'SCRAM-SHA-512=[iterations=8192,password=...]'. As Kafka's
 * admin client does, the password never leaves this process: `set` draws a random salt and
 * sends SaltedPassword = Hi(password, salt, iterations) (RFC 5802, src/sasl's PBKDF2), from
 * which the broker keeps StoredKey and ServerKey. librdkafka 2.0.2 has no call for these APIs,
 * so the requests go over the wire client (tally.h: tally_bootstrap_call) with Tally's own
 * codec, to the first bootstrap broker (one that is not the controller forwards Alter there). */
#include "tally.h"

#include "base/err.h"
#include "proto/proto.h"
#include "sasl/sasl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#define SCRAM_VERSION 0
#define ARENA_BYTES (4 << 20)
#define MAX_USERS 64
#define SALT_BYTES 32 /* random; the broker accepts 1 to 64 */
#define MAX_PASSWORD 1024

static const char scram_usage[] =
    "usage: tally users scram set NAME --mechanism M[,M] [--iterations N]\n"
    "                             (--password P | --password-stdin)\n"
    "       tally users scram describe [NAME ...]\n"
    "       tally users scram delete NAME --mechanism M[,M]\n"
    "\n"
    "  SCRAM users (docs/security.md), as kafka-configs.sh --entity-type users manages them.\n"
    "  M is SCRAM-SHA-256 or SCRAM-SHA-512; --iterations 4096 (default) to 16384. The\n"
    "  password is salted and iterated here: only the salted password is sent, as Kafka's\n"
    "  admin client sends it. --password-stdin reads it from the first line of stdin.\n"
    "  describe lists each user's mechanisms and iteration counts (every user without NAME;\n"
    "  a NAME without credentials prints nothing, as kafka-configs.sh).\n"
    "  On a SASL or TLS listener: -X security.protocol=SASL_PLAINTEXT|SSL|SASL_SSL\n"
    "  -X sasl.mechanism=M -X sasl.username=U -X sasl.password=P -X ssl.ca.location=PEM ...,\n"
    "  or those lines in --command-config FILE (tally --help lists the settings).\n"
    "\n"
    "  e.g. tally users scram set alice --mechanism SCRAM-SHA-512 --iterations 8192 \\\n"
    "            --password-stdin < alice.pw\n"
    "       tally users scram describe alice\n"
    "       tally users scram delete alice --mechanism SCRAM-SHA-512\n";

/* Kafka's ScramMechanism type ids, as the two APIs carry them. */
static int8_t mech_id(enum sasl_mech m)
{
    return m == SASL_MECH_SCRAM_SHA_256 ? 1 : m == SASL_MECH_SCRAM_SHA_512 ? 2 : 0;
}

static const char *mech_name_of_id(int8_t id)
{
    return id == 1 ? "SCRAM-SHA-256" : id == 2 ? "SCRAM-SHA-512" : "UNKNOWN";
}

struct scram_args {
    const char *names[MAX_USERS];
    int n_names;
    enum sasl_mech mechs[2];
    int n_mechs;
    int32_t iterations;
    bool iterations_set;
    const char *password;
    bool password_stdin;
};

static int parse_mechs(char *list, struct scram_args *a)
{
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        enum sasl_mech m = strcmp(tok, "SCRAM-SHA-256") == 0   ? SASL_MECH_SCRAM_SHA_256
                           : strcmp(tok, "SCRAM-SHA-512") == 0 ? SASL_MECH_SCRAM_SHA_512
                                                               : SASL_MECH_NONE;
        if (m == SASL_MECH_NONE)
            return tally_usage_error("unknown mechanism '%s' (SCRAM-SHA-256, SCRAM-SHA-512)", tok);
        for (int i = 0; i < a->n_mechs; i++)
            if (a->mechs[i] == m)
                return tally_usage_error("mechanism %s given twice", tok);
        a->mechs[a->n_mechs++] = m;
    }
    return TALLY_OK;
}

static int parse_args(int argc, char **argv, void *args)
{
    struct scram_args *a = args;
    memset(a, 0, sizeof *a);
    a->iterations = SASL_SCRAM_MIN_ITERATIONS;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--password-stdin") == 0) {
            a->password_stdin = true;
            continue;
        }
        if (strncmp(o, "--", 2) != 0) {
            if (a->n_names == MAX_USERS)
                return tally_usage_error("at most %d users", MAX_USERS);
            a->names[a->n_names++] = o;
            continue;
        }
        if (i + 1 >= argc)
            return tally_usage_error("%s needs a value", o);
        char *v = argv[++i];
        if (strcmp(o, "--mechanism") == 0) {
            int rc = parse_mechs(v, a);
            if (rc != TALLY_OK)
                return rc;
        } else if (strcmp(o, "--iterations") == 0) {
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (errno || end == v || *end || n < SASL_SCRAM_MIN_ITERATIONS ||
                n > SASL_SCRAM_MAX_ITERATIONS)
                return tally_usage_error("--iterations must be %d to %d", SASL_SCRAM_MIN_ITERATIONS,
                                         SASL_SCRAM_MAX_ITERATIONS);
            a->iterations = (int32_t)n;
            a->iterations_set = true;
        } else if (strcmp(o, "--password") == 0) {
            a->password = v;
        } else {
            return tally_usage_error("unknown option '%s'", o);
        }
    }
    return TALLY_OK;
}

/* One user and at least one mechanism, for set and delete. */
static int need_user_and_mechs(const struct scram_args *a, const char *verb)
{
    if (a->n_names != 1)
        return tally_usage_error("users scram %s needs exactly one user NAME", verb);
    if (a->n_mechs == 0)
        return tally_usage_error("users scram %s needs --mechanism SCRAM-SHA-256|SCRAM-SHA-512",
                                 verb);
    return TALLY_OK;
}

/* The first line of stdin without its line end, into buf. */
static int read_password(char *buf, size_t cap)
{
    if (fgets(buf, (int)cap, stdin) == NULL)
        return tally_fail("--password-stdin: no password on stdin");
    size_t n = strlen(buf);
    if (n == cap - 1 && buf[n - 1] != '\n')
        return tally_fail("--password-stdin: password longer than %d bytes", MAX_PASSWORD - 2);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    return TALLY_OK;
}

/* The one result of an Alter for one user: TALLY_OK or TALLY_FAIL after printing it. */
static int alter_result(const struct AlterUserScramCredentialsResponse *rs, const char *user)
{
    if (rs->Results.n != 1)
        return tally_fail("AlterUserScramCredentials answered %d results for 1 user",
                          rs->Results.n);
    const struct AlterUserScramCredentialsResult *r = &rs->Results.v[0];
    if (r->ErrorCode != 0)
        return tally_fail("user '%s': %s%s%s", user, err_name(r->ErrorCode),
                          r->ErrorMessage ? ": " : "", r->ErrorMessage ? r->ErrorMessage : "");
    printf("Completed updating config for user %s.\n", user);
    return TALLY_OK;
}

static int scram_set(const struct tally_ctx *ctx, void *args, struct arena *ar)
{
    struct scram_args *a = args;
    struct ScramCredentialUpsertion ups[2];
    uint8_t salt[2][SALT_BYTES], salted[2][SASL_SCRAM_MAX_KEY];
    char pw[MAX_PASSWORD];
    int rc = need_user_and_mechs(a, "set");

    if (rc != TALLY_OK)
        return rc;
    if ((a->password != NULL) == a->password_stdin)
        return tally_usage_error("users scram set needs one of --password and --password-stdin");
    if (a->password_stdin) {
        if ((rc = read_password(pw, sizeof pw)) != TALLY_OK)
            goto out;
    } else {
        snprintf(pw, sizeof pw, "%s", a->password);
    }
    if (pw[0] == '\0') {
        rc = tally_usage_error("the password is empty");
        goto out;
    }
    for (int i = 0; i < a->n_mechs; i++) {
        enum sasl_mech m = a->mechs[i];
        if (sasl_random(salt[i], SALT_BYTES) != 0 ||
            sasl_scram_salted_password(m, (const uint8_t *)pw, strlen(pw), salt[i], SALT_BYTES,
                                       a->iterations, salted[i]) != 0) {
            rc = tally_fail("cannot salt the password (OpenSSL)");
            goto out;
        }
        ups[i] = (struct ScramCredentialUpsertion){
            .Name = (char *)a->names[0],
            .Mechanism = mech_id(m),
            .Iterations = a->iterations,
            .Salt = {.data = salt[i], .len = SALT_BYTES},
            .SaltedPassword = {.data = salted[i], .len = (int32_t)sasl_scram_hash_len(m)},
        };
    }
    struct AlterUserScramCredentialsRequest rq = {.Upsertions = {.v = ups, .n = a->n_mechs}};
    struct AlterUserScramCredentialsResponse *rs = NULL;
    rc = tally_bootstrap_call(ctx, PROTO_API_AlterUserScramCredentials, SCRAM_VERSION, &rq, ar,
                              (void **)&rs, "AlterUserScramCredentials");
    if (rc == TALLY_OK)
        rc = alter_result(rs, a->names[0]);
out:
    OPENSSL_cleanse(pw, sizeof pw);
    OPENSSL_cleanse(salted, sizeof salted);
    return rc;
}

static int scram_delete(const struct tally_ctx *ctx, void *args, struct arena *ar)
{
    struct scram_args *a = args;
    struct ScramCredentialDeletion del[2];
    int rc = need_user_and_mechs(a, "delete");

    if (rc != TALLY_OK)
        return rc;
    if (a->password || a->password_stdin || a->iterations_set)
        return tally_usage_error("users scram delete takes no password or iterations");
    for (int i = 0; i < a->n_mechs; i++)
        del[i] = (struct ScramCredentialDeletion){(char *)a->names[0], mech_id(a->mechs[i])};
    struct AlterUserScramCredentialsRequest rq = {.Deletions = {.v = del, .n = a->n_mechs}};
    struct AlterUserScramCredentialsResponse *rs = NULL;
    rc = tally_bootstrap_call(ctx, PROTO_API_AlterUserScramCredentials, SCRAM_VERSION, &rq, ar,
                              (void **)&rs, "AlterUserScramCredentials");
    return rc == TALLY_OK ? alter_result(rs, a->names[0]) : rc;
}

/* kafka-configs.sh's line: "SCRAM credential configs for user-principal 'alice' are
 * SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=8192". Never a salt or key: the
 * API carries none. */
static int scram_describe(const struct tally_ctx *ctx, void *args, struct arena *ar)
{
    struct scram_args *a = args;
    struct UserName names[MAX_USERS];

    if (a->n_mechs || a->password || a->password_stdin || a->iterations_set)
        return tally_usage_error("users scram describe takes user names only");
    for (int i = 0; i < a->n_names; i++)
        names[i].Name = (char *)a->names[i];
    /* No names: a null array, every user. */
    struct DescribeUserScramCredentialsRequest rq = {
        .Users = {.v = a->n_names ? names : NULL, .n = a->n_names ? a->n_names : -1}};
    struct DescribeUserScramCredentialsResponse *rs = NULL;
    int rc = tally_bootstrap_call(ctx, PROTO_API_DescribeUserScramCredentials, SCRAM_VERSION, &rq,
                                  ar, (void **)&rs, "DescribeUserScramCredentials");
    if (rc != TALLY_OK)
        return rc;
    if (rs->ErrorCode != 0)
        return tally_fail("%s%s%s", err_name(rs->ErrorCode), rs->ErrorMessage ? ": " : "",
                          rs->ErrorMessage ? rs->ErrorMessage : "");
    for (int32_t i = 0; i < rs->Results.n; i++) {
        const struct DescribeUserScramCredentialsResult *r = &rs->Results.v[i];
        if (r->ErrorCode == ERR_RESOURCE_NOT_FOUND)
            continue;
        if (r->ErrorCode != 0) {
            rc = tally_fail("user '%s': %s%s%s", r->User, err_name(r->ErrorCode),
                            r->ErrorMessage ? ": " : "", r->ErrorMessage ? r->ErrorMessage : "");
            continue;
        }
        printf("SCRAM credential configs for user-principal '%s' are ", r->User);
        for (int32_t k = 0; k < r->CredentialInfos.n; k++)
            printf("%s%s=iterations=%d", k ? ", " : "",
                   mech_name_of_id(r->CredentialInfos.v[k].Mechanism),
                   (int)r->CredentialInfos.v[k].Iterations);
        printf("\n");
    }
    return rc;
}

static int scram_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    static const struct tally_verb verbs[] = {
        {"set", scram_set},
        {"describe", scram_describe},
        {"delete", scram_delete},
        {NULL, NULL},
    };
    static const struct tally_noun noun = {"users scram", scram_usage, parse_args, verbs,
                                           ARENA_BYTES};
    struct scram_args a;
    return tally_noun_main(&noun, ctx, argc, argv, &a);
}

int tally_users_main(const struct tally_ctx *ctx, int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "scram") == 0)
        return scram_main(ctx, argc - 1, argv + 1);
    if (argc >= 2 && tally_is_help(argv[1])) {
        fputs(scram_usage, stdout);
        return TALLY_OK;
    }
    if (argc < 2) {
        fputs(scram_usage, stderr);
        return TALLY_USAGE;
    }
    return tally_usage_error("unknown users command '%s' (scram)", argv[1]);
}
