/* sampling: one token drawn from a row of log-probabilities, for sampled translations (the
 * back-translation of monolingual text, as fairseq's --sampling and Marian's --output-sampling).
 *
 * A draw takes the row's distribution at temperature T, p_i proportional to exp(logprob_i / T),
 * keeps its top_k most probable tokens (0: all), and of those the fewest, most probable first, whose
 * probability reaches top_p of theirs (1: all); ranks tie to the smaller id. It then inverts the
 * kept tokens' cumulative distribution at one uniform number u, a pure function of (seed, key,
 * position): a sentence's draws depend on the seed, its key (the translator's is the line number)
 * and the model's numbers only, never on its batch or the thread count. pad and bos are never drawn.
 *
 * A restricted draw finds its boundary without sorting the vocabulary: one pass files every token's
 * probability into buckets of a quarter binade, the buckets above the boundary are taken whole, and
 * only the boundary bucket's tokens are sorted.
 */
#ifndef NMT_SAMPLING_H
#define NMT_SAMPLING_H

#include <stdint.h>

typedef struct nmt_sampling {
    int enabled;        /* 0: no sampling (the search's own greedy or beam choices) */
    int top_k;          /* the most probable k tokens only; 0 = every token */
    double top_p;       /* nucleus: the fewest most probable tokens holding this mass, in (0, 1] (1 = all) */
    double temperature; /* T > 0: < 1 sharpens the distribution, > 1 flattens it (1) */
    uint64_t seed;
} nmt_sampling;

/* Sampling off, top_k 0, top_p 1, temperature 1, seed 1. */
nmt_sampling nmt_sampling_default(void);
/* Rejects impossible settings (top_p outside (0, 1], T not a positive finite number, top_k < 0). */
int nmt_sampling_check(const nmt_sampling *s);

/* The uniform number in [0, 1) of a draw. */
double nmt_sampling_uniform(uint64_t seed, uint64_t key, int position);

/* A token that a restricted draw may keep, with its probability. */
typedef struct nmt_sampling_candidate {
    float p;
    int32_t token;
} nmt_sampling_candidate;

/* What the draws over a vocabulary of V tokens need, reused from draw to draw. */
typedef struct nmt_sampling_scratch {
    float *probs;                       /* [V] */
    nmt_sampling_candidate *candidates; /* [V] */
} nmt_sampling_scratch;

/* Draws a token from logprobs[V] (a row normalised over the vocabulary) for the sentence with key
 * `key` at target position `position`. Returns -1 when the row has no finite log-probability to
 * draw from (the caller's error to report). */
int32_t nmt_sampling_draw(const nmt_sampling *s, const float *logprobs, int V, uint64_t key, int position,
                          nmt_sampling_scratch scratch);

#endif
