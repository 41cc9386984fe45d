/* Tests of optim: the learning-rate schedules at worked steps, two Adam updates against a hand
 * computation, AdamW's decoupled weight decay, gradient-norm clipping, results that do not depend on
 * the thread count, and slices (a sharded optimizer's) whose updates together give the whole update's
 * bits.
 *
 * Expected Adam values come from the update written out in Python floats (double precision):
 *     m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 * with b1 = 0.9, b2 = 0.98, eps = 1e-9, lr = 0.1, p0 = (1, 1, -0.5), g1 = (0.5, -2, 0), g2 = (1.5, -2, 3):
 *     after step 1: p = (0.9, 1.1, -0.5),  m = (0.05, -0.2, 0),  v = (0.005, 0.08, 0)
 *     after step 2: p = (0.808572187, 1.2, -0.574059196),  m = (0.195, -0.38, 0.3),  v = (0.0499, 0.1584, 0.18)
 * (Step 1 moves every parameter with a nonzero gradient by exactly lr against its sign.) */
#include "compute/pool.h"
#include "train/optim.h"

#include "testing.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double lr_at(double lr, long warmup, long step) {
    return nmt_lr_at(&(nmt_lr_schedule){.lr = lr, .warmup = warmup, .decay = NMT_LR_INVERSE_SQRT}, step);
}

START_TEST(schedule_worked_numbers) {
    /* lr 1e-3, warmup 800: linear to the peak at step 800, then lr * sqrt(800 / t). */
    ck_assert_double_eq_tol(lr_at(1e-3, 800, 1), 1.25e-6, 1e-15);
    ck_assert_double_eq_tol(lr_at(1e-3, 800, 400), 5e-4, 1e-15);
    ck_assert_double_eq_tol(lr_at(1e-3, 800, 800), 1e-3, 1e-15);
    ck_assert_double_eq_tol(lr_at(1e-3, 800, 3200), 5e-4, 1e-15);
    ck_assert_double_eq_tol(lr_at(1e-3, 800, 12800), 2.5e-4, 1e-15);
    /* 4000 warm-up steps, the paper's: at step 16000 the rate is half the peak. */
    ck_assert_double_eq_tol(lr_at(7e-4, 4000, 16000), 3.5e-4, 1e-15);
    /* No warm-up: constant. */
    ck_assert_double_eq(lr_at(5e-4, 0, 1), 5e-4);
    ck_assert_double_eq(lr_at(5e-4, 0, 100000), 5e-4);
}
END_TEST

START_TEST(schedules_that_end_reach_their_floor) {
    /* Peak 1e-3 at step 1000, floor 1e-4 at step 5000 (4000 decay steps). */
    nmt_lr_schedule s = {.lr = 1e-3, .warmup = 1000, .decay = NMT_LR_LINEAR, .decay_steps = 5000, .min_lr = 1e-4};
    ck_assert_double_eq_tol(nmt_lr_at(&s, 500), 5e-4, 1e-15); /* the warm-up is the same for every shape */
    ck_assert_double_eq_tol(nmt_lr_at(&s, 1000), 1e-3, 1e-15);
    ck_assert_double_eq_tol(nmt_lr_at(&s, 2000), 7.75e-4, 1e-15); /* a quarter down: 1e-4 + 9e-4 * 3/4 */
    ck_assert_double_eq_tol(nmt_lr_at(&s, 3000), 5.5e-4, 1e-15);
    ck_assert_double_eq_tol(nmt_lr_at(&s, 4999), 1e-4 + 9e-4 / 4000, 1e-15);
    ck_assert_double_eq(nmt_lr_at(&s, 5000), 1e-4);
    ck_assert_double_eq(nmt_lr_at(&s, 1000000), 1e-4);
    s.decay = NMT_LR_COSINE; /* 1e-4 + 9e-4 * (1 + cos(pi * done)) / 2 */
    ck_assert_double_eq_tol(nmt_lr_at(&s, 250), 2.5e-4, 1e-15);
    ck_assert_double_eq_tol(nmt_lr_at(&s, 1000), 1e-3, 1e-15);
    ck_assert_double_eq_tol(nmt_lr_at(&s, 2000), 1e-4 + 9e-4 * (1 + sqrt(0.5)) / 2, 1e-15); /* done 1/4 */
    ck_assert_double_eq_tol(nmt_lr_at(&s, 3000), 5.5e-4, 1e-15);                           /* half-way */
    ck_assert_double_eq_tol(nmt_lr_at(&s, 4000), 1e-4 + 9e-4 * (1 - sqrt(0.5)) / 2, 1e-15);
    ck_assert_double_eq(nmt_lr_at(&s, 5000), 1e-4);
    ck_assert_double_eq(nmt_lr_at(&s, 7000), 1e-4);
    /* Without a warm-up the decay starts at the peak on step 0 (step 1 is the first update). */
    s = (nmt_lr_schedule){.lr = 2e-3, .decay = NMT_LR_LINEAR, .decay_steps = 100};
    ck_assert_double_eq_tol(nmt_lr_at(&s, 1), 2e-3 * 0.99, 1e-15);
    ck_assert_double_eq_tol(nmt_lr_at(&s, 50), 1e-3, 1e-15);
    ck_assert_double_eq(nmt_lr_at(&s, 100), 0.0);
    /* Every step's rate lies between the floor and the peak, and falls after the warm-up. */
    s = (nmt_lr_schedule){.lr = 1e-3, .warmup = 10, .decay = NMT_LR_COSINE, .decay_steps = 1000, .min_lr = 1e-5};
    for (long t = 11; t <= 1200; t++) {
        ck_assert(nmt_lr_at(&s, t) <= nmt_lr_at(&s, t - 1));
        ck_assert(nmt_lr_at(&s, t) >= 1e-5 && nmt_lr_at(&s, t) <= 1e-3);
    }
}
END_TEST

