/* Tests of chrf: chrF/chrF++ against the expected values of sacreBLEU 2.6's test/test_chrf.py (beta 3
 * there), a worked calculation, best-reference selection, chrF++ word splitting and the
 * signature. */
#include "eval/chrf.h"
#include "base/util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* Corpus chrF of hyps against refs (one reference, or two when refs1 is given). */
static double corpus(const nmt_chrf_options *o, const char *const *hyps, size_t n, const char *const *refs0,
                     const char *const *refs1) {
    nmt_chrf *chrf = nmt_chrf_create(o);
    ck_assert_ptr_nonnull(chrf);
    int k = nmt_chrf_stat_count(o);
    double sum[3 * NMT_CHRF_MAX_ORDER] = {0}, stats[3 * NMT_CHRF_MAX_ORDER];
    for (size_t i = 0; i < n; i++) {
        const char *refs[2] = {refs0[i], refs1 ? refs1[i] : ""};
        size_t lens[2] = {strlen(refs[0]), strlen(refs[1])};
        ck_assert_int_eq(nmt_chrf_segment(chrf, hyps[i], strlen(hyps[i]), refs, lens, refs1 ? 2 : 1, stats), 0);
        for (int j = 0; j < k; j++) sum[j] += stats[j];
    }
    nmt_chrf_free(chrf);
    return nmt_chrf_compute(o, sum, NMT_PYNUM_PYTHON);
}

static double one(const nmt_chrf_options *o, const char *hyp, const char *ref) {
    const char *h[] = {hyp}, *r[] = {ref};
    return corpus(o, h, 1, r, NULL);
}

START_TEST(published_eps_smoothing) {
    nmt_chrf_options o = nmt_chrf_options_default();
    o.beta = 3;
    o.eps_smoothing = 1;
    struct { const char *h, *r; double want; } cases[] = {
        {"abcdefg", "hijklmnop", 0.0}, {"a", "b", 0.0}, {"", "b", 0.0}, {"", "reference", 0.0},
        {"aa", "ab", 8.3333}, {"a", "a", 16.6667}, {"a b c", "a b c", 50.0}, {"a b c", "abc", 50.0},
        {" risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists .",
         "risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists .",
         63.361730},
        {" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. ",
         "Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich.", 64.1302698},
        {"Niemand hat die Absicht, eine Mauer zu errichten", "Niemand hat die Absicht, eine Mauer zu errichten", 100.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ck_assert_double_eq_tol(one(&o, cases[i].h, cases[i].r), cases[i].want, 1e-4);
    const char *h[] = {"a", "b"}, *r[] = {"a", "c"};
    ck_assert_double_eq_tol(corpus(&o, h, 2, r, NULL), 8.3333, 1e-4);
}
END_TEST

START_TEST(published_effective_order) {
    nmt_chrf_options o = nmt_chrf_options_default();
    o.beta = 3;
    struct { const char *h, *r; double want; } cases[] = {
        {"a", "a", 100.0}, {"", "reference", 0.0}, {"a b c", "a b c", 100.0}, {"a b c", "abc", 100.0},
        {"", "c", 0.0}, {"aa", "ab", 25.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ck_assert_double_eq_tol(one(&o, cases[i].h, cases[i].r), cases[i].want, 1e-4);
    const char *h[] = {"a", "b"}, *r[] = {"a", "c"};
    ck_assert_double_eq_tol(corpus(&o, h, 2, r, NULL), 50.0, 1e-4);
    o.whitespace = 1;
    ck_assert_double_eq_tol(one(&o, "Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich.",
                                "Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."),
                            67.3481606, 1e-4);
}
END_TEST

START_TEST(published_sentence_level) {
    nmt_chrf_options o = nmt_chrf_options_default();
    o.eps_smoothing = 1;
    ck_assert_double_eq_tol(one(&o, "Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
                                "Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."),
                            39.14078509, 1e-4);
    ck_assert_double_eq_tol(one(&o, "Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
                                "Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."),
                            57.15704367, 1e-4);
}
END_TEST

START_TEST(worked_example_and_word_ngrams) {
    /* "ab" vs "ac", orders 1 and 2, beta 2: unigrams P = R = 1/2; bigrams 0 matches of 1 -> P = R = 0
     * but both counts exist, so the effective order is 2: P = R = 1/4, F = 1/4 -> 25. */
    nmt_chrf_options o = nmt_chrf_options_default();
    o.char_order = 2;
    ck_assert_double_eq_tol(one(&o, "ab", "ac"), 25.0, 1e-12);
    /* chrF++ (word order 2): "(hi)" splits into "(hi" and ")" only (sacreBLEU #124), while "(hi )"
     * gives "(" "hi" ")": same characters, different words. Words [say, (hi, )] vs [say, (, hi, )]:
     * unigrams 2 of 3 / 2 of 4, bigrams 0 of 2 / 0 of 3, characters all matched; value from
     * sacreBLEU 2.6: 81.65829145728642. */
    o = nmt_chrf_options_default();
    o.word_order = 2;
    ck_assert_double_eq_tol(one(&o, "say (hi)", "say (hi )"), 81.65829145728642, 1e-12);
    /* while "hi." splits into "hi" "." and matches "hi ." exactly */
    ck_assert_double_eq_tol(one(&o, "hi.", "hi ."), 100.0, 1e-12);
    char name[32];
    nmt_chrf_name(&o, name);
    ck_assert_str_eq(name, "chrF2++");
}
END_TEST

START_TEST(best_reference) {
    /* The segment keeps the statistics of its best reference: the exact one here. */
    nmt_chrf_options o = nmt_chrf_options_default();
    const char *h[] = {"a cat"}, *r0[] = {"the dog"}, *r1[] = {"a cat"};
    ck_assert_double_eq_tol(corpus(&o, h, 1, r0, r1), 100.0, 1e-12);
    ck_assert_double_eq_tol(corpus(&o, h, 1, r1, r0), 100.0, 1e-12);
    /* lowercase */
    o.lowercase = 1;
    ck_assert_double_eq_tol(one(&o, "A CAT", "a cat"), 100.0, 1e-12);
}
END_TEST

START_TEST(signature_and_errors) {
    nmt_chrf_options o = nmt_chrf_options_default();
    nmt_signature_field f[5];
    ck_assert_int_eq(nmt_chrf_signature_fields(&o, f), 5);
    ck_assert_str_eq(f[0].value, "mixed");
    ck_assert_str_eq(f[1].value, "yes");
    ck_assert_str_eq(f[2].value, "6");
    ck_assert_str_eq(f[3].value, "0");
    ck_assert_str_eq(f[4].value, "no");
    o.char_order = 0;
    ck_assert_ptr_null(nmt_chrf_create(&o));
    o = nmt_chrf_options_default();
    nmt_chrf *chrf = nmt_chrf_create(&o);
    double stats[18];
    ck_assert_int_eq(nmt_chrf_segment(chrf, "a", 1, NULL, NULL, 0, stats), -1);
    nmt_chrf_free(chrf);
}
END_TEST

int main(void) {
    Suite *s = suite_create("chrf");
    TCase *tc = tcase_create("chrf");
    tcase_add_test(tc, published_eps_smoothing);
    tcase_add_test(tc, published_effective_order);
    tcase_add_test(tc, published_sentence_level);
    tcase_add_test(tc, worked_example_and_word_ngrams);
    tcase_add_test(tc, best_reference);
    tcase_add_test(tc, signature_and_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
