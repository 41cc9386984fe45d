/* Tests of forced scoring on tiny Transformers with random weights (infer_models.h): batched scores
 * equal pair-by-pair scores and the sum of the incremental decoder's per-step log-probabilities,
 * empty sources and targets included.
 */
#include "infer/forced.h"
#include "infer_models.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Batched forced scoring equals scoring pair by pair, and the sum of the incremental decoder's
 * per-step log-probabilities along the same target. */
START_TEST(score_is_the_sum_of_step_logprobs) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 41 + (uint64_t)_i);
    int32_t src[SENTENCES][MAX_LEN], tgt[SENTENCES][MAX_LEN];
    int src_len[SENTENCES], tgt_len[SENTENCES];
    const int32_t *sp[SENTENCES], *tp[SENTENCES];
    random_sources(src, src_len, sp, SENTENCES, 8);
    random_sources(tgt, tgt_len, tp, SENTENCES, 9);
    tgt_len[2] = 0;
    src_len[5] = 0;
    double batched[SENTENCES];
    ck_assert_msg(nmt_forced_score(&m, SENTENCES, sp, src_len, tp, tgt_len, 4, batched) == 0, "%s", nmt_error());
    for (int i = 0; i < SENTENCES; i++) {
        double one;
        ck_assert_int_eq(nmt_forced_score(&m, 1, &sp[i], &src_len[i], &tp[i], &tgt_len[i], 1, &one), 0);
        ck_assert_double_eq_tol(one, batched[i], 1e-5);
        /* Step by step through the incremental decoder. */
        int32_t matrix[MAX_LEN];
        memcpy(matrix, src[i], (size_t)src_len[i] * sizeof(int32_t));
        matrix[src_len[i]] = NMT_EOS;
        int tokens = src_len[i] + 1;
        nmt_incremental *inc;
        ck_assert_int_eq(nmt_incremental_create(&inc, &m), 0);
        ck_assert_int_eq(nmt_incremental_start(inc, matrix, &tokens, 1, tokens, 1, tgt_len[i] + 1), 0);
        double sum = 0;
        float logprobs[V];
        for (int t = 0; t <= tgt_len[i]; t++) {
            int32_t feed = t == 0 ? NMT_BOS : tgt[i][t - 1];
            ck_assert_int_eq(nmt_incremental_step(inc, 1, &feed, logprobs, NULL), 0);
            sum += logprobs[t < tgt_len[i] ? tgt[i][t] : NMT_EOS];
        }
        ck_assert_double_eq_tol(sum, batched[i], 1e-4);
        nmt_incremental_free(inc);
    }
    nmt_model_free(&m);
}
END_TEST

int main(void) {
    Suite *s = suite_create("forced");
    TCase *tc = infer_models_tcase("forced");
    tcase_add_loop_test(tc, score_is_the_sum_of_step_logprobs, 0, VARIANTS);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
