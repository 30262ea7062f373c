/* SPDX-License-Identifier: Apache-2.0 */
/* config check: look-ups in the config table (table.c), the validation of a value against its
 * row, and the help text of `tally configs --help`. Like table.c it depends on nothing but
 * base/err.h, so that the command-line tool links it too. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "base/err.h"

const struct config_def *config_find_topic(const char *key)
{
    size_t n;
    const struct config_def *defs = config_defs(&n);
    for (size_t i = 0; key && i < n; i++)
        if (defs[i].topic_key && strcmp(defs[i].topic_key, key) == 0)
            return &defs[i];
    return NULL;
}

const struct config_def *config_find_broker(const char *key)
{
    size_t n;
    const struct config_def *defs = config_defs(&n);
    for (size_t i = 0; key && i < n; i++)
        if (defs[i].broker_key && strcmp(defs[i].broker_key, key) == 0)
            return &defs[i];
    return NULL;
}

const char *config_name(const struct config_def *d)
{
    return d->topic_key ? d->topic_key : d->broker_key;
}

const char *config_type_name(enum config_type t)
{
    switch (t) {
    case CT_BOOLEAN:
        return "boolean";
    case CT_STRING:
        return "string";
    case CT_INT:
        return "int";
    case CT_SHORT:
        return "short";
    case CT_LONG:
        return "long";
    case CT_DOUBLE:
        return "double";
    case CT_LIST:
        return "list";
    case CT_CLASS:
        return "class";
    case CT_PASSWORD:
        return "password";
    default:
        return "unknown";
    }
}

static bool in_set(const char *const *allowed, const char *s, size_t len)
{
    for (const char *const *v = allowed; *v; v++)
        if (strlen(*v) == len && strncmp(*v, s, len) == 0)
            return true;
    return false;
}

static bool all_digits(const char *s, size_t len)
{
    if (len == 0 || len > 9)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* leader/follower.replication.throttled.replicas: "*" or partition:brokerId[,...], blanks
 * around items allowed, as Kafka's ThrottledReplicaListValidator. */
static bool throttled_list_valid(const char *v)
{
    const char *p = v;
    while (*p == ' ')
        p++;
    if (*p == '\0')
        return true;
    if (p[0] == '*') {
        for (p++; *p == ' '; p++)
            ;
        return *p == '\0';
    }
    for (;;) {
        size_t len;
        const char *colon;
        while (*p == ' ')
            p++;
        len = strcspn(p, ",");
        while (len > 0 && p[len - 1] == ' ')
            len--;
        colon = memchr(p, ':', len);
        if (colon == NULL || !all_digits(p, (size_t)(colon - p)) ||
            !all_digits(colon + 1, len - (size_t)(colon - p) - 1))
            return false;
        p += strcspn(p, ",");
        if (*p == '\0')
            return true;
        p++;
    }
}

/* The inter-broker protocol versions of Kafka 3.9 (its MetadataVersion, as the valid values of
 * log.message.format.version list them). A release's own name (0.10.0, 2.8, 3.9) stands for
 * its latest -IVn; the four releases before 0.10.0 have no -IVn form. */
static const char *const kafka_versions[] = {
    "0.8.0",      "0.8.1",      "0.8.2",      "0.9.0",      "0.10.0-IV0", "0.10.0-IV1",
    "0.10.1-IV0", "0.10.1-IV1", "0.10.1-IV2", "0.10.2-IV0", "0.11.0-IV0", "0.11.0-IV1",
    "0.11.0-IV2", "1.0-IV0",    "1.1-IV0",    "2.0-IV0",    "2.0-IV1",    "2.1-IV0",
    "2.1-IV1",    "2.1-IV2",    "2.2-IV0",    "2.2-IV1",    "2.3-IV0",    "2.3-IV1",
    "2.4-IV0",    "2.4-IV1",    "2.5-IV0",    "2.6-IV0",    "2.7-IV0",    "2.7-IV1",
    "2.7-IV2",    "2.8-IV0",    "2.8-IV1",    "3.0-IV0",    "3.0-IV1",    "3.1-IV0",
    "3.2-IV0",    "3.3-IV0",    "3.3-IV1",    "3.3-IV2",    "3.3-IV3",    "3.4-IV0",
    "3.5-IV0",    "3.5-IV1",    "3.5-IV2",    "3.6-IV0",    "3.6-IV1",    "3.6-IV2",
    "3.7-IV0",    "3.7-IV1",    "3.7-IV2",    "3.7-IV3",    "3.7-IV4",    "3.8-IV0",
    "3.9-IV0",    "4.0-IV0",    "4.0-IV1",    NULL,
};

/* Whether the first len bytes of key name a known version, or a release (a known version up
 * to its "-IV"). */
static bool kafka_version_known(const char *key, size_t len)
{
    for (const char *const *v = kafka_versions; *v; v++) {
        const char *iv = strstr(*v, "-IV");
        size_t rel = iv ? (size_t)(iv - *v) : strlen(*v);
        if ((strlen(*v) == len || rel == len) && strncmp(*v, key, len) == 0)
            return true;
    }
    return false;
}

/* A Kafka version string as Kafka's MetadataVersion.fromVersionString reads it: only the first
 * three dot-separated parts count for 0.x versions and the first two for later ones, so
 * 0.10.0.0 is 0.10.0 and 2.8.1 is 2.8; what remains must be a known version or release
 * (0.10.0, 0.10.0-IV1, 2.8-IV0, 3.0). Trailing empty parts are dropped before counting, as
 * Java's String.split does ("2.8." has two parts and is therefore looked up whole: refused). */
