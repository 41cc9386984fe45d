/* forced: forced decoding, the model's scores of given target sentences.
 *
 * The pairs are sorted by total length (order.h), run through the model's full forward pass (not
 * the incremental decoder) in evaluation mode (no dropout) over batches of up to batch_size pairs,
 * and the results returned in the input order. Rows: source = pieces + eos (pieces alone for a model
 * with model.source_eos 0), decoder input = bos + pieces, target = pieces + eos. An empty source is
 * scored like any other (source = eos alone), or refused where the source has no eos.
 */
#ifndef NMT_FORCED_H
#define NMT_FORCED_H

#include <stdint.h>

#include "model/model.h"

/* out[i] = log p(tgt[i] pieces + eos | src[i]), natural log, without label smoothing. */
int nmt_forced_score(nmt_model *model, int count, const int32_t *const *src, const int *src_len,
                     const int32_t *const *tgt, const int *tgt_len, int batch_size, double *out);
/* The same, and tokens[i][j] = the log-probability of target piece j (j = tgt_len[i]: of eos). */
int nmt_forced_score_tokens(nmt_model *model, int count, const int32_t *const *src, const int *src_len,
                            const int32_t *const *tgt, const int *tgt_len, int batch_size, double *out,
                            float *const *tokens);
/* The training objective on the same batches: label-smoothed cross-entropy and NLL summed over
 * every target piece + eos (what `nmt train` reports, divided by tokens). */
int nmt_forced_loss(nmt_model *model, int count, const int32_t *const *src, const int *src_len,
                    const int32_t *const *tgt, const int *tgt_len, int batch_size, double label_smoothing,
                    nmt_loss *loss);

#endif
