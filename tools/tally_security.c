/* SPDX-License-Identifier: Apache-2.0 */
/* The client security settings of the `tally` commands (tally.h: struct tally_ctx):
 * librdkafka's names given as -X key=value or in a properties file (--command-config),
 * checked as librdkafka checks them, and handed on to a child process of this binary (the
 * copiers of `tally verify`) as a file only its owner may read. No librdkafka here, so that
 * the unit tests link it (tests/unit/test_tools_security.c). */
#include "tally.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

static const char *const protocols[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL", NULL};
static const char *const algorithms[] = {"none", "https", NULL};
static const char *const booleans[] = {"true", "false", NULL};

/* The settings, by librdkafka's names: where ctx keeps each, and the values librdkafka takes
 * when it takes only some (NULL: any string). */
static const struct {
    const char *name;
    size_t off;
    const char *const *values;
    const char *values_text;
} settings[] = {
    {"security.protocol", offsetof(struct tally_ctx, security_protocol), protocols,
     "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"},
    {"sasl.mechanism", offsetof(struct tally_ctx, sasl_mechanism), NULL, NULL},
    {"sasl.username", offsetof(struct tally_ctx, sasl_username), NULL, NULL},
    {"sasl.password", offsetof(struct tally_ctx, sasl_password), NULL, NULL},
    {"ssl.ca.location", offsetof(struct tally_ctx, ssl_ca_location), NULL, NULL},
    {"ssl.certificate.location", offsetof(struct tally_ctx, ssl_certificate_location), NULL, NULL},
    {"ssl.key.location", offsetof(struct tally_ctx, ssl_key_location), NULL, NULL},
    {"ssl.key.password", offsetof(struct tally_ctx, ssl_key_password), NULL, NULL},
    {"ssl.endpoint.identification.algorithm",
     offsetof(struct tally_ctx, ssl_endpoint_identification_algorithm), algorithms,
     "https or none"},
    {"enable.ssl.certificate.verification",
     offsetof(struct tally_ctx, enable_ssl_certificate_verification), booleans, "true or false"},
};
#define NSETTINGS (sizeof settings / sizeof settings[0])

static const char **slot(struct tally_ctx *ctx, size_t i)
{
    return (const char **)(void *)((char *)ctx + settings[i].off);
}

static const char *value_of(const struct tally_ctx *ctx, size_t i)
{
    return *(const char *const *)(const void *)((const char *)ctx + settings[i].off);
}

/* The one of `allowed` (a NULL-ended list) that v names, ignoring case as librdkafka does. */
static const char *one_of(const char *v, const char *const *allowed)
{
    for (; *allowed; allowed++)
        if (strcasecmp(v, *allowed) == 0)
            return *allowed;
    return NULL;
}

/* The value is kept for the process's lifetime (the command runs once). */
int tally_security_option(struct tally_ctx *ctx, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv)
        return tally_usage_error("-X needs key=value, not '%s'", kv);
    size_t kl = (size_t)(eq - kv), i;
    /* sasl.mechanisms is librdkafka's older spelling of sasl.mechanism. */
    bool old_mech = kl == strlen("sasl.mechanisms") && strncmp(kv, "sasl.mechanisms", kl) == 0;
    for (i = 0; i < NSETTINGS && !old_mech; i++)
        if (kl == strlen(settings[i].name) && strncmp(kv, settings[i].name, kl) == 0)
            break;
    if (old_mech)
        i = 1; /* sasl.mechanism */
    if (i == NSETTINGS)
        return tally_usage_error("-X %.*s: the client security settings are security.protocol, "
                                 "sasl.mechanism, sasl.username, sasl.password, ssl.ca.location, "
                                 "ssl.certificate.location, ssl.key.location, ssl.key.password, "
                                 "ssl.endpoint.identification.algorithm and "
                                 "enable.ssl.certificate.verification",
                                 (int)kl, kv);
    const char *v = eq + 1, *canon = v;
    if (settings[i].values != NULL && (canon = one_of(v, settings[i].values)) == NULL)
        return tally_usage_error("%s=%s: %s", settings[i].name, v, settings[i].values_text);
    char *copy = strdup(canon);
    if (copy == NULL)
        return tally_fail("out of memory");
    *slot(ctx, i) = copy;
    return TALLY_OK;
}

int tally_security_count(void)
{
    return (int)NSETTINGS;
}

const char *tally_security_get(const struct tally_ctx *ctx, int i, const char **name)
{
    *name = settings[i].name;
    return value_of(ctx, (size_t)i);
}

bool tally_security_any(const struct tally_ctx *ctx)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (value_of(ctx, i) != NULL)
            return true;
    return false;
}

int tally_child_argv(const char *exe, const char *bootstrap, const char *security, char **args)
{
    int k = 0;
    args[k++] = (char *)exe;
    args[k++] = "-b";
    args[k++] = (char *)bootstrap;
    if (security != NULL && security[0] != '\0') {
        args[k++] = "--command-config";
        args[k++] = (char *)security;
    }
    return k;
}

int tally_security_save(const struct tally_ctx *ctx, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    /* An older file of that name keeps its mode through open(): make it the owner's again. */
    FILE *f = fd >= 0 && fchmod(fd, 0600) == 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        return tally_fail("%s: %s", path, strerror(errno));
    }
    for (size_t i = 0; i < NSETTINGS; i++)
        if (value_of(ctx, i) != NULL)
            fprintf(f, "%s=%s\n", settings[i].name, value_of(ctx, i));
    if (fclose(f) != 0)
        return tally_fail("%s: %s", path, strerror(errno));
    return TALLY_OK;
}

int tally_security_file(struct tally_ctx *ctx, const char *path)
{
    char line[1024];
    FILE *f = fopen(path, "r");
    int rc = TALLY_OK;
    if (f == NULL)
        return tally_fail("--command-config %s: %s", path, strerror(errno));
    while (rc == TALLY_OK && fgets(line, sizeof line, f)) {
        char *p = line, *end = line + strlen(line);
        while (end > p && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
            *--end = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0' || *p == '#' || *p == '!')
            continue;
        rc = tally_security_option(ctx, p);
    }
    OPENSSL_cleanse(line, sizeof line);
    fclose(f);
    return rc;
}
