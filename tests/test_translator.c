/* Tests of the translator on tiny Transformers with random weights (infer_models.h): sorting,
 * batching and the input order against decoding each sentence alone, greedy against beam 1, forced
 * scores against the decoder's own numbers, empty sources, learned positions, bf16 products, and
 * batches shared between threads (with allocation failures on either).
 */
#include "infer/translator.h"
#include "compute/pool.h"
#include "infer_models.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The translator (sorting, batching, input order) against decoding each sentence alone; greedy
 * against beam 1 without a length penalty; forced scoring against the decoder's own numbers. */
START_TEST(translator_keeps_order_and_scores_agree) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 31 + (uint64_t)_i);
    int32_t src[SENTENCES][MAX_LEN];
    int len[SENTENCES];
    random_sources(src, len, SENTENCES, 7);
    len[4] = 0; /* an empty line */
    const int32_t *src_ptr[SENTENCES];
    for (int i = 0; i < SENTENCES; i++) src_ptr[i] = src[i];
    nmt_decode_options o = options(0, 3, 3);
    o.batch_size = 4;
    nmt_translation out[SENTENCES];
    ck_assert_msg(nmt_decode_sentences(&m, &o, SENTENCES, src_ptr, len, out) == 0, "%s", nmt_error());
    for (int i = 0; i < SENTENCES; i++) {
        if (len[i] == 0) {
            ck_assert_int_eq(out[i].count, 1);
            ck_assert_int_eq(out[i].hyps[0].length, 0);
            ck_assert(out[i].hyps[0].logprob == 0 && out[i].hyps[0].attention == NULL);
            continue;
        }
        nmt_translation alone;
        decode_batch(&m, &o, 1, 0, src, len, i, 1, &alone);
        assert_same(&out[i], &alone, 0);
        nmt_translation_free(&alone);
        assert_forced_scores(&m, src_ptr[i], len[i], &out[i], 1e-4, 0);
    }
    /* Greedy is beam 1 without a length penalty. */
    nmt_decode_options g = options(1, 1, 1), b1 = options(0, 1, 1);
    g.length_penalty = b1.length_penalty = 0;
    nmt_translation greedy[SENTENCES], beam1[SENTENCES];
    ck_assert_int_eq(nmt_decode_sentences(&m, &g, SENTENCES, src_ptr, len, greedy), 0);
    ck_assert_int_eq(nmt_decode_sentences(&m, &b1, SENTENCES, src_ptr, len, beam1), 0);
    for (int i = 0; i < SENTENCES; i++) {
        assert_same(&greedy[i], &beam1[i], 1);
        nmt_translation_free(&greedy[i]);
        nmt_translation_free(&beam1[i]);
        nmt_translation_free(&out[i]);
    }
    nmt_model_free(&m);
}
END_TEST

/* Empty sources are answered without running the model: with the model's parameter pointers
 * cleared, touching the model would crash the test. */
START_TEST(empty_sources_do_not_run_the_model) {
    nmt_model m;
    make_model(&m, variants[0], 64, 51);
    nmt_decode_options o = options(0, 5, 2);
    nmt_translator *t;
    ck_assert_int_eq(nmt_translator_create(&t, &m, &o), 0);
    const nmt_params saved = m.p;
    memset(&m.p, 0, sizeof m.p);
    const int32_t dummy = 5, *src[2] = {&dummy, &dummy};
    int len[2] = {0, 0};
    nmt_translation out[2];
    ck_assert_int_eq(nmt_translator_run(t, 2, src, len, out), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(out[i].count, 1);
        ck_assert_int_eq(out[i].hyps[0].length, 0);
        nmt_translation_free(&out[i]);
    }
    m.p = saved;
    nmt_translator_free(t);
    nmt_model_free(&m);
}
END_TEST

/* Learned positions: a source needing more positions than the table is refused; hypotheses stop
 * in time for the target table. */
