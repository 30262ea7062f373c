/* SPDX-License-Identifier: Apache-2.0 */
/* authz: the authorizer — Kafka's StandardAuthorizer (authorizer.class.name), deciding on the
 * metadata image's ACLs (meta/acls.c), super.users and allow.everyone.if.no.acl.found whether
 * a request's principal, from its peer's host, may do an operation on a resource.
 *
 * Handlers reach it through the request: the dispatcher puts the broker's authorizer on
 * every connection's session (net_session.authz) before the handler runs, so a check is
 * authz_allowed(req, op, type, name) wherever the request is, with no parameter threaded
 * through the modules. A session without one (no authorizer configured, a detached request
 * the broker made itself, unit tests) allows everything, as Kafka without an authorizer. */
#ifndef TALLY_AUTHZ_H
#define TALLY_AUTHZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct authz;
struct meta;
struct net_request;
struct props;

/* Kafka's CLUSTER resource name. */
#define AUTHZ_CLUSTER "kafka-cluster"

/* The two class names accepted for authorizer.class.name (both mean StandardAuthorizer's
 * semantics here); "" or unset is no authorizer. */
#define AUTHZ_STANDARD "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
#define AUTHZ_ACL_AUTHORIZER "kafka.security.authorizer.AclAuthorizer"

/* Whether `config` asks for an authorizer: false for none; ERR_INVALID_CONFIG (with a
 * sentence in why) for a class Tally does not have. Returns 0 or the error; *on is set. */
int authz_config(const struct props *config, bool *on, char *why, size_t whylen);

/* An authorizer on `m`'s ACLs (borrowed; must outlive it) with `config`'s super.users (Kafka's
 * ";"-separated principals) and allow.everyone.if.no.acl.found. NULL on out of memory. */
struct authz *authz_new(struct meta *m, const struct props *config);
void authz_free(struct authz *z);

/* Whether the request's principal may do `op` (PROTO_ACL_OP_*) on (type, name). Super users
 * may do everything. A denial is logged (rate-limited) in Kafka's authorizer log style with
 * principal, host, operation, resource and API. True without an authorizer. */
bool authz_allowed(struct net_request *req, int8_t op, int8_t type, const char *name);
/* The same without the log line, for what Kafka filters silently (topics left out of
 * Metadata, groups out of ListGroups). */
bool authz_allowed_quiet(struct net_request *req, int8_t op, int8_t type, const char *name);
/* Whether the request's principal may do `op` on some resource of `type` (Kafka's
 * authorizeByResourceType; meta_acls_authorize_any). Not logged. */
bool authz_allowed_any(struct net_request *req, int8_t op, int8_t type);
/* The same decision for a principal that is not a Kafka connection's (the web console's
 * HTTP user, src/exporter): `principal` ("User:alice") from `host` (an address, no port),
 * logged as authz_allowed does (with `api` as the request) when `log` and denied. */
bool authz_check(struct authz *z, const char *principal, const char *host, int8_t op, int8_t type,
                 const char *name, const char *api, bool log);
/* Whether an authorizer is on for this request. */
bool authz_on(const struct net_request *req);
/* The *AuthorizedOperations bit field of (type, name) for this request's principal: with no
 * authorizer proto_authorized_ops(type), else the supported operations it is allowed. */
int32_t authz_ops(struct net_request *req, int8_t type, const char *name);

/* The host part of a peer "ip:port" into out (cap bytes). */
void authz_peer_host(const char *peer, char *out, size_t cap);

#endif
