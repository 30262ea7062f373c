/* SPDX-License-Identifier: Apache-2.0 */
/* The client security settings of the `tally` commands (tools/tally_security.c): librdkafka's
 * names and values taken as librdkafka takes them (others refused as usage errors), and the
 * pass-through to a child process of the CLI (the copiers of `tally verify`): the settings
 * saved to a file only its owner may read, the child's command line naming that file before
 * its command and holding no secret, and the file read back giving every setting unchanged. */
#include "../../tools/tally.h"
#include "harness.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* tally.c's printers (not linked here): the messages are not what these tests check. */
int tally_fail(const char *fmt, ...)
{
    (void)fmt;
    return TALLY_FAIL;
}

int tally_usage_error(const char *fmt, ...)
{
    (void)fmt;
    return TALLY_USAGE;
}

/* The values are the process's (tally_security_option strdup()s them); freed here for ASan. */
static void free_settings(struct tally_ctx *ctx)
{
    const char *name;
    for (int i = 0; i < tally_security_count(); i++)
        free((void *)tally_security_get(ctx, i, &name));
    memset(ctx, 0, sizeof *ctx);
}

static const char *const all_settings[] = {
    "security.protocol=sasl_ssl", /* librdkafka ignores case in its enumerations */
    "sasl.mechanism=SCRAM-SHA-512",
    "sasl.username=copier",
    "sasl.password=s3cret pass=word",
    "ssl.ca.location=/pki/ca.pem",
    "ssl.certificate.location=/pki/alice.pem",
    "ssl.key.location=/pki/alice.key",
    "ssl.key.password=k3y-secret",
    "ssl.endpoint.identification.algorithm=NONE",
    "enable.ssl.certificate.verification=false",
};

TEST(tools_security_settings_reach_a_copier_child_through_a_private_file)
{
    struct tally_ctx ctx = {0}, back = {0};
    const int n = (int)(sizeof all_settings / sizeof all_settings[0]);
    CHECK(!tally_security_any(&ctx));
    CHECK_EQ_INT(tally_security_count(), n);
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(tally_security_option(&ctx, all_settings[i]), TALLY_OK);
    CHECK(tally_security_any(&ctx));
    CHECK_EQ_STR(ctx.security_protocol, "SASL_SSL");
    CHECK_EQ_STR(ctx.ssl_endpoint_identification_algorithm, "none");
    CHECK_EQ_STR(ctx.sasl_password, "s3cret pass=word");

    char dir[] = "/tmp/tally-unit-sec-XXXXXX", path[64];
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/client.properties", dir);
    REQUIRE(tally_security_save(&ctx, path) == TALLY_OK);
    struct stat st;
    REQUIRE(stat(path, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0600);

    /* The child's command line: the file before the command, and no secret on it. */
    char *args[8];
    int k = tally_child_argv("/usr/bin/tally", "127.0.0.1:9093", path, args);
    REQUIRE(k == 5);
    CHECK_EQ_STR(args[0], "/usr/bin/tally");
    CHECK_EQ_STR(args[1], "-b");
    CHECK_EQ_STR(args[2], "127.0.0.1:9093");
    CHECK_EQ_STR(args[3], "--command-config");
    CHECK_EQ_STR(args[4], path);
    for (int i = 0; i < k; i++)
        CHECK(strstr(args[i], "s3cret") == NULL && strstr(args[i], "k3y") == NULL);

    /* What the child reads back is what the driver was given, setting by setting. */
    REQUIRE(tally_security_file(&back, args[4]) == TALLY_OK);
    for (int i = 0; i < n; i++) {
        const char *name, *name2;
        const char *v = tally_security_get(&ctx, i, &name);
        const char *w = tally_security_get(&back, i, &name2);
        CHECK_EQ_STR(name, name2);
        CHECK_EQ_STR(w, v);
    }
    unlink(path);
    rmdir(dir);

    /* Nothing set: no file named, the child's line is exe -b bootstrap. */
    CHECK_EQ_INT(tally_child_argv("/usr/bin/tally", "h:1", "", args), 3);
    CHECK_EQ_INT(tally_child_argv("/usr/bin/tally", "h:1", NULL, args), 3);
    free_settings(&ctx);
    free_settings(&back);
}

TEST(tools_security_refuses_what_librdkafka_would_not_take)
{
    struct tally_ctx ctx = {0};
    CHECK_EQ_INT(tally_security_option(&ctx, "security.protocol=TLS"), TALLY_USAGE);
    CHECK_EQ_INT(tally_security_option(&ctx, "ssl.endpoint.identification.algorithm=dns"),
                 TALLY_USAGE);
    CHECK_EQ_INT(tally_security_option(&ctx, "enable.ssl.certificate.verification=maybe"),
                 TALLY_USAGE);
    CHECK_EQ_INT(tally_security_option(&ctx, "ssl.keystore.location=/x.p12"), TALLY_USAGE);
    CHECK_EQ_INT(tally_security_option(&ctx, "security.protocol"), TALLY_USAGE);
    CHECK_EQ_INT(tally_security_option(&ctx, "=SSL"), TALLY_USAGE);
    CHECK(!tally_security_any(&ctx));
    /* librdkafka's older spelling of sasl.mechanism. */
    CHECK_EQ_INT(tally_security_option(&ctx, "sasl.mechanisms=PLAIN"), TALLY_OK);
    CHECK_EQ_STR(ctx.sasl_mechanism, "PLAIN");
    CHECK_EQ_INT(tally_security_file(&ctx, "/nonexistent/client.properties"), TALLY_FAIL);
    free_settings(&ctx);
}
