/* SPDX-License-Identifier: Apache-2.0 */
/* meta: cluster metadata as a replicated log on canonical raft (libraft + libuv). The
 * controller is the raft leader; every broker applies committed record batches to an
 * in-memory image (topics, partitions, configs, brokers, producer-id blocks) and can be
 * asked about it synchronously. Writes are proposed as batches of records that apply
 * atomically or not at all; the apply step itself validates them (deterministically on every
 * node), so two racing proposals cannot both create the same topic. */
#ifndef TALLY_META_H
#define TALLY_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

struct meta;
struct meta_image;
struct tclock;

/* ---- the image ------------------------------------------------------------------------- */

/* A config entry: resource configs keep only the keys set explicitly. */
struct meta_config_entry {
    char *key;
    char *value;
};

struct meta_partition {
    int32_t partition;
    int32_t leader; /* node id, -1 = none */
    int32_t leader_epoch;
    int32_t partition_epoch;
    int32_t n_replicas;
    int32_t *replicas;
    int32_t n_isr;
    int32_t *isr;
    /* KIP-704: 0 = RECOVERED, 1 = RECOVERING (an unclean leader not yet confirmed). */
    int8_t leader_recovery_state;
    /* KIP-455 reassignment in progress: replicas being added (catching up, not yet in the
     * ISR) and being removed (left once the new ones are in sync). Both are also in
     * `replicas`. Empty when none. */
    int32_t n_adding;
    int32_t *adding;
    int32_t n_removing;
    int32_t *removing;
    /* KIP-966 eligible leader replicas: replicas outside the ISR that hold every record
     * committed so far (they left the ISR while it fell below min.insync.replicas, after
     * which the HW does not advance, and have not registered after an unclean shutdown
     * since). Disjoint from the ISR; empty when none. controller_sm.h has the rules. */
    int32_t n_elr;
    int32_t *elr;
};

struct meta_topic {
    char *name;
    uint8_t id[16]; /* topic id (UUID) */
    int32_t n_partitions;
    struct meta_partition *partitions; /* indexed by partition number */
    int32_t n_configs;
    struct meta_config_entry *configs;
};

/* One advertised listener of a broker, as BrokerRegistration lists them. */
struct meta_listener {
    char *name; /* "PLAINTEXT", ... */
    char *host;
    int32_t port;
    int16_t
        security_protocol; /* Kafka's numbering: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL */
};

struct meta_broker {
    int32_t id;
    char *host; /* advertised Kafka listener (the first of `listeners`) */
    int32_t port;
    char *rack; /* NULL = none */
    bool fenced;
    /* The broker epoch: the metadata offset (meta_image_offset) at which its current
     * registration applied; a later registration of the same id gets a new one. 0 for a
     * registration of the old record type (REGISTER_BROKER). */
    int64_t epoch;
    uint8_t incarnation[16]; /* the registering process's random id; zeros for old records */
    bool shutting_down;      /* in controlled shutdown (BrokerHeartbeat WantShutDown) */
    /* The metadata offset at which the last change that fenced it applied (0: none; not
     * kept in snapshots: a restored fenced broker gets the snapshot's offset): the batch
     * that fenced it also moved its leaderships, so it is caught up only once it has applied
     * that far. */
    int64_t fenced_at;
    int32_t n_listeners;
    struct meta_listener *listeners;
    int32_t n_dirs;
    uint8_t (*dirs)[16]; /* its log directories' ids (meta.properties directory.id) */
};

/* Image look-ups. Returned pointers stay valid until control next returns to the event
 * loop (an apply may replace them); copy what must live longer. */
const struct meta_topic *meta_topic_by_name(const struct meta *m, const char *name);
const struct meta_topic *meta_topic_by_id(const struct meta *m, const uint8_t id[16]);
/* All topics, in name order; *n receives the count. */
const struct meta_topic *const *meta_topics(const struct meta *m, size_t *n);
/* Whether two topic names are one once '.' and '_' count as the same character (Kafka
 * refuses such a pair: its metric names cannot tell them apart). Applying a TOPIC record
 * whose name collides with another topic's fails with ERR_INVALID_TOPIC_EXCEPTION. */
