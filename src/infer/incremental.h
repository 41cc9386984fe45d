/* incremental: the Transformer's inference forward for decoding, one target token at a time.
 *
 * nmt_incremental_start runs the encoder once over a batch of sources and computes, for every
 * decoder layer, the cross-attention keys and values of the encoder output (they never change
 * while the batch decodes). Each nmt_incremental_step then feeds one token per live row through
 * the decoder: the new position's self-attention key and value are appended to a per-layer cache,
 * attention reads the cache instead of recomputing the prefix, and the step returns the rows'
 * log-probabilities over the vocabulary (and, when asked, the last decoder layer's cross-attention
 * averaged over heads). nmt_incremental_reorder rebuilds the cache rows after a beam step.
 * nmt_incremental_decode_step wraps all this as the search's nmt_decode_step.
 *
 * Evaluation mode throughout (no dropout). The numbers are the model's (model.h): embeddings times
 * sqrt(D) plus positions, post- or pre-LN, rope on self-attention queries and keys, a tied output
 * matrix used unscaled. Layer math goes through kernels.h. A row's result depends only on its own
 * sentence and prefix, never on the rest of the batch.
 *
 * Matrix products go through weights packed once (packed.h); on CPUs with AVX2+FMA or AVX-512
 * they are row-invariant, so a row's numbers do not depend on the rest of the batch even in the
 * last bits. Without either (or with NMT_GEMM=openblas) they are OpenBLAS's, which computes a row
 * differently depending on where it falls in its micro-kernel tiles; row-invariant mode then
 * computes every product one row at a time (slower, for tests). Uncached mode recomputes the
 * decoder over the whole prefix at each step through the same code (the cache is refilled from
 * position 0); with row invariance, cached and uncached decoding, and a sentence decoded in a
 * batch or alone, agree bit for bit.
 */
#ifndef NMT_INCREMENTAL_H
#define NMT_INCREMENTAL_H

#include <stdint.h>

#include "infer/search.h"
#include "model/model.h"
#include "infer/incremental_weights.h"

typedef struct nmt_incremental nmt_incremental;

/* A decoder with packed weights of its own (fp32). The model must outlive the decoder; its parameters are
 * read, never written. */
int nmt_incremental_create(nmt_incremental **inc, const nmt_model *model);
/* A decoder on shared packed weights, which must outlive it. */
int nmt_incremental_create_shared(nmt_incremental **inc, const nmt_incremental_weights *weights);
void nmt_incremental_free(nmt_incremental *inc);
/* 0: recompute the whole prefix at every step (for tests); 1 (default): use the cache. */
void nmt_incremental_set_cached(nmt_incremental *inc, int cached);
/* 1: every matrix product one row at a time (for tests); 0 (default): batched products. */
void nmt_incremental_set_row_invariant(nmt_incremental *inc, int on);

/* Sizes the buffers for batches of up to this shape (the arguments of nmt_incremental_start), so
 * that starting them allocates nothing and touches no fresh memory beyond what they use. Buffers
 * only grow; nmt_incremental_start reserves what it needs by itself. */
int nmt_incremental_reserve(nmt_incremental *inc, int batch, int src_width, int max_rows, int max_steps);
/* Encodes src[batch, src_width] (each row pieces + eos, padded with pad; src_lengths[b] = pieces +
 * eos, >= 1) and primes one decoder row per sentence. Up to max_rows rows will be live at once and
 * up to max_steps tokens fed to each (both size the cache). */
int nmt_incremental_start(nmt_incremental *inc, const int32_t *src, const int *src_lengths, int batch, int src_width,
                          int max_rows, int max_steps);
/* Feeds tokens[rows] (bos first) at the next position; fills logprobs[rows, V] and, when not
 * NULL, attention[rows, src_width]. */
int nmt_incremental_step(nmt_incremental *inc, int rows, const int32_t *tokens, float *logprobs, float *attention);
/* The same, returning instead each row's top list of k (search.h) and eos log-probability: the
 * output layer then runs in vocabulary chunks folded into them, never as a [rows, V] matrix. */
int nmt_incremental_step_best(nmt_incremental *inc, int rows, const int32_t *tokens, int k, nmt_scored_token *best,
                              float *eos_logprob, float *attention);
/* New row r continues old row parents[r]. */
int nmt_incremental_reorder(nmt_incremental *inc, int rows, const int32_t *parents);
/* The search's view of this decoder (vocab_size and max_steps from the model). */
nmt_decode_step nmt_incremental_decode_step(nmt_incremental *inc);

#endif
