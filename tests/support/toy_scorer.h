/* toy_scorer: the hash scorer that stands in for a model in the tests of the search and of the
 * decoding controls.
 *
 * It gives every (sentence, prefix) a pseudo-random distribution (a hash of the prefix seeds the
 * logits; eos grows likelier with the length), so search results can be checked against properties
 * and against a replay of the hypothesis through the same scorer. It serves the three steps of
 * nmt_decode_step: top lists, full log-probabilities and raw logits.
 */
#ifndef NMT_TEST_TOY_SCORER_H
#define NMT_TEST_TOY_SCORER_H

#include "infer/search.h"
#include "base/random.h"
#include "text/vocab.h"
#include "base/util.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { TOY_MAX_ROWS = 512, TOY_V = 12, TOY_WIDTH = 9 };

typedef struct toy {
    uint64_t state[TOY_MAX_ROWS], spare_state[TOY_MAX_ROWS]; /* hash of each row's sentence + prefix */
    int length[TOY_MAX_ROWS], spare_length[TOY_MAX_ROWS];     /* tokens fed so far */
    int pieces[TOY_MAX_ROWS], spare_pieces[TOY_MAX_ROWS];     /* source pieces of the row's sentence */
    double eos_slope;  /* eos logit grows by this much per step */
    long calls;        /* step calls */
    long fail_at_call; /* the n-th step call fails (0 = never) */
    int nan_at_call;   /* the n-th step call returns NaN log-probabilities (0 = never) */
} toy;

static inline uint64_t mix(uint64_t h, uint64_t v) {
    return nmt_random_mix(h ^ (v + NMT_RANDOM_GAMMA + (h << 6) + (h >> 2)));
}

static inline double uniform(uint64_t h) { return (double)(h >> 11) / 9007199254740992.0; }

/* Rows start as one per sentence; sentence i of the batch has seed seeds[i]. */
static inline void toy_prime(toy *t, int batch, const uint64_t *seeds, const int *pieces) {
    for (int b = 0; b < batch; b++) {
        t->state[b] = seeds[b];
        t->length[b] = 0;
        t->pieces[b] = pieces[b];
    }
}

/* The log-probabilities (raw: the logits) and attention of one row after feeding `token` (updates
 * the row). */
static inline void toy_row_scores(toy *t, int r, int32_t token, float *logprobs, int raw, float *attention, int width) {
    t->state[r] = mix(t->state[r], (uint64_t)token);
    t->length[r]++;
    double logits[TOY_V], max = -INFINITY, sum = 0;
    for (int v = 0; v < TOY_V; v++) {
        logits[v] = 4.0 * uniform(mix(t->state[r], (uint64_t)v)) - 2.0;
        if (v == NMT_EOS) logits[v] += t->eos_slope * t->length[r] - 1.0;
        if (logits[v] > max) max = logits[v];
    }
    for (int v = 0; v < TOY_V; v++) sum += exp(logits[v] - max);
    for (int v = 0; v < TOY_V; v++) logprobs[v] = (float)(raw ? logits[v] : logits[v] - max - log(sum));
    if (!attention) return;
    double total = 0;
    for (int c = 0; c < width; c++) {
        attention[c] = c <= t->pieces[r] ? (float)exp(2.0 * uniform(mix(t->state[r], 1000u + (uint64_t)c))) : 0.0f;
        total += attention[c];
    }
    for (int c = 0; c < width; c++) attention[c] = (float)(attention[c] / total);
}

static inline void toy_row(toy *t, int r, int32_t token, float *logprobs, float *attention, int width) {
    toy_row_scores(t, r, token, logprobs, 0, attention, width);
}

/* Resets the scorer to one row with seed `seed` and `pieces` source pieces. */
static inline void toy_one(toy *t, uint64_t seed, int pieces) {
    memset(t, 0, sizeof *t);
    toy_prime(t, 1, &seed, &pieces);
}

/* Resets the scorer to one row, sentence `index` of toy_decode's batches (its seed and source
 * length), for a replay; returns its source pieces. */
