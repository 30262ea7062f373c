/* SPDX-License-Identifier: Apache-2.0 */
/* verify_check: the checker of `tally verify` (issue 11). It knows nothing of Kafka clients:
 * it is fed a recorded history and reports the anomalies in it, so unit tests can feed it
 * histories with every anomaly class and a clean one.
 *
 * The history:
 *  - the acknowledged inputs: input partition, sequence number within that partition (the
 *    seeder writes 0, 1, 2, ... per partition) and the offset the broker acknowledged;
 *  - what readers saw of the output topic: for each record its output partition, offset and
 *    value, per view (read_committed, read_uncommitted, and a second read_committed reader);
 *  - the group's committed offset per input partition (-1 or absent: none);
 *  - optionally the copiers' own journal: transactions they know committed or aborted.
 *
 * Record values are text (so that kcat shows them):
 *   input   "vi p=<partition> s=<seq>"
 *   output  "vo p=<in partition> s=<seq> o=<in offset> c=<copier slot> e=<incarnation>
 *            t=<transaction number> n=<records in the transaction> k=<index 0..n-1>
 *            a=<1 when the copier meant to abort this transaction>"
 * (one line, single spaces). The incarnation is unique per copier process of a run, so
 * (e, t) names one transaction; n lets a transaction seen in part be detected across
 * partitions without broker markers.
 *
 * Anomaly classes (docs/verify.md says what each means):
 *   lost, duplicated, reordered, aborted read, torn transaction, offsets ahead of data,
 *   offsets behind data, inconsistent offsets, unreadable (a value of no known form).
 *
 * A history can be incomplete: fewer acknowledged inputs than the seeder was asked for, a
 * record the history could not keep (out of memory), a reader that stopped short of a
 * partition's end, or anything else the driver notes (the group's offsets not fetched, the
 * copy cut short). The verdict (vc_report_verdict) is then "inconclusive" — never a pass —
 * unless the records seen prove an anomaly whatever is missing. */
#ifndef TALLY_TOOLS_VERIFY_CHECK_H
#define TALLY_TOOLS_VERIFY_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum vc_view { VC_READ_COMMITTED = 0, VC_READ_UNCOMMITTED = 1, VC_SECOND_READER = 2, VC_VIEWS };

enum vc_class {
    VC_LOST = 0,
    VC_DUPLICATED,
    VC_REORDERED,
    VC_ABORTED_READ,
    VC_TORN_TXN,
    VC_OFFSETS_AHEAD,
    VC_OFFSETS_BEHIND,
    VC_INCONSISTENT_OFFSETS,
    VC_UNREADABLE,
    VC_CLASSES
};

/* How many examples each class keeps (the first ones found, in partition/offset order). */
#define VC_EXAMPLES 5
#define VC_VALUE_MAX 160
/* How many reasons for an incomplete history are kept as text (all are counted). */
#define VC_REASONS 8

/* What a check establishes. The values are `tally verify`'s exit statuses. */
enum vc_verdict {
    VC_PASS = 0,         /* a complete history with no anomaly */
    VC_ANOMALIES = 1,    /* an anomaly that holds (see vc_report_verdict) */
    VC_INCONCLUSIVE = 2, /* an incomplete history that proves no anomaly: no verdict */
};

struct vc_example {
    int partition;  /* output partition (input partition for lost / offsets ahead) */
    int64_t offset; /* output offset (input offset for lost / offsets ahead) */
    char value[VC_VALUE_MAX];
};

struct vc_class_report {
    int64_t count;
    int n_examples;
    struct vc_example examples[VC_EXAMPLES];
};

