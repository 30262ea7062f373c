/* SPDX-License-Identifier: Apache-2.0 */
/* jhash: Java's String.hashCode over a UTF-8 string, and Kafka's coordinator partition rule
 * built on it — shared by the coordinators (group id → __consumer_offsets partition,
 * transactional id → __transaction_state partition) and by the produce path that must find
 * a transactional id's coordinator. */
#ifndef TALLY_BASE_JHASH_H
#define TALLY_BASE_JHASH_H

#include <stdint.h>

/* Java's String.hashCode of `s` (NUL-terminated UTF-8): over the UTF-16 code units of the
 * decoded string, a supplementary character counting as its surrogate pair; a byte that does
 * not start a valid, shortest-form UTF-8 sequence counts as one U+FFFD, as Java's decoder
 * replaces malformed input. */
int32_t java_string_hash(const char *s);

/* Kafka's coordinator partition of `key`: Utils.abs(java_string_hash(key)) % n_partitions,
 * where Utils.abs(INT32_MIN) is 0. 0 when n_partitions < 1. */
int32_t java_partition_for(const char *key, int32_t n_partitions);

#endif
