/* SPDX-License-Identifier: Apache-2.0 */
/* Test-only crash points (see fault.h); empty unless built with -DTALLY_TEST_HOOKS. */
#ifdef TALLY_TEST_HOOKS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"

static const char *points;    /* TALLY_TEST_FAULT, NULL when unset or empty */
static const char *stop_name; /* fault_stop_at */

void fault_init(void)
{
    const char *v = getenv("TALLY_TEST_FAULT");
    points = v && *v ? v : NULL;
}

bool fault_armed(const char *name)
{
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
    if (!fault_armed(name))
        return;
    char line[160];
    int len = snprintf(line, sizeof line, "TALLY_TEST_FAULT: exiting at %s\n", name);
    if (len > 0)
        (void)!write(2, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
    _exit(137);
}

bool fault_stop(const char *name)
{
    fault_point(name);
    return stop_name != NULL && strcmp(stop_name, name) == 0;
}

void fault_stop_at(const char *name)
{
    stop_name = name;
}
#endif