struct vc_report {
    struct vc_class_report cls[VC_CLASSES];
    /* Statistics, not anomalies. */
    int64_t inputs_acked;
    int64_t visible;         /* records in the read_committed view */
    int64_t uncommitted;     /* records in the read_uncommitted view */
    int64_t aborted_seen;    /* read_uncommitted records absent from read_committed */
    int64_t txns_visible;    /* distinct transactions seen in read_committed */
    int64_t offsets_checked; /* (partition, offset) pairs seen by two or more views */
    int64_t inputs_expected; /* what the seeder was asked for (-1: not said) */
    /* Why the history is incomplete: reasons_total of them, the first n_reasons as text. */
    int64_t reasons_total;
    int n_reasons;
    char reasons[VC_REASONS][VC_VALUE_MAX];
};

struct vc_history;

/* A history for in_partitions input partitions. NULL when out of memory. */
struct vc_history *vc_history_new(int in_partitions);
/* The same, growing its arrays and copying values with realloc_fn (realloc's contract;
 * memory it returns is given to free()), so that tests can fail an allocation. */
struct vc_history *vc_history_new_with(int in_partitions,
                                       void *(*realloc_fn)(void *ptr, size_t size));
void vc_history_free(struct vc_history *h);

/* Each returns false only when out of memory; the history then counts the record as
 * dropped, and a history that dropped anything is incomplete (inconclusive). */
bool vc_add_input(struct vc_history *h, int partition, int64_t seq, int64_t offset);
bool vc_add_read(struct vc_history *h, enum vc_view view, int partition, int64_t offset,
                 const void *value, size_t len);
/* The group's committed offset of an input partition (the next offset to read). */
void vc_set_group_offset(struct vc_history *h, int partition, int64_t offset);
/* The copiers' journal: transaction (incarnation, txn) ended with commit or abort. */
bool vc_add_txn_outcome(struct vc_history *h, int incarnation, int64_t txn, bool committed);

/* The number of records the seeder was asked to write: unless exactly that many distinct
 * inputs were acknowledged (vc_add_input), the history is incomplete. */
void vc_expect_inputs(struct vc_history *h, int64_t n);
/* A reader of `view` that stopped at offset `reached` of output partition `partition`, short
 * of its end `end` (-1: unknown): the history is incomplete. */
void vc_view_short(struct vc_history *h, enum vc_view view, int partition, int64_t reached,
                   int64_t end);
/* Any other reason the history is incomplete, as one line of text (copied, truncated to
 * VC_VALUE_MAX). Never fails: past VC_REASONS reasons only the count grows. */
void vc_note_incomplete(struct vc_history *h, const char *reason);

/* Runs every check; fills *r (zeroed first), reasons for an incomplete history included.
 * False only when out of memory (then no verdict can be given: inconclusive). The history
 * is not changed and may be checked again. */
bool vc_check(const struct vc_history *h, struct vc_report *r);

/* The total of every anomaly class. */
int64_t vc_report_anomalies(const struct vc_report *r);
/* The verdict: VC_ANOMALIES when the report has a duplicated, aborted_read,
 * inconsistent_offsets or unreadable record (records seen prove those whatever is missing),
 * or any anomaly in a complete history; else VC_INCONCLUSIVE when the history is incomplete
 * (its other classes may be artefacts of what is missing: a record not read looks lost);
 * else VC_PASS. */
enum vc_verdict vc_report_verdict(const struct vc_report *r);
/* "pass", "anomalies" or "inconclusive". */
const char *vc_verdict_name(enum vc_verdict v);
/* The class's name as printed and in JSON ("lost", "duplicated", "aborted_read", ...). */
const char *vc_class_name(enum vc_class c);
/* The report as text: one line per class with its count and first examples, the reasons
 * the history is incomplete, "anomalies: N" and "verdict: NAME". */
void vc_report_print(const struct vc_report *r, FILE *out);
/* The report as a JSON object (no trailing newline). */
void vc_report_json(const struct vc_report *r, FILE *out);

/* Formats an output value (see above) into buf; returns its length. */
int vc_format_output(char *buf, size_t size, int in_partition, int64_t seq, int64_t in_offset,
                     int copier, int incarnation, int64_t txn, int n, int k, bool abort);
/* Formats an input value into buf; returns its length. */
int vc_format_input(char *buf, size_t size, int partition, int64_t seq);

#endif
