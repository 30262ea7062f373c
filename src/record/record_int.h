/* SPDX-License-Identifier: Apache-2.0 */
/* record internals: the two CRC32C implementations behind record_crc32c, exposed so the
 * unit tests can check that both give the same answers. Not for other modules. */
#ifndef TALLY_RECORD_INT_H
#define TALLY_RECORD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Table-driven CRC32C (slicing by 8); works on every CPU. Same contract as record_crc32c. */
uint32_t record_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* SSE4.2 CRC32C, three streams interleaved. Only call when record_crc32c_hw_available(). */
uint32_t record_crc32c_hw(uint32_t crc, const void *buf, size_t len);

/* Whether this CPU has the SSE4.2 crc32 instruction (always false off x86-64). */
bool record_crc32c_hw_available(void);

#endif