static inline int toy_replay_start(toy *t, int index, double eos_slope) {
    memset(t, 0, sizeof *t);
    t->eos_slope = eos_slope;
    uint64_t seed = 1000u + (uint64_t)index;
    int pieces = 1 + index % (TOY_WIDTH - 1);
    toy_prime(t, 1, &seed, &pieces);
    return pieces;
}

/* A scorer's full log-probability rows [rows, V], turned into what a decoder step returns. */
static inline void rows_to_best(const float *logprobs, int rows, int V, int k, nmt_scored_token *best, float *eos) {
    for (int r = 0; r < rows; r++) {
        nmt_scored_clear(best + (size_t)r * (size_t)k, k);
        nmt_scored_merge(best + (size_t)r * (size_t)k, k, logprobs + (size_t)r * (size_t)V, V, 0);
        eos[r] = logprobs[(size_t)r * (size_t)V + NMT_EOS];
    }
}

/* The hash scorer's full rows (raw: logits). */
static inline int toy_step_rows(toy *t, int rows, const int32_t *tokens, float *logprobs, int raw, float *attention) {
    t->calls++;
    if (t->fail_at_call && t->calls == t->fail_at_call) return nmt_error_set("toy scorer failed on purpose");
    ck_assert_int_le(rows, TOY_MAX_ROWS);
    for (int r = 0; r < rows; r++)
        toy_row_scores(t, r, tokens[r], logprobs + (size_t)r * TOY_V, raw,
                       attention ? attention + (size_t)r * TOY_WIDTH : NULL, TOY_WIDTH);
    if (t->nan_at_call && t->calls == t->nan_at_call)
        for (int i = 0; i < rows * TOY_V; i++) logprobs[i] = NAN;
    return 0;
}

/* The step for sampling. */
static inline int toy_step_logprobs(void *ctx, int rows, const int32_t *tokens, float *logprobs, float *attention) {
    return toy_step_rows(ctx, rows, tokens, logprobs, 0, attention);
}

/* The step for the controls that change scores. */
static inline int toy_step_logits(void *ctx, int rows, const int32_t *tokens, float *logits, float *attention) {
    return toy_step_rows(ctx, rows, tokens, logits, 1, attention);
}

static inline int toy_step(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos,
                    float *attention) {
    static float logprobs[TOY_MAX_ROWS * TOY_V];
    if (toy_step_logprobs(ctx, rows, tokens, logprobs, attention) < 0) return -1;
    rows_to_best(logprobs, rows, TOY_V, k, best, eos);
    return 0;
}

/* The step with extra tokens scored from the same rows as the top lists (constrained decoding). */
static inline int toy_step_extra(void *ctx, int rows, const int32_t *tokens, int k, nmt_scored_token *best, float *eos,
                                 float *attention, int extra, const int32_t *extra_tokens, float *extra_logprobs) {
    static float logprobs[TOY_MAX_ROWS * TOY_V];
    if (toy_step_logprobs(ctx, rows, tokens, logprobs, attention) < 0) return -1;
    rows_to_best(logprobs, rows, TOY_V, k, best, eos);
    for (int r = 0; r < rows; r++)
        for (int e = 0; e < extra; e++) {
            const int32_t token = extra_tokens[r * extra + e];
            extra_logprobs[r * extra + e] = token >= 0 ? logprobs[r * TOY_V + token] : -INFINITY;
        }
    return 0;
}

static inline int toy_reorder(void *ctx, int rows, const int32_t *parents) {
    toy *t = ctx;
    for (int r = 0; r < rows; r++) {
        t->spare_state[r] = t->state[parents[r]];
        t->spare_length[r] = t->length[parents[r]];
        t->spare_pieces[r] = t->pieces[parents[r]];
    }
    memcpy(t->state, t->spare_state, sizeof t->state);
    memcpy(t->length, t->spare_length, sizeof t->length);
    memcpy(t->pieces, t->spare_pieces, sizeof t->pieces);
    return 0;
}

