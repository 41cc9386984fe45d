/* Tests of pool: every index of a task runs exactly once, on any thread count, and in a forked
 * child; the units are the same on 1, 2 and 3 threads (so per-unit results are bit-identical); a
 * thread that is held back does not hold the task back.
 */
#include "compute/pool.h"

#include "testing.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
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
        for (int rep = 0; rep < 200; rep++) nmt_pool_for(1001, 1, count_range, &c);
        nmt_pool_for(1, 1, count_range, &c);
        for (int i = 0; i < 1001; i++) ck_assert_int_eq(hits[i], 200 + (i == 0));
    }
    ck_assert_int_eq(nmt_pool_set_threads(0), -1);
    nmt_pool_set_threads(2);
    /* A forked child (as Check itself forks tests) gets a working pool of its own. */
    pid_t child = fork();
    if (child == 0) {
        memset(hits, 0, sizeof hits);
        count_ctx c = {hits};
        nmt_pool_for(1001, 1, count_range, &c);
        _exit(hits[0] == 1 && hits[1000] == 1 && nmt_pool_threads() == 2 ? 0 : 1);
    }
    int status = -1;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST


/* Each unit writes its range and a float sum over it (rounding makes the sum depend on where the
 * ranges start and end), into slot begin; a nested task inside unit 0 runs inline with its own units. */
typedef struct unit_ctx {
    long *end_of; /* [count]: end of the range that started here, 0 elsewhere */
    float *sum_of; /* [count] */
    long nested_units;
} unit_ctx;

static void nested_range(void *ctx, long begin, long end) {
    (void)begin, (void)end;
    ((unit_ctx *)ctx)->nested_units++;
}

static void unit_range(void *ctx, long begin, long end) {
    unit_ctx *c = ctx;
    float s = 0.0f;
    for (long i = begin; i < end; i++) s += 1.0f / (float)(i + 1);
    c->end_of[begin] = end;
    c->sum_of[begin] = s;
    if (begin == 0) nmt_pool_for(10, 3, nested_range, ctx);
}

START_TEST(units_are_the_same_on_any_thread_count) {
    enum { COUNT = 10007, GRAIN = 37 };
    static long end_of[3][COUNT];
    static float sum_of[3][COUNT];
    for (int threads = 1; threads <= 3; threads++) {
        ck_assert_int_eq(nmt_pool_set_threads(threads), 0);
        unit_ctx c = {end_of[threads - 1], sum_of[threads - 1], 0};
        memset(c.end_of, 0, sizeof end_of[0]);
        nmt_pool_for(COUNT, GRAIN, unit_range, &c);
        ck_assert_int_eq(c.nested_units, 4); /* [0, 3), [3, 6), [6, 9), [9, 10) */
        for (long i = 0; i < COUNT; i++)
            ck_assert_int_eq(c.end_of[i], i % GRAIN ? 0 : i + GRAIN < COUNT ? i + GRAIN : COUNT);
        if (threads > 1) {
            ck_assert_mem_eq(sum_of[threads - 1], sum_of[0], sizeof sum_of[0]);
        }
    }
    /* nmt_pool_work: units of 32768 element operations. */
    unit_ctx c = {end_of[0], sum_of[0], 0};
    memset(c.end_of, 0, sizeof end_of[0]);
    nmt_pool_work(COUNT, 1000, unit_range, &c);
    for (long i = 0; i < COUNT; i++) ck_assert_int_eq(c.end_of[i], i % 32 ? 0 : i + 32 < COUNT ? i + 32 : COUNT);
    nmt_pool_set_threads(2);
}
END_TEST

/* Units run by the worker sleep 100 ms each; the caller's take no time. The caller must not wait
 * for the worker to take its share (half of the units, cut one range per thread): it runs all but
 * the unit or two the worker holds (10 leaves room for a caller descheduled on a loaded machine). */
typedef struct slow_ctx {
    pthread_t caller;
    atomic_int by_caller, by_worker;
} slow_ctx;

static void slow_worker_range(void *ctx, long begin, long end) {
    slow_ctx *c = ctx;
    (void)begin, (void)end;
    if (pthread_equal(pthread_self(), c->caller)) {
        atomic_fetch_add(&c->by_caller, 1);
    } else {
        atomic_fetch_add(&c->by_worker, 1);
        usleep(100000);
    }
}

START_TEST(a_held_back_thread_takes_fewer_units) {
    ck_assert_int_eq(nmt_pool_set_threads(2), 0);
    slow_ctx c = {.caller = pthread_self()};
    nmt_pool_for(40, 1, slow_worker_range, &c);
    ck_assert_int_eq(atomic_load(&c.by_caller) + atomic_load(&c.by_worker), 40);
    ck_assert_int_le(atomic_load(&c.by_worker), 10);
}
END_TEST

static Suite *pool_suite(void) {
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parallel_for_runs_each_index_exactly_once);
    tcase_add_test(tc, units_are_the_same_on_any_thread_count);
    tcase_add_test(tc, a_held_back_thread_takes_fewer_units);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return nmt_test_run(pool_suite()); }
