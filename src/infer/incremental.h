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
#include "compute/packed.h"
#include "infer/shortlist.h"
#include "compute/kvstore.h"

/* The keys and values an int8 translator's decoders keep (kvstore.h); fp32 and bf16 keep float32. */
#define NMT_INCREMENTAL_INT8_CACHE NMT_KV_I8

typedef struct nmt_incremental nmt_incremental;

/* The model's weight matrices packed once for the decoder's products (packed.h); read-only, so
 * the decoders of several threads can share one. The model must outlive it. */
typedef struct nmt_incremental_weights nmt_incremental_weights;
int nmt_incremental_weights_create(nmt_incremental_weights **weights, const nmt_model *model, nmt_precision precision);
void nmt_incremental_weights_free(nmt_incremental_weights *weights);
/* The format of the keys and values that decoders created from now on keep (kvstore.h): float32
 * by default, NMT_INCREMENTAL_INT8_CACHE for int8 weights; float32 whatever is asked when a head
 * is wider than NMT_ATTENTION_STORED_BLOCK. */
void nmt_incremental_weights_set_cache_format(nmt_incremental_weights *weights, nmt_kv_format format);
nmt_kv_format nmt_incremental_weights_cache_format(const nmt_incremental_weights *weights);
/* Weights that hold their matrices whole (nmt_packed_self_contained: int8, and fp32 on a packed
 * kernel): gives back the memory of the model's float32 copies of every matrix the weights hold
 * (nmt_model_release); from then on rows of the output matrix (the embeddings tied to it,
 * shortlist candidates) are read from its packed copy: the very floats for fp32, the same values
 * for a model rounded by nmt_model_quantize_int8. Embedding tables of their own stay float32.
 * Returns the bytes given back; 0, and nothing changes, for other weights. The model then serves
 * these weights only. */
size_t nmt_incremental_weights_release(nmt_incremental_weights *weights, nmt_model *model);
/* From the next batch on, the top lists of nmt_incremental_step_best score only the batch's
 * shortlist candidates (shortlist.h; the shortlist must outlive the weights), NULL: the whole
 * vocabulary again. Log-probabilities are then normalized over the candidates, and a sentence's
 * result can depend on the other sentences of its batch. */
void nmt_incremental_weights_set_shortlist(nmt_incremental_weights *weights, const nmt_shortlist *shortlist);

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