START_TEST(adam_matches_hand_computation) {
    nmt_adam adam;
    ck_assert_int_eq(nmt_adam_init(&adam, 3, 0.9, 0.98, 1e-9), 0);
    float p[3] = {1.0f, 1.0f, -0.5f};
    /* The trainer passes summed gradients and a scale: here raw = 2 g with scale 0.5. */
    float g[3] = {1.0f, -4.0f, 0.0f};
    nmt_adam_update(&adam, p, g, 0.1, 0.5);
    ck_assert_int_eq(adam.step, 1);
    ck_assert_float_eq_tol(p[0], 0.9f, 1e-6f);
    ck_assert_float_eq_tol(p[1], 1.1f, 1e-6f);
    ck_assert_float_eq(p[2], -0.5f);
    ck_assert_float_eq_tol(adam.m[1], -0.2f, 1e-7f);
    ck_assert_float_eq_tol(adam.v[1], 0.08f, 1e-7f);
    /* The update zeroes the gradients for the next step. */
    ck_assert_float_eq(g[0], 0.0f);
    ck_assert_float_eq(g[1], 0.0f);
    g[0] = 3.0f;
    g[1] = -4.0f;
    g[2] = 6.0f;
    nmt_adam_update(&adam, p, g, 0.1, 0.5);
    ck_assert_float_eq_tol(p[0], 0.808572187f, 1e-6f);
    ck_assert_float_eq_tol(p[1], 1.2f, 1e-6f);
    ck_assert_float_eq_tol(p[2], -0.574059196f, 1e-6f);
    ck_assert_float_eq_tol(adam.m[0], 0.195f, 1e-7f);
    ck_assert_float_eq_tol(adam.v[0], 0.0499f, 1e-7f);
    ck_assert_float_eq_tol(adam.v[2], 0.18f, 1e-7f);
    nmt_adam_free(&adam);
}
END_TEST

/* AdamW: each parameter first shrinks by 1 - lr wd, then takes Adam's step (torch.optim.AdamW). */
START_TEST(adamw_decays_then_steps) {
    nmt_adam adam;
    ck_assert_int_eq(nmt_adam_init(&adam, 3, 0.9, 0.98, 1e-9), 0);
    ck_assert(adam.weight_decay == 0.0);
    adam.weight_decay = 0.5;
    float p[3] = {1.0f, -1.0f, 0.0f};
    float g[3] = {0.0f, 1.0f, -2.0f};
    nmt_adam_update(&adam, p, g, 0.1, 1.0);
    ck_assert_float_eq_tol(p[0], 0.95f, 1e-7f);         /* no gradient: decay alone */
    ck_assert_float_eq_tol(p[1], -0.95f - 0.1f, 1e-6f); /* decay, then Adam's first step of lr against the sign */
    ck_assert_float_eq_tol(p[2], 0.1f, 1e-6f);          /* zero does not decay */
    /* Second step, the same gradient for p[1]: m = 0.19 and v = 0.0396 equal their bias corrections
     * 1 - 0.9^2 and 1 - 0.98^2, so Adam's step is lr again, after the decay of -1.05. */
    g[1] = 1.0f;
    nmt_adam_update(&adam, p, g, 0.1, 1.0);
    ck_assert_float_eq_tol(p[1], -1.05f * 0.95f - 0.1f, 1e-6f);
    nmt_adam_free(&adam);
}
END_TEST

START_TEST(clipping) {
    /* A 3-4-5 gradient spread over many blocks: norm 5 * 100 = 500 for 10000 copies of (3, 4). */
    enum { N = 20000 };
    nmt_adam adam;
    ck_assert_int_eq(nmt_adam_init(&adam, N, 0.9, 0.98, 1e-9), 0);
    ck_assert_int_gt(adam.num_blocks, 1);
    float *g = malloc(N * sizeof *g);
    for (int i = 0; i < N; i++) g[i] = i % 2 ? 4.0f : 3.0f;
    ck_assert_double_eq_tol(nmt_adam_grad_norm(&adam, g), 500.0, 1e-9);
    ck_assert_double_eq_tol(nmt_clip_factor(500.0, 5.0), 0.01, 1e-15);
    ck_assert_double_eq(nmt_clip_factor(4.0, 5.0), 1.0);
    ck_assert_double_eq(nmt_clip_factor(500.0, 0.0), 1.0);
    /* A clipped step is Adam on the clipped gradient: the first step still moves by lr (sign only),
     * but the moments see the scaled gradient: m = 0.1 * 3 * 0.01. */
    float *p = calloc(N, sizeof *p);
    nmt_adam_update(&adam, p, g, 0.1, nmt_clip_factor(500.0, 5.0));
    ck_assert_float_eq_tol(adam.m[0], 0.003f, 1e-9f);
    ck_assert_float_eq_tol(p[0], -0.1f, 1e-6f);
    free(p);
    free(g);
    nmt_adam_free(&adam);
}
END_TEST

