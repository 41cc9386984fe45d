/* Tests of pool: every index of a task runs exactly once, on any thread count, and in a forked child.
 */
#include "compute/pool.h"

#include "testing.h"

#include <check.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct count_ctx {
    int *hits;
} count_ctx;

static void count_range(void *ctx, long begin, long end) {
    count_ctx *c = ctx;
    for (long i = begin; i < end; i++) c->hits[i]++;
}

START_TEST(parallel_for_runs_each_index_exactly_once) {
    int hits[1001];
    for (int threads = 1; threads <= 3; threads++) {
        ck_assert_int_eq(nmt_pool_set_threads(threads), 0);
        ck_assert_int_eq(nmt_pool_threads(), threads);
        memset(hits, 0, sizeof hits);
        count_ctx c = {hits};
        for (int rep = 0; rep < 200; rep++) nmt_pool_for(1001, count_range, &c);
        nmt_pool_for(1, count_range, &c);
        for (int i = 0; i < 1001; i++) ck_assert_int_eq(hits[i], 200 + (i == 0));
    }
    ck_assert_int_eq(nmt_pool_set_threads(0), -1);
    nmt_pool_set_threads(2);
    /* A forked child (as Check itself forks tests) gets a working pool of its own. */
    pid_t child = fork();
    if (child == 0) {
        memset(hits, 0, sizeof hits);
        count_ctx c = {hits};
        nmt_pool_for(1001, count_range, &c);
        _exit(hits[0] == 1 && hits[1000] == 1 && nmt_pool_threads() == 2 ? 0 : 1);
    }
    int status = -1;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

static Suite *pool_suite(void) {
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parallel_for_runs_each_index_exactly_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nmt_test_run(pool_suite()); }
