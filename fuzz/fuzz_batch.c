/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for record batch validation: record_batch_validate must never crash or
 * read outside the input, and a batch it accepts must fit the input, parse to the same
 * header, and (when it is a control batch) survive record_control_parse. The CRC makes
 * random inputs fail early, so every other input gets its CRC fixed up first, which lets the
 * fuzzer reach the record walk. Batches the header checks accept also go through
 * record_batch_check (fuzz_compressed.c goes deeper into compressed ones). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "record/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *buf, size_t size)
{
    struct record_batch b, again;
    enum record_control_type type;
    int32_t epoch;
    int rc = record_batch_validate(buf, size, &b);

    if (rc != 0) {
        if (rc != ERR_TRUNCATED && rc != ERR_CORRUPT_MESSAGE && rc != ERR_INVALID_RECORD &&
            rc != ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT)
            abort();
        return;
    }
    if (record_batch_size(&b) > size || record_batch_size(&b) < RECORD_BATCH_HEADER)
        abort();
    if (record_batch_parse(buf, size, &again) != 0 || again.batch_length != b.batch_length ||
        again.crc != b.crc || again.attributes != b.attributes ||
        again.record_count != b.record_count || again.last_offset_delta != b.last_offset_delta)
        abort();
    if (b.attributes & RECORD_ATTR_CONTROL)
        (void)record_control_parse(buf, size, &type, &epoch);
    /* The full check (records of compressed batches too) on what the header checks took:
     * an uncompressed batch that validated walks again, so only its timestamps can fail. */
    {
        struct record_scan scan;
        rc = record_batch_check(buf, size, (size_t)1 << 20, &again, &scan);
        if (rc != 0 && rc != ERR_CORRUPT_MESSAGE && rc != ERR_INVALID_RECORD &&
            rc != ERR_MESSAGE_TOO_LARGE && rc != ERR_NOMEM)
            abort();
        if ((b.attributes & RECORD_ATTR_COMPRESSION_MASK) == 0 && rc != 0 &&
            rc != ERR_INVALID_RECORD)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy;
    size_t batch_size;

    check(data, size);

    /* Same bytes with a correct CRC over what batchLength announces (when it fits). */
    if (size < RECORD_BATCH_HEADER || (data[0] & 1) == 0)
        return 0;
    batch_size = (size_t)((uint32_t)data[8] << 24 | (uint32_t)data[9] << 16 |
                          (uint32_t)data[10] << 8 | data[11]) +
                 RECORD_BATCH_OVERHEAD;
    if (batch_size > size || batch_size < RECORD_BATCH_HEADER)
        return 0;
    copy = malloc(size);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    {
        uint32_t crc = record_crc32c(0, copy + 21, batch_size - 21);
        copy[17] = (uint8_t)(crc >> 24);
        copy[18] = (uint8_t)(crc >> 16);
        copy[19] = (uint8_t)(crc >> 8);
        copy[20] = (uint8_t)crc;
    }
    check(copy, size);
    free(copy);
    return 0;
}
