/* Tests of incremental decoding and model translation on tiny Transformers with random weights.
 *
 * The reference is the engine's training-path forward (nmt_model_token_logprobs, evaluation mode):
 * the incremental decoder fed the same prefixes must give the same log-probabilities (to 1e-5) for
 * every architecture variant. Cached and uncached decoding (the whole prefix recomputed at every
 * step through the same code) must agree bit for bit, and so must a sentence decoded in a batch and
 * alone. Forced scoring must equal the sum of the per-step log-probabilities of decoding.
 */
#include "infer/forced.h"
#include "infer/incremental.h"
#include "compute/pool.h"
#include "compute/kernels.h"
#include "model/model.h"
#include "infer/translator.h"
#include "base/util.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { V = 29, MAX_LEN = 12 };

typedef struct variant {
    nmt_norm_position norm;
    nmt_positions positions;
    nmt_tie tie;
} variant;

static const variant variants[] = {
    {NMT_NORM_POST, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_ALL},
    {NMT_NORM_PRE, NMT_POSITIONS_SINUSOIDAL, NMT_TIE_DECODER},
    {NMT_NORM_POST, NMT_POSITIONS_LEARNED, NMT_TIE_NONE},
    {NMT_NORM_PRE, NMT_POSITIONS_LEARNED, NMT_TIE_ALL},
    {NMT_NORM_POST, NMT_POSITIONS_ROPE, NMT_TIE_DECODER},
    {NMT_NORM_PRE, NMT_POSITIONS_ROPE, NMT_TIE_NONE},
};
enum { VARIANTS = sizeof variants / sizeof variants[0] };

static uint64_t rng(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A tiny model; every parameter (biases and LayerNorm gains too) is perturbed so that all of them
 * matter, and eos is made likely enough for hypotheses to end before the length limit. */
static void make_model_of(nmt_model *m, variant v, int max_positions, uint64_t seed, int vocab) {
    nmt_model_config c = nmt_model_config_default();
    c.vocab_size = vocab;
    c.d_model = 16;
    c.heads = 2;
    c.ffn = 24;
    c.encoder_layers = 2;
    c.decoder_layers = 2;
    c.dropout = 0.3f; /* evaluation ignores it */
    c.norm_position = v.norm;
    c.positions = v.positions;
    c.max_positions = max_positions;
    c.tie_embeddings = v.tie;
    ck_assert_msg(nmt_model_create(m, &c) == 0, "%s", nmt_error());
    nmt_model_init_weights(m, seed);
    uint64_t s = seed;
    for (size_t i = 0; i < m->num_params; i++) m->params[i] += 0.1f * ((float)(rng(&s) >> 40) / 16777216.0f - 0.5f);
    for (int j = 0; j < c.d_model; j++) m->p.output[NMT_EOS * c.d_model + j] *= 4.0f;
}

static void make_model(nmt_model *m, variant v, int max_positions, uint64_t seed) {
    make_model_of(m, v, max_positions, seed, V);
}

/* A random sentence of n pieces (ids 4 .. V-1). */
static void random_pieces(int32_t *out, int n, uint64_t *s) {
    for (int i = 0; i < n; i++) out[i] = 4 + (int32_t)(rng(s) % (V - 4));
}

enum { B = 4 };

/* Feeds target prefixes through the incremental decoder and compares every step's log-probability
 * of the next target token with the full forward pass. */
START_TEST(incremental_matches_the_full_forward) {
    const variant v = variants[_i];
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

    nmt_incremental *inc;
    ck_assert_int_eq(nmt_incremental_create(&inc, &m), 0);
    ck_assert_msg(nmt_incremental_start(inc, src, tokens, B, S, B, T) == 0, "%s", nmt_error());
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
            ck_assert_msg(fabsf(got - want) <= 1e-5f, "variant %d sentence %d step %d: %.7f vs full forward %.7f", _i, b, t,
                          got, want);
        }
    }
    nmt_incremental_free(inc);
    nmt_model_free(&m);
}
END_TEST