/* The same updates on 1 and 2 threads give the same bits. */
START_TEST(threads_do_not_change_results) {
    enum { N = 100003 };
    float *p[2], *g[2];
    double norm[2];
    for (int run = 0; run < 2; run++) {
        nmt_pool_set_threads(run + 1);
        nmt_adam adam;
        ck_assert_int_eq(nmt_adam_init(&adam, N, 0.9, 0.98, 1e-9), 0);
        p[run] = malloc(N * sizeof(float));
        g[run] = malloc(N * sizeof(float));
        for (int i = 0; i < N; i++) p[run][i] = sinf((float)i);
        for (int step = 1; step <= 3; step++) {
            for (int i = 0; i < N; i++) g[run][i] = cosf((float)(i * step)) * 1e-3f;
            norm[run] = nmt_adam_grad_norm(&adam, g[run]);
            nmt_adam_update(&adam, p[run], g[run], 1e-3, 1.0 / norm[run]);
        }
        nmt_adam_free(&adam);
    }
    ck_assert(norm[0] == norm[1]);
    ck_assert_mem_eq(p[0], p[1], N * sizeof(float));
    for (int run = 0; run < 2; run++) {
        free(p[run]);
        free(g[run]);
    }
    nmt_pool_set_threads(1);
}
END_TEST

/* Three optimizers keeping slices [0, a), [a, b), [b, N) of one whole optimizer, each updating its
 * slice of its own copy of the parameters: pasted together, the bits of the whole one's update. */
START_TEST(slices_update_like_the_whole) {
    enum { N = 20000, S = 3 };
    size_t bounds[S + 1] = {0, 16384 + 16, 18000, N};
    static float whole_p[N], slice_p[S][N], g[N], want_m[N];
    nmt_adam whole, part[S];
    ck_assert_int_eq(nmt_adam_init(&whole, N, 0.9, 0.98, 1e-9), 0);
    for (int i = 0; i < N; i++) whole_p[i] = sinf((float)i);
    for (int r = 0; r < S; r++) {
        memcpy(slice_p[r], whole_p, sizeof whole_p);
        ck_assert_int_eq(nmt_adam_init(&part[r], N, 0.9, 0.98, 1e-9), 0);
        ck_assert_int_eq(nmt_adam_keep_slice(&part[r], bounds[r], bounds[r + 1]), 0);
        ck_assert_uint_eq(part[r].lo, bounds[r]);
        ck_assert_uint_eq(part[r].hi, bounds[r + 1]);
    }
    ck_assert_int_eq(nmt_adam_keep_slice(&part[0], 0, 1), -1); /* already a slice */
    static float step_g[N];
    for (int step = 1; step <= 3; step++) {
        for (int i = 0; i < N; i++) step_g[i] = cosf((float)(i * step)) * 1e-3f;
        memcpy(g, step_g, sizeof g);
        nmt_adam_update(&whole, whole_p, g, 1e-3, 2.0);
        for (int r = 0; r < S; r++) {
            memcpy(g, step_g, sizeof g);
            nmt_adam_update(&part[r], slice_p[r], g, 1e-3, 2.0);
            int zeroed = 1;
            for (int i = 0; i < N; i++) zeroed &= g[i] == 0.0f;
            ck_assert(zeroed); /* every gradient, in the slice or not */
        }
    }
    for (int r = 0; r < S; r++) {
        size_t lo = bounds[r], n = bounds[r + 1] - lo;
        ck_assert_mem_eq(slice_p[r] + lo, whole_p + lo, n * sizeof(float));
        memcpy(want_m + lo, part[r].m, n * sizeof(float));
        ck_assert_mem_eq(part[r].v, whole.v + lo, n * sizeof(float));
        ck_assert_int_eq(part[r].step, 3);
        nmt_adam_free(&part[r]);
    }
    ck_assert_mem_eq(want_m, whole.m, sizeof want_m);
    nmt_adam_free(&whole);
}
END_TEST

int main(void) {
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_add_test(tc, schedule_worked_numbers);
    tcase_add_test(tc, schedules_that_end_reach_their_floor);
    tcase_add_test(tc, adam_matches_hand_computation);
    tcase_add_test(tc, adamw_decays_then_steps);
    tcase_add_test(tc, clipping);
    tcase_add_test(tc, threads_do_not_change_results);
    tcase_add_test(tc, slices_update_like_the_whole);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
