/* Tests of ema: the decay's warm-up at worked steps, three updates against the recurrence computed in
 * double precision, swapping in and out restores both buffers exactly, an average that is off does
 * nothing, and results that do not depend on the thread count.
 *
 * Worked decays (decay 0.999): d_1 = 2/11, d_10 = 11/20, d_8990 = 8991/9000 = 0.999 exactly, and from
 * there on the configured 0.999. */
#include "compute/pool.h"
#include "train/ema.h"

#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(decay_warms_up) {
    ck_assert_double_eq_tol(nmt_ema_decay_at(0.999, 1), 2.0 / 11.0, 1e-15);
    ck_assert_double_eq_tol(nmt_ema_decay_at(0.999, 10), 0.55, 1e-15);
    ck_assert_double_eq_tol(nmt_ema_decay_at(0.999, 8990), 0.999, 1e-12);
    ck_assert_double_eq(nmt_ema_decay_at(0.999, 100000), 0.999);
    ck_assert_double_eq(nmt_ema_decay_at(0.5, 100), 0.5);
}
END_TEST

START_TEST(updates_follow_the_recurrence) {
    enum { N = 5 };
    float params[N] = {1, -2, 0.5f, 3, 0};
    double want[N];
    nmt_ema e;
    ck_assert_int_eq(nmt_ema_init(&e, params, N, 0.9), 0);
    for (int i = 0; i < N; i++) want[i] = params[i];
    for (long step = 1; step <= 3; step++) {
        for (int i = 0; i < N; i++) params[i] += (float)(step * (i + 1)) * 0.25f;
        nmt_ema_update(&e, params, step);
        double d = fmin(0.9, (1.0 + (double)step) / (10.0 + (double)step));
        for (int i = 0; i < N; i++) want[i] = d * want[i] + (1 - d) * params[i];
    }
    for (int i = 0; i < N; i++) ck_assert_double_eq_tol(e.weights[i], want[i], 1e-6);
    nmt_ema_free(&e);
}
END_TEST

START_TEST(swap_twice_restores) {
    enum { N = 40000 }; /* more than one block */
    float *p = malloc(N * sizeof *p), *orig = malloc(N * sizeof *orig);
    ck_assert(p && orig);
    for (int i = 0; i < N; i++) p[i] = orig[i] = sinf((float)i);
    nmt_ema e;
    ck_assert_int_eq(nmt_ema_init(&e, p, N, 0.99), 0);
    for (int i = 0; i < N; i++) p[i] = cosf((float)i);
    nmt_ema_swap(&e, p);
    ck_assert_mem_eq(p, orig, N * sizeof *p);
    nmt_ema_swap(&e, p);
    ck_assert_mem_eq(e.weights, orig, N * sizeof *p);
    ck_assert_float_eq(p[N - 1], cosf((float)(N - 1)));
    nmt_ema_free(&e);
    free(p);
    free(orig);
}
END_TEST

START_TEST(off_does_nothing) {
    float p[3] = {1, 2, 3};
    nmt_ema e;
    ck_assert_int_eq(nmt_ema_init(&e, p, 3, 0.0), 0);
    ck_assert_ptr_null(e.weights);
    nmt_ema_update(&e, p, 1);
    nmt_ema_swap(&e, p);
    ck_assert_float_eq(p[1], 2);
    nmt_ema_free(&e);
}
END_TEST

START_TEST(threads_do_not_change_results) {
    enum { N = 100003 };
    float *avg[2], *p = malloc(N * sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (int run = 0; run < 2; run++) {
        nmt_pool_set_threads(run + 1);
        for (int i = 0; i < N; i++) p[i] = sinf((float)i);
        nmt_ema e;
        ck_assert_int_eq(nmt_ema_init(&e, p, N, 0.999), 0);
        for (long step = 1; step <= 3; step++) {
            for (int i = 0; i < N; i++) p[i] += cosf((float)(i * step)) * 1e-3f;
            nmt_ema_update(&e, p, step);
        }
        avg[run] = e.weights; /* kept: freed below */
    }
    ck_assert_mem_eq(avg[0], avg[1], N * sizeof(float));
    free(avg[0]);
    free(avg[1]);
    free(p);
    nmt_pool_set_threads(1);
}
END_TEST

int main(void) {
    Suite *s = suite_create("ema");
    TCase *tc = tcase_create("ema");
    tcase_add_test(tc, decay_warms_up);
    tcase_add_test(tc, updates_follow_the_recurrence);
    tcase_add_test(tc, swap_twice_restores);
    tcase_add_test(tc, off_does_nothing);
    tcase_add_test(tc, threads_do_not_change_results);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
