/* infer_models: what the tests of incremental decoding, the translator and forced scoring share.
 *
 * Tiny Transformers with random, perturbed weights in every architecture variant (norm position x
 * positions x tied embeddings), random sentences, a batch decoded directly through nmt_incremental
 * and nmt_search (cached or not, row-invariant or not), and comparisons of translations and of
 * forced scores with the decoder's own numbers.
 */
#ifndef NMT_INFER_MODELS_H
#define NMT_INFER_MODELS_H

#include "infer/forced.h"
#include "infer/incremental.h"
#include "compute/kernels.h"
#include "compute/pool.h"
#include "model/model.h"
#include "text/vocab.h"
#include "base/random.h"
#include "base/util.h"
#include "testing.h"
#include "tiny_model.h"

#include <check.h>
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

static inline uint64_t rng(uint64_t *s) { return nmt_random_next(s); }

/* A tiny model of the variant (tiny_model.h's nmt_test_tiny_perturbed: every parameter matters, eos is
 * likely enough for hypotheses to end before the length limit). */
static inline void make_model_of(nmt_model *m, variant v, int max_positions, uint64_t seed, int vocab) {
    nmt_model_config c = nmt_test_tiny_config(vocab, 16, 24, 2, 2);
    c.dropout = 0.3f; /* evaluation ignores it */
    c.norm_position = v.norm;
    c.positions = v.positions;
    c.max_positions = max_positions;
    c.tie_embeddings = v.tie;
    ck_assert_msg(nmt_test_tiny_perturbed(m, &c, seed) == 0, "%s", nmt_error());
}

static inline void make_model(nmt_model *m, variant v, int max_positions, uint64_t seed) {
    make_model_of(m, v, max_positions, seed, V);
}

/* A random sentence of n pieces (ids 4 .. V-1). */
static inline void random_pieces(int32_t *out, int n, uint64_t *s) {
    for (int i = 0; i < n; i++) out[i] = 4 + (int32_t)(rng(s) % (V - 4));
}

/* n random sentences of 1 .. MAX_LEN - 1 pieces, and (ptr not NULL) the pointers to them that the
 * decoding API takes. */
static inline void random_sources(int32_t src[][MAX_LEN], int *len, const int32_t **ptr, int n, uint64_t seed) {
    uint64_t s = seed;
    for (int i = 0; i < n; i++) {
        len[i] = 1 + (int)(rng(&s) % (MAX_LEN - 1));
        random_pieces(src[i], len[i], &s);
        if (ptr) ptr[i] = src[i];
    }
}

static inline void assert_same(const nmt_translation *x, const nmt_translation *y, int bitwise) {
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

/* Decodes sentences [first, first + n) of src as one batch: cached or not, row-invariant or not,
 * keys and values stored in `kv`. */
static inline void decode_batch_guided(const nmt_model *m, const nmt_decode_options *o, int cached, int row_invariant,
                                       nmt_kv_format kv, int32_t src[][MAX_LEN], const int *len, int first, int n,
                                       const nmt_decode_guide *const *guides, nmt_translation *out) {
    int S = 0, pieces[SENTENCES], tokens[SENTENCES], steps = 0;
    for (int b = 0; b < n; b++) {
        if (len[first + b] + 1 > S) S = len[first + b] + 1;
        int max_len = nmt_decode_max_length(o, len[first + b]);
        const nmt_decode_guide *g = guides ? guides[b] : NULL;
        for (int c = 0; g && c < g->constraint_count; c++) max_len += g->constraints[c].length;
        if (g) max_len += g->prefix_length; /* at least the guide's pieces fit */
        if (max_len + 1 > steps) steps = max_len + 1;
    }
    int32_t matrix[SENTENCES * MAX_LEN];
    for (int b = 0; b < n; b++) {
        pieces[b] = len[first + b];
        tokens[b] = pieces[b] + 1;
        nmt_vocab_row(NMT_ROW_SOURCE, src[first + b], pieces[b], matrix + b * S, S);
    }
    nmt_incremental_weights *w;
    nmt_incremental *inc;
    nmt_search *search;
    ck_assert_int_eq(nmt_incremental_weights_create(&w, m, NMT_PRECISION_FP32), 0);
    nmt_incremental_weights_set_cache_format(w, kv);
    ck_assert_int_eq(nmt_incremental_create_shared(&inc, w), 0);
    ck_assert_int_eq(nmt_search_create(&search, o), 0);
    nmt_incremental_set_cached(inc, cached);
    nmt_incremental_set_row_invariant(inc, row_invariant);
    const int rows = n * (o->greedy ? 1 : o->beam_size);
    ck_assert_msg(nmt_incremental_start(inc, matrix, tokens, n, S, rows, steps) == 0, "%s", nmt_error());
    nmt_decode_step step = nmt_incremental_decode_step(inc);
    ck_assert_msg(nmt_search_run_guided(search, &step, n, pieces, NULL, guides, S, out) == 0, "%s", nmt_error());
    nmt_search_free(search);
    nmt_incremental_free(inc);
    nmt_incremental_weights_free(w);
}

static inline void decode_batch(const nmt_model *m, const nmt_decode_options *o, int cached, int row_invariant,
                                nmt_kv_format kv, int32_t src[][MAX_LEN], const int *len, int first, int n,
                                nmt_translation *out) {
    decode_batch_guided(m, o, cached, row_invariant, kv, src, len, first, n, NULL, out);
}

static inline nmt_decode_options options(int greedy, int beam, int n_best) {
    nmt_decode_options o = nmt_decode_options_default();
    o.greedy = greedy;
    o.beam_size = beam;
    o.n_best = n_best;
    o.attention = 1;
    return o;
}

/* Forced scoring (the training path) of each hypothesis of `t` for source src[0 .. len) gives the
 * hypothesis's log-probability, within tolerance + per_token * (its tokens + eos); without eos's for
 * a hypothesis cut at the maximum length. */
static inline void assert_forced_scores(nmt_model *m, const int32_t *src, int len, const nmt_translation *t,
                                        double tolerance, double per_token) {
    for (int j = 0; j < t->count; j++) {
        const nmt_hypothesis *h = &t->hyps[j];
        const int32_t *tgt = h->tokens;
        float *tokens = malloc(((size_t)h->length + 1) * sizeof *tokens);
        double forced;
        ck_assert_ptr_nonnull(tokens);
        ck_assert_msg(nmt_forced_score_tokens(m, 1, &src, &len, &tgt, &h->length, 4, &forced, &tokens) == 0, "%s",
                      nmt_error());
        if (h->cut) forced -= tokens[h->length];
        free(tokens);
        ck_assert_double_eq_tol(forced, h->logprob, tolerance + per_token * (h->length + 1));
    }
}

/* In each test's own process (Check forks before a test, and a forked child has no pool threads);
 * one thread: the tiny products here only pay for threading. */
static inline void infer_models_setup(void) { nmt_pool_set_threads(1); }

/* A test case for the tests of tiny models: one thread each, two minutes at most. */
static inline TCase *infer_models_tcase(const char *name) {
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, infer_models_setup, NULL);
    tcase_set_timeout(tc, 120);
    return tc;
}

#endif
