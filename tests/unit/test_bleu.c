/* Tests of bleu: corpus and sentence BLEU against worked calculations and against the expected
 * values published in sacreBLEU 2.6's own test suite (test/test_bleu.py, test_sentence_bleu.py),
 * every smoothing method, each tokenizer, several references, the signature, and the
 * accumulator API that the trainer uses. */
#include "eval/bleu.h"
#include "base/util.h"
#include "nmt/version.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Corpus BLEU of hyps[i] against refs[r][i] (sacreBLEU's layout: one stream per reference). */
static nmt_bleu_score corpus(const nmt_bleu_options *o, const char *const *hyps, size_t n, const char *const *refs0,
                             const char *const *refs1) {
    nmt_bleu *bleu = nmt_bleu_create(o);
    ck_assert_ptr_nonnull(bleu);
    for (size_t i = 0; i < n; i++) {
        const char *refs[2] = {refs0[i], refs1 ? refs1[i] : NULL};
        ck_assert_int_eq(nmt_bleu_add(bleu, hyps[i], refs, refs1 ? 2 : 1), 0);
    }
    nmt_bleu_score score;
    nmt_bleu_result(bleu, &score);
    nmt_bleu_free(bleu);
    return score;
}

static nmt_bleu_score sentence(const char *hyp, const char *ref, nmt_tokenizer tok, nmt_bleu_smooth smooth,
                               double value, int lowercase) {
    nmt_bleu_options o = nmt_bleu_options_default();
    o.tokenizer = tok;
    o.smooth = smooth;
    o.smooth_value = value;
    o.lowercase = lowercase;
    o.effective_order = 1;
    const char *hyps[] = {hyp}, *refs[] = {ref};
    return corpus(&o, hyps, 1, refs, NULL);
}

START_TEST(worked_example) {
    /* 13a: "The cat sat on the mat ." vs "The cat is on the mat ." (7 words each). Matches:
     * 1-grams 6/7, 2-grams 4/6 (The cat, on the, the mat, mat .), 3-grams 2/5, 4-grams 1/4; BP = 1. */
    nmt_bleu_options o = nmt_bleu_options_default();
    const char *hyps[] = {"The cat sat on the mat."}, *refs[] = {"The cat is on the mat."};
    nmt_bleu_score s = corpus(&o, hyps, 1, refs, NULL);
    double want = 100 * pow(6.0 / 7 * 4.0 / 6 * 2.0 / 5 * 1.0 / 4, 0.25);
    ck_assert_double_eq_tol(s.score, want, 1e-12);
    ck_assert_double_eq_tol(s.precisions[0], 600.0 / 7, 1e-12);
    ck_assert_int_eq(s.hyp_len, 7);
    ck_assert_int_eq(s.ref_len, 7);
    ck_assert_double_eq(s.bp, 1.0);
    char verbose[128];
    nmt_bleu_verbose(&s, verbose, sizeof verbose);
    ck_assert_str_eq(verbose, "85.7/66.7/40.0/25.0 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)");
}
END_TEST