static void random_sources(int32_t src[][MAX_LEN], int *len, int n, uint64_t seed) {
    uint64_t s = seed;
    for (int i = 0; i < n; i++) {
        len[i] = 1 + (int)(rng(&s) % (MAX_LEN - 1));
        random_pieces(src[i], len[i], &s);
    }
}

static void assert_same(const nmt_translation *x, const nmt_translation *y, int bitwise) {
    ck_assert_int_eq(x->count, y->count);
    for (int j = 0; j < x->count; j++) {
        const nmt_hypothesis *a = &x->hyps[j], *b = &y->hyps[j];
        ck_assert_int_eq(a->length, b->length);
        ck_assert_mem_eq(a->tokens, b->tokens, (size_t)a->length * sizeof(int32_t));
        if (bitwise) {
            ck_assert(a->logprob == b->logprob && a->score == b->score);
            if (a->attention)
                ck_assert_mem_eq(a->attention, b->attention,
                                 (size_t)(a->length + 1) * (size_t)(a->src_len + 1) * sizeof(float));
        } else {
            ck_assert_double_eq_tol(a->logprob, b->logprob, 1e-5);
        }
    }
}

enum { SENTENCES = 9 };

/* Decodes sentences [first, first + n) of src as one batch: cached or not, row-invariant or not. */
static void decode_batch(const nmt_model *m, const nmt_decode_options *o, int cached, int row_invariant,
                         int32_t src[][MAX_LEN], const int *len, int first, int n, nmt_translation *out) {
    int S = 0, pieces[SENTENCES], tokens[SENTENCES], steps = 0;
    for (int b = 0; b < n; b++) {
        if (len[first + b] + 1 > S) S = len[first + b] + 1;
        int max_len = nmt_decode_max_length(o, len[first + b]);
        if (max_len + 1 > steps) steps = max_len + 1;
    }
    int32_t matrix[SENTENCES * MAX_LEN];
    for (int b = 0; b < n; b++) {
        pieces[b] = len[first + b];
        tokens[b] = pieces[b] + 1;
        for (int j = 0; j < S; j++)
            matrix[b * S + j] = j < pieces[b] ? src[first + b][j] : j == pieces[b] ? NMT_EOS : NMT_PAD;
    }
    nmt_incremental *inc;
    nmt_search *search;
    ck_assert_int_eq(nmt_incremental_create(&inc, m), 0);
    ck_assert_int_eq(nmt_search_create(&search, o), 0);
    nmt_incremental_set_cached(inc, cached);
    nmt_incremental_set_row_invariant(inc, row_invariant);
    ck_assert_msg(nmt_incremental_start(inc, matrix, tokens, n, S, n * (o->greedy ? 1 : o->beam_size), steps) == 0, "%s",
                  nmt_error());
    nmt_decode_step step = nmt_incremental_decode_step(inc);
    ck_assert_msg(nmt_search_run(search, &step, n, pieces, S, out) == 0, "%s", nmt_error());
    nmt_search_free(search);
    nmt_incremental_free(inc);
}

static nmt_decode_options options(int greedy, int beam, int n_best) {
    nmt_decode_options o = nmt_decode_options_default();
    o.greedy = greedy;
    o.beam_size = beam;
    o.n_best = n_best;
    o.attention = 1;
    return o;
}

/* With row-invariant products, the cache and the batch change nothing, bit for bit: this checks
 * the cache, its reordering and the row bookkeeping exactly. With batched products (the default) the
 * same holds up to OpenBLAS's last bits: same tokens, log-probabilities within 1e-5. */