bool meta_topic_names_collide(const char *x, const char *y);
/* All registered brokers in id order; *n receives the count. */
const struct meta_broker *meta_brokers(const struct meta *m, size_t *n);
const struct meta_broker *meta_broker_by_id(const struct meta *m, int32_t id);
/* The advertised listener of `b` named `name` (a net_session's listener), its first one (the
 * inter-broker listener) when `name` is NULL, or NULL when it has none of that name: a client
 * is told only the addresses of the listener it connected to (Kafka's rule), and a broker
 * without that listener is left out. */
const struct meta_listener *meta_broker_listener(const struct meta_broker *b, const char *name);
/* Every SCRAM credential, sorted by user then mechanism; *n receives the count. */
const struct meta_scram *meta_scram_credentials(const struct meta *m, size_t *n);
/* User `user`'s credential for `mechanism`, or NULL. */
const struct meta_scram *meta_scram_find(const struct meta *m, const char *user, int8_t mechanism);
/* The ACLs of the image (never NULL). Valid until control next returns to the event loop. */
const struct meta_acls *meta_acls(const struct meta *m);
/* Every client-quota entity with at least one key set, in entity order (user part first,
 * absent < default < named, then the client-id part likewise); *n receives the count. */
const struct meta_quota *meta_quotas(const struct meta *m, size_t *n);
/* The quota `key` that applies to a connection of user `user` (the principal's name without
 * "User:") and client id `client_id` (NULL counts as ""), by Kafka's precedence: the first of
 * user+client-id, user+default client-id, user, default user+client-id, default user+default
 * client-id, default user, client-id, default client-id that sets `key`. Returns false when
 * none does (no quota). */
bool meta_quota_lookup(const struct meta *m, const char *user, const char *client_id, int key,
                       double *value);
/* A config set explicitly on a resource, or NULL. resource_type uses Kafka's numbering
 * (2 = topic, 4 = broker); a broker resource name is its id in decimal, "" = cluster-wide
 * default. */
const char *meta_config_get(const struct meta *m, int8_t resource_type, const char *name,
                            const char *key);
/* Every config set explicitly on a resource; *n receives the count (0 and NULL if none). */
const struct meta_config_entry *meta_configs(const struct meta *m, int8_t resource_type,
                                             const char *name, int32_t *n);

/* The cluster id (from the config this meta was started with). */
const char *meta_cluster_id(const struct meta *m);
/* The raft leader's node id, or -1 when none is known. */
int32_t meta_controller_id(const struct meta *m);
bool meta_is_controller(const struct meta *m);

/* One member of the metadata quorum as its leader sees it (DescribeQuorum's ReplicaState).
 * Offsets are raft log indexes: the metadata log's own positions. */
struct meta_quorum_replica {
    int32_t id;
    int64_t log_end_offset; /* the leader's own last index; a follower's highest index known
                               replicated; -1 while the leader has not heard of any */
    /* Wall-clock ms of its last AppendEntries answer to this leader (Kafka's follower fetch);
     * -1 for the leader itself and until it answered in this term. */
    int64_t last_fetch_ms;
    /* Wall-clock ms of its last answer showing it caught up: its log reached what the
     * leader's had at its previous answer (Kafka's rule, KIP-836). Now for the leader
     * itself; -1 until seen in this term. */
    int64_t last_caught_up_ms;
};

/* The quorum as DescribeQuorum answers it: the raft leader (this node), its term (Kafka's
 * leader epoch), the commit index (Kafka's high watermark), the voters (the leader among
 * them) and the observers (non-voting standbys), each in configuration order. */
