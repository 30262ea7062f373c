/* SPDX-License-Identifier: Apache-2.0 */
/* client_quota: Kafka's client quotas as pure pieces — the byte-rate quotas (ClientQuotaManager
 * since KIP-219) and the request-time quota (ClientRequestQuotaManager, KIP-124) as a rate
 * sensor over sampled windows and the throttle time a recorded value earns; the controller
 * mutation quota (ControllerMutationQuotaManager, KIP-599) as a token bucket; and a table of
 * them per (principal, client id). No clock of its own: every call is told the time
 * (monotonic ms), so it is tested on virtual time.
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
 * - The request-time quota (request_percentage) is the same sensor over the percentage of one
 *   thread's time a client's requests took (a request of d ns records d × 100 / 1e9: its
 *   percent-seconds), and its throttle is capped at one sample instead (Kafka's
 *   ClientRequestQuotaManager bounds it by quota.window.size.seconds).
 * - The controller mutation quota (controller_mutation_rate, partitions per second) is a
 *   token bucket: it starts full at burst = rate × samples × sample_ms / 1000 tokens
 *   (controller.quota.window.num × controller.quota.window.size.seconds), refills at `rate`
 *   per second up to the burst, and each mutation takes its partitions. It is exceeded while
 *   the tokens are below 0, and the throttle is then -tokens / rate seconds. A mutation is
 *   checked before it is recorded, so the one that empties the bucket still passes (Kafka's
 *   StrictControllerMutationQuota).
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

/* A controller mutation token bucket. `tokens` is meaningful once `started`. */
struct cq_bucket {
    bool started;
    double tokens;
    int64_t last_ms; /* when tokens was last brought up to date */
};

/* The tokens at now_ms of a bucket of `rate` per second and `burst` tokens (refilled since the
 * last call; a bucket never used is full). rate <= 0: no quota, the bucket is not touched and
 * the answer is `burst`. */
double cq_bucket_tokens(struct cq_bucket *b, int64_t now_ms, double rate, double burst);
/* Whether the bucket is below 0 at now_ms (a mutation now is refused under a strict quota). */
bool cq_bucket_exceeded(struct cq_bucket *b, int64_t now_ms, double rate, double burst);
/* Takes `permits` (>= 0) at now_ms and returns the throttle time (ms) the bucket then asks:
 * round(-tokens / rate × 1000) when below 0, else 0. */
int64_t cq_bucket_record(struct cq_bucket *b, int64_t now_ms, double rate, double burst,
                         double permits);
/* The throttle time at now_ms without taking anything. */
int64_t cq_bucket_throttle_ms(struct cq_bucket *b, int64_t now_ms, double rate, double burst);

/* The table's sensors: per (principal, client id), one per sampled key (produce bytes, fetch
 * bytes, request time in percent-seconds) and one mutation bucket. An entry unused for an
 * hour (Kafka's sensor expiry) is dropped on the next look-up that passes it. */
enum cq_kind { CQ_PRODUCE = 0, CQ_FETCH = 1, CQ_REQUEST = 2, CQ_KINDS = 3 };

struct cq_table;
struct cq_table *cq_table_new(int samples, int64_t sample_ms);
void cq_table_free(struct cq_table *t);
/* Records `bytes` of `kind` for the client at now_ms and returns the throttle time it earns
 * under `quota` bytes/s (a quota <= 0: none; nothing is recorded then). Returns 0 too when
 * out of memory (a client is never throttled for our lack of memory). */
int64_t cq_table_record(struct cq_table *t, const char *principal, const char *client_id,
                        enum cq_kind kind, int64_t now_ms, double bytes, double quota);
/* The entry of (principal, client id) at now_ms, created if needed, for recording into it
 * after a handler ran (whose request may be gone by then): valid until the table is freed or
 * a look-up more than an hour after its last use. NULL when out of memory. */
struct cq_entry;
struct cq_entry *cq_table_entry(struct cq_table *t, const char *principal, const char *client_id,
                                int64_t now_ms);
/* cq_table_record on an entry. CQ_REQUEST throttles are capped at one sample. */
int64_t cq_entry_record(struct cq_table *t, struct cq_entry *e, enum cq_kind kind, int64_t now_ms,
                        double value, double quota);
/* The entry's mutation bucket, under the table's samples and sample_ms (its burst follows from
 * the rate with cq_table_burst: rate x samples x sample_ms, where samples may be 1, and either
 * given as 0 takes Kafka's default). */
struct cq_bucket *cq_entry_bucket(struct cq_entry *e);
double cq_table_burst(const struct cq_table *t, double rate);
/* Entries held now (tests). */
size_t cq_table_size(const struct cq_table *t);

#endif
