/* Tests of sampling: draws follow the distribution at each temperature (empirical frequencies of
 * many keys against the probabilities), top-k and nucleus keep exactly the tokens a sort of the
 * whole vocabulary keeps (against a reference that sorts, over a vocabulary of 8,000), pad and bos
 * are never drawn, and a draw is a pure function of (seed, key, position). */
#include "infer/sampling.h"

#include "base/util.h"
#include "compute/kernels.h"
#include "text/vocab.h"
#include "testing.h"

#include <math.h>
#include <stdlib.h>

enum { SMALL_V = 12, BIG_V = 8000 };

static float probs[BIG_V];
static nmt_sampling_candidate candidates[BIG_V];
static const nmt_sampling_scratch scratch = {probs, candidates};

/* logprobs[V] = log of weights[V] normalised (0 weights give -infinity). */
static void log_normalise(const double *weights, int V, float *logprobs) {
    double total = 0;
    for (int i = 0; i < V; i++) total += weights[i];
    for (int i = 0; i < V; i++) logprobs[i] = weights[i] > 0 ? (float)log(weights[i] / total) : -INFINITY;
}

/* Draws `draws` keys and checks each token's frequency against want[] (probabilities summing to
 * 1) within 5 standard deviations (the draws are a fixed sequence: this never fails by chance). */
static void expect_frequencies(const nmt_sampling *s, const float *logprobs, int V, const double *want, int draws) {
    int count[SMALL_V] = {0};
    for (int key = 0; key < draws; key++) {
        const int32_t token = nmt_sampling_draw(s, logprobs, V, (uint64_t)key, 3, scratch);
        ck_assert_int_ge(token, 0);
        ck_assert_int_lt(token, V);
        count[token]++;
    }
    for (int i = 0; i < V; i++) {
        const double f = (double)count[i] / draws, sd = sqrt(want[i] * (1 - want[i]) / draws);
        ck_assert_msg(fabs(f - want[i]) <= 5 * sd + 1e-12, "token %d: frequency %.5f, probability %.5f", i, f, want[i]);
        if (want[i] == 0) ck_assert_int_eq(count[i], 0);
    }
}

START_TEST(draws_follow_the_distribution) {
    const double weights[SMALL_V] = {0.3, 0.2, 0.05, 1.0, 0.5, 2.0, 0.01, 0.7, 0.0, 1.5, 0.25, 0.4};
    float logprobs[SMALL_V];
    log_normalise(weights, SMALL_V, logprobs);
    for (int t = 0; t < 3; t++) {
        const double temperature[3] = {1.0, 0.5, 2.0};
        nmt_sampling s = nmt_sampling_default();
        s.enabled = 1;
        s.temperature = temperature[t];
        /* p_i proportional to w_i^(1/T), pad (0) and bos (2) excluded. */
        double want[SMALL_V], total = 0;
        for (int i = 0; i < SMALL_V; i++) {
            want[i] = i == NMT_PAD || i == NMT_BOS || weights[i] == 0 ? 0 : pow(weights[i], 1 / temperature[t]);
            total += want[i];
        }
        for (int i = 0; i < SMALL_V; i++) want[i] /= total;
        expect_frequencies(&s, logprobs, SMALL_V, want, 200000);
    }
}
END_TEST

