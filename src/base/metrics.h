/* SPDX-License-Identifier: Apache-2.0 */
/* metrics: a registry of counters, gauges and histograms that any module may update through a
 * handle it was given, rendered in the Prometheus text exposition format 0.0.4 or in
 * OpenMetrics (metrics_render_as). It sits in
 * base/ so that every module can count without knowing who exports; src/exporter/ (at the
 * top, beside main.c) owns the registry, fills the gauges read from other modules at each
 * scrape and serves the text over HTTP.
 *
 * Threads: one thread only (the event loop's) may call any of these functions on one
 * registry, as every other piece of broker state; the exporter renders on the loop and hands
 * the text to its HTTP thread. The metrics_text functions (below) touch only the buffer they
 * are given, so the HTTP thread formats with them what it was handed.
 *
 * NULL in, nothing done: every update takes a NULL family or series and does nothing, so a
 * module given no registry (metrics off, unit tests) needs no branch of its own.
 *
 * Names follow Prometheus: [a-zA-Z_:][a-zA-Z0-9_:]* for metric names, [a-zA-Z_][a-zA-Z0-9_]*
 * for label names (not starting with "__", and never "le", which histograms use). A counter's
 * name includes its "_total" suffix. Values are doubles: counters stay exact to 2^53. */
#ifndef TALLY_BASE_METRICS_H
#define TALLY_BASE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum metrics_type { METRICS_COUNTER, METRICS_GAUGE, METRICS_HISTOGRAM };

#define METRICS_MAX_LABELS 4
#define METRICS_MAX_BUCKETS 32

struct metrics;        /* a registry */
struct metrics_family; /* one metric name: its type, help, label names, buckets, series */
struct metrics_series; /* one label set of a family and its value(s) */

/* A registry holding at most `max_series` series per family (0: 100000); a series beyond that
 * is not created (metrics_series returns NULL) and counted in metrics_dropped. NULL when out
 * of memory. */
struct metrics *metrics_new(size_t max_series);
/* Frees the registry, its families and series (every handle into it). NULL is a no-op. */
void metrics_free(struct metrics *m);
/* Series not created because their family was full, since metrics_new. */
uint64_t metrics_dropped(const struct metrics *m);

/* Declares a family: name, help (one line, any text) and the n_labels label names are
 * copied; a histogram copies its n_buckets upper bounds (finite, strictly ascending, 1 to
 * METRICS_MAX_BUCKETS of them; the +Inf bucket is implicit). A family without labels has its
 * one series from the start (rendered as 0 until updated). Families render in the order they
 * were declared. Declaring a name again returns the family already there when type, labels
 * and buckets match. NULL when m is NULL, out of memory, or the declaration is invalid (bad
 * name, too many labels, bad buckets, a clash with an existing name). */
struct metrics_family *metrics_family_new(struct metrics *m, enum metrics_type type,
                                          const char *name, const char *help, size_t n_labels,
                                          const char *const *label_names, size_t n_buckets,
                                          const double *buckets);

/* The series of `f` with these label values (one string per label name, any bytes but NUL;
 * copied), created at zero on first use. The pointer stays valid until
 * metrics_family_reset(f) or metrics_free. NULL when f is NULL, out of memory, or the family
 * already holds max_series series. */
struct metrics_series *metrics_series(struct metrics_family *f, const char *const *values);
/* Shorthands for families of zero, one and two labels. */
struct metrics_series *metrics_series0(struct metrics_family *f);
struct metrics_series *metrics_series1(struct metrics_family *f, const char *v0);
struct metrics_series *metrics_series2(struct metrics_family *f, const char *v0, const char *v1);

/* Removes every series of `f` (a family without labels keeps its one series, zeroed): for
 * gauges a collector rebuilds at each scrape (per partition), so series of partitions gone
 * go too. Invalidates the family's series pointers. */
void metrics_family_reset(struct metrics_family *f);

/* For collectors that rebuild a family at every scrape (one series per hosted partition)
 * without freeing and allocating each series every time: metrics_family_mark(f) marks every
 * series unused, each metrics_series* lookup marks its series used again, and
 * metrics_family_sweep(f) then removes the series still unused (a partition gone) and
 * invalidates their pointers; the others stay where they are, with their values. A family
 * without labels keeps its one series. */
