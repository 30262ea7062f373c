/* SPDX-License-Identifier: Apache-2.0 */
/* Test-only crash points (see fault.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"

static bool inited;
static const char *points; /* TALLY_TEST_FAULT, NULL when unset or empty */

void fault_init(void)
{
    const char *v = getenv("TALLY_TEST_FAULT");
    points = v && *v ? v : NULL;
    inited = true;
}

bool fault_armed(const char *name)
{
    if (!inited)
        fault_init();
    if (points == NULL)
        return false;
    size_t n = strlen(name);
    for (const char *p = points; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0)
            return true;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return false;
}

void fault_point(const char *name)
{
    if (!inited)
        fault_init();
    if (points == NULL || !fault_armed(name))
        return;
    char line[160];
    int len = snprintf(line, sizeof line, "TALLY_TEST_FAULT: exiting at %s\n", name);
    if (len > 0)
        (void)!write(2, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
    _exit(137);
}
