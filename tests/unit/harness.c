/* SPDX-License-Identifier: Apache-2.0 */
/* The unit-test runner: runs every registered test in name order and prints one closing
 * line "N passed, N failed". An optional argument runs only tests whose name contains it. */
#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* How many pages of fd from `from` (page-aligned down) to its end are cached; -1 on error. */
static long cached_pages(int fd, off_t from)
{
    long page = sysconf(_SC_PAGESIZE), n = 0;
    struct stat st;
    off_t at = from / page * page;
    size_t len, pages;
    unsigned char *vec;
    void *m;

    if (fstat(fd, &st) != 0)
        return -1;
    if (st.st_size <= at)
        return 0;
    len = (size_t)(st.st_size - at);
    pages = (len + (size_t)page - 1) / (size_t)page;
    m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, at);
    if (m == MAP_FAILED)
        return -1;
    vec = malloc(pages);
    if (vec && mincore(m, len, vec) == 0) {
        for (size_t i = 0; i < pages; i++)
            n += vec[i] & 1;
    } else {
        n = -1;
    }
    free(vec);
    munmap(m, len);
    return n;
}

bool harness_drop_cached(int fd, off_t from)
{
    if (fsync(fd) != 0)
        return false;
    for (int i = 0; i < 50; i++) {
        if (posix_fadvise(fd, from, 0, POSIX_FADV_DONTNEED) != 0)
            return false;
        long n = cached_pages(fd, from);
        if (n == 0)
            return true;
        if (n < 0)
            return false;
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    return false;
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