START_TEST(published_corpus_values) {
    /* sacreBLEU's README example (test_bleu.py, test_corpus_bleu_cases), two references. */
    const char *hyps[] = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
    const char *ref0[] = {"The dog bit the man.", "It was not unexpected.", "The man bit him first."};
    const char *ref1[] = {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."};
    nmt_bleu_options o = nmt_bleu_options_default();
    ck_assert_double_eq_tol(corpus(&o, hyps, 3, ref0, ref1).score, 48.530827, 1e-6);
    o.tokenizer = NMT_TOKENIZE_NONE;
    ck_assert_double_eq_tol(corpus(&o, hyps, 3, ref0, ref1).score, 49.1919566, 1e-6);
    o.tokenizer = NMT_TOKENIZE_INTL;
    ck_assert_double_eq_tol(corpus(&o, hyps, 3, ref0, ref1).score, 43.91623493, 1e-6);
    o.tokenizer = NMT_TOKENIZE_13A;
    o.smooth = NMT_BLEU_SMOOTH_NONE;
    ck_assert_double_eq_tol(corpus(&o, hyps, 3, ref0, ref1).score, 48.530827, 1e-6);
    /* Empty hypotheses are scored, not dropped: BLEU 0 with BP 0. */
    const char *empty[] = {"", "", ""};
    o = nmt_bleu_options_default();
    nmt_bleu_score s = corpus(&o, empty, 3, ref0, ref1);
    ck_assert_double_eq(s.score, 0.0);
    ck_assert_double_eq(s.bp, 0.0);
    /* No matched n-gram at all: 0 (sacreBLEU #141), whatever the smoothing. */
    const char *h2[] = {"this is a test", "another test"}, *r2[] = {"ref1", "ref2"};
    o.smooth = NMT_BLEU_SMOOTH_FLOOR;
    ck_assert_double_eq(corpus(&o, h2, 2, r2, NULL).score, 0.0);
}
END_TEST

START_TEST(statistics_and_offset) {
    /* test_case_statistics: counts [4, 2, 1, 0] of totals [6, 5, 4, 3]; with floor smoothing 0.1
     * the score is 0.1555722182 (test_case_offset), without smoothing 0. */
    nmt_bleu_options o = nmt_bleu_options_default();
    o.smooth = NMT_BLEU_SMOOTH_FLOOR;
    const char *h[] = {"am I am a character sequence"}, *r[] = {"I am a symbol string sequence a a"};
    nmt_bleu_score s = corpus(&o, h, 1, r, NULL);
    double correct[] = {4, 2, 1, 0}, total[] = {6, 5, 4, 3};
    for (int n = 0; n < 4; n++) {
        ck_assert_double_eq(s.correct[n], correct[n]);
        ck_assert_double_eq(s.total[n], total[n]);
    }
    ck_assert_double_eq_tol(s.score / 100, 0.1555722182, 1e-9);
    o.smooth = NMT_BLEU_SMOOTH_NONE;
    ck_assert_double_eq(corpus(&o, h, 1, r, NULL).score, 0.0);
}
END_TEST

START_TEST(compute_from_statistics) {
    /* test_case_scoring: counts [9, 7, 5, 3] / [10, 8, 6, 4], lengths 11 and 11 -> 0.8375922397. */
    nmt_bleu_options o = nmt_bleu_options_default();
    o.smooth = NMT_BLEU_SMOOTH_NONE;
    double stats[] = {11, 11, 9, 7, 5, 3, 10, 8, 6, 4};
    nmt_bleu_score s;
    nmt_bleu_compute(&o, stats, NMT_PYNUM_PYTHON, &s);
    ck_assert_double_eq_tol(s.score / 100, 0.8375922397, 1e-10);
    /* Brevity penalty: 9 hypothesis words against 11 reference words -> exp(1 - 11/9). */
    stats[0] = 9;
    nmt_bleu_compute(&o, stats, NMT_PYNUM_PYTHON, &s);
    ck_assert_double_eq_tol(s.bp, exp(1 - 11.0 / 9), 1e-15);
    ck_assert_double_eq_tol(s.ratio, 9.0 / 11, 1e-15);
}
END_TEST

START_TEST(smoothing_methods) {
    /* test_sentence_bleu.py: effective order, one reference. */
    const char *ref = "producţia de zahăr brut se exprimă în zahăr alb;";
    const char *sys = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;";
    struct { nmt_bleu_smooth m; double v; int lc; nmt_tokenizer tok; double want; } cases[] = {
        {NMT_BLEU_SMOOTH_EXP, -1, 0, NMT_TOKENIZE_13A, 8.493},
        {NMT_BLEU_SMOOTH_NONE, -1, 0, NMT_TOKENIZE_13A, 0.0},
        {NMT_BLEU_SMOOTH_FLOOR, -1, 0, NMT_TOKENIZE_13A, 4.51688},
        {NMT_BLEU_SMOOTH_FLOOR, 0.5, 0, NMT_TOKENIZE_13A, 10.10},
        {NMT_BLEU_SMOOTH_ADD_K, -1, 0, NMT_TOKENIZE_13A, 14.882},
        {NMT_BLEU_SMOOTH_ADD_K, 2, 0, NMT_TOKENIZE_13A, 21.389},
        {NMT_BLEU_SMOOTH_EXP, -1, 0, NMT_TOKENIZE_NONE, 7.347},
        {NMT_BLEU_SMOOTH_EXP, -1, 0, NMT_TOKENIZE_INTL, 8.493},
        {NMT_BLEU_SMOOTH_EXP, -1, 0, NMT_TOKENIZE_CHAR, 40.8759},
        {NMT_BLEU_SMOOTH_EXP, -1, 1, NMT_TOKENIZE_CHAR, 42.0267},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ck_assert_double_eq_tol(sentence(sys, ref, cases[i].tok, cases[i].m, cases[i].v, cases[i].lc).score,
                                cases[i].want, 1e-3);
    /* The exp method by hand: "a b c d" vs "a b c e": 3/4, 2/3, 1/2, and 0/1 becomes 100/(2*1). */
    nmt_bleu_score s = sentence("a b c d", "a b c e", NMT_TOKENIZE_NONE, NMT_BLEU_SMOOTH_EXP, -1, 0);
    ck_assert_double_eq_tol(s.score, pow(75.0 * (200.0 / 3) * 50.0 * 50.0, 0.25), 1e-12);
    /* add-k adds k to counts and totals of orders above 1: 3/4, 3/4, 2/3, 1/2. */
    s = sentence("a b c d", "a b c e", NMT_TOKENIZE_NONE, NMT_BLEU_SMOOTH_ADD_K, -1, 0);
    ck_assert_double_eq_tol(s.score, 100 * pow(0.75 * 0.75 * (2.0 / 3) * 0.5, 0.25), 1e-12);
}
END_TEST

START_TEST(chinese_tokenizer) {
    /* zh: each Chinese character (and the full-width/curly punctuation in sacreBLEU's ranges) is a
     * word. Values from sacreBLEU 2.6 (BLEU(tokenize='zh')). */
    nmt_bleu_score s = sentence("我们今天去公园散步，天气很好。", "今天我们去公园散步，天气非常好。", NMT_TOKENIZE_ZH,
                                NMT_BLEU_SMOOTH_EXP, -1, 0);
    ck_assert_double_eq_tol(s.score, 55.97877415275869, 1e-10);
    nmt_bleu_options o = nmt_bleu_options_default();
    o.tokenizer = NMT_TOKENIZE_ZH;
    const char *h[] = {"我们今天去公园散步，天气很好。", "他说：“好的。”"};
    const char *r[] = {"今天我们去公园散步，天气非常好。", "他回答：“好。”"};
    ck_assert_double_eq_tol(corpus(&o, h, 2, r, NULL).score, 47.05335186703303, 1e-10);
}
END_TEST

START_TEST(effective_order) {
    /* test_case_effective_order: "test" vs "a test" = BP exp(1-2) = 0.3678794411714425. */
    ck_assert_double_eq_tol(sentence("test", "a test", NMT_TOKENIZE_13A, NMT_BLEU_SMOOTH_FLOOR, 0.01, 0).score / 100,
                            0.3678794411714425, 1e-12);
    ck_assert_double_eq_tol(sentence("a test", "a test", NMT_TOKENIZE_13A, NMT_BLEU_SMOOTH_FLOOR, 0.01, 0).score, 100,
                            1e-12);
    ck_assert_double_eq_tol(sentence("a little test", "a test", NMT_TOKENIZE_13A, NMT_BLEU_SMOOTH_FLOOR, 0.01, 0).score / 100,
                            0.03218297948685433, 1e-12);
}
END_TEST

START_TEST(multiple_references) {
    /* Clipping takes the largest count over the references; the closest reference length wins and
     * the shorter one on a tie: hyp of 4 words, references of 3 and 5 words -> ref_len 3. */
    nmt_bleu_options o = nmt_bleu_options_default();
    o.tokenizer = NMT_TOKENIZE_NONE;
    const char *h[] = {"the the the x"}, *r0[] = {"the y z"}, *r1[] = {"the the a b c"};
    nmt_bleu_score s = corpus(&o, h, 1, r0, r1);
    ck_assert_int_eq(s.ref_len, 3);
    ck_assert_double_eq(s.correct[0], 2); /* "the" clipped to 2 by the second reference */
    ck_assert_double_eq(s.correct[1], 1); /* "the the" */
    ck_assert_double_eq(s.total[0], 4);
}
END_TEST

START_TEST(signature) {
    nmt_bleu_options o = nmt_bleu_options_default();
    nmt_bleu *bleu = nmt_bleu_create(&o);
    const char *refs[] = {"a b"};
    ck_assert_int_eq(nmt_bleu_add(bleu, "a b", refs, 1), 0);
    char sig[256];
    nmt_bleu_signature(bleu, 0, sig, sizeof sig);
    ck_assert_str_eq(sig, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:nmt-" NMT_VERSION);
    nmt_bleu_signature(bleu, 1, sig, sizeof sig);
    ck_assert_str_eq(sig, "#:1|c:mixed|e:no|tok:13a|s:exp|v:nmt-" NMT_VERSION);
    const char *two[] = {"a b", "a c"};
    ck_assert_int_eq(nmt_bleu_add(bleu, "a b", two, 2), 0);
    nmt_bleu_signature(bleu, 0, sig, sizeof sig);
    ck_assert_ptr_nonnull(strstr(sig, "nrefs:var|"));
    nmt_bleu_free(bleu);

    nmt_signature_field f[4];
    o.smooth = NMT_BLEU_SMOOTH_FLOOR;
    o.lowercase = 1;
    o.tokenizer = NMT_TOKENIZE_INTL;
    o.effective_order = 1;
    nmt_bleu_signature_fields(&o, f);
    ck_assert_str_eq(f[0].value, "lc");
    ck_assert_str_eq(f[1].value, "yes");
    ck_assert_str_eq(f[2].value, "intl");
    ck_assert_str_eq(f[3].value, "floor[0.10]");
    o.smooth = NMT_BLEU_SMOOTH_ADD_K;
    nmt_bleu_signature_fields(&o, f);
    ck_assert_str_eq(f[3].value, "add-k[1.00]");
    o.smooth_value = 0.25;
    nmt_bleu_signature_fields(&o, f);
    ck_assert_str_eq(f[3].value, "add-k[0.25]");
}
END_TEST

START_TEST(one_call_and_errors) {
    nmt_bleu_options o = nmt_bleu_options_default();
    const char *hyps[] = {"The cat sat on the mat."};
    const char *r[] = {"The cat is on the mat."};
    const char *const *refs[] = {r};
    nmt_bleu_score s;
    ck_assert_int_eq(nmt_bleu_corpus(&o, hyps, refs, 1, 1, &s), 0);
    ck_assert_double_eq_tol(s.score, 100 * pow(6.0 / 7 * 4.0 / 6 * 2.0 / 5 * 1.0 / 4, 0.25), 1e-12);
    nmt_bleu *bleu = nmt_bleu_create(&o);
    ck_assert_int_eq(nmt_bleu_add(bleu, "x", r, 0), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "reference"));
    nmt_bleu_free(bleu);
    o.max_order = 0;
    ck_assert_ptr_null(nmt_bleu_create(&o));
    o.max_order = 4;
    nmt_alloc_fail_at(1);
    ck_assert_ptr_null(nmt_bleu_create(&o));
    ck_assert_ptr_nonnull(strstr(nmt_error(), "out of memory"));
    nmt_bleu_smooth m;
    ck_assert_int_eq(nmt_bleu_smooth_parse("add-k", &m), 0);
    ck_assert_int_eq(m, NMT_BLEU_SMOOTH_ADD_K);
    ck_assert_int_eq(nmt_bleu_smooth_parse("add-1", &m), -1);
}
END_TEST

START_TEST(every_allocation_failure_is_reported) {
    /* Fail each allocation of a segment in turn: the call reports it, and a retry then works. */
    nmt_bleu_options o = nmt_bleu_options_default();
    o.lowercase = 1;
    const char *refs[] = {"Ein Mann, der läuft.", "Ein Hund läuft schnell."};
    for (long k = 1; k < 40; k++) {
        nmt_bleu *bleu = nmt_bleu_create(&o);
        ck_assert_ptr_nonnull(bleu);
        nmt_alloc_fail_at(k);
        int rc = nmt_bleu_add(bleu, "Ein Mann läuft schnell.", refs, 2);
        nmt_alloc_fail_at(0);
        if (rc < 0) ck_assert_ptr_nonnull(strstr(nmt_error(), "out of memory"));
        ck_assert_int_eq(nmt_bleu_add(bleu, "Ein Mann läuft schnell.", refs, 2), 0);
        nmt_bleu_free(bleu);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("bleu");
    TCase *tc = tcase_create("bleu");
    tcase_add_test(tc, worked_example);
    tcase_add_test(tc, published_corpus_values);
    tcase_add_test(tc, statistics_and_offset);
    tcase_add_test(tc, compute_from_statistics);
    tcase_add_test(tc, smoothing_methods);
    tcase_add_test(tc, chinese_tokenizer);
    tcase_add_test(tc, effective_order);
    tcase_add_test(tc, multiple_references);
    tcase_add_test(tc, signature);
    tcase_add_test(tc, one_call_and_errors);
    tcase_add_test(tc, every_allocation_failure_is_reported);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