START_TEST(top_k_and_nucleus_keep_the_most_probable) {
    /* Probabilities in binary fractions, so that the nucleus sums are exact: token 5 0.5, 9 0.25,
     * 3 0.125, 7 and 11 0.0625 each (a tie), pad most probable of all but never drawn. */
    float logprobs[SMALL_V];
    for (int i = 0; i < SMALL_V; i++) logprobs[i] = -INFINITY;
    logprobs[NMT_PAD] = logf(0.9f);
    logprobs[5] = logf(0.5f), logprobs[9] = logf(0.25f), logprobs[3] = logf(0.125f);
    logprobs[7] = logprobs[11] = logf(0.0625f);
    nmt_sampling s = nmt_sampling_default();
    s.enabled = 1;
    double want[SMALL_V] = {0};
    s.top_k = 2; /* {5, 9} renormalised */
    want[5] = 2.0 / 3, want[9] = 1.0 / 3;
    expect_frequencies(&s, logprobs, SMALL_V, want, 50000);
    s.top_k = 4; /* the tie at the boundary goes to the smaller id: 7, not 11 */
    want[5] = 0.5 / 0.9375, want[9] = 0.25 / 0.9375, want[3] = 0.125 / 0.9375, want[7] = 0.0625 / 0.9375;
    expect_frequencies(&s, logprobs, SMALL_V, want, 50000);
    s.top_k = 0;
    s.top_p = 0.75; /* 0.5 + 0.25 reaches it */
    memset(want, 0, sizeof want);
    want[5] = 2.0 / 3, want[9] = 1.0 / 3;
    expect_frequencies(&s, logprobs, SMALL_V, want, 50000);
    s.top_p = 0.76; /* one more */
    want[5] = 0.5 / 0.875, want[9] = 0.25 / 0.875, want[3] = 0.125 / 0.875;
    expect_frequencies(&s, logprobs, SMALL_V, want, 50000);
    s.top_p = 0.1; /* the most probable alone */
    memset(want, 0, sizeof want);
    want[5] = 1;
    expect_frequencies(&s, logprobs, SMALL_V, want, 1000);
    s.top_k = 3;
    s.top_p = 0.8; /* of the top 3 (0.875): 0.7 of it, so 5 and 9 */
    want[5] = 2.0 / 3, want[9] = 1.0 / 3;
    expect_frequencies(&s, logprobs, SMALL_V, want, 50000);
}
END_TEST

static int by_probability(const void *a, const void *b) {
    const nmt_sampling_candidate *x = a, *y = b;
    if (x->p != y->p) return x->p > y->p ? -1 : 1;
    return (x->token > y->token) - (x->token < y->token);
}

/* The reference draw: sorts the whole vocabulary, cuts it, inverts at the same number. */
static int32_t reference_draw(const nmt_sampling *s, const float *logprobs, int V, uint64_t key, int position) {
    static float p[BIG_V];
    static nmt_sampling_candidate all[BIG_V];
    for (int i = 0; i < V; i++) p[i] = i == NMT_PAD || i == NMT_BOS ? -INFINITY : logprobs[i] / (float)s->temperature;
    nmt_softmax_rows(p, 1, V);
    int n = 0;
    double total = 0;
    for (int i = 0; i < V; i++)
        if (p[i] > 0) {
            all[n++] = (nmt_sampling_candidate){p[i], i};
            total += p[i];
        }
    qsort(all, (size_t)n, sizeof *all, by_probability);
    if (s->top_k > 0 && n > s->top_k) {
        n = s->top_k;
        total = 0;
        for (int i = 0; i < n; i++) total += all[i].p;
    }
    double prefix = 0;
    int m = 0;
    while (m < n && prefix < s->top_p * total) prefix += all[m++].p;
    const double u = nmt_sampling_uniform(s->seed, key, position);
    double cum = 0;
    for (int i = 0; i < m; i++)
        if ((cum += all[i].p) > u * prefix) return all[i].token;
    return all[m - 1].token;
}

