/* translator: translation of already-encoded sentences with a model.
 *
 * Sentences are sorted by length (order.h), decoded in batches of options.batch_size (fewer when
 * options.batch_tokens bounds the padded source tokens of a batch) with
 * nmt_incremental (encoder once per batch, cached decoder steps) driven by nmt_search, and the
 * results returned in the input order. There is one worker (its own search and decoder, on weights
 * packed once and shared) per pool thread; the workers take whole batches in turn, and each batch
 * is decoded on a single thread, so a result does not depend on the thread count.
 */
#ifndef NMT_TRANSLATOR_H
#define NMT_TRANSLATOR_H

#include <stdint.h>

#include "infer/search.h"
#include "model/model.h"

typedef struct nmt_translator nmt_translator;

/* The model must outlive the translator. */
int nmt_translator_create(nmt_translator **translator, const nmt_model *model, const nmt_decode_options *options);
void nmt_translator_free(nmt_translator *translator);
/* Replaces the search's options (options, but its precision, shortlist and batch_size, which stay the
 * translator's) for the runs that follow: each worker's search is made anew; on failure the
 * translator keeps the options it had. Not while the translator runs. */
int nmt_translator_set_search(nmt_translator *translator, const nmt_decode_options *options);
/* The same for a translator that owns the model's use: where its packed matrices hold the weights
 * whole (int8, and fp32 on a packed kernel: nmt_packed_self_contained; bf16 but for the output
 * matrix), the memory of each of the model's float32 matrices goes back to the system right after it
 * is packed
 * (nmt_incremental_weights_create_releasing), so that the model and its packed copy are never both
 * whole in memory; *released gets the bytes (0 otherwise). From then on the model serves this
 * translator only (its forward passes refuse it); after a failure it serves nothing (free it). */
int nmt_translator_create_releasing(nmt_translator **translator, nmt_model *model, const nmt_decode_options *options,
                                    size_t *released);
/* Translates src[i] (src_len[i] pieces, no eos) into out[i] for i < count (free each with
 * nmt_translation_free). An empty source gives one empty hypothesis (log-probability 0, no
 * attention) without running the model. */
int nmt_translator_run(nmt_translator *translator, int count, const int32_t *const *src, const int *src_len,
                       nmt_translation *out);
/* The same for sentences numbered first_key, first_key + 1, ...: the keys of their sampling draws
 * (sampling.h; nmt_translator_run numbers them from 0), so that a sampled line's translation
 * depends on its line number, not on the call or the batch it is in. With sampling and n_best N,
 * each sentence is drawn N times (sample j of line n keyed n + j * 2^40, so sample 0 is the single
 * sample), its translation the N samples, best score first (they may repeat). */
int nmt_translator_run_from(nmt_translator *translator, uint64_t first_key, int count, const int32_t *const *src,
                            const int *src_len, nmt_translation *out);
/* The same with guides[i] (a target prefix, constraint phrases: search.h) for sentence i (NULL, or a
 * NULL entry: none; an empty source still gives one empty hypothesis); the arrays are read during
 * the call. The decoder is sized for the longest guide as well as the longest source. */
int nmt_translator_run_guided(nmt_translator *translator, uint64_t first_key, int count, const int32_t *const *src,
                              const int *src_len, const nmt_decode_guide *const *guides, nmt_translation *out);
/* The same in one call (for validation during training). */
int nmt_decode_sentences(const nmt_model *model, const nmt_decode_options *options, int count,
                         const int32_t *const *src, const int *src_len, nmt_translation *out);

#endif
