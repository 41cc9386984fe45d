/* Tests of evaluate: corpus scores over the compute pool (the same to the bit on any thread count),
 * the checks sacreBLEU makes, and whole reports. Expected numbers are sacreBLEU 2.6.0's for its README
 * example (r0 r1 h1 h2 below):
 *   sacrebleu r0 r1 -i h1 -m bleu chrf ter -w 10 -f text
 *   sacrebleu r0 -i h1 -sl -f text -w 4
 *   sacrebleu r0 r1 -i h1 h2 -m bleu --paired-bs -pbsn 100 -f text -w 2 */
#include "eval/evaluate.h"
#include "base/util.h"
#include "compute/pool.h"
#include "testing.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *r0_lines[] = {"The dog bit the man.", "It was not unexpected.", "The man bit him first."};
static const char *r1_lines[] = {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."};
static const char *h1_lines[] = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
static const char *h2_lines[] = {"The dog bit a man.", "It was surprising.", "The man bit him."};

static nmt_segments stream(const char *name, const char **lines, size_t count) {
    nmt_segments s = {.name = name};
    for (size_t i = 0; i < count; i++) ck_assert_int_eq(nmt_segments_push(&s, lines[i], strlen(lines[i])), 0);
    return s;
}

static void stream_free(nmt_segments *s) {
    free(s->lines);
    free(s->lens);
}

static nmt_segments r0, r1, h1, h2;
static const nmt_segments *refs[2], *systems[2];

static void setup(void) {
    r0 = stream("r0", r0_lines, 3);
    r1 = stream("r1", r1_lines, 3);
    h1 = stream("h1", h1_lines, 3);
    h2 = stream("h2", h2_lines, 3);
    refs[0] = &r0, refs[1] = &r1, systems[0] = &h1, systems[1] = &h2;
}

static void teardown(void) {
    stream_free(&r0);
    stream_free(&r1);
    stream_free(&h1);
    stream_free(&h2);
}

/* A metric with nmt bleu's default options. */
static nmt_metric *metric(nmt_metric_kind kind) {
    nmt_evaluate_options o = nmt_evaluate_options_default();
    nmt_metric *m = nmt_metric_create(kind, &o.metric);
    ck_assert_ptr_nonnull(m);
    return m;
}

START_TEST(system_scores) {
    const nmt_metric_kind kinds[] = {NMT_METRIC_BLEU, NMT_METRIC_CHRF, NMT_METRIC_TER};
    const char *want[] = {"48.5308270099", "59.7275178268", "40.0000000000"};
    for (int i = 0; i < 3; i++) {
        nmt_metric *m = metric(kinds[i]);
        nmt_evaluate_scored s;
        ck_assert_int_eq(nmt_evaluate_system(m, &h1, refs, 2, 1, &s), 0);
        char text[32];
        snprintf(text, sizeof text, "%.10f", s.score);
        ck_assert_str_eq(text, want[i]);
        ck_assert_ptr_nonnull(s.stats);
        free(s.stats);
        ck_assert_int_eq(nmt_evaluate_system(m, &h1, refs, 2, 0, &s), 0);
        ck_assert_ptr_null(s.stats);
        nmt_metric_free(m);
    }
    nmt_metric *bleu = metric(NMT_METRIC_BLEU);
    nmt_evaluate_scored s;
    ck_assert_int_eq(nmt_evaluate_system(bleu, &h1, refs, 2, 0, &s), 0);
    ck_assert_str_eq(s.verbose, "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
    nmt_metric_free(bleu);
}
END_TEST

/* A corpus large enough for several shares: the same score and statistics on 1 and 3 threads. */
START_TEST(threads_change_nothing) {
    enum { N = 2600 };
    static char hyp_text[N][64], ref_text[N][64];
    nmt_segments hyps = {.name = "hyps"}, ref = {.name = "ref"};
    for (int i = 0; i < N; i++) {
        snprintf(hyp_text[i], sizeof hyp_text[i], "line %d had %d words like %d .", i, i % 5, i % 13);
        snprintf(ref_text[i], sizeof ref_text[i], "line %d has %d words, like %d.", i, i % 7, i % 13);
        ck_assert_int_eq(nmt_segments_push(&hyps, hyp_text[i], strlen(hyp_text[i])), 0);
        ck_assert_int_eq(nmt_segments_push(&ref, ref_text[i], strlen(ref_text[i])), 0);
    }
    const nmt_segments *one[] = {&ref};
    for (int kind = NMT_METRIC_BLEU; kind <= NMT_METRIC_TER; kind++) {
        nmt_metric *m = metric((nmt_metric_kind)kind);
        int k = nmt_metric_stat_count(m);
        nmt_evaluate_scored a, b;
        ck_assert_int_eq(nmt_pool_set_threads(1), 0);
        ck_assert_int_eq(nmt_evaluate_system(m, &hyps, one, 1, 1, &a), 0);
        ck_assert_int_eq(nmt_pool_set_threads(3), 0);
        ck_assert_int_eq(nmt_evaluate_system(m, &hyps, one, 1, 1, &b), 0);
        ck_assert(a.score == b.score);
        ck_assert_int_eq(memcmp(a.stats, b.stats, (size_t)N * (size_t)k * sizeof *a.stats), 0);
        ck_assert(a.score > 0 && a.score < 100);
        free(a.stats);
        free(b.stats);
        nmt_metric_free(m);
    }
    stream_free(&hyps);
    stream_free(&ref);
    nmt_pool_set_threads(1);
}
END_TEST

START_TEST(checks_name_streams_and_counts) {
    nmt_evaluate_options o = nmt_evaluate_options_default();
    ck_assert_int_eq(nmt_evaluate_check(&o, systems, 2, refs, 2), 0);
    const char *short_lines[] = {"one", "two"};
    nmt_segments hyp = stream("hyp.txt", short_lines, 2);
    const nmt_segments *bad[] = {&hyp};
    ck_assert_int_eq(nmt_evaluate_check(&o, bad, 1, refs, 2), -1);
    ck_assert_str_eq(nmt_error(), "hyp.txt has 2 lines but r0 has 3");
    hyp.count = 0;
    ck_assert_int_eq(nmt_evaluate_check(&o, bad, 1, refs, 2), -1);
    ck_assert_str_eq(nmt_error(), "hyp.txt has no lines");
    stream_free(&hyp);

    o.sentence_level = 1;
    ck_assert_int_eq(nmt_evaluate_check(&o, systems, 2, refs, 2), -1);
    ck_assert_str_eq(nmt_error(), "only one system can be evaluated in sentence-level mode");
    o.confidence = 1;
    ck_assert_int_eq(nmt_evaluate_check(&o, systems, 1, refs, 2), -1);
    ck_assert_str_eq(nmt_error(), "statistical tests are unavailable in sentence-level mode");
    o = nmt_evaluate_options_default();
    o.paired_bs = 1;
    ck_assert_int_eq(nmt_evaluate_check(&o, systems, 1, refs, 2), -1);
    ck_assert_str_eq(nmt_error(), "paired tests need several systems given to -i");
    o = nmt_evaluate_options_default();
    o.confidence = 1;
    ck_assert_int_eq(nmt_evaluate_check(&o, systems, 2, refs, 2), -1);
    ck_assert_str_eq(nmt_error(), "use a paired test (--paired-bs, --paired-ar) for several systems");
}
END_TEST

static int flushes;
static nmt_strbuf flushed;

static int collect(void *ctx, nmt_strbuf *out) {
    ck_assert_ptr_eq(ctx, &flushes);
    flushes++;
    ck_assert_int_eq(nmt_strbuf_reserve(&flushed, flushed.len + out->len + 1), 0);
    memcpy(flushed.data + flushed.len, out->data, out->len);
    flushed.len += out->len;
    flushed.data[flushed.len] = '\0';
    out->len = 0;
    return 0;
}

/* The report with options o, flushed whole at the end. */
static char *report(const nmt_evaluate_options *o, int nsys, int nrefs) {
    nmt_strbuf out = {0};
    flushes = 0;
    flushed.len = 0;
    const char *names[] = {"Baseline: h1", "h2"};
    ck_assert_int_eq(nmt_evaluate_report(o, systems, names, nsys, refs, nrefs, &out, collect, &flushes), 0);
    ck_assert_int_eq(collect(&flushes, &out), 0);
    nmt_strbuf_free(&out);
    return flushed.data;
}

START_TEST(reports) {
    nmt_evaluate_options o = nmt_evaluate_options_default();
    o.metrics[0] = NMT_METRIC_TER, o.metrics[1] = NMT_METRIC_CHRF, o.metrics[2] = NMT_METRIC_BLEU;
    o.nmetrics = 3, o.width = 10, o.format = NMT_REPORT_TEXT;
    char *text = report(&o, 1, 2);
    /* sorted BLEU, chrF, TER and aligned on the '=' */
    const char *bleu = strstr(text, "        BLEU|nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:");
    const char *chrf = strstr(text, "\n      chrF2|nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:");
    const char *ter = strstr(text, "\nTER|nrefs:2|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:");
    ck_assert(bleu == text && chrf > bleu && ter > chrf);
    ck_assert_ptr_nonnull(strstr(text, " = 48.5308270099 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)\n"));
    ck_assert_ptr_nonnull(strstr(text, " = 59.7275178268\n"));
    ck_assert_ptr_nonnull(strstr(text, " = 40.0000000000\n"));

    o = nmt_evaluate_options_default();
    o.sentence_level = 1, o.width = 4, o.format = NMT_REPORT_TEXT, o.score_only = 1;
    ck_assert_str_eq(report(&o, 1, 1), "100.0000\n14.7940\n15.6197\n");

    o = nmt_evaluate_options_default();
    o.paired_bs = 1, o.paired_bs_n = 100, o.width = 2, o.format = NMT_REPORT_TEXT, o.seed = "12345";
    text = report(&o, 2, 2);
    ck_assert_ptr_nonnull(strstr(text, "│ Baseline: h1 │ 48.53 (48.94 ± 46.75) │\n"));
    ck_assert_ptr_nonnull(strstr(text, "│           h2 │ 35.83 (35.54 ± 16.40) │\n│              │     (p = 0.2673)      │\n"));

    o.seed = "twelve";
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_evaluate_report(&o, systems, NULL, 2, refs, 2, &out, collect, &flushes), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "'twelve'"));
    nmt_strbuf_free(&out);
    nmt_strbuf_free(&flushed);
}
END_TEST

int main(void) {
    Suite *s = suite_create("evaluate");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, system_scores);
    tcase_add_test(tc, threads_change_nothing);
    tcase_add_test(tc, checks_name_streams_and_counts);
    tcase_add_test(tc, reports);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