struct meta_quorum {
    int32_t leader_id;
    int32_t leader_epoch;
    int64_t high_watermark;
    size_t n_voters, n_observers;
    struct meta_quorum_replica *voters, *observers; /* allocated in the caller's arena */
};

/* Fills *out from libraft's state. Only the raft leader knows its followers' positions:
 * elsewhere returns ERR_NOT_CONTROLLER (and out->leader_id = the leader known, or -1). Returns
 * 0, or ERR_NOMEM when `a` is full (the arrays come from `a`). */
struct arena;
int meta_describe_quorum(const struct meta *m, struct arena *a, struct meta_quorum *out);
/* This node's view of the metadata quorum's raft log, for metrics: the current term (Kafka's
 * quorum epoch), the highest index known committed, and the last index applied to the image
 * (raft log indexes). Any node, any time after meta_start. */
struct meta_raft_state {
    uint64_t term;
    uint64_t commit_index;
    uint64_t applied_index;
};
void meta_raft_state(const struct meta *m, struct meta_raft_state *out);
/* The first producer id no block has covered yet (the maximum of first_id + size over every
 * PRODUCER_IDS record applied; 0 before any). A broker asks for its next block by proposing
 * PRODUCER_IDS with first_id = this value; if another broker's block landed first, the apply
 * step rejects the later one with DUPLICATE_RESOURCE (re-read and retry), so no two blocks
 * overlap. A size <= 0 or a negative first_id is INVALID_REQUEST. */
int64_t meta_next_producer_id(const struct meta *m);

/* ---- records and proposals -------------------------------------------------------------- */

enum meta_record_type {
    META_REC_REGISTER_BROKER = 1, /* broker: id, host, port, rack; unfenced on register (old
                                     form: read from old logs and used by tests; epoch 0) */
    META_REC_FENCE_BROKER = 2,    /* broker.id; fenced = true/false */
    META_REC_TOPIC = 3,           /* topic.name, topic.id: a new topic, no partitions yet */
    META_REC_PARTITION = 4,       /* a new partition (or a change of one: see the rules) */
    META_REC_REMOVE_TOPIC = 5,    /* topic.id */
    META_REC_CONFIG = 6,          /* config.*: value NULL = delete the key */
    META_REC_PRODUCER_IDS = 7,    /* producer_ids: a block of ids handed to a broker */
    /* A registration as BrokerRegistration makes it: broker.* with incarnation, listeners
     * and dirs. The broker starts fenced, not shutting down, with epoch = the metadata
     * offset of this batch. Replaces an earlier registration of the id. */
    META_REC_REGISTER_BROKER2 = 8,
    /* broker_change: a registered broker's fenced / shutting_down flags, for the epoch
     * named (another epoch: STALE_BROKER_EPOCH, the whole batch refused). */
    META_REC_BROKER_CHANGE = 9,
    /* partition.*, all fields including recovery state, reassignment and ELR: a change of an
     * existing partition (compare-and-set: partition_epoch must be the current one + 1). */
    META_REC_PARTITION_CHANGE = 10,
    /* scram: a user's SCRAM credential for one mechanism (KIP-554), salted and iterated, never
     * the password: set (replacing that user's credential for the mechanism), or deleted
     * when iterations is 0 (deleting one that does not exist changes nothing). */
    META_REC_SCRAM = 11,
    /* acl: one access control entry (Kafka's AccessControlEntryRecord, KRaft record type
     * 23), identified by its id; another with the same id → DUPLICATE_RESOURCE. The fields
     * must be concrete (no ANY / MATCH / UNKNOWN), names and principal not empty (else
     * INVALID_REQUEST). */
    META_REC_ACL = 12,
    /* remove_acl.id: removes that entry (RemoveAccessControlEntryRecord, type 24); an id that
     * is not there → RESOURCE_NOT_FOUND. */
    META_REC_REMOVE_ACL = 13,
    /* quota: one key of a client-quota entity (Kafka's ClientQuotaRecord, type 14): set to
     * value, or removed (removing one not set changes nothing). The entity has a user part, a
     * client-id part or both; a part's name NULL is that type's default entity. */
    META_REC_CLIENT_QUOTA = 14,
};

