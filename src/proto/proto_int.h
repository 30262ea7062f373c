/* SPDX-License-Identifier: Apache-2.0 */
/* proto internals: the compact macros the schema_*.c tables are written with. One row of a
 * table is one field of the Kafka JSON schema, in schema order:
 *
 *   PROTO_FIELD(Struct, Field, TYPE, first, last, nullable_from, default)
 *
 * `first`..`last` is the version range of the field ("3+" is 3, PROTO_VMAX); nullable_from
 * is the first version in which the field may be null, or PROTO_NEVER. Tagged fields exist
 * only in flexible versions; a nullable one (PROTO_TAGGED_NULLABLE) defaults to null. A
 * tagged struct (PROTO_TAGGED_STRUCT) is written only when some field of it differs from
 * its default, and decodes to its fields' defaults when absent.
 * Defaults are integers (bools are 0/1); absent strings decode as NULL, absent arrays as
 * empty. Fields that first appear past the highest version the broker declares are left
 * out of the tables (and of the structs). */
#ifndef TALLY_PROTO_INT_H
#define TALLY_PROTO_INT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#define PROTO_VMAX INT16_MAX /* "N+": no upper version bound */
#define PROTO_NEVER (-1)     /* never nullable */

/* A scalar, string, bytes or uuid field of struct S. */
#define PROTO_FIELD(S, f, type, first, last, nullable_from, def)                                   \
    {                                                                                              \
#f, PROTO_##type, 0, first, last, nullable_from, -1, offsetof(struct S, f), NULL, def      \
    }

/* An array of scalars or strings (elements are never null). */
#define PROTO_ARRAY_OF(S, f, elem, first, last, nullable_from)                                     \
    {                                                                                              \
#f, PROTO_ARRAY, PROTO_##elem, first, last, nullable_from, -1, offsetof(struct S, f),      \
            NULL, 0                                                                                \
    }

/* An array of structs whose element layout is `sub`. */
#define PROTO_STRUCTS(S, f, sub, first, last, nullable_from)                                       \
    {                                                                                              \
#f, PROTO_ARRAY, PROTO_STRUCT, first, last, nullable_from, -1, offsetof(struct S, f),      \
            &sub, 0                                                                                \
    }

/* A tagged scalar or string field: written only when it differs from `def`. */
#define PROTO_TAGGED(S, f, type, first, last, tag, def)                                            \
    {                                                                                              \
#f, PROTO_##type, 0, first, last, PROTO_NEVER, tag, offsetof(struct S, f), NULL, def       \
    }

/* A tagged string (or bytes) field that may be null from `nullable_from`: written only when
 * not null. */
#define PROTO_TAGGED_NULLABLE(S, f, type, first, last, nullable_from, tag)                         \
    {                                                                                              \
#f, PROTO_##type, 0, first, last, nullable_from, tag, offsetof(struct S, f), NULL, 0       \
    }

/* A tagged embedded struct whose layout is `sub`: written only when it differs from the
 * defaults of its fields. */
#define PROTO_TAGGED_STRUCT(S, f, sub, first, last, tag)                                           \
    {                                                                                              \
#f, PROTO_STRUCT, 0, first, last, PROTO_NEVER, tag, offsetof(struct S, f), &sub, 0         \
    }

/* A tagged array of scalars or uuids: written only when non-empty. */
#define PROTO_TAGGED_ARRAY_OF(S, f, elem, first, last, tag)                                        \
    {                                                                                              \
#f, PROTO_ARRAY, PROTO_##elem, first, last, PROTO_NEVER, tag, offsetof(struct S, f), NULL, \
            0                                                                                      \
    }

/* A tagged array of structs: written only when non-empty. */
#define PROTO_TAGGED_STRUCTS(S, f, sub, first, last, tag)                                          \
    {                                                                                              \
#f, PROTO_ARRAY, PROTO_STRUCT, first, last, PROTO_NEVER, tag, offsetof(struct S, f), &sub, \
            0                                                                                      \
    }

/* The layout of struct S from its table S_fields[]. */
#define PROTO_LAYOUT(S)                                                                            \
    {                                                                                              \
#S, sizeof(struct S), sizeof(S##_fields) / sizeof(S##_fields[0]), S##_fields               \
    }

#endif
