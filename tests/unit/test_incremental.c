/* Tests of incremental decoding on tiny Transformers with random weights (infer_models.h).
 *
 * The reference is the engine's training-path forward (nmt_model_token_logprobs, evaluation mode):
 * the incremental decoder fed the same prefixes must give the same log-probabilities (to 1e-5) for
 * every architecture variant. Cached and uncached decoding (the whole prefix recomputed at every
 * step through the same code) must agree bit for bit, and so must a sentence decoded in a batch and
 * alone. The fused output layer must give the full log-softmax's top lists.
 */
#include "infer/incremental.h"
#include "compute/kernels.h"
#include "compute/pool.h"
#include "infer_models.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { B = 4 };
/* Log-probability errors, per unit of |log-probability| + 1, that float16 (2^-11 relative) and int8
 * (1/254 of a head's largest value) keys and values may cause here: values of about 1, 16-wide
 * sums, two layers (the errors seen are at most about a third of these). */
#define TOLERANCE_F16 1e-3f
#define TOLERANCE_I8 1.5e-2f

/* Feeds target prefixes through the incremental decoder and compares every step's log-probability
 * of the next target token with the full forward pass. */
START_TEST(incremental_matches_the_full_forward) {
    const variant v = variants[_i % VARIANTS];
    /* f32 caches: the forward's own numbers; f16 and i8: within what their rounding moves them. */
    const nmt_kv_format kv = (nmt_kv_format)(_i / VARIANTS);
    const float tolerance = kv == NMT_KV_F32 ? 1e-5f : kv == NMT_KV_F16 ? TOLERANCE_F16 : TOLERANCE_I8;
    nmt_model m;
    make_model(&m, v, 64, 11 + (uint64_t)_i);
    uint64_t s = 5;
    const int src_len[B] = {5, 1, 9, 3}, tgt_len[B] = {7, 4, 2, 10}; /* pieces */
    const int S = 10, T = 11;
    int32_t src[B * S], tgt_in[B * T], tgt_out[B * T];
    int tokens[B];
    for (int b = 0; b < B; b++) {
        for (int j = 0; j < S; j++) src[b * S + j] = NMT_PAD;
        for (int j = 0; j < T; j++) tgt_in[b * T + j] = tgt_out[b * T + j] = NMT_PAD;
        random_pieces(src + b * S, src_len[b], &s);
        src[b * S + src_len[b]] = NMT_EOS;
        tokens[b] = src_len[b] + 1;
        tgt_in[b * T] = NMT_BOS;
        random_pieces(tgt_out + b * T, tgt_len[b], &s);
        memcpy(tgt_in + b * T + 1, tgt_out + b * T, (size_t)tgt_len[b] * sizeof(int32_t));
        tgt_out[b * T + tgt_len[b]] = NMT_EOS;
    }
    const nmt_batch batch = {.batch = B, .src_len = S, .tgt_len = T, .src = src, .tgt_in = tgt_in, .tgt_out = tgt_out};
    float full[B * T];
    ck_assert_msg(nmt_model_token_logprobs(&m, &batch, full) == 0, "%s", nmt_error());

    nmt_incremental_weights *w;
    nmt_incremental *inc;
    ck_assert_int_eq(nmt_incremental_weights_create(&w, &m, NMT_PRECISION_FP32), 0);
    nmt_incremental_weights_set_cache_format(w, kv);
    ck_assert_int_eq(nmt_incremental_create_shared(&inc, w), 0);
    ck_assert_msg(nmt_incremental_start(inc, src, tokens, B, S, B, T) == 0, "%s", nmt_error());
    float worst = 0.0f;
    float logprobs[B * V], attention[B * S];
    for (int t = 0; t < T; t++) {
        int32_t feed[B];
        for (int b = 0; b < B; b++) feed[b] = tgt_in[b * T + t] == NMT_PAD ? NMT_EOS : tgt_in[b * T + t];
        ck_assert_msg(nmt_incremental_step(inc, B, feed, logprobs, attention) == 0, "%s", nmt_error());
        for (int b = 0; b < B; b++) {
            /* Each row is a distribution, and so is its attention over the real source tokens. */
            double p = 0, a = 0;
            for (int k = 0; k < V; k++) p += exp(logprobs[b * V + k]);
            ck_assert_double_eq_tol(p, 1.0, 1e-5);
            for (int j = 0; j < S; j++) {
                if (j >= tokens[b]) ck_assert(attention[b * S + j] == 0.0f);
                a += attention[b * S + j];
            }
            ck_assert_double_eq_tol(a, 1.0, 1e-5);
            if (t > tgt_len[b]) continue;
            float want = full[b * T + t], got = logprobs[b * V + tgt_out[b * T + t]];
            ck_assert_msg(fabsf(got - want) <= tolerance * (kv == NMT_KV_F32 ? 1.0f : 1.0f + fabsf(want)), "variant %d (%s) sentence %d step %d: %.7f vs full forward %.7f",
                          _i % VARIANTS, nmt_kv_format_name(kv), b, t, got, want);
            if (fabsf(got - want) / (1.0f + fabsf(want)) > worst) worst = fabsf(got - want) / (1.0f + fabsf(want));
        }
    }
    if (getenv("NMT_TEST_VERBOSE")) printf("%s variant %d: worst %.3g\n", nmt_kv_format_name(kv), _i % VARIANTS, worst);
    /* The rounding is there at all (the caches really are f16 / i8). */
    if (kv != NMT_KV_F32) ck_assert(worst > 1e-7f);
    nmt_incremental_free(inc);
    nmt_incremental_weights_free(w);
    nmt_model_free(&m);
}
END_TEST