/* Decodes `batch` sentences (seeds 1000 + first .., sampling keys first ..) with the hash scorer. */
static inline void toy_decode_guided(const nmt_decode_options *o, int first, int batch, double eos_slope,
                                     const nmt_decode_guide *const *guides, nmt_translation *out) {
    static toy t; /* large: keep it off the stack */
    memset(&t, 0, sizeof t);
    t.eos_slope = eos_slope;
    uint64_t seeds[64], keys[64];
    int pieces[64];
    for (int b = 0; b < batch; b++) {
        seeds[b] = 1000u + (uint64_t)(first + b);
        keys[b] = (uint64_t)(first + b);
        pieces[b] = 1 + (first + b) % (TOY_WIDTH - 1);
    }
    toy_prime(&t, batch, seeds, pieces);
    nmt_search *s;
    ck_assert_int_eq(nmt_search_create(&s, o), 0);
    nmt_decode_step step = {&t, TOY_V, 0, toy_step, toy_reorder, toy_step_logprobs, toy_step_logits, toy_step_extra};
    ck_assert_msg(nmt_search_run_guided(s, &step, batch, pieces, keys, guides, TOY_WIDTH, out) == 0, "%s", nmt_error());
    nmt_search_free(s);
}

static inline void toy_decode(const nmt_decode_options *o, int first, int batch, double eos_slope, nmt_translation *out) {
    toy_decode_guided(o, first, batch, eos_slope, NULL, out);
}

/* Replays a hypothesis of sentence `index` through the hash scorer: its log-probability (of the
 * tokens after its first `forced`, within `tolerance`) and attention rows must be what the scorer
 * gives that prefix. */
static inline void check_replay_within(const nmt_hypothesis *h, int index, double eos_slope, int forced,
                                       double tolerance) {
    static toy t;
    const int pieces = toy_replay_start(&t, index, eos_slope);
    ck_assert_int_eq(h->src_len, pieces);
    float lp[TOY_V], att[TOY_WIDTH];
    double total = 0;
    int32_t token = NMT_BOS;
    for (int j = 0; j <= h->length; j++) {
        toy_row(&t, 0, token, lp, att, TOY_WIDTH);
        token = j < h->length ? h->tokens[j] : NMT_EOS;
        ck_assert(token != NMT_PAD && token != NMT_BOS && (token != NMT_EOS || j == h->length));
        if (j >= forced && (j < h->length || !h->cut)) total += lp[token]; /* a cut one has no eos */
        if (h->attention)
            ck_assert_mem_eq(h->attention + (size_t)j * (size_t)(pieces + 1), att, (size_t)(pieces + 1) * sizeof(float));
    }
    ck_assert_double_eq_tol(h->logprob, total, tolerance);
}

static inline void check_replay_from(const nmt_hypothesis *h, int index, double eos_slope, int forced) {
    check_replay_within(h, index, eos_slope, forced, 1e-9);
}

static inline void check_replay(const nmt_hypothesis *h, int index, double eos_slope) {
    check_replay_from(h, index, eos_slope, 0);
}

static inline nmt_decode_options beam_options(int beam, int n_best, double alpha) {
    nmt_decode_options o = nmt_decode_options_default();
    o.beam_size = beam;
    o.n_best = n_best;
    o.length_penalty = alpha;
    return o;
}

static inline nmt_decode_options greedy_options(void) {
    nmt_decode_options o = nmt_decode_options_default();
    o.greedy = 1;
    return o;
}

static inline nmt_decode_options sampling_options(int top_k, double top_p, uint64_t seed) {
    nmt_decode_options o = greedy_options();
    o.sampling.enabled = 1;
    o.sampling.top_k = top_k;
    o.sampling.top_p = top_p;
    o.sampling.seed = seed;
    return o;
}

static inline void free_all(nmt_translation *t, int n) {
    for (int i = 0; i < n; i++) nmt_translation_free(&t[i]);
}

static inline int same_tokens(const nmt_hypothesis *a, const nmt_hypothesis *b) {
    return a->length == b->length && memcmp(a->tokens, b->tokens, (size_t)a->length * sizeof(int32_t)) == 0;
}

#endif
