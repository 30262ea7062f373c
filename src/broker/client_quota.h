/* SPDX-License-Identifier: Apache-2.0 */
/* client_quota: Kafka's client byte-rate quotas (ClientQuotaManager since KIP-219) as pure
 * pieces — a rate sensor over sampled windows, the throttle time a recorded value earns, and
 * a table of sensors per (principal, client id). No clock of its own: every call is told the
 * time (monotonic ms), so it is tested on virtual time.
 *
 * Rules, Kafka's:
 * - A sensor keeps `samples` samples (quota.window.num, 11) of `sample_ms` each
 *   (quota.window.size.seconds, 1 s). A value goes to the current sample; a sample older than
 *   the whole window no longer counts.
 * - The rate is the samples' total over the time they span, from the oldest sample's start to
 *   now, but never less than samples - 1 whole samples (Kafka's Rate.windowSize): a new client
 *   is measured as if it had been quiet before, not as a burst over a few milliseconds.
 * - After recording, a rate above the quota Q earns throttle = (rate - Q) / Q × that span:
 *   the time after which the rate would be back at Q without more traffic. Capped at the
 *   whole window (samples × sample_ms).
 * - Tally's refinement: the same formula over the recent window (the current and the previous
 *   sample, spanning at least one sample) may ask for more, and then wins. Kafka's rule alone
 *   lets a new client send samples - 1 seconds' worth at once, and that burst, leaving the
 *   window as one sample 11 s later, lets the next one through: bursts and stalls with an
 *   11 s period, 10 % over the quota on average. With the recent window the rate stays
 *   within a few percent of the quota over any few seconds (tests/unit/test_client_quota.c).
 *
 * Threading: one loop; nothing here is thread-safe. */
#ifndef TALLY_BROKER_CLIENT_QUOTA_H
#define TALLY_BROKER_CLIENT_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CQ_MAX_SAMPLES 64
#define CQ_DEFAULT_SAMPLES 11
#define CQ_DEFAULT_SAMPLE_MS 1000

struct cq_sensor {
    int samples;                   /* 2..CQ_MAX_SAMPLES */
    int64_t sample_ms;             /* >= 1 */
    int cur;                       /* the current sample's index */
    int64_t start[CQ_MAX_SAMPLES]; /* a sample's first ms; -1: unused */
    double value[CQ_MAX_SAMPLES];
};

/* A sensor with no value yet; samples and sample_ms out of range take Kafka's defaults. */
void cq_sensor_init(struct cq_sensor *s, int samples, int64_t sample_ms);
/* Adds `value` (>= 0) at now_ms. Time never runs backwards for a sensor. */
void cq_record(struct cq_sensor *s, int64_t now_ms, double value);
/* The measured rate per second at now_ms. */
double cq_rate(const struct cq_sensor *s, int64_t now_ms);
/* The throttle time (ms, >= 0) the rate at now_ms earns under `quota` per second (0 when the
 * rate is within it, or quota <= 0: no quota). */
int64_t cq_throttle_ms(const struct cq_sensor *s, int64_t now_ms, double quota);

/* The broker's sensors: per (principal, client id), one per enforced key (produce bytes,
 * fetch bytes). An entry unused for an hour (Kafka's sensor expiry) is dropped on the next
 * look-up that passes it. */
enum cq_kind { CQ_PRODUCE = 0, CQ_FETCH = 1, CQ_KINDS = 2 };

struct cq_table;
struct cq_table *cq_table_new(int samples, int64_t sample_ms);
void cq_table_free(struct cq_table *t);
/* Records `bytes` of `kind` for the client at now_ms and returns the throttle time it earns
 * under `quota` bytes/s (a quota <= 0: none; nothing is recorded then). Returns 0 too when
 * out of memory (a client is never throttled for our lack of memory). */
int64_t cq_table_record(struct cq_table *t, const char *principal, const char *client_id,
                        enum cq_kind kind, int64_t now_ms, double bytes, double quota);
/* Entries held now (tests). */
size_t cq_table_size(const struct cq_table *t);

#endif