START_TEST(cached_equals_uncached_and_batched_equals_alone) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 21 + (uint64_t)_i);
    int32_t src[SENTENCES][MAX_LEN];
    int len[SENTENCES];
    random_sources(src, len, SENTENCES, 3 + (uint64_t)_i);
    const nmt_decode_options opts[2] = {options(0, 4, 3), options(1, 1, 1)};
    for (int k = 0; k < 2; k++)
        for (int invariant = 1; invariant >= 0; invariant--) {
            nmt_translation cached[SENTENCES], uncached[SENTENCES];
            decode_batch(&m, &opts[k], 1, invariant, src, len, 0, SENTENCES, cached);
            decode_batch(&m, &opts[k], 0, invariant, src, len, 0, SENTENCES, uncached);
            for (int i = 0; i < SENTENCES; i++) {
                assert_same(&cached[i], &uncached[i], invariant);
                nmt_translation alone;
                decode_batch(&m, &opts[k], 1, invariant, src, len, i, 1, &alone);
                assert_same(&cached[i], &alone, invariant);
                nmt_translation_free(&alone);
                nmt_translation_free(&cached[i]);
                nmt_translation_free(&uncached[i]);
            }
        }
    nmt_model_free(&m);
}
END_TEST

/* Forced scoring (the training path) of each hypothesis of `t` for source src[0 .. len) gives the
 * hypothesis's log-probability, within tolerance + per_token * (its tokens + eos). */
static void assert_forced_scores(nmt_model *m, const int32_t *src, int len, const nmt_translation *t, double tolerance,
                                 double per_token) {
    for (int j = 0; j < t->count; j++) {
        const nmt_hypothesis *h = &t->hyps[j];
        const int32_t *tgt = h->tokens;
        double forced;
        ck_assert_msg(nmt_forced_score(m, 1, &src, &len, &tgt, &h->length, 4, &forced) == 0, "%s", nmt_error());
        ck_assert_double_eq_tol(forced, h->logprob, tolerance + per_token * (h->length + 1));
    }
}

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

/* Batched forced scoring equals scoring pair by pair, and the sum of the incremental decoder's
 * per-step log-probabilities along the same target. */
START_TEST(score_is_the_sum_of_step_logprobs) {
    nmt_model m;
    make_model(&m, variants[_i], 64, 41 + (uint64_t)_i);
    int32_t src[SENTENCES][MAX_LEN], tgt[SENTENCES][MAX_LEN];
    int src_len[SENTENCES], tgt_len[SENTENCES];
    random_sources(src, src_len, SENTENCES, 8);
    random_sources(tgt, tgt_len, SENTENCES, 9);
    tgt_len[2] = 0;
    src_len[5] = 0;
    const int32_t *sp[SENTENCES], *tp[SENTENCES];
    for (int i = 0; i < SENTENCES; i++) sp[i] = src[i], tp[i] = tgt[i];
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

/* In each test's own process (Check forks before a test, and a forked child has no pool threads);
 * one thread: the tiny products here only pay for threading. */
static void setup(void) { nmt_pool_set_threads(1); }

int main(void) {
    Suite *s = suite_create("incremental");
    TCase *tc = tcase_create("incremental");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, incremental_matches_the_full_forward, 0, VARIANTS);
    tcase_add_loop_test(tc, cached_equals_uncached_and_batched_equals_alone, 0, VARIANTS);
    tcase_add_loop_test(tc, translator_keeps_order_and_scores_agree, 0, VARIANTS);
    tcase_add_loop_test(tc, score_is_the_sum_of_step_logprobs, 0, VARIANTS);
    tcase_add_loop_test(tc, threads_share_batches_exactly, 0, VARIANTS);
    tcase_add_loop_test(tc, step_best_matches_full_logprobs, 0, VARIANTS);
    tcase_add_loop_test(tc, bf16_translator_scores_close, 0, VARIANTS);
    tcase_add_test(tc, empty_sources_do_not_run_the_model);
    tcase_add_test(tc, learned_positions_bound_lengths);
    tcase_add_test(tc, log_softmax_of_worked_numbers);
    tcase_add_test(tc, bad_input_is_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