/* With row-invariant products, the cache and the batch change nothing, bit for bit: this checks
 * the cache, its reordering and the row bookkeeping exactly. With batched products (the default) the
 * same holds up to OpenBLAS's last bits: same tokens, log-probabilities within 1e-5. */
START_TEST(cached_equals_uncached_and_batched_equals_alone) {
    nmt_model m;
    make_model(&m, variants[_i % VARIANTS], 64, 21 + (uint64_t)_i);
    int32_t src[SENTENCES][MAX_LEN];
    int len[SENTENCES];
    random_sources(src, len, NULL, SENTENCES, 3 + (uint64_t)_i);
    const nmt_decode_options opts[2] = {options(0, 4, 3), options(1, 1, 1)};
    const nmt_kv_format kv = (nmt_kv_format)(_i / VARIANTS); /* f32, f16, i8 caches */
    for (int k = 0; k < 2; k++)
        /* Batched products differ in last bits, which can move a stored value by a whole rounding
         * step: only float32 caches are compared that way. */
        for (int invariant = 1; invariant >= (kv == NMT_KV_F32 ? 0 : 1); invariant--) {
            nmt_translation cached[SENTENCES], uncached[SENTENCES];
            decode_batch(&m, &opts[k], 1, invariant, kv, src, len, 0, SENTENCES, cached);
            decode_batch(&m, &opts[k], 0, invariant, kv, src, len, 0, SENTENCES, uncached);
            for (int i = 0; i < SENTENCES; i++) {
                assert_same(&cached[i], &uncached[i], invariant);
                nmt_translation alone;
                decode_batch(&m, &opts[k], 1, invariant, kv, src, len, i, 1, &alone);
                assert_same(&cached[i], &alone, invariant);
                nmt_translation_free(&alone);
                nmt_translation_free(&cached[i]);
                nmt_translation_free(&uncached[i]);
            }
        }
    nmt_model_free(&m);
}
END_TEST

/* The decoder's log-softmax (kernels.h): softmax(0, 0.5, 2) = (0.0996, 0.1643, 0.7361), also for
 * scores far from 0 (the max is subtracted first) and over many rows (split between threads). */
START_TEST(log_softmax_of_worked_numbers) {
    float x[3 * 4000];
    for (int r = 0; r < 4000; r++) {
        x[3 * r] = 1000.0f * (float)(r % 3);
        x[3 * r + 1] = x[3 * r] + 0.5f;
        x[3 * r + 2] = x[3 * r] + 2.0f;
    }
    nmt_log_softmax_rows(x, 4000, 3);
    for (int r = 0; r < 4000; r++) {
        ck_assert_float_eq_tol(x[3 * r], logf(0.099624f), 1e-4f);
        ck_assert_float_eq_tol(x[3 * r + 1], logf(0.164252f), 1e-4f);
        ck_assert_float_eq_tol(x[3 * r + 2], logf(0.736125f), 1e-4f);
    }
}
END_TEST