START_TEST(learned_positions_bound_lengths) {
    nmt_model m;
    make_model(&m, variants[2], 6, 61);
    for (int j = 0; j < 16; j++) m.p.output[NMT_EOS * 16 + j] = 0; /* no early eos */
    int32_t src[1][MAX_LEN] = {{4, 5, 6, 7, 8, 9}};
    const int32_t *sp[1] = {src[0]};
    int len = 5;
    nmt_decode_options o = options(0, 2, 2);
    nmt_translation out;
    ck_assert_msg(nmt_decode_sentences(&m, &o, 1, sp, &len, &out) == 0, "%s", nmt_error());
    for (int j = 0; j < out.count; j++) ck_assert_int_le(out.hyps[j].length, 5);
    nmt_translation_free(&out);
    len = 6;
    ck_assert_int_eq(nmt_decode_sentences(&m, &o, 1, sp, &len, &out), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "learned positions"));
    nmt_model_free(&m);
}
END_TEST

/* A translator on bf16 products decodes every sentence, and each hypothesis's log-probability is
 * the full-precision model's (forced scoring) to bf16's accuracy. */
START_TEST(bf16_translator_scores_close) {
    if (!nmt_packed_available(NMT_PRECISION_BF16)) return; /* no AVX512_BF16 on this CPU */
    nmt_model m;
    make_model(&m, variants[_i], 64, 91 + (uint64_t)_i);
    int32_t src[SENTENCES][MAX_LEN];
    int len[SENTENCES];
    random_sources(src, len, SENTENCES, 12);
    const int32_t *src_ptr[SENTENCES];
    for (int i = 0; i < SENTENCES; i++) src_ptr[i] = src[i];
    nmt_decode_options o = options(0, 3, 2);
    o.precision = NMT_PRECISION_BF16;
    nmt_translation out[SENTENCES];
    ck_assert_msg(nmt_decode_sentences(&m, &o, SENTENCES, src_ptr, len, out) == 0, "%s", nmt_error());
    for (int i = 0; i < SENTENCES; i++) {
        ck_assert_int_eq(out[i].count, 2);
        assert_forced_scores(&m, src_ptr[i], len[i], &out[i], 0, 0.05);
        nmt_translation_free(&out[i]);
    }
    nmt_model_free(&m);
}
END_TEST

/* Several batches on two threads (one batch per thread at a time) give, bit for bit, what one
 * thread gives: each batch is decoded whole on the thread that took it. An allocation failing on
 * either thread fails the run with its message and leaks nothing (ASan checks the last part). */
START_TEST(threads_share_batches_exactly) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 71 + (uint64_t)_i);
    int32_t src[SENTENCES][MAX_LEN];
    int len[SENTENCES];
    random_sources(src, len, SENTENCES, 10);
    const int32_t *src_ptr[SENTENCES];
    for (int i = 0; i < SENTENCES; i++) src_ptr[i] = src[i];
    nmt_decode_options o = options(0, 3, 2);
    o.batch_size = 2;
    nmt_translation one[SENTENCES], two[SENTENCES];
    ck_assert_msg(nmt_decode_sentences(&m, &o, SENTENCES, src_ptr, len, one) == 0, "%s", nmt_error());
    ck_assert_int_eq(nmt_pool_set_threads(2), 0);
    ck_assert_msg(nmt_decode_sentences(&m, &o, SENTENCES, src_ptr, len, two) == 0, "%s", nmt_error());
    for (int i = 0; i < SENTENCES; i++) {
        assert_same(&one[i], &two[i], 1);
        nmt_translation_free(&one[i]);
        nmt_translation_free(&two[i]);
    }
    int failures = 0;
    for (long k = 1;; k++) {
        nmt_alloc_fail_at(k);
        int rc = nmt_decode_sentences(&m, &o, SENTENCES, src_ptr, len, two);
        nmt_alloc_fail_at(0);
        if (rc == 0) {
            for (int i = 0; i < SENTENCES; i++) nmt_translation_free(&two[i]);
            break;
        }
        ck_assert_msg(strstr(nmt_error(), "injected fault") != NULL, "allocation %ld: %s", k, nmt_error());
        failures++;
    }
    ck_assert_int_gt(failures, 10);
    nmt_model_free(&m);
}
END_TEST

int main(void) {
    Suite *s = suite_create("translator");
    TCase *tc = infer_models_tcase("translator");
    tcase_add_loop_test(tc, translator_keeps_order_and_scores_agree, 0, VARIANTS);
    tcase_add_loop_test(tc, threads_share_batches_exactly, 0, VARIANTS);
    tcase_add_loop_test(tc, bf16_translator_scores_close, 0, VARIANTS);
    tcase_add_test(tc, empty_sources_do_not_run_the_model);
    tcase_add_test(tc, learned_positions_bound_lengths);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