/* The client-quota keys (Kafka's names in meta_quota_key_name). */
enum meta_quota_key {
    META_QUOTA_PRODUCER_BYTE_RATE = 0,
    META_QUOTA_CONSUMER_BYTE_RATE = 1,
    META_QUOTA_REQUEST_PERCENTAGE = 2,
    META_QUOTA_CONTROLLER_MUTATION_RATE = 3,
    META_QUOTA_N_KEYS = 4,
};
/* Kafka's name of a key ("producer_byte_rate", ...), or NULL out of range. */
const char *meta_quota_key_name(int key);
/* The key of a Kafka name, or -1 for one that is not a quota key. */
int meta_quota_key_parse(const char *name);

/* A client-quota entity: a user part, a client-id part, or both (never neither). A present
 * part with a NULL name is the default entity of its type (Kafka's <default>). */
struct meta_quota_entity {
    bool has_user, has_client_id;
    const char *user, *client_id;
};

/* One entity of the image with the keys set on it (bit k of `set`: values[k] is set). */
struct meta_quota {
    bool has_user, has_client_id;
    char *user, *client_id; /* NULL: default */
    uint8_t set;
    double values[META_QUOTA_N_KEYS];
};

/* KIP-554's mechanism numbers. */
#define META_SCRAM_SHA_256 1
#define META_SCRAM_SHA_512 2
#define META_SCRAM_MAX_SALT 64
#define META_SCRAM_MAX_KEY 64

/* One SCRAM credential of the image (RFC 5802's StoredKey and ServerKey, with the salt and
 * iteration count the client needs to derive its proof). */
struct meta_scram {
    char *user;
    int8_t mechanism;   /* META_SCRAM_SHA_256 or META_SCRAM_SHA_512 */
    int32_t iterations; /* >= 1 */
    int32_t salt_len;   /* 1..META_SCRAM_MAX_SALT */
    uint8_t salt[META_SCRAM_MAX_SALT];
    int32_t key_len; /* 32 (SHA-256) or 64 (SHA-512) */
    uint8_t stored_key[META_SCRAM_MAX_KEY];
    uint8_t server_key[META_SCRAM_MAX_KEY];
};

/* ---- ACLs (acls.c): Kafka's StandardAuthorizer data ------------------------------------ */

/* Kafka's wire codes for the ACL enums (resource types and operations are proto.h's
 * PROTO_RESOURCE_* and PROTO_ACL_OP_*; ANY = 1 in each, UNKNOWN = 0). */
#define META_ACL_ANY 1
#define META_ACL_OP_ALL 2
#define META_ACL_PATTERN_MATCH 2
#define META_ACL_PATTERN_LITERAL 3
#define META_ACL_PATTERN_PREFIXED 4
#define META_ACL_DENY 2
#define META_ACL_ALLOW 3
/* The resource name that matches every name of its type (LITERAL only). */
#define META_ACL_WILDCARD "*"

/* One access control entry: `principal` from `host` is allowed or denied `operation` on the
 * resources of `resource_type` whose name is `resource_name` (LITERAL; "*" = all) or starts
 * with it (PREFIXED). Principal "User:*" is every user; host "*" every host. */
struct meta_acl {
    uint8_t id[16];
    int8_t resource_type;
    int8_t pattern_type; /* META_ACL_PATTERN_LITERAL or _PREFIXED */
    int8_t operation;    /* PROTO_ACL_OP_* or META_ACL_OP_ALL */
    int8_t permission;   /* META_ACL_DENY or META_ACL_ALLOW */
    char *resource_name;
    char *principal;
    char *host;
    size_t name_len; /* strlen(resource_name) */
};

/* The ACLs of an image, indexed by resource (type, pattern type, name) so that a check looks
 * at the entries of one literal name, the wildcard and each prefix length present — never at
 * every entry. Opaque; owned by its image. */
