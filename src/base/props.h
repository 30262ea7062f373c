/* SPDX-License-Identifier: Apache-2.0 */
/* props: Java-properties-style key/value sets (server.properties, meta.properties). */
#ifndef TALLY_BASE_PROPS_H
#define TALLY_BASE_PROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct props;
struct sysio;

struct props *props_new(void);
void props_free(struct props *p);

/* Sets key to value (copies both), replacing an earlier value. Returns 0 or ERR_NOMEM. */
int props_set(struct props *p, const char *key, const char *value);

/* Parses "key=value" (or "key: value"); returns ERR_PARSE if there is no separator. */
int props_set_line(struct props *p, const char *line);

/* Loads a file through `io` (base/sysio.h; sysio_default() outside tests): one key=value per
 * line, '#' and '!' comments, blank lines ignored; at most 1 MiB. Returns 0, ERR_NOTFOUND (no
 * such file; nothing logged), ERR_IO (the failed call logged with its reason), ERR_NOMEM, or
 * ERR_PARSE with *bad_line set to the 1-based line (a line of 4096 bytes or more does not
 * parse). Entries before the bad line stay set. */
int props_load(struct props *p, const struct sysio *io, const char *path, int *bad_line);

/* Writes all entries (after a "# comment" line, when `comment` is not NULL) to path atomically
 * through `io`: temporary file, fsync, rename, fsync of the directory. Returns 0, ERR_IO (the
 * failed call logged with its reason; the file at `path` is then as it was, unless only the
 * directory fsync failed) or ERR_NOMEM. */
int props_store(const struct props *p, const struct sysio *io, const char *path,
                const char *comment);

/* The value of key, or NULL. */
const char *props_get(const struct props *p, const char *key);

/* The value as an integer / boolean, or `def` if absent. *ok (may be NULL) is set false when
 * present but malformed (then `def` is returned). */
int64_t props_get_int(const struct props *p, const char *key, int64_t def, bool *ok);
bool props_get_bool(const struct props *p, const char *key, bool def, bool *ok);

/* Entries in insertion order. */
size_t props_count(const struct props *p);
void props_at(const struct props *p, size_t i, const char **key, const char **value);

#endif
