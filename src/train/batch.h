/* batch: token-bounded, length-bucketed batches over a corpus, reshuffled every epoch.
 *
 * Pairs are sorted by (target length, source length); consecutive pairs form a batch while its
 * padded size B * T stays within batch_tokens, where T = longest target + 1 (decoder rows carry bos
 * or eos). The padded source side B * S is held to the same bound, so one long source cannot blow up
 * a batch of short targets. A single pair larger than the bound is a batch of its own.
 *
 * Shuffling (fairseq's scheme): every epoch, pairs of equal lengths trade places and the batch order
 * is permuted, both drawn from a generator seeded by (seed, epoch) alone. So the whole data position
 * is (epoch, cursor): a resumed run seeks there and sees exactly the batches an uninterrupted run
 * would have seen. The batch boundaries (and so the buffer sizes) are the same in every epoch; after
 * nmt_batcher_init nothing is allocated except when an epoch begins.
 *
 * Subword sampling: a batcher made with a resample callback lets it re-segment the corpus as each
 * epoch begins (a pure function of the epoch, so seeking still recovers the exact batches), then
 * plans that epoch's batches from the new lengths; the row buffers grow when an epoch needs more.
 *
 * Rows: source = pieces + eos; decoder input = bos + pieces; decoder target = pieces + eos; padded
 * with NMT_PAD (nmt_vocab_row, vocab.h).
 */
#ifndef NMT_BATCH_H
#define NMT_BATCH_H

#include <stdint.h>

#include "train/corpus.h"
#include "model/model.h"

/* Re-segments the batcher's corpus for `epoch` (nmt_corpus_resample); 0 or -1 with the error set. */
typedef int (*nmt_batcher_resample_fn)(void *ctx, long epoch);

typedef struct nmt_batcher {
    const nmt_corpus *corpus;
    int batch_tokens;     /* bound on a batch's padded target (and source) tokens */
    nmt_batcher_resample_fn resample; /* NULL: the corpus keeps its segmentation */
    void *resample_ctx;
    uint64_t seed;
    int shuffle;          /* 0: length order, batches in order (for validation) */
    long num_batches;     /* in this epoch (in every epoch, without resampling) */
    long epoch;           /* 1-based epoch whose order is loaded (0: none yet) */
    long cursor;          /* batches of this epoch already handed out */
    long *sorted;         /* [num_pairs] pair indices by (tgt_len, src_len) */
    long *order;          /* [num_pairs] this epoch's pair indices (sorted, equal lengths shuffled) */
    long *batch_start;    /* [num_batches + 1] batch k is order[batch_start[k] .. batch_start[k+1]) */
    long *batch_order;    /* [num_batches] this epoch's permutation of batches (room for num_pairs) */
    int32_t *src;         /* [capacity] row buffers of the current batch */
    int32_t *tgt_in;
    int32_t *tgt_out;
    long capacity;        /* ids per buffer: the largest B * max(S, T) of any batch */
} nmt_batcher;

int nmt_batcher_init(nmt_batcher *b, const nmt_corpus *corpus, int batch_tokens, uint64_t seed, int shuffle);
/* nmt_batcher_init with resample called as every epoch begins (the first one included). No epoch is
 * loaded (epoch 0, num_batches 0) until the first nmt_batcher_seek or nmt_batcher_next, so a resumed
 * run draws only the epoch it seeks. */
int nmt_batcher_init_resampled(nmt_batcher *b, const nmt_corpus *corpus, int batch_tokens, uint64_t seed,
                               int shuffle, nmt_batcher_resample_fn resample, void *resample_ctx);
void nmt_batcher_free(nmt_batcher *b);
/* Moves to batch `cursor` (0 .. num_batches) of `epoch` (>= 1), as saved in a checkpoint. */
int nmt_batcher_seek(nmt_batcher *b, long epoch, long cursor);
/* Fills *batch with the next batch (valid until the next call), starting a new epoch when this one is
 * used up; *tokens = its non-pad target tokens (pieces + eos). -1 only where resampling failed. */
int nmt_batcher_next(nmt_batcher *b, nmt_batch *batch, long *tokens);
/* Epochs fully handed out so far. */
long nmt_batcher_epochs_done(const nmt_batcher *b);

#endif