struct meta_acls;

struct meta_acls *meta_acls_new(void);
void meta_acls_free(struct meta_acls *acls);
/* Copies `a` in (strings duplicated, name_len computed). Returns 0, ERR_EXISTS for an id that
 * is there already, or ERR_NOMEM (nothing changed). */
int meta_acls_add(struct meta_acls *acls, const struct meta_acl *a);
/* Removes the entry with `id`; false when there is none. */
bool meta_acls_remove(struct meta_acls *acls, const uint8_t id[16]);
const struct meta_acl *meta_acls_find(const struct meta_acls *acls, const uint8_t id[16]);
/* Every entry in id order; *n receives the count. Valid until the next change. */
const struct meta_acl *const *meta_acls_all(const struct meta_acls *acls, size_t *n);
/* An entry with the same binding as `a` (all fields but the id), or NULL. */
const struct meta_acl *meta_acls_find_binding(const struct meta_acls *acls,
                                              const struct meta_acl *a);

/* The question an API asks: may `principal` ("User:alice") from `host` (an IP address) do
 * `operation` (PROTO_ACL_OP_*, never ALL or ANY) on the resource (type, name)? */
struct meta_acl_check {
    const char *principal;
    const char *host;
    int8_t operation;
    int8_t resource_type;
    const char *resource_name;
};

/* Kafka's StandardAuthorizer rules on the entries that match the resource (its literal
 * name, the literal wildcard, every PREFIXED entry that is a prefix of the name) and the
 * principal (or "User:*") and host (or "*"): a DENY of the operation (or ALL) wins; else an
 * ALLOW of it, of ALL, or of an operation that implies it (READ, WRITE, DELETE and ALTER
 * imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS) allows; else, when no entry matches
 * the resource at all (whoever it names), `allow_if_no_acl` decides
 * (allow.everyone.if.no.acl.found); else denied. Super users are the caller's business. */
bool meta_acls_authorize(const struct meta_acls *acls, const struct meta_acl_check *c,
                         bool allow_if_no_acl);

/* Kafka's authorizeByResourceType: whether `principal` from `host` may do `op` on some
 * resource of `type` — an ALLOW that applies to a resource no DENY covers; without any entry
 * of the type, `allow_if_no_acl`. (InitProducerId without a transactional id asks it: WRITE
 * on any topic.) */
bool meta_acls_authorize_any(const struct meta_acls *acls, const char *principal, const char *host,
                             int8_t op, int8_t type, bool allow_if_no_acl);

/* A DescribeAcls / DeleteAcls filter: resource_type, operation and permission may be ANY (1);
 * names NULL = any; pattern_type ANY (every pattern, exact name), MATCH (the entries that
 * would apply to a resource of that literal name: its literal, the wildcard, its prefixes),
 * LITERAL or PREFIXED (exact). */
struct meta_acl_filter {
    int8_t resource_type;
    const char *resource_name;
    int8_t pattern_type;
    const char *principal;
    const char *host;
    int8_t operation;
    int8_t permission;
};
bool meta_acl_filter_match(const struct meta_acl_filter *f, const struct meta_acl *a);

