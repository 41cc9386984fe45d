/* Tests of metric: the common interface, and sacreBLEU's resampling tests reproduced to the bit.
 * Expected numbers are sacreBLEU 2.6's output (NumPy 1.24) for the README example below:
 *   sacrebleu r0 r1 -i h1 -m bleu chrf ter -ci -cin 100 -w 10
 *   sacrebleu r0 r1 -i h1 h2 -m bleu chrf ter --paired-bs -pbsn 100 -f json
 *   sacrebleu r0 r1 -i h1 h2 -m bleu ter --paired-ar -parn 200 -f json */
#include "eval/metric.h"
#include "base/util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const char *const r0[] = {"The dog bit the man.", "It was not unexpected.", "The man bit him first."};
static const char *const r1[] = {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."};
static const char *const h1[] = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
static const char *const h2[] = {"The dog bit a man.", "It was surprising.", "The man bit him."};

/* Segment statistics of a system (3 rows) and its corpus score. */
static double *stats_of(nmt_metric *m, const char *const *hyps, double *score) {
    int k = nmt_metric_stat_count(m);
    double *stats = malloc(3 * (size_t)k * sizeof *stats), sum[64];
    for (int i = 0; i < 3; i++) {
        const char *refs[] = {r0[i], r1[i]};
        size_t lens[] = {strlen(r0[i]), strlen(r1[i])};
        ck_assert_int_eq(nmt_metric_segment(m, hyps[i], strlen(hyps[i]), refs, lens, 2, stats + i * k), 0);
    }
    nmt_metric_sum(stats, 3, k, sum);
    *score = nmt_metric_compute(m, sum, NMT_PYNUM_PYTHON, NULL, 0);
    return stats;
}

static nmt_metric *metric(nmt_metric_kind kind) {
    nmt_metric_options o = nmt_metric_options_default();
    nmt_metric *m = nmt_metric_create(kind, &o);
    ck_assert_ptr_nonnull(m);
    return m;
}

START_TEST(interface) {
    nmt_metric_kind kind;
    ck_assert_int_eq(nmt_metric_parse("chrf", &kind), 0);
    ck_assert_int_eq(kind, NMT_METRIC_CHRF);
    ck_assert_int_eq(nmt_metric_parse("meteor", &kind), -1);
    const char *names[] = {"BLEU", "chrF2", "TER"};
    const int counts[] = {10, 18, 2};
    const double scores[] = {48.530827009929865, 59.72751782684763, 40.0};
    for (int k = 0; k < 3; k++) {
        nmt_metric *m = metric((nmt_metric_kind)k);
        ck_assert_str_eq(nmt_metric_name(m), names[k]);
        ck_assert_int_eq(nmt_metric_stat_count(m), counts[k]);
        double score;
        free(stats_of(m, h1, &score));
        ck_assert_double_eq(score, scores[k]);
        nmt_metric_free(m);
    }
}
END_TEST

START_TEST(bootstrap_confidence) {
    /* -ci -cin 100: the mean (statistics.mean) and CI of each metric, to 10 decimals. */
    const double means[] = {48.9384706530, 61.6577938561, 39.4656573683};
    const double cis[] = {46.7549967372, 32.3268232173, 37.5};
    nmt_metric_seed seed = {0, 12345};
    for (int k = 0; k < 3; k++) {
        nmt_metric *m = metric((nmt_metric_kind)k);
        double score, scores[100], again[100];
        double *stats = stats_of(m, h1, &score);
        const double *systems[] = {stats};
        double *out[] = {scores}, *out2[] = {again};
        ck_assert_int_eq(nmt_metric_bootstrap(m, systems, 1, 3, &seed, 100, out), 0);
        ck_assert_int_eq(nmt_metric_bootstrap(m, systems, 1, 3, &seed, 100, out2), 0);
        ck_assert(memcmp(scores, again, sizeof scores) == 0); /* reproducible */
        double mean, ci = nmt_metric_ci(scores, 100, 0, &mean);
        ck_assert_double_eq_tol(mean, means[k], 5e-11);
        ck_assert_double_eq_tol(ci, cis[k], 5e-11);
        ck_assert(score >= mean - 2 * ci && score <= mean + 2 * ci);
        free(stats);
        nmt_metric_free(m);
    }
}
END_TEST

START_TEST(paired_bootstrap) {
    const double p[] = {0.26732673267326734, 0.46534653465346537, 0.27722772277227725};
    const double means[] = {35.543573788576644, 59.102769906521374, 33.218855768442154};
    const double cis[] = {16.40012659300429, 6.672088586162825, 15.909090638160706}; /* TER: float32 sums */
    const double base_means[] = {48.93847065301487, 61.65779385614776, 39.465657368302345};
    nmt_metric_seed seed = {0, 12345};
    for (int k = 0; k < 3; k++) {
        nmt_metric *m = metric((nmt_metric_kind)k);
        double base_score, sys_score, p_value, mean, ci;
        double *base = stats_of(m, h1, &base_score), *sys = stats_of(m, h2, &sys_score);
        ck_assert_int_eq(nmt_metric_paired_bootstrap(m, base, sys, 3, &seed, 100, base_score, sys_score, &p_value, &mean, &ci), 0);
        ck_assert_double_eq(p_value, p[k]);
        ck_assert_double_eq(mean, means[k]);
        ck_assert_double_eq(ci, cis[k]);
        /* the baseline's own bootstrap uses numpy's mean */
        double scores[100];
        const double *systems[] = {base};
        double *out[] = {scores};
        ck_assert_int_eq(nmt_metric_bootstrap(m, systems, 1, 3, &seed, 100, out), 0);
        nmt_metric_ci(scores, 100, 1, &mean);
        ck_assert_double_eq(mean, base_means[k]);
        free(base);
        free(sys);
        nmt_metric_free(m);
    }
}
END_TEST

START_TEST(paired_randomization) {
    nmt_metric_seed seed = {0, 12345};
    const nmt_metric_kind kinds[] = {NMT_METRIC_BLEU, NMT_METRIC_TER};
    const double p[] = {0.7562189054726368, 0.20398009950248755};
    for (int k = 0; k < 2; k++) {
        nmt_metric *m = metric(kinds[k]);
        double base_score, sys_score, p_value;
        double *base = stats_of(m, h1, &base_score), *sys = stats_of(m, h2, &sys_score);
        ck_assert_int_eq(nmt_metric_paired_randomization(m, base, sys, 3, &seed, 200, base_score, sys_score, &p_value), 0);
        ck_assert_double_eq(p_value, p[k]);
        free(base);
        free(sys);
        nmt_metric_free(m);
    }
}
END_TEST

START_TEST(means_and_p_values) {
    /* numpy's pairwise mean and Python's exact statistics.mean differ in the last bit here
     * (NumPy 1.24 / Python 3.11: 50.05 and 50.050000000000004). */
    double x[1000];
    for (int i = 0; i < 1000; i++) x[i] = 0.1 * (i + 1);
    ck_assert_double_eq(nmt_metric_numpy_mean(x, 1000), 50.05);
    double mean;
    nmt_metric_ci(x, 1000, 0, &mean);
    ck_assert_double_eq(mean, 50.050000000000004);
    /* CI: half the distance between the 25th lowest and 25th highest of 1000. */
    ck_assert_double_eq(nmt_metric_ci(x, 1000, 1, &mean), 0.5 * (x[974] - x[25]));
    double d[] = {0.5, -1, 2, 3};
    ck_assert_double_eq(nmt_metric_p_value(d, 4, 1.0), 3.0 / 5);
}
END_TEST

int main(void) {
    Suite *s = suite_create("metric");
    TCase *tc = tcase_create("metric");
    tcase_add_test(tc, interface);
    tcase_add_test(tc, bootstrap_confidence);
    tcase_add_test(tc, paired_bootstrap);
    tcase_add_test(tc, paired_randomization);
    tcase_add_test(tc, means_and_p_values);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