void metrics_family_mark(struct metrics_family *f);
void metrics_family_sweep(struct metrics_family *f);

/* Counter or gauge: adds `v` (a counter only grows: v >= 0 is the caller's duty). */
void metrics_add(struct metrics_series *s, double v);
/* Counter or gauge: sets the value (a collector copying a count kept elsewhere). */
void metrics_set(struct metrics_series *s, double v);
/* Histogram: counts one observation `v` in the first bucket whose bound is >= v, adds it to
 * the sum. */
void metrics_observe(struct metrics_series *s, double v);
/* Histogram: replaces its counts with a copy kept elsewhere (another thread's atomics):
 * counts[0..n_buckets] per bucket, not cumulative (the last one past every bound), and the
 * sum. n must be the family's n_buckets + 1; otherwise nothing is done. */
void metrics_histogram_load(struct metrics_series *s, const uint64_t *counts, size_t n, double sum);
/* The current value (counter, gauge) or count of observations (histogram); 0 for NULL. */
double metrics_value(const struct metrics_series *s);

/* Renders every family in the text format 0.0.4 (HELP and TYPE lines, then one line per
 * series, histograms as cumulative _bucket lines up to le="+Inf", then _sum and _count) into
 * a fresh NUL-terminated buffer the caller frees. Label values escape backslash, double quote
 * and newline; help text backslash and newline. Returns 0 with *out and *len (without the
 * NUL), or ERR_NOMEM. */
int metrics_render(const struct metrics *m, char **out, size_t *len);

/* The two exposition formats: Prometheus text 0.0.4, and OpenMetrics 1.0.0 text (what a
 * scraper asks for with Accept: application/openmetrics-text). OpenMetrics differs in three
 * places only: a counter family's HELP and TYPE lines name it without its "_total" (its
 * samples keep it), help text escapes double quotes too, and the text ends with "# EOF".
 * No "# UNIT" lines are written (optional in OpenMetrics), nor "_created" samples. */
enum metrics_format { METRICS_TEXT, METRICS_OPENMETRICS };
/* As metrics_render, in `fmt`. */
int metrics_render_as(const struct metrics *m, enum metrics_format fmt, char **out, size_t *len);

/* Building the text in pieces, for a collector that formats series it keeps outside the
 * registry (the exporter's per-partition families, formatted on its HTTP thread). These
 * functions touch only the buffer they are given, so any thread may call them on a buffer of
 * its own (metrics_render_into excepted: it reads the registry). Zero-initialise a
 * metrics_text to start; out of memory stops it growing and metrics_text_take reports it. */
struct metrics_text {
    char *p;
    size_t len, cap;
    bool oom;
};
/* Appends a family's "# HELP" and "# TYPE" lines as metrics_render_as writes them. */
void metrics_text_family(struct metrics_text *t, enum metrics_format fmt, enum metrics_type type,
                         const char *name, const char *help);
/* Appends one counter or gauge sample: name{label_names[i]="values[i]",...} v, the values
 * escaped. */
void metrics_text_sample(struct metrics_text *t, const char *name, size_t n_labels,
                         const char *const *label_names, const char *const *values, double v);
/* Appends n bytes as they are. */
void metrics_text_put(struct metrics_text *t, const char *s, size_t n);
/* Appends what ends a text in `fmt` ("# EOF" in OpenMetrics, nothing in 0.0.4). */
void metrics_text_end(struct metrics_text *t, enum metrics_format fmt);
/* Appends every family of `m` as metrics_render_as does, without the end. */
void metrics_render_into(const struct metrics *m, enum metrics_format fmt, struct metrics_text *t);
/* Hands the NUL-terminated text over (*out, the caller frees it; *len without the NUL) and
 * empties t: 0, or ERR_NOMEM (t freed and emptied). */
int metrics_text_take(struct metrics_text *t, char **out, size_t *len);

/* Formats `v` as the text format writes a value: integers exactly ("42", "-3"), others in
 * the shortest form that reads back as the same double ("0.005"), and "+Inf", "-Inf", "NaN".
 * buf needs 32 bytes. Returns buf. */
char *metrics_format_value(double v, char buf[32]);

#endif