/* One record, as proposed. Pointers are borrowed for the duration of meta_propose. */
struct meta_record {
    enum meta_record_type type;
    union {
        struct {
            int32_t id, port;
            const char *host, *rack;
            /* REGISTER_BROKER2 only (host/port: the first listener's) */
            uint8_t incarnation[16];
            int32_t n_listeners;
            const struct meta_listener *listeners;
            int32_t n_dirs;
            const uint8_t (*dirs)[16];
        } broker;
        struct {
            int32_t id;
            bool fenced;
        } fence;
        struct {
            int32_t id;
            int64_t epoch;
            int8_t fenced;        /* -1 unchanged, 0 unfence, 1 fence */
            int8_t shutting_down; /* -1 unchanged, 0, 1 */
        } broker_change;
        struct {
            const char *name;
            uint8_t id[16];
        } topic;
        struct {
            uint8_t topic_id[16];
            int32_t partition, leader, leader_epoch, partition_epoch;
            int32_t n_replicas, n_isr;
            const int32_t *replicas, *isr;
            /* PARTITION_CHANGE only (PARTITION: 0 and none) */
            int8_t leader_recovery_state;
            int32_t n_adding, n_removing;
            const int32_t *adding, *removing;
            int32_t n_elr;
            const int32_t *elr;
        } partition;
        struct {
            uint8_t topic_id[16];
        } remove_topic;
        struct {
            int8_t resource_type;
            const char *resource_name, *key, *value;
        } config;
        struct {
            int32_t broker_id;
            int64_t first_id; /* block covers [first_id, first_id + size) */
            int32_t size;
        } producer_ids;
        struct {
            uint8_t id[16];
            int8_t resource_type, pattern_type, operation, permission;
            const char *resource_name, *principal, *host;
        } acl;
        struct {
            uint8_t id[16];
        } remove_acl;
        struct {
            const char *user;
            int8_t mechanism;
            int32_t iterations; /* 0: delete */
            int32_t salt_len, key_len;
            const uint8_t *salt, *stored_key, *server_key; /* set only */
        } scram;
        struct {
            struct meta_quota_entity entity;
            int8_t key;   /* enum meta_quota_key */
            double value; /* > 0 and finite when set */
            bool remove;
        } quota;
    } u;
};

/* Called once a proposal has been applied, or has failed: err is 0, a Kafka error code the
 * apply step chose for the whole batch (TOPIC_ALREADY_EXISTS, UNKNOWN_TOPIC_ID,
 * INVALID_PARTITIONS, ...), ERR_NOT_CONTROLLER if leadership was lost, or ERR_SHUTDOWN. */
typedef void (*meta_propose_cb)(void *arg, int err);

/* Proposes `n` records as one atomic batch. Only the controller may propose: elsewhere the
 * call returns ERR_NOT_CONTROLLER at once and cb is not called. On 0, cb is called exactly
 * once, after the batch applied on this node (so the image already shows it). The records
 * are encoded before this returns; the caller keeps ownership of `recs`.
 * Apply rules: TOPIC with an existing name → TOPIC_ALREADY_EXISTS; PARTITION of an unknown
 * topic id → UNKNOWN_TOPIC_ID; PARTITION numbers must be contiguous from the current count
 * (else INVALID_PARTITIONS) unless replacing an existing one; REMOVE_TOPIC unknown →
 * UNKNOWN_TOPIC_ID. A batch that fails a rule changes nothing. */
int meta_propose(struct meta *m, const struct meta_record *recs, size_t n, meta_propose_cb cb,
                 void *arg);
/* Further apply rules (records apply in order, so one batch may create a topic and then its
 * partitions and configs): TOPIC with an empty name → INVALID_TOPIC_EXCEPTION, with an id
 * already in use → TOPIC_ALREADY_EXISTS; FENCE_BROKER of an unregistered broker →
 * BROKER_NOT_AVAILABLE; CONFIG on a topic (resource type 2) that does not exist →
 * UNKNOWN_TOPIC_OR_PARTITION, with an empty key → INVALID_CONFIG; PRODUCER_IDS as
 * meta_next_producer_id says.
 * Partition changes are compare-and-set on the partition epoch, so that two decisions taken
 * on the same state cannot both apply: a PARTITION record for a partition that exists, and
 * every PARTITION_CHANGE, must carry partition_epoch = the current one + 1 and a leader epoch
 * not below the current one (else INVALID_UPDATE_VERSION); PARTITION_CHANGE of a partition
 * that does not exist → UNKNOWN_TOPIC_ID / INVALID_PARTITIONS. Replicas, ISR, adding,
 * removing and ELR hold no duplicate; the ISR, the ELR and a leader >= 0 are replicas, and no
 * replica is in both the ISR and the ELR (else INVALID_REQUEST). A PARTITION record leaves
 * the ELR empty. A CONFIG record that sets or deletes min.insync.replicas (of a topic, or of
 * a broker resource, the cluster-wide default included) empties the ELR of every partition
 * it may concern that has a leader: with a lower minimum the HW may advance without them (a
 * leaderless partition's HW cannot move, so its ELR stays valid and is kept).
 * BROKER_CHANGE of an unregistered broker → BROKER_NOT_AVAILABLE, of another epoch than the
 * registration's → STALE_BROKER_EPOCH. */