START_TEST(bad_input_is_refused) {
    nmt_model m;
    make_model(&m, variants[0], 64, 71);
    nmt_incremental *inc;
    ck_assert_int_eq(nmt_incremental_create(&inc, &m), 0);
    int32_t src[3] = {4, V, NMT_EOS};
    int tokens = 3;
    ck_assert_int_eq(nmt_incremental_start(inc, src, &tokens, 1, 3, 1, 4), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "outside the vocabulary"));
    src[1] = 5;
    ck_assert_int_eq(nmt_incremental_start(inc, src, &tokens, 1, 3, 1, 2), 0);
    float logprobs[V];
    int32_t bos = NMT_BOS;
    ck_assert_int_eq(nmt_incremental_step(inc, 2, &bos, logprobs, NULL), -1);
    ck_assert_int_eq(nmt_incremental_step(inc, 1, &bos, logprobs, NULL), 0);
    ck_assert_int_eq(nmt_incremental_step(inc, 1, &bos, logprobs, NULL), 0);
    ck_assert_int_eq(nmt_incremental_step(inc, 1, &bos, logprobs, NULL), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "more than 2 steps"));
    const int32_t parent = 1;
    ck_assert_int_eq(nmt_incremental_reorder(inc, 1, &parent), -1);
    nmt_incremental_free(inc);
    nmt_model_free(&m);
}
END_TEST

/* The fused output layer (vocabulary chunks folded into top lists, never a [rows, V] matrix) gives
 * each row's k best tokens and eos log-probability as the full log-softmax does: a vocabulary of 600
 * spans three chunks, the last a partial panel; two threads split the rows. */
START_TEST(step_best_matches_full_logprobs) {
    enum { VOCAB = 600, ROWS = 3, TOP = 7, STEPS = 4, SRC = 6 };
    nmt_model m;
    make_model_of(&m, variants[_i], 64, 81 + (uint64_t)_i, VOCAB);
    ck_assert_int_eq(nmt_pool_set_threads(2), 0);
    int32_t src[ROWS * SRC];
    int tokens[ROWS];
    uint64_t s = 3;
    for (int b = 0; b < ROWS; b++) {
        random_pieces(src + b * SRC, SRC - 1, &s);
        src[b * SRC + SRC - 1] = NMT_EOS;
        tokens[b] = SRC;
    }
    nmt_incremental *full, *fused;
    ck_assert_int_eq(nmt_incremental_create(&full, &m), 0);
    ck_assert_int_eq(nmt_incremental_create(&fused, &m), 0);
    ck_assert_int_eq(nmt_incremental_start(full, src, tokens, ROWS, SRC, ROWS, STEPS), 0);
    ck_assert_int_eq(nmt_incremental_start(fused, src, tokens, ROWS, SRC, ROWS, STEPS), 0);
    static float logprobs[ROWS * VOCAB];
    nmt_scored_token best[ROWS * TOP], want[TOP];
    float eos[ROWS];
    int32_t feed[ROWS] = {NMT_BOS, NMT_BOS, NMT_BOS};
    for (int t = 0; t < STEPS; t++) {
        ck_assert_int_eq(nmt_incremental_step(full, ROWS, feed, logprobs, NULL), 0);
        ck_assert_msg(nmt_incremental_step_best(fused, ROWS, feed, TOP, best, eos, NULL) == 0, "%s", nmt_error());
        for (int r = 0; r < ROWS; r++) {
            const float *lp = logprobs + (size_t)r * VOCAB;
            nmt_scored_clear(want, TOP);
            nmt_scored_merge(want, TOP, lp, VOCAB, 0);
            ck_assert_float_eq_tol(eos[r], lp[NMT_EOS], 1e-5f);
            for (int i = 0; i < TOP; i++) {
                ck_assert_int_eq(best[r * TOP + i].token, want[i].token);
                ck_assert_float_eq_tol(best[r * TOP + i].logprob, want[i].logprob, 1e-5f);
            }
            feed[r] = best[r * TOP + r].token; /* rows take different continuations */
        }
    }
    ck_assert_int_eq(nmt_incremental_step_best(fused, ROWS, feed, 0, best, eos, NULL), -1);
    nmt_incremental_free(full);
    nmt_incremental_free(fused);
    nmt_model_free(&m);
}
END_TEST

int main(void) {
    Suite *s = suite_create("incremental");
    TCase *tc = infer_models_tcase("incremental");
    tcase_add_loop_test(tc, incremental_matches_the_full_forward, 0, 3 * VARIANTS);
    tcase_add_loop_test(tc, cached_equals_uncached_and_batched_equals_alone, 0, 3 * VARIANTS);
    tcase_add_loop_test(tc, step_best_matches_full_logprobs, 0, VARIANTS);
    tcase_add_test(tc, log_softmax_of_worked_numbers);
    tcase_add_test(tc, bad_input_is_refused);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
