/* SPDX-License-Identifier: Apache-2.0 */
/* config: the table of known topic and broker configs (Kafka's names and defaults), their
 * validation, and the chain that gives a config its effective value: a topic's own setting,
 * then dynamic per-broker, dynamic cluster default, static (file / --set), built-in. */
#ifndef TALLY_CONFIG_H
#define TALLY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct meta;
struct props;

/* Kafka's ConfigResource types. */
#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4

/* Kafka's ConfigType (DescribeConfigs v3+) and ConfigSource values. */
enum config_type {
    CT_BOOLEAN = 1,
    CT_STRING = 2,
    CT_INT = 3,
    CT_SHORT = 4,
    CT_LONG = 5,
    CT_DOUBLE = 6, /* min and max bound it as integers (a ratio in [0, 1]); 0, 0: unbounded */
    CT_LIST = 7,
    CT_CLASS = 8,   /* a Java class name: any string (Tally loads no plugins) */
    CT_PASSWORD = 9 /* any string; DescribeConfigs marks it sensitive and hides its value */
};
enum config_source {
    CS_DYNAMIC_TOPIC = 1,
    CS_DYNAMIC_BROKER = 2,
    CS_DYNAMIC_DEFAULT_BROKER = 3,
    CS_STATIC_BROKER = 4,
    CS_DEFAULT = 5,
};

/* Row flags: validation beyond type and range, and how a value is used. */
#define CF_DEPRECATED 0x1     /* accepted, stored, described, ignored; setting it logs a WARN */
#define CF_THROTTLED_LIST 0x2 /* "*" or partition:brokerId pairs (replication throttles) */
#define CF_KAFKA_VERSION 0x4  /* a Kafka version string, e.g. 2.8 or 3.0-IV1 */
#define CF_ONLY_FALSE 0x8     /* a boolean Tally cannot honour when true: "true" is refused */
#define CF_OR_MINUS_ONE 0x10  /* numeric: -1 is allowed too, besides [min, max] */
/* Dynamic broker configs Kafka takes per broker only: the cluster-wide default resource ("")
 * refuses them (INVALID_REQUEST, as Kafka's DynamicBrokerConfig). */
#define CF_PER_BROKER 0x20
/* Kafka's listener security configs (SslConfigs.RECONFIGURABLE_CONFIGS): dynamic only under a
 * listener.name.<listener>. prefix, so the plain name is refused (INVALID_REQUEST). */
#define CF_LISTENER_ONLY 0x40

/* One known config: a topic config and the broker config that gives its default, a
 * topic-only config (broker_key NULL), or a broker-only config (topic_key NULL). Every row
 * has a doc, and either `applied` names the source file that reads it (the unit tests check
 * that the file mentions the key, quoted) or `applied` is NULL and the doc says "no effect in
 * Tally" (the unit tests check that no source file reads the key). A row applied only from
 * the static configuration, whose dynamic value is stored without effect, says so too. */
struct config_def {
    const char *topic_key;
    const char *broker_key;
    enum config_type type;
    const char *def;            /* the built-in default; NULL = none (Kafka's null) */
    int64_t min, max;           /* for numeric types */
    const char *const *allowed; /* enumerated values (each item, for CT_LIST); NULL = any */
    bool dynamic;               /* broker side: may be altered at run time (else read-only) */
    const char *doc;            /* DescribeConfigs' Documentation and the CLI's help */
    unsigned flags;             /* CF_* */
    const char *applied;        /* the source file that reads it, or NULL: no effect */
};

/* The config table, in order (table.c): topic configs first, then broker-only ones. Look-ups,
 * validation and help are in check.c. */
const struct config_def *config_defs(size_t *n);
const struct config_def *config_find_topic(const char *key);
const struct config_def *config_find_broker(const char *key);
/* The row's own name: its topic key, else its broker key. */
const char *config_name(const struct config_def *d);
/* "boolean", "string", "int", "short", "long", "double", "list", "class", "password" (the
 * CLI's help). */
const char *config_type_name(enum config_type t);

/* Checks a value against a definition: type, range, enumeration (every item of a list),
 * and the row's CF_ checks. Returns 0 or ERR_INVALID_CONFIG with a reason in why. */
int config_validate(const struct config_def *d, const char *value, char *why, size_t whylen);

/* Prints every config with its type, default, broker synonym, dynamic or read-only, and its
 * documentation (tally configs --help). */
void config_print_help(FILE *f);

/* The effective value of a config for a resource and where it came from. For a topic:
 * its own setting, else the broker default chain; for a broker (name = node id): dynamic
 * per-broker, dynamic cluster default, static config, built-in default. */
struct config_ctx {
    const struct meta *meta;
    const struct props *props; /* static configuration (file + --set) */
    int32_t node_id;
};
const char *config_effective(const struct config_ctx *c, int8_t rtype, const char *rname,
                             const struct config_def *d, enum config_source *src);

/* The effective value of topic config `key` for `topic` parsed as an integer, or `def`. */
int64_t config_topic_int(const struct config_ctx *c, const char *topic, const char *key,
                         int64_t def);
/* The effective value of topic config `key` for `topic` (never NULL for a known key). */
const char *config_topic_str(const struct config_ctx *c, const char *topic, const char *key);

/* The effective value of broker config `key` for this node (dynamic per-broker, dynamic
 * cluster default, static, built-in) parsed as an integer, or `def` (unknown key, no value,
 * not a number). For dynamic broker configs read where they are used. */
int64_t config_broker_int(const struct config_ctx *c, const char *key, int64_t def);

/* One synonym of a config as DescribeConfigs lists them, most specific first. */
struct config_synonym {
    const char *name;
    const char *value;
    enum config_source source;
};
/* The synonyms of row d for a resource (RESOURCE_TOPIC: rname is the topic; RESOURCE_BROKER:
 * rname is a broker id or "" for the cluster default): the topic's own value, then each
 * level that sets the broker key or one of its coarser aliases (log.retention.hours, ...) —
 * dynamic per-broker, dynamic cluster default, static — and last the built-in default.
 * Writes at most cap entries (CONFIG_MAX_SYNONYMS is always enough); returns the count. */
#define CONFIG_MAX_SYNONYMS 16
size_t config_synonyms(const struct config_ctx *c, int8_t rtype, const char *rname,
                       const struct config_def *d, struct config_synonym *out, size_t cap);

#endif
