/* SPDX-License-Identifier: Apache-2.0 */
/* The unit-test runner: runs every registered test in name order and prints one closing
 * line "N passed, N failed". An optional argument runs only tests whose name contains it. */
#include "harness.h"

#include <signal.h>
#include <stdlib.h>

static struct test_case *all;
int harness_current_failed;

void harness_register(struct test_case *tc)
{
    struct test_case **p = &all;
    while (*p && strcmp((*p)->name, tc->name) < 0)
        p = &(*p)->next;
    tc->next = *p;
    *p = tc;
}

void harness_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "    %s:%d: check failed: %s\n", file, line, what);
    harness_current_failed = 1;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0;

    /* Tests talk to raft peers over loopback: a peer that closed first must cost a write
     * error (EPIPE), as in tallyd, not the test process. Results go out line by line so a
     * crash still shows how far the run got. */
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (struct test_case *tc = all; tc; tc = tc->next) {
        if (argc > 1 && strstr(tc->name, argv[1]) == NULL)
            continue;
        harness_current_failed = 0;
        tc->fn();
        printf("%s %s\n", harness_current_failed ? "FAIL" : "ok  ", tc->name);
        if (harness_current_failed)
            failed++;
        else
            passed++;
    }
    printf("unit: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