/* The metadata offset: how many batches this image has applied (or refused) since the log
 * began, snapshots included. Every node counts the same batches, so it orders the image's
 * versions across the cluster: a broker's epoch is the offset of its registration, and a
 * BrokerHeartbeat's CurrentMetadataOffset says how far the broker has applied. */
int64_t meta_offset(const struct meta *m);
int64_t meta_image_offset(const struct meta_image *img);
/* The image itself, for the controller's decisions (controller/controller_sm.h), which are
 * functions of an image. Valid until control next returns to the event loop. */
const struct meta_image *meta_get_image(const struct meta *m);

/* Called after every batch applied to the image (on every node, including during replay at
 * start, and with the records that rebuild the image after a snapshot restore), for modules
 * that react to metadata (partitions to open, ...). Runs inside the apply: keep it short. */
typedef void (*meta_apply_cb)(void *arg, const struct meta_record *recs, size_t n);

/* Subscribes a module to applied batches: `cb(arg, ...)` runs after every batch applied from
 * now on, after meta_options.on_apply and the earlier subscribers. At most
 * META_MAX_SUBSCRIBERS. Returns 0, ERR_EXISTS for a (cb, arg) pair already subscribed, or
 * ERR_NOMEM when full. A subscriber must unsubscribe before it goes (it may do so from its
 * own callback). */
#define META_MAX_SUBSCRIBERS 8
int meta_subscribe(struct meta *m, meta_apply_cb cb, void *arg);
void meta_unsubscribe(struct meta *m, meta_apply_cb cb, void *arg);

/* ---- lifecycle -------------------------------------------------------------------------- */

struct meta_voter {
    int32_t id;
    char address[128]; /* host:port of its raft listener */
};

struct meta_options {
    struct tclock *clock; /* time service (the controller watch); borrowed */
    int32_t node_id;
    const char *dir; /* raft data directory; created if missing */
    const char *cluster_id;
    size_t n_voters; /* controller.quorum.voters; may omit this node (standby) */
    const struct meta_voter *voters;
    const char *listen_address; /* this node's raft host:port */
    meta_apply_cb on_apply;     /* may be NULL */
    void *on_apply_arg;
};

/* Starts raft on `loop`: bootstraps the configuration on first start (RAFT_CANTBOOTSTRAP on
 * an existing dir is the normal restart path), replays snapshot + log into the image, and
 * joins the election. A node not among the voters starts as a standby learner (it must be
 * added by the leader; see meta_add_standby). Returns 0 and *out, or an error after logging
 * one line that says why. */
int meta_start(uv_loop_t *loop, const struct meta_options *opts, struct meta **out);

/* True if `path` is, or holds, a metadata quorum's log (libraft's metadata1/metadata2 files
 * or a __cluster_metadata-0 directory): never a partition's directory, whatever its name. */
bool meta_dir_holds_log(const char *path);

/* True once this node has applied everything committed when it started (or became leader
 * and applied its own barrier); Metadata answers should wait for it. */
bool meta_ready(const struct meta *m);

/* True while this node leads the quorum and has applied, in its current term, everything
 * committed before it took over (its own barrier): only then may the controller decide on
 * its image. */
bool meta_controller_ready(const struct meta *m);