static bool kafka_version_valid(const char *v)
{
    size_t len = strlen(v), stripped = len, parts = 0, keep = v[0] == '0' && v[1] == '.' ? 3 : 2;
    while (stripped > 0 && v[stripped - 1] == '.')
        stripped--;
    if (stripped > 0) {
        parts = 1;
        for (size_t i = 0; i < stripped; i++)
            parts += v[i] == '.';
    }
    if (keep >= parts)
        return kafka_version_known(v, len);
    size_t end = 0;
    for (size_t dots = 0; end < len; end++)
        if (v[end] == '.' && ++dots == keep)
            break;
    return kafka_version_known(v, end);
}

int config_validate(const struct config_def *d, const char *value, char *why, size_t whylen)
{
    const char *name = config_name(d);
    if (value == NULL) {
        snprintf(why, whylen, "%s needs a value", name);
        return ERR_INVALID_CONFIG;
    }
    if ((d->flags & CF_ONLY_FALSE) && strcmp(value, "true") == 0) {
        snprintf(why, whylen,
                 "Invalid value true for configuration %s: Tally has no tiered (remote) "
                 "storage, so it cannot be enabled",
                 name);
        return ERR_INVALID_CONFIG;
    }
    if ((d->flags & CF_THROTTLED_LIST) && !throttled_list_valid(value)) {
        snprintf(why, whylen,
                 "Invalid value %s for configuration %s: expected \"*\" or a list of "
                 "partition:brokerId pairs",
                 value, name);
        return ERR_INVALID_CONFIG;
    }
    if ((d->flags & CF_KAFKA_VERSION) && !kafka_version_valid(value)) {
        snprintf(why, whylen,
                 "Invalid value %s for configuration %s: expected a Kafka version such as 2.8 "
                 "or 3.0-IV1",
                 value, name);
        return ERR_INVALID_CONFIG;
    }
    if (d->allowed && d->type == CT_LIST) {
        /* Every item of the list must be allowed (blanks around items are dropped). */
        const char *p = value;
        bool any = false;
        for (;;) {
            size_t len;
            while (*p == ' ')
                p++;
            len = strcspn(p, ",");
            while (len > 0 && p[len - 1] == ' ')
                len--;
            if (!in_set(d->allowed, p, len))
                break;
            any = true;
            p += strcspn(p, ",");
            if (*p == '\0')
                return 0;
            p++;
        }
        (void)any;
        snprintf(why, whylen, "Invalid value %s for configuration %s", value, name);
        return ERR_INVALID_CONFIG;
    }
    if (d->allowed) {
        if (in_set(d->allowed, value, strlen(value)))
            return 0;
        snprintf(why, whylen, "Invalid value %s for configuration %s", value, name);
        return ERR_INVALID_CONFIG;
    }
    if (d->type == CT_DOUBLE) {
        char *end;
        errno = 0;
        double x = strtod(value, &end);
        bool bounded = d->min != 0 || d->max != 0;
        if (errno || end == value || *end != '\0' || x != x ||
            (bounded && (!(x >= (double)d->min) || !(x <= (double)d->max)))) {
            if (bounded)
                snprintf(why, whylen,
                         "Invalid value %s for configuration %s: expected a number in "
                         "[%lld, %lld]",
                         value, name, (long long)d->min, (long long)d->max);
            else
                snprintf(why, whylen, "Invalid value %s for configuration %s: expected a number",
                         value, name);
            return ERR_INVALID_CONFIG;
        }
    }
    if (d->type == CT_INT || d->type == CT_LONG || d->type == CT_SHORT) {
        char *end;
        errno = 0;
        long long x = strtoll(value, &end, 10);
        bool minus_one = (d->flags & CF_OR_MINUS_ONE) && x == -1;
        if (errno || end == value || *end != '\0' || ((x < d->min || x > d->max) && !minus_one)) {
            snprintf(why, whylen,
                     "Invalid value %s for configuration %s: expected an integer in "
                     "[%lld, %lld]%s",
                     value, name, (long long)d->min, (long long)d->max,
                     d->flags & CF_OR_MINUS_ONE ? " or -1" : "");
            return ERR_INVALID_CONFIG;
        }
    }
    return 0;
}

void config_print_help(FILE *f)
{
    size_t n;
    const struct config_def *defs = config_defs(&n);
    fprintf(f, "Topic configs (tally configs alter --topic T --set KEY=VALUE), with the broker "
               "config that sets their default:\n\n");
    for (size_t i = 0; i < n; i++) {
        const struct config_def *d = &defs[i];
        if (d->topic_key == NULL)
            continue;
        fprintf(f, "  %s (%s, default %s%s%s)\n", d->topic_key, config_type_name(d->type),
                d->def && *d->def ? d->def : "\"\"", d->broker_key ? "; broker default: " : "",
                d->broker_key ? d->broker_key : "");
        fprintf(f, "      %s\n", d->doc);
    }
    fprintf(f, "\nBroker-only configs (tally configs alter --broker ID|--broker-defaults); "
               "\"dynamic\" ones change without a restart:\n\n");
    for (size_t i = 0; i < n; i++) {
        const struct config_def *d = &defs[i];
        if (d->topic_key != NULL)
            continue;
        fprintf(f, "  %s (%s, default %s, %s)\n", d->broker_key, config_type_name(d->type),
                d->def == NULL ? "none"
                : *d->def      ? d->def
                               : "\"\"",
                d->dynamic ? "dynamic" : "read-only");
        fprintf(f, "      %s\n", d->doc);
    }
}
