/* vocab: the ids every nmt vocabulary reserves for its special pieces, and the rows built from them.
 *
 * They sit below both the SentencePiece shim (which trains vocabularies with these ids and refuses
 * others) and the model (whose rows start and end with them), so that neither includes the other.
 * A source row is pieces + eos; a decoder input is bos + pieces; a target is pieces + eos. Training
 * batches, forced scoring and the translator all build their rows with nmt_vocab_row.
 */
#ifndef NMT_VOCAB_H
#define NMT_VOCAB_H

#include <stdint.h>

enum { NMT_PAD = 0, NMT_UNK = 1, NMT_BOS = 2, NMT_EOS = 3 };

typedef enum nmt_vocab_row_kind {
    NMT_ROW_SOURCE,        /* pieces + eos */
    NMT_ROW_DECODER_INPUT, /* bos + pieces */
    NMT_ROW_TARGET,        /* pieces + eos */
    NMT_ROW_PIECES,        /* pieces alone: the source row of a model without a source eos */
} nmt_vocab_row_kind;

/* Fills row[width] with the `kind` row of pieces[len], padded with NMT_PAD; width >= len + 1. */
void nmt_vocab_row(nmt_vocab_row_kind kind, const int32_t *pieces, int len, int32_t *row, int width);

#endif