/* The controller's controlled shutdown: hands raft leadership to the most up-to-date other
 * voter before this node stops (raft_transfer), so that the quorum does not wait out an
 * election timeout. Returns ERR_NOT_CONTROLLER when this node does not lead, ERR_NOTFOUND
 * when there is no other voter, ERR_EXISTS while one is in flight; otherwise 0 and cb(arg,
 * err) runs once: 0 when another node leads, else ERR_REQUEST_TIMED_OUT. */
int meta_transfer_leadership(struct meta *m, void (*cb)(void *arg, int err), void *arg);

/* Closes raft and the image; `cb` runs once everything is released (m is freed by then). */
void meta_stop(struct meta *m, void (*cb)(void *arg), void *arg);

/* On the controller: adds node `id` (raft listener at `address`, host:port) to the raft
 * configuration as a non-voting standby, so it receives the whole log and image. Returns
 * ERR_NOT_CONTROLLER elsewhere and ERR_EXISTS if `id` is already a member (in both cases cb
 * is not called); otherwise 0, and cb runs once with 0, ERR_NOT_CONTROLLER, ERR_SHUTDOWN,
 * ERR_REQUEST_TIMED_OUT (another membership change is under way: retry) or
 * ERR_UNKNOWN_SERVER_ERROR (logged). */
int meta_add_standby(struct meta *m, int32_t id, const char *address, meta_propose_cb cb,
                     void *arg);

/* ---- image without raft (unit tests, snapshots) ----------------------------------------- */

struct meta_image;
struct meta_image *meta_image_new(void);
void meta_image_free(struct meta_image *img);
/* Encodes records as one batch (the raft entry payload): malloc()ed, caller owns. */
int meta_batch_encode(const struct meta_record *recs, size_t n, uint8_t **buf, size_t *len);
/* Validates and applies an encoded batch; returns 0 or the error of meta_propose_cb.
 * ERR_PARSE for a malformed batch (nothing applied). If `cb` is non-NULL it is called with
 * the decoded records after a successful apply. */
int meta_image_apply(struct meta_image *img, const uint8_t *buf, size_t len, meta_apply_cb cb,
                     void *arg);
/* Whole-image snapshot and restore (restore replaces the image's contents). */
int meta_image_snapshot(const struct meta_image *img, uint8_t **buf, size_t *len);
int meta_image_restore(struct meta_image *img, const uint8_t *buf, size_t len);
/* The look-ups above, on a bare image. */
const struct meta_topic *meta_image_topic_by_name(const struct meta_image *img, const char *name);
const struct meta_topic *const *meta_image_topics(const struct meta_image *img, size_t *n);
const struct meta_broker *meta_image_brokers(const struct meta_image *img, size_t *n);
const struct meta_scram *meta_image_scram(const struct meta_image *img, size_t *n);
const struct meta_quota *meta_image_quotas(const struct meta_image *img, size_t *n);
bool meta_image_quota_lookup(const struct meta_image *img, const char *user, const char *client_id,
                             int key, double *value);
const struct meta_scram *meta_image_scram_find(const struct meta_image *img, const char *user,
                                               int8_t mechanism);
const struct meta_acls *meta_image_acls(const struct meta_image *img);
const char *meta_image_config_get(const struct meta_image *img, int8_t resource_type,
                                  const char *name, const char *key);
const struct meta_topic *meta_image_topic_by_id(const struct meta_image *img, const uint8_t id[16]);
const struct meta_broker *meta_image_broker_by_id(const struct meta_image *img, int32_t id);
const struct meta_config_entry *meta_image_configs(const struct meta_image *img,
                                                   int8_t resource_type, const char *name,
                                                   int32_t *n);
int64_t meta_image_next_producer_id(const struct meta_image *img);
/* The latest producer-id block handed to `broker_id`: true and the block, or false. */
bool meta_image_producer_block(const struct meta_image *img, int32_t broker_id, int64_t *first_id,
                               int32_t *size);

#endif