START_TEST(restricted_draws_match_a_full_sort) {
    static float logprobs[BIG_V];
    uint64_t state = 5;
    for (int round = 0; round < 3; round++) {
        /* A peaked row (a few likely tokens over a long tail), then flatter ones. */
        const double spread = round == 0 ? 6.0 : round == 1 ? 2.0 : 0.3;
        for (int i = 0; i < BIG_V; i++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            logprobs[i] = (float)(spread * (double)(state >> 11) * 0x1p-53 * (i % 97 == 0 ? 3 : 1));
        }
        nmt_log_softmax_rows(logprobs, 1, BIG_V);
        const int top_k[] = {1, 5, 40, 1000, 0, 0, 0, 0, 50};
        const double top_p[] = {1, 1, 1, 1, 0.5, 0.9, 0.99, 0.999, 0.9};
        for (int c = 0; c < 9; c++) {
            nmt_sampling s = nmt_sampling_default();
            s.enabled = 1;
            s.top_k = top_k[c];
            s.top_p = top_p[c];
            s.temperature = c % 2 ? 0.7 : 1.0;
            s.seed = 11;
            for (int key = 0; key < 40; key++) {
                const int32_t got = nmt_sampling_draw(&s, logprobs, BIG_V, (uint64_t)key, key % 7, scratch);
                const int32_t want = reference_draw(&s, logprobs, BIG_V, (uint64_t)key, key % 7);
                ck_assert_msg(got == want, "round %d, top-k %d, top-p %g, key %d: %d, the full sort %d", round,
                              top_k[c], top_p[c], key, got, want);
            }
        }
    }
}
END_TEST

START_TEST(a_draw_is_a_function_of_seed_key_and_position) {
    double seen[64];
    for (int i = 0; i < 64; i++) {
        seen[i] = nmt_sampling_uniform(1, (uint64_t)(i / 8), i % 8);
        ck_assert(seen[i] >= 0 && seen[i] < 1);
        ck_assert(seen[i] == nmt_sampling_uniform(1, (uint64_t)(i / 8), i % 8));
        for (int j = 0; j < i; j++) ck_assert(seen[j] != seen[i]);
        ck_assert(nmt_sampling_uniform(2, (uint64_t)(i / 8), i % 8) != seen[i]);
    }
    /* Nothing finite to draw from, or only pad and bos: no token. */
    float row[4] = {-INFINITY, -INFINITY, -INFINITY, NAN};
    nmt_sampling s = nmt_sampling_default();
    s.enabled = 1;
    ck_assert_int_eq(nmt_sampling_draw(&s, row, 4, 0, 0, scratch), -1);
    row[NMT_PAD] = row[NMT_BOS] = 0;
    ck_assert_int_eq(nmt_sampling_draw(&s, row, 4, 0, 0, scratch), -1);
    row[1] = -3;
    ck_assert_int_eq(nmt_sampling_draw(&s, row, 4, 0, 0, scratch), 1);
}
END_TEST

START_TEST(impossible_settings_are_refused) {
    nmt_sampling s = nmt_sampling_default();
    ck_assert_int_eq(nmt_sampling_check(&s), 0);
    s.top_p = 0;
    ck_assert_int_eq(nmt_sampling_check(&s), -1);
    ck_assert_str_eq(nmt_error(), "sampling top-p must be in (0, 1], got 0");
    s.top_p = 1.5;
    ck_assert_int_eq(nmt_sampling_check(&s), -1);
    s.top_p = NAN;
    ck_assert_int_eq(nmt_sampling_check(&s), -1);
    s = nmt_sampling_default();
    s.temperature = 0;
    ck_assert_int_eq(nmt_sampling_check(&s), -1);
    ck_assert_str_eq(nmt_error(), "sampling temperature must be > 0 and at most 1000, got 0");
    s.temperature = INFINITY;
    ck_assert_int_eq(nmt_sampling_check(&s), -1);
    s = nmt_sampling_default();
    s.top_k = -1;
    ck_assert_int_eq(nmt_sampling_check(&s), -1);
}
END_TEST

int main(void) {
    Suite *s = suite_create("sampling");
    TCase *tc = tcase_create("sampling");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, draws_follow_the_distribution);
    tcase_add_test(tc, top_k_and_nucleus_keep_the_most_probable);
    tcase_add_test(tc, restricted_draws_match_a_full_sort);
    tcase_add_test(tc, a_draw_is_a_function_of_seed_key_and_position);
    tcase_add_test(tc, impossible_settings_are_refused);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
