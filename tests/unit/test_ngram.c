/* Tests of ngram: clipped matching per reference (chrF) and over references (BLEU), exactness
 * under many distinct keys, and word interning. Expected counts are worked out by hand. */
#include "eval/ngram.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(clipping) {
    nmt_ngram_table t = {0};
    /* hyp: a a a b (1-grams a:3 b:1; 2-grams aa:2 ab:1) */
    uint32_t hyp[] = {1, 1, 1, 2}, ref1[] = {1, 2, 1}, ref2[] = {1, 1, 1, 1};
    ck_assert_int_eq(nmt_ngram_table_reset(&t, nmt_ngram_count(4, 2)), 0);
    nmt_ngram_table_add_hyp(&t, hyp, 4, 2, 0);
    long per1[2] = {0}, per2[2] = {0}, max[2] = {0};
    /* ref1 a:2 b:1 -> 1-grams min(3,2)+min(1,1) = 3; 2-grams ab:1 ba:0 -> 1 */
    nmt_ngram_table_match_ref(&t, ref1, 3, 2, 0, 1, NMT_NGRAM_PER_REFERENCE, per1);
    ck_assert_int_eq(per1[0], 3);
    ck_assert_int_eq(per1[1], 1);
    /* ref2 a:4 -> 3; aa:3 -> min(2,3) = 2 */
    nmt_ngram_table_match_ref(&t, ref2, 4, 2, 0, 2, NMT_NGRAM_PER_REFERENCE, per2);
    ck_assert_int_eq(per2[0], 3);
    ck_assert_int_eq(per2[1], 2);
    /* max over both: a:max(2,4)=4 -> 3, b:1 -> 1; aa:max(0,3) -> 2, ab:1 -> 1 */
    ck_assert_int_eq(nmt_ngram_table_reset(&t, nmt_ngram_count(4, 2)), 0);
    nmt_ngram_table_add_hyp(&t, hyp, 4, 2, 0);
    nmt_ngram_table_match_ref(&t, ref1, 3, 2, 0, 1, NMT_NGRAM_MAX_REFERENCE, max);
    nmt_ngram_table_match_ref(&t, ref2, 4, 2, 0, 2, NMT_NGRAM_MAX_REFERENCE, max);
    ck_assert_int_eq(max[0], 4);
    ck_assert_int_eq(max[1], 3);
    nmt_ngram_table_free(&t);
}
END_TEST

START_TEST(many_keys_and_slots) {
    /* 5000 distinct symbols matched against themselves: every n-gram matches exactly once. */
    enum { N = 5000 };
    uint32_t *seq = malloc(N * sizeof *seq);
    for (uint32_t i = 0; i < N; i++) seq[i] = i * 2654435761u;
    nmt_ngram_table t = {0};
    long matched[8] = {0};
    for (int round = 0; round < 3; round++) { /* reuse across resets */
        memset(matched, 0, sizeof matched);
        ck_assert_int_eq(nmt_ngram_table_reset(&t, nmt_ngram_count(N, 4) + nmt_ngram_count(N, 2)), 0);
        nmt_ngram_table_add_hyp(&t, seq, N, 4, 0);
        nmt_ngram_table_add_hyp(&t, seq, N, 2, 4); /* same symbols, other slots: distinct keys */
        nmt_ngram_table_match_ref(&t, seq, N, 4, 0, 1, NMT_NGRAM_PER_REFERENCE, matched);
        for (int n = 1; n <= 4; n++) ck_assert_int_eq(matched[n - 1], N - n + 1);
        ck_assert_int_eq(matched[4], 0);
        nmt_ngram_table_match_ref(&t, seq, N, 2, 4, 1, NMT_NGRAM_PER_REFERENCE, matched);
        ck_assert_int_eq(matched[4], N);
        ck_assert_int_eq(matched[5], N - 1);
    }
    ck_assert_uint_eq(nmt_ngram_count(3, 4), 6);
    nmt_ngram_table_free(&t);
    free(seq);
}
END_TEST

START_TEST(vocab) {
    nmt_ngram_vocab v = {0};
    uint32_t a, b, c;
    for (int round = 0; round < 2; round++) {
        nmt_ngram_vocab_reset(&v);
        ck_assert_int_eq(nmt_ngram_vocab_id(&v, "cat", 3, &a), 0);
        ck_assert_int_eq(nmt_ngram_vocab_id(&v, "cats", 3, &b), 0); /* "cat" again */
        ck_assert_int_eq(nmt_ngram_vocab_id(&v, "dog", 3, &c), 0);
        ck_assert_uint_eq(a, 0);
        ck_assert_uint_eq(b, 0);
        ck_assert_uint_eq(c, 1);
    }
    char word[16];
    for (int i = 0; i < 3000; i++) { /* growth keeps ids stable */
        int n = snprintf(word, sizeof word, "w%d", i);
        ck_assert_int_eq(nmt_ngram_vocab_id(&v, word, (size_t)n, &a), 0);
        ck_assert_uint_eq(a, (uint32_t)i + 2);
    }
    ck_assert_int_eq(nmt_ngram_vocab_id(&v, "w17", 3, &a), 0);
    ck_assert_uint_eq(a, 19);
    nmt_ngram_vocab_free(&v);
}
END_TEST

int main(void) {
    Suite *s = suite_create("ngram");
    TCase *tc = tcase_create("ngram");
    tcase_add_test(tc, clipping);
    tcase_add_test(tc, many_keys_and_slots);
    tcase_add_test(tc, vocab);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
